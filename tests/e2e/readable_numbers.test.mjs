// End to end: numbers a person can read. For every bundled scenario, the default tuning runs at
// 1440x900; then every number the page shows (HTML text and SVG text) must have at most five
// significant digits, no two chart titles may overlap, and the progress line must not be cut.
//
// What is not read: what the user typed or picks (inputs, text areas, selects), text that is
// not rendered (closed <details>, hidden tabs, tooltips), URLs, hex digests, and identifiers
// that only contain digits (llama2-7b, 910B2, fp16). Raw exports (JSON, CSV) keep full precision
// and are checked by their own tests; the DOM carries them in data-value attributes, not text.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { BASE, launch, open, runToDone, shot, answered } from './helpers.mjs';

const VIEWPORT = { width: 1440, height: 900 };
const MAX_DIGITS = 5;
// TUNELAB_NUMBERS_ONLY=id[,id...]: only these bundled scenarios (to look into one).
const ONLY = (process.env.TUNELAB_NUMBERS_ONLY || '').split(',').filter(Boolean);

/** The numbers in a text as a reader sees them: plain numbers, not digits inside a word. */
export function numbersIn(text) {
  const cleaned = text
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, ' ') // URLs
    .replace(/\barXiv:\s*\d{4}\.\d{4,5}(v\d+)?/gi, ' ') // paper identifiers
    .replace(/\b10\.\d{4,}\/\S+/g, ' ') // DOIs
    .replace(/\b(?=[0-9a-f]*[a-f])[0-9a-f]{12,}\b/gi, ' '); // digests and hashes (hex with a letter)
  // A number: not glued to a word or a decimal point before it. An integer glued to letters
  // after it is a name ("7b", "910B2", "16x"), unless the letters are a magnitude ("25k").
  const re = /(?<![\w.])\d+(?:[.,]\d+)*(?:[eE][+-]?\d+)?/g;
  const out = [];
  for (const m of cleaned.matchAll(re)) {
    const after = cleaned.slice(m.index + m[0].length);
    const integer = !/[.eE]/.test(m[0]);
    if (integer && /^\w/.test(after) && !/^[kMGT](?!\w)/.test(after)) continue;
    out.push(m[0]);
  }
  return out;
}

/** Significant digits of a number as written: leading zeros and the exponent do not count,
 *  nor do an integer's trailing zeros (32000 has two); thousands separators are not digits. */
export function significantDigits(token) {
  let s = token.replace(/[eE][+-]?\d+$/, '');
  const decimal = /\.\d/.test(s) && !/^\d{1,3}(,\d{3})+$/.test(s);
  s = s.replace(/[.,]/g, '').replace(/^0+/, '');
  if (!decimal) s = s.replace(/0+$/, '');
  return s.length;
}

test('the reader finds the numbers a person reads and counts their digits', () => {
  assert.deepEqual(numbersIn('Best: 1063.7420810687952 tokens/s'), ['1063.7420810687952']);
  assert.deepEqual(numbersIn('300 of 300 evaluations (100%)'), ['300', '300', '100']);
  assert.deepEqual(numbersIn('llama2-7b on 910B2, fp16, Qwen2.5-7B, v1.'), []);
  assert.deepEqual(numbersIn('1.25k tokens, 3.2e-5 s, 12 ms'), ['1.25', '3.2e-5', '12']);
  assert.deepEqual(numbersIn('see https://example.org/a/123456789 and 0123456789abcdef01'), []);
  assert.deepEqual(numbersIn('a fit (DeepSeek LLM 2024, arXiv:2401.02954, doi 10.48550/arXiv.2401.02954)'), ['2024']);
  assert.equal(significantDigits('1063.7420810687952'), 17);
  assert.equal(significantDigits('1063.7'), 5);
  assert.equal(significantDigits('0.001235'), 4);
  assert.equal(significantDigits('32000'), 2);
  assert.equal(significantDigits('1.235e7'), 4);
  assert.equal(significantDigits('1,234'), 4);
});

/** In the page: every rendered text that holds a number, with where it is. */
function visibleTexts() {
  const skip = 'input, textarea, select, option, script, style, title, [contenteditable], [aria-hidden=true]';
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.textContent;
    if (!/\d/.test(text)) continue;
    const el = n.parentElement;
    if (!el || el.closest(skip)) continue;
    if (!el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const where = [];
    for (let e = el; e && e !== document.body && where.length < 4; e = e.parentElement) {
      const id = e.dataset?.testid ? `[${e.dataset.testid}]` : '';
      const cls = typeof e.className === 'string' && e.className ? '.' + e.className.split(' ')[0] : '';
      where.push(e.tagName.toLowerCase() + id + cls);
    }
    out.push({ text: text.trim(), where: where.reverse().join(' > ') });
  }
  return out;
}

/** In the page: pairs of rendered chart titles whose boxes overlap, and each title's box. */
function chartTitleOverlaps() {
  const titles = [...document.querySelectorAll('.tl-chart-title')].filter((t) => t.checkVisibility());
  const boxes = titles.map((t) => ({ text: t.textContent, r: t.getBoundingClientRect() }));
  const overlaps = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i].r;
      const b = boxes[j].r;
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 0.5 && h > 0.5) overlaps.push(`'${boxes[i].text}' and '${boxes[j].text}'`);
    }
  }
  return { count: boxes.length, overlaps };
}

