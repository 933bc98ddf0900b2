// The benchmark-file panel (in the Calibrate view): drop each tool's sample file
// (assets/benchruns/), read the runs and the predicted-vs-measured table from the DOM, paste a
// serving command, calibrate the framework layer, and see a bad file or flag refused inline
// beside the drop zone. The engine worker reads and prices (the page links no reader).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BASE, launch, open, text, setInput } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const DIR = 'assets/benchruns/';

async function panel(browserRef) {
  const opened = await open(browserRef, BASE);
  await opened.page.selectOption('[data-testid=bundled]', 'llama2-7b-910B2-deployment');
  await opened.page.click('text=Calibrate the chip to measurements');
  return opened;
}

async function waitSummary(page) {
  await page.waitForFunction(() => /runs predicted/.test(document.querySelector('[data-testid=benchrun-summary]')?.textContent || '') || (document.querySelector('[data-testid=benchrun-error]')?.textContent || '').length > 0, null, { timeout: 60000 });
}

// Each tool's files, the runs they hold and a line the runs list shows.
const SAMPLES = [
  { files: ['vllm-bench-serve-sample.json'], runs: 1, shows: /vllm bench serve, 8 requests, 4 req\/s, at most 16 in flight/ },
  { files: ['sglang-bench-serving-sample.jsonl'], runs: 3, shows: /line 3: sglang bench_serving, 16 requests, all at once, at most 16 in flight/ },
  { files: ['aisbench/gsm8k.json', 'aisbench/gsm8k.csv'], runs: 1, rate: 'inf', shows: /AISBench, 8 requests, all at once, at most 1 in flight/ },
  { files: ['mindie/result_common_20251120101500.csv', 'mindie/result_perf_20251120101500.csv', 'mindie/results_per_request_20251120101500.json'], runs: 1, rate: '0.75', shows: /MindIE Benchmark, 16 requests, 0.75 req\/s, at most 8 in flight, .*per-request lengths/ },
];

for (const s of SAMPLES) {
  test(`the ${s.files[0]} sample loads, and its runs are predicted against what they measured`, async () => {
    const { page, context, errors } = await panel(browser);
    if (s.rate) await setInput(page, 'benchrun-rate', s.rate);
    await page.setInputFiles('[data-testid=benchrun-file]', s.files.map((f) => DIR + f));
    await waitSummary(page);
    assert.equal(await text(page, 'benchrun-error'), '', 'no error beside the drop zone');
    assert.match(await text(page, 'benchrun-summary'), new RegExp(`^${s.runs} of ${s.runs} runs predicted \\(\\d+ values\\); median \\|error\\| \\d`));
    assert.match(await text(page, 'benchrun-runs'), s.shows);
    const rows = await page.$$eval('[data-testid=benchrun-table] tr', (trs) => trs.slice(1).map((tr) => [...tr.cells].map((c) => c.textContent)));
    assert.ok(rows.length >= s.runs * 2, `${rows.length} values in the table`);
    for (const [, , measured, predicted, error] of rows) {
      assert.match(measured, /^\d/);
      assert.match(predicted, /^\d/);
      assert.match(error, /^[+-]\d+(\.\d)?%$/);
    }
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test('a serving command pins the launch; calibration shows the framework layer with its leave-one-out error', async () => {
  const { page, context, errors } = await panel(browser);
  await setInput(page, 'benchrun-serve', 'vllm serve meta-llama/Llama-2-7b-hf --max-num-seqs 16 --port 8000');
  await page.setInputFiles('[data-testid=benchrun-file]', [DIR + 'vllm-bench-serve-sample.json', DIR + 'sglang-bench-serving-sample.jsonl']);
  await waitSummary(page);
  assert.match(await text(page, 'benchrun-launch'), /batch \(max running requests\) 16/);
  assert.match(await text(page, 'benchrun-launch'), /not priced: --port 8000/);
  assert.match(await text(page, 'benchrun-summary'), /^4 of 4 runs predicted/);
  await page.click('[data-testid=benchrun-calibrate]');
  await page.waitForSelector('[data-testid=benchrun-fit-summary]', { timeout: 180000 });
  assert.match(await text(page, 'benchrun-fit-summary'), /^Framework layer vllm-ascend: median \|error\| [\d.]+% before, [\d.]+% after, [\d.]+% leaving each source out/);
  const params = await page.$$eval('[data-testid=benchrun-fit-params] tr', (trs) => trs.slice(1).map((tr) => tr.cells[0].textContent));
  assert.ok(params.length > 0 && params.every((p) => p.startsWith('framework:vllm-ascend.')), params.join(', '));
  assert.deepEqual(errors, []);
  await context.close();
});

test('a file no tool writes, a rate-less run and an unknown flag are refused inline, by name', async () => {
  const { page, context, errors } = await panel(browser);
  const path = join(mkdtempSync(join(tmpdir(), 'tunelab-bench-')), 'notes.txt');
  writeFileSync(path, 'hello');
  await page.setInputFiles('[data-testid=benchrun-file]', path);
  await waitSummary(page);
  assert.match(await text(page, 'benchrun-error'), /^notes\.txt: not a benchmark result/);
  await page.setInputFiles('[data-testid=benchrun-file]', DIR + 'aisbench/gsm8k.json');
  await page.waitForFunction(() => /--rate/.test(document.querySelector('[data-testid=benchrun-error]')?.textContent || ''));
  await setInput(page, 'benchrun-rate', 'inf');
  await page.waitForFunction(() => /runs predicted/.test(document.querySelector('[data-testid=benchrun-summary]')?.textContent || ''));
  await setInput(page, 'benchrun-serve', 'vllm serve llama-2-7b --tensor-paralel-size 2');
  await page.waitForFunction(() => /--tensor-paralel-size/.test(document.querySelector('[data-testid=benchrun-error]')?.textContent || ''));
  assert.deepEqual(errors, []);
  await context.close();
});
