// Shared helpers for the end-to-end tests: Debian's Chromium driven by playwright-core.
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const BASE = process.env.TUNELAB_URL || 'http://127.0.0.1:8080/';
export const CLI = process.env.TUNELAB_CLI || '';
export const SHOTS = process.env.TUNELAB_SHOTS || 'target/e2e-shots';

// The quiet flags that keep Chromium off the (closed) network on these machines.
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export function launch() {
  return chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ARGS, headless: true });
}

// Before any page script: record long tasks, when the app first rendered its run button, and
// the questions asked of the engine workers (see `answered`).
function instrument({ answerDelayMs }) {
  window.__longTasks = [];
  window.__firstRender = null;
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push(e.duration);
    }).observe({ type: 'longtask', buffered: true });
  } catch (e) { window.__longTaskError = String(e); }
  new MutationObserver((_, obs) => {
    if (document.querySelector('[data-testid=run]')) {
      window.__firstRender = performance.now();
      obs.disconnect();
    }
  }).observe(document, { childList: true, subtree: true });
  // The questions the page sends an engine worker (a view's `ask`, a heat map, a point's detail:
  // `{"kind":"ask","run":7,...}`, src/worker/ask.rs) until the page has handled their answers
  // (`{"answer":{"run":7,...}}`, or heatmap / detail / error): `answered` waits on these counts.
  // Only the head of each message is read (a run's updates can be large). The answers reach the
  // page's handler (`onmessage`, which the app sets) `answerDelayMs` late when that is given
  // (TUNELAB_ANSWER_DELAY_MS: a slow machine's worker, to bring out tests that read an answer
  // before it has come), in the order the worker sent them.
  window.__asked = 0;
  window.__unanswered = 0;
  const waiting = new WeakMap();
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (message, ...rest) {
    const q = typeof message === 'string' && /^\{"kind":"(?:ask|heatmap|detail)","run":(\d+)/.exec(message.slice(0, 48));
    if (q) {
      let runs = waiting.get(this);
      if (!runs) {
        const mine = new Set();
        waiting.set(this, (runs = mine));
        // A worker that stops answers nothing more (the page answers its questions with the reason).
        this.addEventListener('error', () => { window.__unanswered -= mine.size; mine.clear(); });
      }
      if (!runs.has(q[1])) {
        runs.add(q[1]);
        window.__asked++;
        window.__unanswered++;
      }
    }
    return post.call(this, message, ...rest);
  };
  const onmessage = Object.getOwnPropertyDescriptor(Worker.prototype, 'onmessage');
  Object.defineProperty(Worker.prototype, 'onmessage', {
    configurable: true,
    enumerable: onmessage.enumerable,
    get() { return onmessage.get.call(this); },
    set(handler) {
      if (typeof handler !== 'function') return onmessage.set.call(this, handler);
      const worker = this;
      onmessage.set.call(this, function (e) {
        const handle = () => {
          try {
            return handler.call(worker, e);
          } finally {
            const a = typeof e.data === 'string' && /^\{"(?:answer|heatmap|detail|error)":\{"run":(\d+)/.exec(e.data.slice(0, 48));
            if (a && waiting.get(worker)?.delete(a[1])) window.__unanswered--;
          }
        };
        if (answerDelayMs > 0 && waiting.has(worker)) setTimeout(handle, answerDelayMs);
        else handle();
      });
    },
  });
}

/** Opens `url` in a fresh context (1360x900 unless `viewport` says otherwise); returns the page
 *  and the uncaught errors it reports. `answerDelayMs` delays every engine-worker answer (a slow
 *  machine's worker; default TUNELAB_ANSWER_DELAY_MS, else none). */
export async function open(browser, url, viewport = { width: 1360, height: 900 }, { answerDelayMs = Number(process.env.TUNELAB_ANSWER_DELAY_MS) || 0 } = {}) {
  const context = await browser.newContext({ viewport, acceptDownloads: true });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('dialog', (d) => { errors.push('dialog: ' + d.message()); d.dismiss(); });
  await page.addInitScript(instrument, { answerDelayMs });
  await page.goto(url);
  await page.waitForSelector('[data-testid=run]');
  return { page, context, errors };
}

export const text = (page, id) => page.textContent(`[data-testid=${id}]`);

/** How many questions the page has sent its engine worker so far (see `answered`). */
export const asked = (page) => page.evaluate(() => window.__asked);

/** Waits until every question the page has sent an engine worker (a view's `ask`, a heat map, a
 *  point's detail: they are answered asynchronously, later on a busy machine) has its answer,
 *  and the page has drawn it. With `after` (a count from `asked`), waits first for a question
 *  sent after that count: the one an action just asked. An answer that asks again is waited for
 *  too (the count must stay at zero over two frames). */
export async function answered(page, { after = null, timeout = 180000 } = {}) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const left = Math.max(1000, deadline - Date.now());
    await page.waitForFunction((after) => {
      if (window.__unanswered === undefined) throw new Error('the page was not opened with open() (no worker instrumentation)');
      return window.__unanswered === 0 && (after === null || window.__asked > after);
    }, after, { timeout: left, polling: 100 });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    if (await page.evaluate(() => window.__unanswered === 0)) return;
    if (Date.now() > deadline) throw new Error('the engine worker still had questions to answer');
  }
}

/** Sets an input and fires `change` as a person leaving the field would. */
export async function setInput(page, id, value) {
  await page.fill(`[data-testid=${id}]`, String(value));
  await page.dispatchEvent(`[data-testid=${id}]`, 'change');
}

/** Presses Run and waits for `status` to read done; returns best (exact, as `tunelab run --json`
 *  prints it: the page shows it rounded) and the long tasks seen. */
