// The training section's Megatron/MindSpeed options: they show the scenario's values, an edit
// changes the run, and the edits travel in the link.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { deflateRawSync } from 'node:zlib';
import { launch, open, BASE, runToDone } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const fields = (page) => page.evaluate(() => {
  const q = (id) => document.querySelector(`[data-testid=${id}]`);
  return {
    dispatcher: q('training-moe-dispatcher').value,
    grouped: q('training-moe-grouped-gemm').checked,
    fp32Combine: q('training-moe-permutation-async-comm').checked,
    fusion: q('training-grad-accum-fusion').checked,
    cp: q('training-cp-algo').value,
  };
});

test('training options: shown from the scenario, edits change the run and survive the link', async () => {
  // The bundled DeepSeek-V2-Lite scenario with its experts spread over the 8 ranks (ep fixed):
  // the token dispatcher only matters when tokens cross ranks, and the open space's best keeps
  // every expert local (ep = 1) once each MoE layer pays its host synchronisation.
  const s = JSON.parse(readFileSync('assets/scenarios/deepseek-v2-lite-8x910B2-training.json', 'utf8'));
  s.space = { ep: { fixed: 8 } };
  const fragment = 'v1.' + deflateRawSync(Buffer.from(JSON.stringify(s)), { level: 9 }).toString('base64url');
  const { page, context, errors } = await open(browser, BASE + '#' + fragment);
  await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; })); // sections start closed
  assert.deepEqual(await fields(page), { dispatcher: 'alltoall', grouped: true, fp32Combine: false, fusion: true, cp: 'ring' });
  const before = await runToDone(page);
  await page.selectOption('[data-testid=training-moe-dispatcher]', 'allgather');
  await page.check('[data-testid=training-moe-permutation-async-comm]');
  await page.selectOption('[data-testid=training-cp-algo]', 'ulysses');
  await page.click('[data-testid=reset]');
  const after = await runToDone(page);
  console.log(`best step time: ${before.best} ms with all-to-all, ${after.best} ms with the all-gather dispatcher and its fp32 combine`);
  assert.notEqual(after.best, before.best, 'the dispatcher and its combine change the tuned step');
  const reopened = await open(browser, await page.evaluate(() => location.href));
  await reopened.page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; })); // sections start closed
  assert.deepEqual(await fields(reopened.page), { dispatcher: 'allgather', grouped: true, fp32Combine: true, fusion: true, cp: 'ulysses' });
  assert.deepEqual(errors, []);
  assert.deepEqual(reopened.errors, []);
  await reopened.context.close();
  await context.close();
});
