// The diffusion pipeline in the browser: the bundled SD 2.1 on 910B scenario runs and its
// pipeline timeline shows the text encoders, the denoising steps and the VAE; the founding story
// holds from the model's own numbers (once the UNet is optimised the text encoders take a larger
// share of the call, and the text-encoder cache removes that share); and the teaching layout
// races strategies on the pipeline (one timeline row per strategy's best).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { deflateRawSync } from 'node:zlib';
import { BASE, launch, open, text, setInput, runToDone, shot, answered } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

// A scenario as the app's link fragment ("v1." + base64url of raw deflate, crates/scenario/src/spec/url.rs).
const fragment = (scenario) => 'v1.' + deflateRawSync(Buffer.from(JSON.stringify(scenario)), { level: 9 }).toString('base64url');

// The bundled SD 2.1 scenario with the UNet's optimisation level as a choice the search can take
// (eager or compiled, fp16 or W8A8, ToMe, step caching) and the text-encoder cache as given:
// a grid over 64 or 128 points finds the all-optimised UNet, so the best is known.
const sd21 = (cache) => ({
  version: 1, name: `SD 2.1 UNet optimised, text-encoder cache ${cache.join('/')}`, stage: 'diffusion', model: 'sd2.1-base', device: '910B2',
  diffusion: { steps: 50, framework: 'diffusers', repeated_prompt: true },
  space: {
    launch: { choices: ['eager', 'graph'] }, precision: { choices: ['fp16', 'w8a8'] }, tome: { choices: [0, 0.5] },
    step_cache: { choices: [1, 2] }, vae_launch: { choices: ['eager', 'graph'] }, text_encoder_cache: { choices: cache },
    attention: { fixed: 'flash' }, vae: { fixed: 'full' }, vae_precision: { fixed: 'fp16' },
  },
  strategy: { name: 'grid', options: {} }, budget: 128, seed: 1,
});

// The text encoders' share of a timeline text ("   15.5 ms    2.3%  text_encoder"), 0 when absent.
function encoderShare(t) {
  const m = t.match(/^\s*[0-9.]+ ms\s+([0-9.]+)%\s+text_encoder/m);
  return m ? parseFloat(m[1]) : 0;
}

// The timelines are priced by the engine worker, asked again whenever a best changes: read a
// timeline text once every question asked so far has its answer (one worker answers in order, so
// the last answer is the one for the final bests) and it has stopped changing.
async function settled(page, id) {
  await answered(page);
  let last = null, same = 0;
  for (let i = 0; i < 120 && same < 4; i++) {
    const t = (await text(page, id)) ?? '';
    same = t.trim() && t === last ? same + 1 : 0;
    last = t;
    await page.waitForTimeout(250);
  }
  return last;
}

test('the bundled SD 2.1 scenario shows its pipeline: text encoders, steps, VAE', async () => {
  const { page, context, errors } = await open(browser, BASE);
  await page.selectOption('[data-testid=bundled]', 'sd2.1-910B2-diffusion');
  await runToDone(page);
  await page.waitForSelector('[data-testid=pipeline-panel]');
  // The panel is on the page before its rows: the chart is drawn once the worker's timeline
  // answer has come (later on a busy machine), so read it after the rows have settled.
  const base = await settled(page, 'pipeline-baseline');
  const chart = await page.textContent('[data-testid=pipeline-panel]');
  for (const part of ['text encoders', 'denoising steps', 'VAE']) assert.ok(chart.includes(part), `the timeline names ${part}`);
  assert.match(base, /text_encoder/);
  assert.match(base, /50 full steps x [0-9.]+ ms/);
  assert.match(base, /VAE decoder/);
  assert.ok(encoderShare(base) > 0, 'the baseline encodes its prompts');
  await shot(page, 'pipeline-sd21.png');
  assert.deepEqual(errors, []);
  await context.close();
});

test('founding story: the UNet optimised, the text encoders take a larger share; the cache removes it', async () => {
  const { page, context, errors } = await open(browser, BASE + '#' + fragment(sd21(['off'])));
  await runToDone(page);
  const base = await settled(page, 'pipeline-baseline');
  const best = await settled(page, 'pipeline-text');
  console.log(`baseline:\n${base}\nbest, no cache:\n${best}`);
  assert.match(best, /launch|full steps/);
  assert.ok(encoderShare(best) > encoderShare(base), `text-encoder share grows once the UNet is optimised: ${encoderShare(base)}% -> ${encoderShare(best)}%`);
  await context.close();

  const cached = await open(browser, BASE + '#' + fragment(sd21(['off', 'on'])));
  await runToDone(cached.page);
  const bestCached = await settled(cached.page, 'pipeline-text');
  console.log(`best, cache allowed:\n${bestCached}`);
  assert.equal(encoderShare(bestCached), 0, 'the text-encoder cache removes the encoders from the call');
  assert.ok(encoderShare(await settled(cached.page, 'pipeline-baseline')) > 0, 'the baseline still encodes');
  assert.deepEqual(errors.concat(cached.errors), []);
  await cached.context.close();
});