export async function runToDone(page) {
  await page.evaluate(() => { window.__longTasks = []; });
  await page.click('[data-testid=run]');
  await page.waitForFunction(() => {
    const status = document.querySelector('[data-testid=status]')?.textContent;
    return status === 'done' || (status === 'idle' && document.querySelector('[data-testid=error]'));
  }, null, { timeout: 180000 });
  const status = await text(page, 'status');
  if (status !== 'done') throw new Error(`the run did not finish: ${await text(page, 'error')}`);
  const longTasks = await page.evaluate(() => window.__longTasks.slice());
  return { best: await page.getAttribute('[data-testid=best]', 'data-value'), longTasks };
}

export async function shot(page, name) {
  mkdirSync(SHOTS, { recursive: true });
  const path = join(SHOTS, name);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** The CLI's `best` for the scenario in a link, exactly as `tunelab run --json` prints it. */
export function cliBest(url) {
  const fragment = url.split('#')[1];
  const json = execFileSync(CLI, ['url', '--decode', fragment], { encoding: 'utf8' });
  const dir = mkdtempSync(join(tmpdir(), 'tunelab-e2e-'));
  const file = join(dir, 'scenario.json');
  writeFileSync(file, json);
  const out = execFileSync(CLI, ['run', file, '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const m = out.match(/"best":(null|-?[0-9][0-9.eE+-]*)/);
  if (!m) throw new Error('no "best" in tunelab run --json output');
  return m[1];
}

/** The fragment the CLI writes for a scenario JSON text. */
export function cliFragment(scenarioJson) {
  const dir = mkdtempSync(join(tmpdir(), 'tunelab-e2e-'));
  const file = join(dir, 'scenario.json');
  writeFileSync(file, scenarioJson);
  return execFileSync(CLI, ['url', file], { encoding: 'utf8' }).trim();
}

/** Problems with the text the page shows, measured from DOM boxes (issue 46): SVG text under
 *  11 px, outside its chart's box, or overlapping another text of the same chart; a chart title
 *  cut by the box its chart scrolls in (then its wrapping HTML caption must show it whole); on a
 *  desktop (1280 px and wider) a chart scrolling sideways inside its box (its legend or ticks cut
 *  at the box's edge); HTML buttons whose label wraps; the page wider than the window. */
export async function layoutProblems(page) {
  return page.evaluate(() => {
    const bad = [];
    const vw = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > vw + 1) bad.push(`page scrolls sideways: ${document.documentElement.scrollWidth} > ${vw}`);
    const visible = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden'; };
    for (const svg of document.querySelectorAll('svg.tl-svg')) {
      if (!visible(svg)) continue;
      const box = svg.getBoundingClientRect();
      const scale = box.width / svg.viewBox.baseVal.width;
      const texts = [...svg.querySelectorAll('text')].filter((t) => t.textContent.trim() && visible(t));
      const rects = texts.map((t) => ({ t, r: t.getBoundingClientRect(), size: parseFloat(getComputedStyle(t).fontSize) * scale }));
      for (const { t, r, size } of rects) {
        if (size < 10.95) bad.push(`${svg.getAttribute('aria-label')}: "${t.textContent}" at ${size.toFixed(1)} px`);
        if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1) bad.push(`${svg.getAttribute('aria-label')}: "${t.textContent}" outside its chart`);
      }
      for (let i = 0; i < rects.length; i++) {
        for (let j = i + 1; j < rects.length; j++) {
          const a = rects[i].r, b = rects[j].r;
          const ox = Math.min(a.right, b.right) - Math.max(a.left, b.left);
          const oy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
          if (ox > 2 && oy > 2) bad.push(`${svg.getAttribute('aria-label')}: "${rects[i].t.textContent}" overlaps "${rects[j].t.textContent}"`);
        }
      }
      // The box the chart scrolls in: its title is read whole, on the chart or in the caption.
      const scroller = svg.closest('.tl-chart');
      if (!scroller) continue;
      const sb = scroller.getBoundingClientRect();
      const seen = { left: sb.left, right: sb.left + scroller.clientWidth };
      const title = svg.querySelector('.tl-chart-title');
      const caption = scroller.parentElement?.querySelector(':scope > .tl-chart-caption');
      if (title && visible(title)) {
        const r = title.getBoundingClientRect();
        if (r.left < seen.left - 1 || r.right > seen.right + 1) bad.push(`${svg.getAttribute('aria-label')}: its title is cut by its box (${Math.round(r.right)} > ${Math.round(seen.right)})`);
      } else if (title) {
        if (!caption || !visible(caption) || caption.textContent !== svg.getAttribute('aria-label')) bad.push(`${svg.getAttribute('aria-label')}: its title is hidden and no caption shows it`);
        else if (caption.getBoundingClientRect().right > vw + 1) bad.push(`${svg.getAttribute('aria-label')}: its caption runs past the screen`);
      }
      if (vw >= 1280 && scroller.scrollWidth > scroller.clientWidth + 1) bad.push(`${svg.getAttribute('aria-label')}: scrolls sideways inside its box (${scroller.scrollWidth} > ${scroller.clientWidth}) at ${vw} px`);
    }
    for (const b of document.querySelectorAll('button')) {
      if (!visible(b) || !b.textContent.trim()) continue;
      const lh = parseFloat(getComputedStyle(b).lineHeight) || 20;
      if (b.getBoundingClientRect().height > lh * 1.8 + 12 && !b.textContent.includes(' ')) bad.push(`button "${b.textContent}" wraps`);
    }
    return bad;
  });
}

export const VIEWPORTS = [
  { width: 1440, height: 900 },
  { width: 1280, height: 720 },
  { width: 390, height: 844 },
];
