// The deployment stage's serving settings in the scenario panel: editing a field changes the
// run, travels in the link (a fresh page opens with it), and the CLI reading the same link
// agrees; a bad value is refused with a banner naming the field.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, CLI, launch, open, setInput, runToDone, cliBest, shot } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('serving fields edit deployment.serving, change the run and travel in the link', async () => {
  const { page, context, errors } = await open(browser, BASE);
  await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; })); // sections start closed
  await page.selectOption('[data-testid=bundled]', 'llama2-7b-910B2-deployment');
  await page.waitForSelector('[data-testid=serving-panel]');
  assert.equal(await page.inputValue('[data-testid=serving-mode]'), 'scheduler');
  assert.equal(await page.inputValue('[data-testid=serving-engine]'), 'generic');
  await setInput(page, 'budget', 12);
  await setInput(page, 'seed', 3);
  // Fewer requests keep the run short; the field is the scenario's deployment.serving.requests.
  await setInput(page, 'serving-requests', 60);
  const before = (await runToDone(page)).best;

  // A Python engine's per-step host work (vLLM-Ascend) lowers tokens/s per chip.
  await page.selectOption('[data-testid=serving-engine]', 'vllm-ascend');
  assert.equal(await page.$('[data-testid=error]'), null, 'the engine is accepted');
  const vllm = (await runToDone(page)).best;
  assert.notEqual(vllm, before, `the engine changes the run (${before} -> ${vllm})`);
  assert.ok(Number(vllm) < Number(before), `vLLM-Ascend's host work costs throughput: ${before} -> ${vllm}`);

  // Poisson arrivals show the rate field; the settings travel in the link.
  await page.selectOption('[data-testid=serving-arrival]', 'poisson');
  await setInput(page, 'serving-rate', 2.5);
  await setInput(page, 'serving-max-tokens', '4096, 8192');
  await page.selectOption('[data-testid=serving-chunked]', 'on');
  assert.equal(await page.$('[data-testid=error]'), null);
  const url = page.url();
  const fresh = await open(browser, url);
  await fresh.page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; })); // sections start closed
  assert.equal(await fresh.page.inputValue('[data-testid=serving-engine]'), 'vllm-ascend');
  assert.equal(await fresh.page.inputValue('[data-testid=serving-arrival]'), 'poisson');
  assert.equal(await fresh.page.inputValue('[data-testid=serving-rate]'), '2.5');
  assert.equal(await fresh.page.inputValue('[data-testid=serving-max-tokens]'), '4096, 8192');
  assert.equal(await fresh.page.inputValue('[data-testid=serving-requests]'), '60');
  const shared = (await runToDone(fresh.page)).best;
  await fresh.context.close();
  if (CLI) assert.equal(cliBest(url), shared, 'the CLI gives the same best for the link');

  // Simple mode hides the scheduler's fields.
  await page.selectOption('[data-testid=serving-mode]', 'static');
  assert.equal(await page.$('[data-testid=serving-arrival]'), null);

  // A bad value is refused with the field named; the scenario keeps its value.
  await page.selectOption('[data-testid=serving-mode]', 'scheduler');
  await setInput(page, 'serving-block', 0);
  const banner = await page.textContent('[data-testid=error]');
  assert.match(banner, /block_size/, banner);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the runtime field runs an encoder as the offline OM model: slower, in the link, as the CLI says', async () => {
  const { page, context, errors } = await open(browser, BASE);
  await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; })); // sections start closed
  await page.selectOption('[data-testid=bundled]', 'bge-large-910B4-embedding');
  await page.waitForSelector('[data-testid=serving-runtime]');
  assert.equal(await page.inputValue('[data-testid=serving-runtime]'), 'engine');
  await setInput(page, 'budget', 6);
  const engine = (await runToDone(page)).best;
  // MindIE's OM model compiled from ONNX: attention as exported (scores in device memory),
  // fp32 LayerNorm and softmax; fewer sequences per second than the ATB engine's kernels.
  await page.selectOption('[data-testid=serving-runtime]', 'om');
  assert.equal(await page.$('[data-testid=error]'), null);
  const om = (await runToDone(page)).best;
  assert.ok(Number(om) < Number(engine), `the OM runtime is slower: ${engine} -> ${om} sequences/s`);
  const url = page.url();
  const fresh = await open(browser, url);
  await fresh.page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; })); // sections start closed
  assert.equal(await fresh.page.inputValue('[data-testid=serving-runtime]'), 'om');
  const shared = (await runToDone(fresh.page)).best;
  await fresh.context.close();
  assert.equal(shared, om, 'the link reproduces the run');
  if (CLI) assert.equal(cliBest(url), shared, 'the CLI gives the same best for the link');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the HCCL expansion field prices AIV collectives, travels in the link and reaches the CLI', async () => {
  const { page, context, errors } = await open(browser, BASE);
  await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; })); // sections start closed
  await page.selectOption('[data-testid=bundled]', 'llama2-7b-910B2-deployment');
  await page.waitForSelector('[data-testid=serving-hccl-expansion]');
  assert.equal(await page.inputValue('[data-testid=serving-hccl-expansion]'), 'auto');
  await setInput(page, 'budget', 10);
  await setInput(page, 'seed', 5);
  await setInput(page, 'serving-requests', 40);
  // HCCL_OP_EXPANSION_MODE=AIV: a tensor-parallel all-reduce pays two latency steps, not a
  // task per peer (the pricing itself is checked natively: serving_features.rs).
  await page.selectOption('[data-testid=serving-hccl-expansion]', 'aiv');
  assert.equal(await page.$('[data-testid=error]'), null, 'aiv is accepted');
  const aiv = (await runToDone(page)).best;
  assert.ok(Number(aiv) > 0, `the run finishes with a best: ${aiv}`);
  const url = page.url();
  const fresh = await open(browser, url);
  await fresh.page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; })); // sections start closed
  assert.equal(await fresh.page.inputValue('[data-testid=serving-hccl-expansion]'), 'aiv');
  const shared = (await runToDone(fresh.page)).best;
  await fresh.context.close();
  assert.equal(shared, aiv, 'the link reproduces the run');
  if (CLI) assert.equal(cliBest(url), shared, 'the CLI gives the same best for the link');
  assert.deepEqual(errors, []);
  await context.close();
});

