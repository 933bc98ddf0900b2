// Replay of real data in the browser: pick a bundled Kernel Tuner cache or drop one, race
// strategies on it, see each strategy's samples on the landscape and the true optimum once the
// race ends; the link reproduces the race (a bundled cache by name; a dropped one must be dropped
// again, and a different file is refused by its digest); a bad file keeps the current work.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BASE, CLI, launch, open, text, setInput, runToDone, shot, answered } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const loaded = (page) => page.waitForFunction(() => /^Loaded:/.test(document.querySelector('[data-testid=landscape-status]')?.textContent || ''), null, { timeout: 60000 });

// The CLI's best for the scenario in a link, reading `cache` for a dropped cache.
function cliBestWith(url, cache) {
  const json = execFileSync(CLI, ['url', '--decode', url.split('#')[1]], { encoding: 'utf8' });
  const dir = mkdtempSync(join(tmpdir(), 'tunelab-e2e-'));
  const file = join(dir, 'scenario.json');
  writeFileSync(file, json);
  const args = ['run', file, '--json', ...(cache ? ['--cache', cache] : [])];
  const out = execFileSync(CLI, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  return out.match(/"best":(null|-?[0-9][0-9.eE+-]*)/)[1];
}

async function surfaceCounts(page) {
  return page.evaluate(() => ({
    image: document.querySelectorAll('.tl-chart-surface image').length,
    samples: document.querySelectorAll('.tl-chart-surface .tl-samples > *').length,
    optimum: document.querySelectorAll('.tl-chart-surface [data-testid=optimum]').length,
    nodes: document.getElementsByTagName('*').length,
  }));
}

test('a bundled cache: race on it, samples and the optimum on the landscape, the link reproduces it', async (t) => {
  const { page, context, errors } = await open(browser, BASE);
  // The replay panel sits folded in the side column until a landscape is loaded.
  await page.click('[data-testid=landscape-panel] > summary');
  await page.selectOption('[data-testid=landscape-pick]', 'kt:pnpoly_RTX_2080_Ti');
  await loaded(page);
  assert.equal(await page.$eval('[data-testid=stage]', (e) => e.value), 'landscape', 'the Stage field agrees with the header');
  await setInput(page, 'budget', 40);
  const { best, longTasks } = await runToDone(page);
  const after = await surfaceCounts(page);
  assert.equal(after.image, 1, 'the whole landscape is drawn (one image, not a shape per configuration)');
  t.diagnostic(`pnpoly: best ${best}; ${after.samples} samples drawn; DOM ${after.nodes} nodes; longest task ${Math.round(Math.max(0, ...longTasks))} ms`);
  assert.ok(after.samples >= 40, 'every strategy\'s samples are on the landscape');
  assert.equal(after.optimum, 1, 'the true optimum is marked once the race ends');
  assert.match(await text(page, 'landscape-optimum'), /^True optimum: [0-9.]+ ms at .*Best found, as best \/ optimum: /);
  assert.ok(after.nodes < 5000, `${after.nodes} DOM nodes`);
  await shot(page, 'replay-bundled-pnpoly.png');
  // A landscape point has no operators: the Tune panel neither calls the best "Infeasible" nor
  // draws empty engine charts and an NPU roofline for a GPU kernel's measurement. The best's
  // detail is the engine worker's answer: checked once it has come, not after a fixed time.
  await answered(page);
  const tuneText = await page.textContent('.tune');
  assert.doesNotMatch(tuneText, /Infeasible/);
  assert.equal(await page.locator('.tune [data-testid=point-detail]').count(), 0, 'no empty breakdown for a landscape point');
  // Diagnose on a landscape summarises the search; it does not ask for the loaded cache again.
  await page.click('[data-testid=tab-report]');
  await page.click('[data-testid=diagnose]');
  await page.waitForSelector('[data-testid=search-signals]');
  assert.equal(await page.$('[data-testid=error]'), null, await page.$('[data-testid=error]') && await text(page, 'error'));
  assert.match(await text(page, 'search-signals'), /bayes: 40 evaluations/);
  // The guards price a model on a chip: on a landscape they say so, they price nothing.
  await page.selectOption('[data-testid=guard-chip]', '910B4');
  await page.click('[data-testid=guards-run]');
  await page.waitForSelector('[data-testid=guards]', { timeout: 60000 });
  assert.match(await text(page, 'guards'), /need a model on a chip/);
  assert.doesNotMatch(await text(page, 'guards'), /Runs on|Does not run|Protected layers \(|Delta check/);
  assert.equal(await page.$('[data-testid=error]'), null);
  // A pinned trial shows the cache's value (the page's views price the loaded cache, not a
  // scenario that would need the file again).
  const first = page.locator('[data-testid=trial-table] tbody tr').first();
  const config = await first.locator('td').last().textContent();
  await first.click();
  await page.waitForSelector('[data-testid=pins] td[data-metric=time]', { timeout: 60000 });
  assert.equal(await page.$('[data-testid=error]'), null, await page.$('[data-testid=error]') && await text(page, 'error'));
  assert.equal(await page.$eval('[data-testid=pins] td[data-metric=time]', (e) => e.dataset.value), best, `the pin of ${config} shows the best value`);
  // Compare chips has nothing to compare on measured values, and says so.
  await page.click('[data-testid=compare-chips]');
  await page.waitForSelector('[data-testid=error]');
  assert.match(await text(page, 'error'), /do not depend on the chip/);
  await page.click('[data-testid=error] .dismiss');
  // Explore draws the loaded cache over two of its parameters.
  await page.click('[data-testid=tab-explore]');
  await page.selectOption('[data-testid=explore-x]', 'block_size_x');
  await page.selectOption('[data-testid=explore-y]', 'tile_size');
  await page.click('[data-testid=explore-draw]');
  await page.waitForSelector('.explore .tl-chart-heatmap svg, .explore svg');
  assert.equal(await page.$('[data-testid=error]'), null, await page.$('[data-testid=error]') && await text(page, 'error'));
  await page.click('[data-testid=tab-tune]');
  const url = page.url();
  assert.match(url, /#v1\./);
  // The link, opened afresh, fetches the cache by name and reproduces the race exactly.
  const again = await open(browser, url);
  await loaded(again.page);
  const r2 = await runToDone(again.page);
  assert.equal(r2.best, best, 'the link reproduces the race');
  if (CLI) {
    const cli = cliBestWith(url);
    t.diagnostic(`CLI best ${cli}, browser best ${best}`);
    assert.equal(cli, best, 'the CLI replays the same race');
  }
  assert.deepEqual([...errors, ...again.errors], []);
  await again.context.close();
  await context.close();
});

test('a dropped cache: the link asks for it again, checks its digest, and reproduces the race', async (t) => {
  const file = 'assets/kernel-tuner/pnpoly_RTX_2080_Ti.json.gz';
  const { page, context, errors } = await open(browser, BASE);
  await page.setInputFiles('[data-testid=cache-file]', file);
  await loaded(page);
  assert.match(await text(page, 'scenario-title'), /pnpoly_RTX_2080_Ti\.json\.gz/);
  await setInput(page, 'budget', 30);
  const { best } = await runToDone(page);
  const url = page.url();
  // Opened elsewhere: the file is not in the link; the page says to drop it again.
  const again = await open(browser, url);
  await again.page.waitForFunction(() => /again/.test(document.querySelector('[data-testid=landscape-status]')?.textContent || ''));
  const status = await text(again.page, 'landscape-status');
  t.diagnostic(`reopened link: ${status}`);
  assert.match(status, /Drop 'pnpoly_RTX_2080_Ti\.json\.gz' again \(SHA-256 [0-9a-f]{12}/);
  // A different file is refused by its digest, and the scenario is kept.
  const title = await text(again.page, 'scenario-title');
  await again.page.setInputFiles('[data-testid=cache-file]', 'assets/kernel-tuner/convolution_RTX_2080_Ti.json');
  await again.page.waitForSelector('[data-testid=error]');
  assert.match(await text(again.page, 'error'), /not the file this link was made with: its SHA-256 is [0-9a-f]{64}/);
  assert.equal(await text(again.page, 'scenario-title'), title);
  await again.page.click('[data-testid=error] .dismiss');
  // The same file: loaded, and the race is the same.
  await again.page.setInputFiles('[data-testid=cache-file]', file);
  await loaded(again.page);
  const r2 = await runToDone(again.page);
  assert.equal(r2.best, best, 'dropping the same file again reproduces the race');
  if (CLI) {
    const cli = cliBestWith(url, file);
    t.diagnostic(`CLI best ${cli} (--cache ${file}), browser best ${best}`);
    assert.equal(cli, best);
  }
  await shot(again.page, 'replay-dropped-again.png');
  assert.deepEqual([...errors, ...again.errors], []);
  await again.context.close();
  await context.close();
});

// benchmark_hub ships each cache with a T4 twin (`*_T4.json.gz`): the same measurements as a
// list of results. Written here from the bundled pnpoly cache, the way that twin is laid out.
function t4Twin() {
  const doc = JSON.parse(gunzipSync(readFileSync('assets/kernel-tuner/pnpoly_RTX_2080_Ti.json.gz')).toString('utf8'));
  const results = Object.values(doc.cache).map((rec) => ({
    timestamp: '2023-12-21 10:44:42+00:00',
    configuration: Object.fromEntries(doc.tune_params_keys.map((k) => [k, rec[k]])),
    times: { compilation: 1, framework: 0, search_algorithm: 0, validation: 0, runtimes: [] },
    invalidity: typeof rec.time === 'number' ? 'correct' : 'runtime',
    correctness: 1,
    measurements: [{ name: 'time', value: rec.time, unit: 'ms' }],
    objectives: ['time'],
  }));
  const file = join(mkdtempSync(join(tmpdir(), 'tunelab-e2e-')), 'pnpoly_RTX_2080_Ti_T4.json.gz');
  writeFileSync(file, gzipSync(JSON.stringify({ schema_version: '1.0.0', metadata: { timeunit: 'miliseconds' }, results })));
  return file;
}

test('a dropped T4 results file loads and races like its cache, in the page and the CLI', async (t) => {
  const file = t4Twin();
  const { page, context, errors } = await open(browser, BASE);
  await page.setInputFiles('[data-testid=cache-file]', file);
  await loaded(page);
  assert.match(await text(page, 'landscape-status'), /\(4092 configurations\)/);
  await setInput(page, 'budget', 30);
  const { best } = await runToDone(page);
  assert.match(await text(page, 'landscape-optimum'), /^True optimum: 0\.0159[0-9]* ms at /, 'the optimum of the cache it came from');
  if (CLI) {
    const cli = cliBestWith(page.url(), file);
    t.diagnostic(`T4: CLI best ${cli}, browser best ${best}`);
    assert.equal(cli, best);
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('a bad cache file gives a clear error and keeps the current work', async () => {
  const { page, context, errors } = await open(browser, BASE);
  const title = await text(page, 'scenario-title');
  const hash = new URL(page.url()).hash;
  const dir = mkdtempSync(join(tmpdir(), 'tunelab-e2e-'));
  const bad = join(dir, 'broken.json');
  writeFileSync(bad, '{"tune_params_keys": ["a"], "tune_params": {"a": [1, 2]}, "cache": {"1": {"a": 1}}}');
  // The Replay panel starts closed on a model scenario; its error shows inside it.
  await page.evaluate(() => { const d = document.querySelector('[data-testid=landscape-panel]'); if (d) d.open = true; });
  await page.setInputFiles('[data-testid=cache-file]', bad);
  await page.waitForSelector('[data-testid=error]');
  const msg = await text(page, 'error');
  assert.match(msg, /That file was not loaded: 'broken\.json' is not a Kernel Tuner cache: .*'time'.*Your current scenario is kept/);
  assert.equal(await text(page, 'scenario-title'), title);
  assert.equal(new URL(page.url()).hash, hash, 'the link is unchanged');
  const junk = join(dir, 'junk.json.gz');
  writeFileSync(junk, Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3]));
  await page.click('[data-testid=error] .dismiss');
  await page.setInputFiles('[data-testid=cache-file]', junk);
  await page.waitForSelector('[data-testid=error]');
  assert.match(await text(page, 'error'), /That file was not loaded: 'junk\.json\.gz'/);
  assert.deepEqual(errors, []);
  await context.close();
});