/** In the page: whether the progress line shows all its text. */
function progressLine() {
  const label = document.querySelector('.tl-progress-label');
  if (!label) return { text: null };
  const box = label.getBoundingClientRect();
  // Cut off by any ancestor that clips (overflow not visible) and ends before the text does.
  let clippedBy = null;
  for (let e = label.parentElement; e && e !== document.documentElement; e = e.parentElement) {
    const s = getComputedStyle(e);
    if (s.overflowX !== 'visible' && e.getBoundingClientRect().right < box.right - 0.5) {
      clippedBy = e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ')[0] : '');
      break;
    }
  }
  // Or running past the edge of its panel (into the next column).
  const panel = label.closest('.panel')?.getBoundingClientRect();
  if (!clippedBy && panel && box.right > panel.right + 0.5) clippedBy = 'the edge of its panel';
  return { text: label.textContent, scrollWidth: label.scrollWidth, clientWidth: label.clientWidth, right: box.right, viewport: window.innerWidth, clippedBy };
}

let browser;
after(async () => { await browser?.close(); });

test('every bundled scenario, default run at 1440x900: readable numbers, titles apart, progress whole', { timeout: 1500000 }, async (t) => {
  browser = await launch();
  const { page, context, errors } = await open(browser, BASE, VIEWPORT);
  // Every file in assets/scenarios: from the Bundled list where it is there, else (the
  // landscapes, reached from the gallery) opened as a pasted scenario, as a user can.
  const listed = await page.$$eval('[data-testid=bundled] option', (o) => o.map((x) => x.value).filter((v) => v));
  const ids = readdirSync('assets/scenarios').filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).filter((id) => !ONLY.length || ONLY.includes(id));
  assert.ok(ids.length >= (ONLY.length ? 1 : 10), `the bundled scenarios are found (${ids.length})`);
  const problems = [];
  for (const id of ids) {
    if (listed.includes(id)) {
      await page.selectOption('[data-testid=bundled]', id);
    } else {
      // Replay hides the model section: come back to a model scenario to paste from it.
      if (!(await page.isVisible('text=Paste, upload or drop a model'))) await page.selectOption('[data-testid=bundled]', listed[0]);
      await page.click('text=Paste, upload or drop a model');
      await page.fill('[data-testid=model-text]', readFileSync(`assets/scenarios/${id}.json`, 'utf8'));
      await page.click('[data-testid=open-scenario]');
      if (await page.isVisible('text=Paste, upload or drop a model')) await page.click('text=Paste, upload or drop a model');
    }
    if (JSON.parse(readFileSync(`assets/scenarios/${id}.json`, 'utf8')).stage === 'landscape') {
      await page.waitForFunction(() => /^Loaded:/.test(document.querySelector('[data-testid=landscape-status]')?.textContent || ''), null, { timeout: 60000 }).catch(() => {});
    }
    const started = Date.now();
    await runToDone(page);
    // What the engine worker answers is read too, once it has come (later on a busy machine):
    // the best configuration's breakdown after the run stops (not for a landscape), a diffusion
    // pipeline's timeline rows, the model banner.
    await answered(page);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await shot(page, `numbers-${id}.png`);

    const texts = await page.evaluate(visibleTexts);
    let read = 0;
    for (const { text, where } of texts) {
      for (const n of numbersIn(text)) {
        read++;
        const digits = significantDigits(n);
        if (digits > MAX_DIGITS) problems.push(`${id}: ${n} (${digits} significant digits) in ${where}: '${text.slice(0, 120)}'`);
      }
    }
    const titles = await page.evaluate(chartTitleOverlaps);
    for (const o of titles.overlaps) problems.push(`${id}: chart titles overlap: ${o}`);
    const p = await page.evaluate(progressLine);
    if (p.text === null) problems.push(`${id}: no progress line`);
    else if (p.scrollWidth > p.clientWidth || p.clippedBy || p.right > p.viewport) {
      problems.push(`${id}: the progress line '${p.text}' is cut off (scrollWidth ${p.scrollWidth} > clientWidth ${p.clientWidth}, clipped by ${p.clippedBy}, right edge ${p.right.toFixed(0)} of ${p.viewport})`);
    }
    // The teaching layout has a narrower side column: the progress line must fit there too.
    await page.check('[data-testid=teach-layout]');
    const q = await page.evaluate(progressLine);
    if (q.text === null || q.scrollWidth > q.clientWidth || q.clippedBy || q.right > q.viewport) {
      problems.push(`${id}, teaching layout: the progress line '${q.text}' is cut off (clipped by ${q.clippedBy}, right edge ${q.right?.toFixed(0)})`);
    }
    await page.uncheck('[data-testid=teach-layout]');
    t.diagnostic(`${id}: ${Date.now() - started} ms, ${read} numbers read, ${titles.count} chart titles`);
    await page.click('[data-testid=reset]');
  }
  assert.deepEqual(problems, [], `unreadable numbers or layout faults:\n${problems.join('\n')}`);
  assert.deepEqual(errors, []);
  await context.close();
});