test('the teaching layout races strategies on the pipeline', async () => {
  const { page, context, errors } = await open(browser, BASE, { width: 1440, height: 900 });
  await page.selectOption('[data-testid=bundled]', 'sd2.1-910B2-diffusion');
  await page.check('[data-testid=strategy-bayes]');
  await page.check('[data-testid=teach-layout]');
  await setInput(page, 'budget', 30);
  await runToDone(page);
  const lanes = await page.$$eval('.tune .lane', (l) => l.length);
  assert.ok(lanes >= 2, `${lanes} strategies race`);
  // One timeline row per strategy's best beside the baseline's. The rows are priced by the
  // engine worker after the run ends (asked again whenever a best changes), so wait for the
  // timeline to settle before reading the panel: on a busy machine it arrives later.
  await settled(page, 'pipeline-text');
  const panel = await page.textContent('[data-testid=pipeline-panel]');
  // (The chart repeats a row's label in each segment's tooltip: count the strategies named.)
  const names = new Set([...panel.matchAll(/([a-z]+) best: [0-9.]+ m?s/g)].map((m) => m[1]));
  console.log(`pipeline rows: ${JSON.stringify([...names])}`);
  assert.deepEqual([...names].sort(), ['bayes', 'genetic', 'random'], 'each racing strategy has its best call on the timeline');
  assert.equal(names.size, lanes);
  assert.match(panel, /baseline: [0-9.]+ ms/);
  assert.match(await settled(page, 'pipeline-text'), /^[a-z0-9]+ best:/);
  await shot(page, 'pipeline-teaching.png');
  assert.deepEqual(errors, []);
  await context.close();
});

test("the guards panel names each output-changing knob of the best pipeline with its guard", async () => {
  const { page, context, errors } = await open(browser, BASE);
  await page.selectOption('[data-testid=bundled]', 'sd2.1-910B2-diffusion');
  await runToDone(page);
  await page.click('[data-testid=tab-report]');
  await page.click('[data-testid=guards-run]');
  await page.waitForSelector('[data-testid=guards]', { timeout: 120000 });
  assert.equal(await page.$('[data-testid=error]'), null);
  const knobs = await page.$$eval('[data-testid=guard-output-knobs] li', (l) => l.map((x) => x.textContent));
  console.log(`guards: ${JSON.stringify(knobs)}`);
  // The bundled tune's best merges tokens and caches steps (both change the images).
  assert.ok(knobs.some((k) => /token merging .* guard: delta check$/.test(k)), 'ToMe is covered by the delta check');
  assert.ok(knobs.some((k) => /step caching .* guard: delta check$/.test(k)), 'step caching is covered by the delta check');
  if (knobs.some((k) => /W8A8/.test(k))) assert.ok(knobs.some((k) => /W8A8.*guard: protected layers \+ delta check$/.test(k)));
  assert.match(await text(page, 'guard-protected'), /denoising step .* ms all quantised vs .* ms protected \(whole call/);
  assert.match(await text(page, 'guard-delta'), /Delta check: pass; .*not in this estimate, compare real outputs/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a diffusion scenario names its pipeline in the model picker, and LoRA training on SDXL reports images per second', async () => {
  const { page, context, errors } = await open(browser, BASE);
  const picked = () => page.$eval('[data-testid=model]', (s) => ({ value: s.value, label: s.selectedOptions[0]?.textContent || '' }));
  await page.selectOption('[data-testid=bundled]', 'sd2.1-910B2-diffusion');
  assert.deepEqual(await picked(), { value: 'sd2.1-base', label: 'sd2.1-base' });
  await page.selectOption('[data-testid=bundled]', 'sdxl-8x910B2-lora-training');
  assert.deepEqual(await picked(), { value: 'sdxl', label: 'sdxl' });
  await setInput(page, 'budget', 12);
  await runToDone(page);
  // The best configuration's table is the engine worker's answer: wait for it.
  await page.waitForFunction(() => /MFU(?: \(%\))?\s*[0-9.]+%/.test(document.body.textContent), null, { timeout: 60000 });
  const page_text = await page.textContent('body');
  assert.match(page_text, /samples\/s/);
  // MFU from the denoiser's own arithmetic: a fraction in percent, not 0.0%.
  const mfu = page_text.match(/MFU(?: \(%\))?\s*([0-9.]+)%/);
  console.log(`sdxl lora training: MFU ${mfu?.[1]}%`);
  assert.ok(mfu && parseFloat(mfu[1]) > 5 && parseFloat(mfu[1]) < 80, `MFU ${mfu?.[1]}`);
  await shot(page, 'sdxl-lora-training.png');
  assert.deepEqual(errors, []);
  await context.close();
});
