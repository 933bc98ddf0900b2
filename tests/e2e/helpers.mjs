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

// Before any page script: record long tasks and when the app first rendered its run button.
function instrument() {
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
}

/** Opens `url` in a fresh context (1360x900 unless `viewport` says otherwise); returns the page
 *  and the uncaught errors it reports. */
export async function open(browser, url, viewport = { width: 1360, height: 900 }) {
  const context = await browser.newContext({ viewport, acceptDownloads: true });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('dialog', (d) => { errors.push('dialog: ' + d.message()); d.dismiss(); });
  await page.addInitScript(instrument);
  await page.goto(url);
  await page.waitForSelector('[data-testid=run]');
  return { page, context, errors };
}

export const text = (page, id) => page.textContent(`[data-testid=${id}]`);

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
