// The teaching gallery: one click loads a 2-D landscape (smooth, rugged, deceptive toys, a real
// Kernel Tuner cache slice, a real matmul tiling slice) on the teaching layout; each races with
// the samples on the canvas, the GP card in the goal's units, and a bounded DOM; a slice's link
// reopens the same slice.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, launch, open, text, setInput, runToDone, shot, answered } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function gallery(page, id, budget) {
  await page.click(`[data-testid=gallery-${id}]`);
  await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.textContent === 'idle');
  if (budget) await setInput(page, 'budget', budget);
  await page.selectOption('[data-testid=speed]', '0');
}

test('each gallery entry loads with one click and races on the teaching layout', async (t) => {
  const { page, context, errors } = await open(browser, BASE);
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.check('[data-testid=teach-layout]');
  await page.waitForSelector('[data-testid=gallery]');

  // 1. The toy landscape: the whole surface, each strategy's samples, the optimum at the end.
  await gallery(page, 'toy-branin');
  assert.match(await text(page, 'scenario-title'), /Branin/);
  await runToDone(page);
  const toy = await page.evaluate(() => ({
    image: document.querySelectorAll('.tl-chart-surface image').length,
    series: document.querySelectorAll('.tl-chart-surface .tl-samples').length,
    optimum: document.querySelectorAll('.tl-chart-surface [data-testid=optimum]').length,
    gp: document.querySelector('[data-testid=lane-bayes] .tl-teach-now')?.textContent || '',
    nodes: document.getElementsByTagName('*').length,
    surfaceOnScreen: (() => { const b = document.querySelector('.tl-chart-surface')?.getBoundingClientRect(); return !!b && b.top >= 0 && b.top < window.innerHeight; })(),
  }));
  t.diagnostic(`toy: ${JSON.stringify(toy)}`);
  assert.equal(toy.image, 1);
  assert.equal(toy.series, 4, 'four strategies\' samples on the surface');
  assert.equal(toy.optimum, 1);
  assert.ok(toy.surfaceOnScreen, 'the landscape is on the first screen');
  assert.match(toy.gp, /next point predicted -?[0-9.]+/);
  assert.ok(toy.nodes < 5000, `${toy.nodes} DOM nodes`);
  await shot(page, 'gallery-toy-branin.png');

  // 2. The real Kernel Tuner cache slice (fetched as a static file; two parameters free).
  await gallery(page, 'kt-slice', 30);
  await page.waitForFunction(() => /^Loaded:/.test(document.querySelector('[data-testid=landscape-status]')?.textContent || ''), null, { timeout: 60000 });
  await runToDone(page);
  const kt = await page.evaluate(() => ({
    optimum: document.querySelector('[data-testid=landscape-optimum]')?.textContent || '',
    gp: document.querySelector('[data-testid=lane-bayes] .tl-teach-now')?.textContent || '',
    note: document.querySelector('.tl-chart-surface .tl-note')?.textContent || '',
    desc: document.querySelector('.tl-chart-surface svg desc')?.textContent || '',
    nodes: document.getElementsByTagName('*').length,
  }));
  t.diagnostic(`kernel tuner: ${JSON.stringify(kt)}`);
  // The note is cut to the canvas's width; the chart's description carries it whole.
  assert.match(kt.note, /^A slice of the cache; fixed: filter_height=15/);
  assert.match(kt.desc, /A slice of the cache; fixed: .*read_only=1/);
  assert.match(kt.optimum, /^True optimum: [0-9.]+ ms/);
  assert.match(kt.gp, /next point predicted [0-9.]+ ms/, 'the GP speaks in milliseconds');
  assert.ok(kt.nodes < 5000, `${kt.nodes} DOM nodes`);
  await shot(page, 'gallery-kt-slice.png');
  // The link carries the slice: a fresh page opens the same one.
  const link = page.url();
  const again = await open(browser, link);
  assert.match(await text(again.page, 'scenario-name'), /slice/i);
  await again.context.close();

  // 3. The flash-attention tiling space (device model), a dozen Steps: every strategy moves
  // together on the surface, and the GP card predicts in the goal's own unit (ms), not its log
  // or rank scale.
  await gallery(page, 'tiling-slice', 16);
  assert.match(await text(page, 'scenario-title'), /flash attention/i);
  for (let n = 1; n <= 12; n++) {
    await page.click('[data-testid=step]');
    await page.waitForFunction((n) => {
      const ps = [...document.querySelectorAll('[data-testid=lane-evaluations]')];
      return document.querySelector('[data-testid=status]')?.textContent === 'paused' && ps.length === 4 && ps.every((p) => parseInt(p.textContent, 10) === n);
    }, n, { timeout: 60000 });
  }
  // A model-priced slice's surface is priced whole by the engine worker (asked when the first
  // Step starts the race): on a busy machine it may come after the Steps.
  await answered(page);
  const mm = await page.evaluate(() => ({
    gp: document.querySelector('[data-testid=lane-bayes] .tl-teach-now')?.textContent || '',
    surface: document.querySelectorAll('.tl-chart-surface').length,
    nodes: document.getElementsByTagName('*').length,
  }));
  t.diagnostic(`flash-attention tiling after 12 Steps: ${JSON.stringify(mm)}`);
  assert.equal(mm.surface, 1, 'the slice is drawn whole, priced by the device model');
  assert.match(mm.gp, /next point predicted [0-9.]+ ms/);
  assert.doesNotMatch(mm.gp, /predicted -/, 'no transformed (log) units');
  assert.ok(mm.nodes < 5000, `${mm.nodes} DOM nodes`);
  await shot(page, 'gallery-tiling-slice.png');
  assert.deepEqual(errors, []);
  await context.close();
});
