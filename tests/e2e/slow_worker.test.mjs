// A slow machine's engine worker: answers that arrive after the user has left the view that
// asked must be dropped, never crash the page. Each engine-worker answer is delayed by 3 s
// (helpers.mjs `open`, answerDelayMs) and the user leaves the view before it comes: the page
// keeps working, reports no error, and the views asked again still fill in.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, launch, open, setInput, runToDone, answered } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const DELAY = 3000;

test('a pin whose price is still coming when the user opens the report does not crash the page', async () => {
  const { page, context, errors } = await open(browser, BASE, undefined, { answerDelayMs: DELAY });
  await setInput(page, 'budget', 8);
  await runToDone(page);
  await answered(page);
  // Pin the scatter's first mark: the pin panel beside the charts asks the worker for its price.
  const pinned = await page.evaluate(() => {
    const mark = [...document.querySelectorAll('.pin-target circle')].find((c) => c.querySelector(':scope > title'));
    mark?.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    return !!mark;
  });
  assert.ok(pinned, 'the scatter has a mark to pin');
  // Leave at once: the pin panel closes while its answer is on its way.
  await page.click('[data-testid=tab-report]');
  await page.waitForTimeout(DELAY + 1500);
  await answered(page);
  assert.deepEqual(errors, [], 'no uncaught error once the late answer arrives');
  // The report (a view of its own, priced again) shows the pin.
  await page.waitForSelector('[data-testid=pins] td[data-config]', { timeout: 120000 });
  // And the page still works: back to Tune, the pin panel fills in.
  await page.click('[data-testid=tab-tune]');
  await page.waitForSelector('[data-testid=pin-panel] td[data-config]', { timeout: 120000 });
  assert.deepEqual(errors, []);
  await context.close();
});

test('leaving Explore and the knowledge base before their answers come does not crash the page', async () => {
  const { page, context, errors } = await open(browser, BASE, undefined, { answerDelayMs: DELAY });
  // Explore asks for the stage's parameters, the knowledge base for the scenario's key: both
  // views are closed before the answers arrive.
  await page.click('[data-testid=tab-explore]');
  await page.waitForTimeout(200);
  await page.click('[data-testid=tab-knowledge]');
  await page.waitForTimeout(200);
  await page.click('[data-testid=tab-tune]');
  await page.waitForTimeout(DELAY + 1500);
  await answered(page);
  assert.deepEqual(errors, [], 'no uncaught error once the late answers arrive');
  // Explore opened again fills its menus.
  await page.click('[data-testid=tab-explore]');
  await page.waitForFunction(() => document.querySelector('[data-testid=explore-x]')?.value, null, { timeout: 120000 });
  assert.deepEqual(errors, []);
  await context.close();
});