test("the best configuration's detail splits its time to first token", async () => {
  const { page, context, errors } = await open(browser, BASE);
  await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; })); // sections start closed
  await page.selectOption('[data-testid=bundled]', 'llama2-7b-910B2-deployment');
  await setInput(page, 'budget', 8);
  await setInput(page, 'serving-requests', 60);
  await runToDone(page);
  // The best configuration's detail is the engine worker's answer, after the run stops.
  await page.waitForSelector('[data-testid=point-ttft]', { timeout: 120000 });
  const text = await page.$eval('[data-testid=point-ttft]', (e) => e.textContent);
  // Front end, queueing, prefill and host, each in ms, under a mean over the requests.
  assert.match(text, /time to first token, mean over 60 requests: [\d.]+ ms/, text);
  const parts = {};
  for (const name of ['front end', 'queueing', 'prefill', 'host']) {
    const m = text.match(new RegExp(`^${name}\\s+([\\d.]+) ms`, 'm'));
    assert.ok(m, `no ${name} line in: ${text}`);
    parts[name] = Number(m[1]);
  }
  const mean = Number(text.match(/requests: ([\d.]+) ms/)[1]);
  const sum = Object.values(parts).reduce((a, b) => a + b, 0);
  // The parts add up to the mean (each printed to four significant digits).
  assert.ok(Math.abs(sum - mean) <= 0.01 * mean + 0.05, `${JSON.stringify(parts)} sum ${sum} vs ${mean}`);
  await page.locator('[data-testid=point-ttft]').scrollIntoViewIfNeeded();
  await shot(page, 'serving-ttft-split.png');
  assert.deepEqual(errors, []);
  await context.close();
});
