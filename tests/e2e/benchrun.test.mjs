// The benchmark-file panel (in the Calibrate view): drop each tool's sample file
// (assets/benchruns/), read the runs and the predicted-vs-measured table from the DOM, paste a
// serving command, calibrate the framework layer, and see a bad file or flag refused inline
// beside the drop zone. The engine worker reads and prices (the page links no reader).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { BASE, CLI, cliFragment, launch, open, text, setInput } from './helpers.mjs';

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
  await page.waitForFunction(() => /runs predicted/.test(document.querySelector('[data-testid=benchrun-summary]')?.textContent || '') || (document.querySelector('[data-testid=benchrun-error]')?.textContent || '').length > 0, null, { timeout: 120000 });
}

// Each tool's files, the runs they hold and a line the runs list shows.
const SAMPLES = [
  { files: ['vllm-bench-serve-sample.json'], runs: 1, shows: /vllm bench serve, 8 requests, 4 req\/s, at most 16 in flight/ },
  { files: ['sglang-bench-serving-sample.jsonl'], runs: 3, shows: /line 3: sglang bench_serving, 16 requests, all at once, at most 16 in flight/ },
  { files: ['aisbench/gsm8k.json', 'aisbench/gsm8k.csv', 'aisbench/gsm8k_details.jsonl'], runs: 1, rate: 'inf', shows: /AISBench, 8 requests, all at once, at most 1 in flight, .*per-request lengths/ },
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
  await page.waitForFunction(() => /--rate/.test(document.querySelector('[data-testid=benchrun-error]')?.textContent || ''), null, { timeout: 60000 });
  await setInput(page, 'benchrun-rate', 'inf');
  await page.waitForFunction(() => /runs predicted/.test(document.querySelector('[data-testid=benchrun-summary]')?.textContent || ''), null, { timeout: 60000 });
  await setInput(page, 'benchrun-serve', 'vllm serve llama-2-7b --tensor-paralel-size 2');
  await page.waitForFunction(() => /--tensor-paralel-size/.test(document.querySelector('[data-testid=benchrun-error]')?.textContent || ''), null, { timeout: 60000 });
  assert.deepEqual(errors, []);
  await context.close();
});

// The "Adopt" button (issue 45): the fitted host costs go into the scenario
// (deployment.serving.host_costs), the link carries them, and the runs re-priced on the adopted
// scenario land nearer what they measured.
// The runs are vLLM's: the scenario serves with vllm-ascend (as host_costs_adopt.rs does), whose
// host costs the fit moves (the bundled scenario's generic engine may have nothing to adopt).
test('adopting the fit puts the host costs in the scenario and its link, and the prediction moves toward the measured rows', { timeout: 400000, skip: CLI ? false : 'needs TUNELAB_CLI (the scenario link is written by tunelab url)' }, async () => {
  const v = JSON.parse(readFileSync('assets/scenarios/llama2-7b-910B2-deployment.json', 'utf8'));
  v.deployment.serving.engine = 'vllm-ascend';
  const { page, context, errors } = await open(browser, BASE + '#' + cliFragment(JSON.stringify(v)));
  await page.click('text=Calibrate the chip to measurements');
  await page.setInputFiles('[data-testid=benchrun-file]', [DIR + 'vllm-bench-serve-sample.json', DIR + 'sglang-bench-serving-sample.jsonl']);
  await waitSummary(page);
  const median = (t) => Number((t.match(/median \|error\| ([\d.]+)%/) || [])[1]);
  const before = await text(page, 'benchrun-summary');
  // Mean |ln(predicted / measured)| over the table's values: what the fit lowers (its loss,
  // unweighted here); the median may move either way by a little.
  const lnErr = () => page.$$eval('[data-testid=benchrun-table] tr', (trs) => {
    const v = trs.slice(1).map((tr) => [parseFloat(tr.cells[2].textContent), parseFloat(tr.cells[3].textContent)]).filter(([m, p]) => m > 0 && p > 0);
    return v.reduce((a, [m, p]) => a + Math.abs(Math.log(p / m)), 0) / v.length;
  });
  const lnBefore = await lnErr();
  const linkBefore = page.url();
  await page.click('[data-testid=benchrun-calibrate]');
  await page.waitForSelector('[data-testid=benchrun-fit-summary]', { timeout: 300000 });
  const fitSummary = await text(page, 'benchrun-fit-summary');
  await page.waitForSelector('[data-testid=benchrun-adopt]', { timeout: 5000 });
  await page.click('[data-testid=benchrun-adopt]');
  await page.waitForFunction(() => /^Adopted into this scenario: /.test(document.querySelector('[data-testid=benchrun-adopted]')?.textContent || ''), null, { timeout: 10000 });
  const adopted = await text(page, 'benchrun-adopted');
  assert.match(adopted, /deployment\.serving\.host_costs\.\w+ = [\d.]+ us \(was [\d.]+\)/, adopted);
  // The runs are re-priced on the adopted scenario.
  await page.waitForFunction((b) => { const t = document.querySelector('[data-testid=benchrun-summary]')?.textContent || ''; return /runs predicted/.test(t) && t !== b; }, before, { timeout: 120000 });
  const after = await text(page, 'benchrun-summary');
  const lnAfter = await lnErr();
  console.log(`adopt: ${before} -> ${after}; mean |ln ratio| ${lnBefore.toFixed(4)} -> ${lnAfter.toFixed(4)} (fit: ${fitSummary})`);
  // One evaluation path: the adopted scenario prices the runs as the fit's "after" did.
  const fitAfter = Number((fitSummary.match(/([\d.]+)% after/) || [])[1]);
  assert.equal(median(after), fitAfter, `the re-priced runs' median is the fit's after: ${after} / ${fitSummary}`);
  assert.ok(lnAfter < lnBefore, `the adopted scenario predicts the runs nearer what they measured: mean |ln ratio| ${lnBefore} -> ${lnAfter}`);
  assert.equal(await text(page, 'benchrun-error'), '');
  // The link carries the adopted host costs.
  const link = page.url();
  assert.notEqual(link, linkBefore, 'the link changed');
  const json = JSON.parse(execFileSync(CLI, ['url', '--decode', link.split('#')[1]], { encoding: 'utf8' }));
  const hc = json.deployment?.serving?.host_costs || {};
  assert.ok(Object.keys(hc).length > 0, `deployment.serving.host_costs in the link: ${JSON.stringify(json.deployment?.serving)}`);
  for (const [k, x] of Object.entries(hc)) assert.ok(Number.isFinite(x) && adopted.includes(k), `${k} = ${x} is named in "${adopted}"`);
  assert.deepEqual(errors, []);
  await context.close();
});
