// Issue 46: a page a newcomer succeeds with. At 1440x900, 1280x720 and a 390x844 phone: the run
// toolbar stays in view, nothing scrolls sideways, chart text is at least 11 px and never
// overlaps or runs outside its chart (measured from the DOM boxes), results are within one screen
// of the toolbar; errors appear next to what caused them; each stage shows its own fields; the
// scenario's name follows an uploaded or pasted model; a click on any point of any chart pins it
// into the panel beside the charts, on every bundled scenario; Copy link confirms or falls back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BASE, launch, open, text, setInput, runToDone, shot, layoutProblems, VIEWPORTS, answered, asked } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });


async function toolbarInView(page) {
  return page.evaluate(() => {
    const r = document.querySelector('[data-testid=toolbar]').getBoundingClientRect();
    const run = document.querySelector('[data-testid=run]').getBoundingClientRect();
    return r.top >= -1 && run.bottom <= innerHeight && run.top >= 0;
  });
}

for (const viewport of VIEWPORTS) {
  test(`${viewport.width}x${viewport.height}: toolbar in view, results within a screen, readable charts`, async () => {
    const { page, context, errors } = await open(browser, BASE, viewport);
    assert.ok(await toolbarInView(page), 'the toolbar is in view at the start');
    await setInput(page, 'budget', 24);
    await page.check('[data-testid=strategy-annealing]');
    await runToDone(page);
    // The best configuration's breakdown under the charts is the engine worker's answer, drawn
    // after the run stops (later on a busy machine): the page is measured with it.
    await answered(page);
    // Scrolled to the end, the toolbar is still in view.
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    await page.waitForTimeout(100);
    assert.ok(await toolbarInView(page), 'the toolbar stays in view at the bottom of the page');
    await page.evaluate(() => window.scrollTo(0, 0));
    // The first chart starts within one screen below the toolbar.
    const gap = await page.evaluate(() => {
      const t = document.querySelector('[data-testid=toolbar]').getBoundingClientRect();
      const c = document.querySelector('.charts svg.tl-svg').getBoundingClientRect();
      return c.top - t.bottom;
    });
    assert.ok(gap < viewport.height, `the first chart is ${gap} px below the toolbar`);
    const problems = await layoutProblems(page);
    await shot(page, `newcomer-${viewport.width}x${viewport.height}.png`);
    assert.deepEqual(problems, []);
    assert.deepEqual(errors, []);
    await context.close();
  });
}

// The same DOM-box checks beyond the Tune tab: the report, Explore (with a drawn heat map),
// Calibrate (a measurement file dropped, its plot drawn) and the teaching layout, at each viewport.
function smallMeasurements() {
  const set = JSON.parse(readFileSync('assets/measurements/ascend-910b.json', 'utf8'));
  set.rows = set.rows.filter((r) => r.id.startsWith('op-hbm-copy') || r.id === 'op-matmul-fp32-768cube');
  const path = join(mkdtempSync(join(tmpdir(), 'tunelab-newcomer-')), 'measurements.json');
  writeFileSync(path, JSON.stringify(set));
  return path;
}

