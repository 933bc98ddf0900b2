// One consistent story: the header names the scenario as it is now; the diagnosis of the best
// configuration equals the report's best (deployment and operator stages); no suggestion offered
// as an improvement lowers the goal (checked again with `tunelab eval` when TUNELAB_CLI is set);
// a pinned trial's metrics equal `tunelab eval` for the same configuration; nothing overflows a
// phone screen.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BASE, CLI, launch, open, text, setInput, runToDone, shot, answered } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** `tunelab eval` of the scenario in `url` at `config` ("a=1, b=x"), as parsed JSON. */
function cliEval(url, config) {
  const fragment = url.split('#')[1];
  const json = execFileSync(CLI, ['url', '--decode', fragment], { encoding: 'utf8' });
  const dir = mkdtempSync(join(tmpdir(), 'tunelab-e2e-'));
  const file = join(dir, 'scenario.json');
  writeFileSync(file, json);
  const set = config.split(',').map((s) => s.trim()).filter(Boolean).join(',');
  return JSON.parse(execFileSync(CLI, ['eval', file, '--set', set, '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 }));
}

async function diagnoseBest(page) {
  await page.click('[data-testid=tab-report]');
  await page.click('[data-testid=diagnose]');
  await page.waitForSelector('[data-testid=diag-metrics]', { timeout: 120000 });
  return page.getAttribute('[data-testid=diag-metrics]', 'data-value');
}

test('the title follows the model and the chip', async () => {
  const { page, context, errors } = await open(browser, BASE);
  await page.selectOption('[data-testid=model]', 'qwen2.5-7b');
  await page.selectOption('[data-testid=device]', '910B4');
  const title = await text(page, 'scenario-title');
  assert.match(title, /qwen2\.5-7b/i, title);
  assert.match(title, /910B4/, title);
  assert.match(title, /deployment/, title);
  // Changing the goal changes the title too (its section starts closed).
  await page.click('text=Goal, limits and workload');
  await page.selectOption('[data-testid=goal]', 'ttft_ms');
  assert.match(await text(page, 'scenario-title'), /minimise time to first token/, await text(page, 'scenario-title'));
  assert.deepEqual(errors, []);
  await context.close();
});

test('deployment: diagnosis equals the report, suggestions serve the goal, a pin equals tunelab eval', async (t) => {
  const { page, context, errors } = await open(browser, BASE);
  await setInput(page, 'budget', 24);
  await setInput(page, 'seed', 3);
  const { best } = await runToDone(page);
  const diag = await diagnoseBest(page);
  assert.equal(diag, best, `diagnosis ${diag} vs best ${best}`);
  assert.equal(await page.getAttribute('[data-testid=report-best]', 'data-value'), best);
  // Every suggestion offered as an improvement raises the goal (tokens/s is maximised).
  const sugg = await page.$$eval('[data-testid=suggestions] li', (l) => l.map((x) => ({ effect: Number(x.dataset.effect), goal: Number(x.dataset.goal), config: x.dataset.config })));
  t.diagnostic(`${sugg.length} suggestions`);
  for (const s of sugg) {
    assert.ok(s.effect > 0, `a suggestion with effect ${s.effect}`);
    assert.ok(s.goal > Number(best), `suggestion goal ${s.goal} vs best ${best}`);
  }
  const url = page.url();
  if (CLI && sugg.length) {
    const e = cliEval(url, sugg[0].config);
    // The default deployment's goal is throughput per chip (its first objective), not the total.
    assert.equal(e.metrics.tokens_per_s_per_chip, sugg[0].goal, 'the suggestion is what tunelab eval prices');
  }
  // Pin the first row of the trial table; its metrics equal tunelab eval's.
  await page.click('[data-testid=trial-table] tbody tr');
  await page.waitForSelector('[data-testid=pins] td[data-config]', { timeout: 120000 });
  const config = await page.getAttribute('[data-testid=pins] td[data-config]', 'data-config');
  const pinned = await page.$$eval('[data-testid=pins] td[data-metric]', (l) => Object.fromEntries(l.map((x) => [x.dataset.metric, x.dataset.value])));
  assert.ok(Object.keys(pinned).length >= 5, JSON.stringify(pinned));
  if (CLI) {
    const e = cliEval(url, config);
    for (const [name, v] of Object.entries(pinned)) {
      if (v === '') continue;
      assert.equal(Number(v), e.metrics[name], `${name}: pinned ${v} vs tunelab eval ${e.metrics[name]}`);
    }
  } else {
    t.diagnostic('TUNELAB_CLI not set: pinned-vs-eval comparison skipped');
  }
  await shot(page, 'consistency-report-1440.png');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a point clicked in the trial scatter is pinned with the metrics tunelab eval gives', async (t) => {
  const { page, context, errors } = await open(browser, BASE);
  await setInput(page, 'budget', 16);
  await runToDone(page);
  // The best point of the scatter (a circle whose tooltip starts with "best — ").
  const clicked = await page.evaluate(() => {
    const marks = [...document.querySelectorAll('.pin-target circle')].filter((c) => c.querySelector(':scope > title'));
    const best = marks.find((c) => c.querySelector(':scope > title').textContent.startsWith('best — ')) || marks[0];
    if (!best) return null;
    best.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    return best.querySelector(':scope > title').textContent;
  });
  assert.ok(clicked, 'the scatter has marks with tooltips');
  // The pin beside the charts is priced by the engine worker: let its answer come before the
  // Tune view (and that panel) is left (later on a busy machine).
  await page.waitForSelector('[data-testid=pin-panel] td[data-config]', { timeout: 120000 });
  await page.click('[data-testid=tab-report]');
  await page.waitForSelector('[data-testid=pins] td[data-config]', { timeout: 120000 });
  const config = await page.getAttribute('[data-testid=pins] td[data-config]', 'data-config');
  assert.ok(clicked.includes(config.split(',')[0]), `pinned ${config} from ${clicked}`);
  if (CLI) {
    const e = cliEval(page.url(), config);
    const pinned = await page.$$eval('[data-testid=pins] td[data-metric]', (l) => Object.fromEntries(l.map((x) => [x.dataset.metric, x.dataset.value])));
    for (const [name, v] of Object.entries(pinned)) {
      if (v !== '') assert.equal(Number(v), e.metrics[name], `${name}`);
    }
  } else {
    t.diagnostic('TUNELAB_CLI not set: pinned-vs-eval comparison skipped');
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('operator stage: diagnosis equals the report at tuned tilings', async () => {
  const { page, context, errors } = await open(browser, BASE);
  await page.selectOption('[data-testid=stage]', 'operator');
  await setInput(page, 'budget', 20);
  const { best } = await runToDone(page);
  const diag = await diagnoseBest(page);
  assert.equal(diag, best, `diagnosis ${diag} vs best ${best}`);
  const sugg = await page.$$eval('[data-testid=suggestions] li', (l) => l.map((x) => Number(x.dataset.effect)));
  for (const e of sugg) assert.ok(e > 0, `a suggestion with effect ${e}`);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a template previews its changes and can be undone', async () => {
  const { page, context, errors } = await open(browser, BASE);
  const before = await text(page, 'scenario-title');
  // The menu and the preview are the engine worker's answers.
  await page.selectOption('[data-testid=template]', 'llm-310p-edge', { timeout: 60000 });
  await page.waitForSelector('[data-testid=template-preview]', { timeout: 60000 });
  const preview = await text(page, 'template-preview');
  assert.match(preview, /Chip: 910B2 → 310P/, preview);
  assert.equal(await text(page, 'scenario-title'), before, 'nothing changes before Apply');
  await page.click('[data-testid=template-apply]');
  assert.match(await text(page, 'scenario-title'), /310P/);
  await page.click('[data-testid=template-undo]');
  assert.equal(await text(page, 'scenario-title'), before);
  assert.deepEqual(errors, []);
  await context.close();
});

test('phone: nothing overflows horizontally (start, Tune after a run, report)', async () => {
  const { page, context } = await open(browser, BASE, { width: 390, height: 844 });
  const start = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(start <= 390, `the start page is ${start} px wide on a 390 px screen`);
  await setInput(page, 'budget', 12);
  await runToDone(page);
  const tune = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(tune <= 390, `the Tune view after a run is ${tune} px wide on a 390 px screen`);
  await diagnoseBest(page);
  // The report's parts the engine worker answers (the deployment's exports, the headline's
  // spread) come after the diagnosis on a busy machine: measure the page with them.
  await answered(page);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  await shot(page, 'consistency-report-390.png');
  assert.ok(width <= 390, `the page is ${width} px wide on a 390 px screen`);
  await context.close();
});

test('a point clicked in the convergence chart is pinned: the trial that reached that best', async (t) => {
  const { page, context, errors } = await open(browser, BASE);
  await setInput(page, 'budget', 16);
  const { best } = await runToDone(page);
  // The last improvement of the convergence chart (its tooltip: "<configuration> — strategy: ...").
  const clicked = await page.evaluate(() => {
    const marks = [...document.querySelectorAll('.tl-chart-convergence circle.tl-pin')].filter((c) => c.querySelector(':scope > title')?.textContent.includes('='));
    const last = marks[marks.length - 1];
    if (!last) return null;
    last.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    return last.querySelector(':scope > title').textContent;
  });
  assert.ok(clicked, 'the convergence chart has improvement marks naming their configuration');
  // The pin beside the charts is priced by the engine worker: let its answer come before the
  // Tune view (and that panel) is left (later on a busy machine).
  await page.waitForSelector('[data-testid=pin-panel] td[data-config]', { timeout: 120000 });
  await page.click('[data-testid=tab-report]');
  await page.waitForSelector('[data-testid=pins] td[data-config]', { timeout: 120000 });
  const config = await page.getAttribute('[data-testid=pins] td[data-config]', 'data-config');
  // The tooltip starts with the trial's name ("genetic #7: "), then the configuration.
  assert.equal(clicked.split(' — ')[0].replace(/^[^=]*#\d+: /, ''), config, 'the pinned configuration is the one in the tooltip');
  // The tooltip's best is the pinned configuration's goal, priced by the same function.
  const pinned = await page.$$eval('[data-testid=pins] td[data-metric]', (l) => Object.fromEntries(l.map((x) => [x.dataset.metric, x.dataset.value])));
  const goal = Object.values(pinned)[0];
  assert.ok(goal !== undefined && goal !== '', JSON.stringify(pinned));
  t.diagnostic(`pinned ${config}: goal ${goal}, run best ${best}`);
  if (CLI) {
    const e = cliEval(page.url(), config);
    for (const [name, v] of Object.entries(pinned)) {
      if (v !== '') assert.equal(Number(v), e.metrics[name], `${name}`);
    }
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('every chart saves its own drawing as SVG', async () => {
  const { page, context, errors } = await open(browser, BASE);
  for (const s of ['genetic', 'annealing', 'bayes']) await page.check(`[data-testid=strategy-${s}]`);
  await setInput(page, 'budget', 24);
  await runToDone(page);
  // Wait for the best configuration's breakdown (drawn once the run stops).
  await page.waitForSelector('[data-testid=point-detail] .tl-chart-roofline svg', { timeout: 120000 });
  const kinds = await page.$$eval('.tune [data-testid^=svg-]', (b) => b.filter((x) => x.offsetParent).map((x) => x.dataset.testid.slice(4)));
  for (const k of ['convergence', 'scatter', 'ga', 'annealing', 'gp', 'breakdown', 'hotspots', 'roofline']) assert.ok(kinds.includes(k), `no SVG button for ${k}: ${kinds}`);
  const save = async (sel) => {
    const [d] = await Promise.all([page.waitForEvent('download'), page.click(sel)]);
    const { readFileSync } = await import('node:fs');
    return { name: d.suggestedFilename(), text: readFileSync(await d.path(), 'utf8') };
  };
  for (const k of kinds) {
    const { name, text: svg } = await save(`.tune [data-testid=svg-${k}]`);
    assert.equal(name, `tunelab-${k}.svg`);
    assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/, `${k}: ${svg.slice(0, 80)}`);
    assert.ok(svg.endsWith('</svg>'), k);
    // The file is the drawing on the screen (same title).
    const shown = await page.$eval(`.tune [data-testid=svg-${k}]`, (b) => b.parentElement.querySelector('svg > title')?.textContent);
    assert.ok(svg.includes(`<title>${shown.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')}</title>`), `${k}: ${shown}`);
  }
  // The heat map too (Explore).
  await page.click('[data-testid=tab-explore]');
  // The axes are the stage's parameters, which the engine worker sends once the view opens.
  await page.waitForFunction(() => ['x', 'y'].every((a) => document.querySelector(`[data-testid=explore-${a}]`)?.value), null, { timeout: 120000 });
  await page.click('[data-testid=explore-draw]');
  await page.waitForSelector('.tl-chart-heatmap svg', { timeout: 180000 });
  const heat = await save('[data-testid=svg-heatmap]');
  assert.equal(heat.name, 'tunelab-heatmap.svg');
  assert.match(heat.text, /tl-heatmap|data-cell/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('Compare chips tunes every chip on its own, beside the current best, titled with the right chip', async (t) => {
  const { page, context, errors } = await open(browser, BASE);
  await page.selectOption('[data-testid=bundled]', 'llama2-7b-910B2-deployment');
  await setInput(page, 'budget', 24);
  const { best } = await runToDone(page);
  await page.click('[data-testid=tab-report]');
  await setInput(page, 'chip-budget', 10);
  const t0 = Date.now();
  await page.click('[data-testid=compare-chips]');
  await page.waitForFunction(() => {
    const rows = [...document.querySelectorAll('[data-testid=chip-table] tbody tr')];
    return rows.length > 0 && rows.every((r) => r.dataset.state === 'done');
  }, null, { timeout: 120000 });
  const rows = await page.$$eval('[data-testid=chip-table] tbody tr', (l) => l.map((r) => ({ chip: r.dataset.chip, own: r.dataset.own, ported: r.dataset.ported, title: r.title, text: r.textContent })));
  t.diagnostic(`${rows.length} chips tuned in ${Date.now() - t0} ms: ${await text(page, 'chips-status')}`);
  assert.ok(rows.length >= 5, JSON.stringify(rows));
  assert.match(await text(page, 'chips-title'), /910B2/);
  const head = await page.$$eval('[data-testid=chip-table] th', (l) => l.map((x) => x.textContent).join(' | '));
  assert.match(head, /tuned on 910B2/, head);
  assert.match(head, /10 evaluations per strategy/, head);
  for (const r of rows) {
    // Each row's tooltip is its own study's title, naming that chip.
    if (r.own) assert.match(r.title, new RegExp(`on ${r.chip}:`), r.title);
    // A chip's own best is never worse than the current best there (throughput is maximised).
    if (r.own && r.ported) assert.ok(Number(r.own) >= Number(r.ported), `${r.chip}: own ${r.own} < current ${r.ported}`);
  }
  const home = rows.find((r) => r.chip === '910B2');
  assert.equal(home.ported, best, 'the current best on its own chip is the run\'s best');
  assert.ok(rows.some((r) => r.chip !== '910B2' && r.own && r.own !== home.own), 'chips differ');
  if (CLI) {
    // `tunelab chips` on the same scenario gives the same rows.
    const fragment = page.url().split('#')[1];
    const json = execFileSync(CLI, ['url', '--decode', fragment], { encoding: 'utf8' });
    const dir = mkdtempSync(join(tmpdir(), 'tunelab-e2e-'));
    const file = join(dir, 'scenario.json');
    writeFileSync(file, json);
    const cli = JSON.parse(execFileSync(CLI, ['chips', file, '--budget', '10', '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 }));
    for (const c of cli) {
      const r = rows.find((x) => x.chip === c.chip);
      const own = c.metrics[0]?.[1];
      if (own === undefined) assert.equal(r.own, '', c.chip);
      else assert.equal(Number(r.own), own, `${c.chip}: app ${r.own} vs tunelab chips ${own}`);
    }
  } else {
    t.diagnostic('TUNELAB_CLI not set: app-vs-CLI comparison skipped');
  }
  await shot(page, 'compare-chips-1440.png');
  assert.deepEqual(errors, []);
  await context.close();
});
