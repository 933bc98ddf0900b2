// Uneven pipeline stages (MindSpeed --num-layer-list) and the fused-kernel switches in the
// training section: a bad list is refused with a message and changes nothing, a list or an
// unfused kernel changes the tuned step, travels in the link and gives the CLI's best.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { deflateRawSync } from 'node:zlib';
import { BASE, CLI, launch, open, setInput, runToDone, text, cliBest } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('layers per pipeline stage: refused when malformed, priced when given, kept in the link', async (t) => {
  // Llama-2-7B (32 layers) training on 8 chips: one configuration with four pipeline stages
  // (TP 2, no recomputation), goal step time, so each run's best is that configuration's step.
  const s = JSON.parse(readFileSync('assets/scenarios/llama2-7b-8x910B2-training.json', 'utf8'));
  const fixed = { tp: 2, pp: 4, dp: 1, cp: 1, vpp: 1, ep: 1, micro_batch: 1, recompute: 'none', optimizer_sharding: 'distributed_optimizer', sequence_parallel: 'on', precision: 'bf16' };
  s.space = Object.fromEntries(Object.entries(fixed).map(([k, v]) => [k, { fixed: v }]));
  s.objectives = [{ metric: 'step_time_ms', priority: 1 }];
  s.budget = 5;
  const fragment = 'v1.' + deflateRawSync(Buffer.from(JSON.stringify(s)), { level: 9 }).toString('base64url');
  const { page, context, errors } = await open(browser, BASE + '#' + fragment);
  assert.equal(await page.inputValue('[data-testid=training-pipeline-layers]'), '', 'an even split by default');
  const even = await runToDone(page);
  const link = page.url();

  // Its section starts closed.
  await page.evaluate(() => { const d = document.querySelector('[data-testid=training-pipeline-layers]').closest('details'); if (d) d.open = true; });
  await setInput(page, 'training-pipeline-layers', '8,eight,8,8');
  await page.waitForSelector('[data-testid=error]');
  assert.match(await text(page, 'error'), /layers per pipeline stage: 'eight'/);
  assert.equal(page.url(), link, 'a refused list leaves the scenario as it was');
  await page.click('[data-testid=error] .dismiss');

  // The last stage, which holds the LM head, gets 14 of the 32 layers: it sets the pace.
  await setInput(page, 'training-pipeline-layers', '6 6 6 14');
  await page.click('[data-testid=reset]');
  const uneven = await runToDone(page);
  t.diagnostic(`best step time: ${even.best} ms even, ${uneven.best} ms with 6,6,6,14`);
  assert.ok(Number(uneven.best) > Number(even.best) * 1.2, `${uneven.best} vs ${even.best}`);

  // Megatron's own rotary embedding and SwiGLU instead of the fused kernels: a slower step.
  assert.equal(await page.isChecked('[data-testid=training-fused-rotary]'), true);
  await page.uncheck('[data-testid=training-fused-rotary]');
  await page.uncheck('[data-testid=training-fused-swiglu]');
  await page.click('[data-testid=reset]');
  const unfused = await runToDone(page);
  t.diagnostic(`best step time: ${unfused.best} ms with rotary and SwiGLU unfused`);
  assert.ok(Number(unfused.best) > Number(uneven.best), `${unfused.best} vs ${uneven.best}`);

  const url = page.url();
  const reopened = await open(browser, url);
  assert.equal(await reopened.page.inputValue('[data-testid=training-pipeline-layers]'), '6,6,6,14');
  assert.equal(await reopened.page.isChecked('[data-testid=training-fused-rotary]'), false);
  assert.equal(await reopened.page.isChecked('[data-testid=training-fused-rms-norm]'), true);
  if (CLI) {
    assert.equal(cliBest(url), unfused.best, 'tunelab run --json gives the same best');
  } else {
    t.diagnostic('TUNELAB_CLI not set: CLI comparison skipped');
  }
  assert.deepEqual(errors.filter((e) => !/pipeline stage/.test(e)), []);
  assert.deepEqual(reopened.errors, []);
  await reopened.context.close();
  await context.close();
});