for (const viewport of VIEWPORTS) {
  test(`${viewport.width}x${viewport.height}: report, explore, calibrate and teaching read well too`, async () => {
    const { page, context, errors } = await open(browser, BASE, viewport);
    await setInput(page, 'budget', 24);
    await runToDone(page);
    const found = [];
    const look = async (where) => {
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      for (const p of await layoutProblems(page)) found.push(`${where}: ${p}`);
      await shot(page, `newcomer-${where}-${viewport.width}x${viewport.height}.png`);
    };
    await page.click('[data-testid=tab-report]');
    // The report's parts the engine worker answers (the deployment's exports) are on the page.
    await answered(page);
    await look('report');
    await page.click('[data-testid=tab-explore]');
    // The axes are the stage's parameters, which the engine worker sends once the view opens.
    await page.waitForFunction(() => ['x', 'y'].every((a) => document.querySelector(`[data-testid=explore-${a}]`)?.value), null, { timeout: 120000 }).catch(() => {});
    await page.click('[data-testid=explore-draw]');
    await page.waitForSelector('.tl-chart-heatmap svg', { timeout: 180000 }).catch(() => {});
    await look('explore');
    await page.click('[data-testid=tab-tune]');
    await page.click('[data-testid=calibrate-panel] > summary');
    await page.setInputFiles('[data-testid=calibrate-file]', smallMeasurements());
    await page.waitForFunction(() => /rows predicted/.test(document.querySelector('[data-testid=calibrate-summary]')?.textContent || ''), null, { timeout: 120000 });
    await page.$eval('[data-testid=calibrate-panel]', (e) => e.scrollIntoView());
    await look('calibrate');
    await page.check('[data-testid=teach-layout]');
    await answered(page);
    await page.evaluate(() => window.scrollTo(0, 0));
    await look('teaching');
    assert.deepEqual(found, []);
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test('an invalid budget is refused beside its field and the field shows the budget in force', async () => {
  const { page, context, errors } = await open(browser, BASE);
  const before = await page.inputValue('[data-testid=budget]');
  await setInput(page, 'budget', 0);
  await page.waitForSelector('[data-testid=error].inline-error');
  assert.match(await text(page, 'error'), /Budget: '0' is not a budget/);
  assert.equal(await page.inputValue('[data-testid=budget]'), before);
  const distance = await page.evaluate(() => {
    const e = document.querySelector('[data-testid=error]').getBoundingClientRect();
    const f = document.querySelector('[data-testid=budget]').getBoundingClientRect();
    return e.top - f.bottom;
  });
  assert.ok(distance >= -2 && distance < 60, `the error is ${distance} px below the budget field`);
  // The next action clears it.
  await setInput(page, 'budget', 12);
  assert.equal(await page.$('[data-testid=error]'), null);
  assert.deepEqual(errors, []);
  await context.close();
});

// The goal list comes from the stage's own metric list (`stages::stage_metrics`), before any run.
test('each stage shows its own fields, goals and strategies', async () => {
  const { page, context, errors } = await open(browser, BASE);
  await page.click('text=Goal, limits and workload');
  assert.ok(await page.isVisible('[data-testid=workload-input]'), 'deployment: tokens');
  await page.selectOption('[data-testid=stage]', 'operator');
  // The operator stage's own metrics have arrived (more than the current goal is offered).
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=goal] option')].some((o) => o.value === 'energy_j'));
  const goals = await page.$$eval('[data-testid=goal] option', (l) => l.map((o) => o.value));
  assert.ok(!goals.some((g) => g.startsWith('ttft')), `operator goals: ${goals}`);
  await page.selectOption('[data-testid=stage]', 'diffusion');
  await page.waitForFunction(() => !document.querySelector('[data-testid=workload-input]'));
  assert.equal(await page.$('[data-testid=workload-batch]'), null, 'diffusion: no token batch');
  await page.selectOption('[data-testid=stage]', 'training');
  await page.waitForSelector('[data-testid=workload-seq]');
  assert.equal(await page.$('[data-testid=workload-input]'), null, 'training: no input tokens');
  // A ninth strategy cannot be ticked: it is disabled and says why.
  for (const s of ['random', 'grid', 'genetic', 'annealing', 'local', 'nsga2', 'auto', 'bayes', 'tpe', 'rl']) {
    if (await page.isDisabled(`[data-testid=strategy-${s}]`)) continue;
    if (!(await page.isChecked(`[data-testid=strategy-${s}]`))) await page.check(`[data-testid=strategy-${s}]`);
  }
  const ticked = await page.$$eval('.controls input[type=checkbox]', (l) => l.filter((x) => x.checked).length);
  assert.equal(ticked, 8);
  assert.equal(await page.$('[data-testid=error]'), null, 'nothing refused: the ninth is not offered');
  // Replay: no model, no chip, no "not a measurement".
  await page.click('[data-testid=landscape-panel] > summary');
  await page.selectOption('[data-testid=landscape-pick]', 'toy:branin');
  await page.waitForSelector('[data-testid=landscape-note]');
  assert.equal(await page.$('[data-testid=model]'), null);
  assert.doesNotMatch(await text(page, 'tagline'), /not a measurement/);
  assert.doesNotMatch(await text(page, 'scenario-title'), /llama/i);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the scenario is renamed after a pasted or uploaded model, and warnings look like warnings', async () => {
  const { page, context, errors } = await open(browser, BASE);
  const config = JSON.parse(readFileSync('assets/models/qwen2.5-7b.config.json', 'utf8'));
  await page.click('text=Paste, upload or drop a model');
  await page.fill('[data-testid=model-text]', JSON.stringify(config));
  await page.click('[data-testid=use-model]');
  // The engine worker reads the model before the scenario takes it (and its name).
  await page.waitForFunction(() => /qwen/i.test(document.querySelector('[data-testid=scenario-name]').textContent), null, { timeout: 60000 });
  assert.doesNotMatch(await text(page, 'scenario-name'), /llama/i);
  await page.setInputFiles('[data-testid=model-file]', 'assets/models/sd15-unet.graph.json');
  await page.waitForFunction(() => document.querySelector('[data-testid=scenario-name]').textContent.includes('sd15-unet.graph.json'), null, { timeout: 60000 });
  assert.doesNotMatch(await text(page, 'scenario-name'), /pasted/);
  assert.doesNotMatch(await text(page, 'scenario-title'), /pasted/);
  // A name the user gave is kept.
  await page.click('text=Goal, limits and workload');
  await setInput(page, 'scenario-name-edit', 'My study');
  // The upload is read, then the engine worker reads the model: wait for that answer (not a
  // fixed time, which a busy machine outlasts), then the name must still be the user's. (The
  // field is emptied first: the browser sends no change for the same file picked again.)
  await page.setInputFiles('[data-testid=model-file]', []);
  const before = await asked(page);
  await page.setInputFiles('[data-testid=model-file]', 'assets/models/sd15-unet.graph.json');
  await answered(page, { after: before });
  assert.equal(await text(page, 'scenario-name'), 'My study');
  assert.deepEqual(errors, []);
  await context.close();
});

test('Copy link falls back to a selected field when the clipboard is refused, and confirms when it works', async () => {
  const { page, context, errors } = await open(browser, BASE);
  // A browser that refuses the clipboard (headless Chromium may neither grant nor refuse).
  await page.evaluate(() => Object.defineProperty(navigator, 'clipboard', { value: { writeText: () => Promise.reject(new DOMException('denied', 'NotAllowedError')) } }));
  await page.click('[data-testid=copy-link]');
  await page.waitForSelector('[data-testid=link-field]');
  assert.equal(await page.inputValue('[data-testid=link-field]'), page.url());
  await context.close();
  const granted = await open(browser, BASE);
  await granted.context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await granted.page.click('[data-testid=copy-link]');
  await granted.page.waitForFunction(() => document.querySelector('[data-testid=copy-link]').textContent.includes('copied'));
  assert.deepEqual(errors, []);
  await granted.context.close();
});

test('a click on any point of every chart pins it beside the charts, on every bundled scenario', async () => {
  const { page, context, errors } = await open(browser, BASE);
  const ids = await page.$$eval('[data-testid=bundled] option', (l) => l.map((o) => o.value).filter(Boolean));
  assert.ok(ids.length >= 15, `${ids.length} bundled scenarios`);
  const report = [];
  for (const id of ids) {
    await page.selectOption('[data-testid=bundled]', id);
    await setInput(page, 'budget', 6);
    await runToDone(page);
    const charts = await page.$$eval('.charts .pin-target', (l) => l.length);
    for (let k = 0; k < charts; k++) {
      await page.evaluate(() => document.querySelector('[data-testid=pin-panel] button')?.click());
      const clicked = await page.evaluate((k) => {
        const marks = [...document.querySelectorAll('.charts .pin-target')[k].querySelectorAll('circle, rect, path')].filter((c) => c.querySelector(':scope > title')?.textContent.includes('='));
        const m = marks[marks.length - 1];
        if (!m) return null;
        m.dispatchEvent(new MouseEvent('click', { bubbles: true }));
        return m.querySelector(':scope > title').textContent;
      }, k);
      if (!clicked) continue;
      await page.waitForSelector('[data-testid=pin-panel] td[data-config]', { timeout: 120000 });
      assert.equal(await page.$('[data-testid=error]'), null, `${id}, chart ${k}: ${await page.$('[data-testid=error]') && await text(page, 'error')}`);
      report.push(`${id}#${k}`);
    }
  }
  console.log(`pinned from ${report.length} charts: ${report.join(' ')}`);
  assert.ok(report.length >= ids.length, `${report.length} pins over ${ids.length} scenarios`);
  assert.deepEqual(errors, []);
  await context.close();
});
