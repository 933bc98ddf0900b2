// Loading: upload an operator-graph JSON as the model, and view then edit the chip's profile.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, launch, open, text, setInput, runToDone } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('upload an operator graph as the model and tune it', async () => {
  const { page, context, errors } = await open(browser, BASE);
  await page.click('text=Paste, upload or drop a model');
  await page.setInputFiles('[data-testid=model-file]', 'assets/models/sd15-unet.graph.json');
  // The engine worker reads the uploaded model (the page links no model reader).
  await page.waitForFunction(() => document.querySelector('[data-testid=model]')?.value === 'custom', null, { timeout: 60000 });
  assert.equal(await page.$('[data-testid=error]'), null, await page.$('[data-testid=error]') && await text(page, 'error'));
  await page.selectOption('[data-testid=stage]', 'operator');
  await setInput(page, 'budget', 10);
  const { best } = await runToDone(page);
  assert.match(best, /^-?[0-9]/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('view and edit the chip profile', async () => {
  const { page, context, errors } = await open(browser, BASE);
  await page.selectOption('[data-testid=device]', '310P3');
  await page.click('text=View or edit the chip profile');
  // The profile's text and its check are the engine worker's answers.
  await page.waitForFunction(() => document.querySelector('[data-testid=device-text]')?.value.includes('"310P3"'), null, { timeout: 60000 });
  const profile = JSON.parse(await page.inputValue('[data-testid=device-text]'));
  profile.name = '310P3-edited';
  await page.fill('[data-testid=device-text]', JSON.stringify(profile, null, 1));
  await page.click('[data-testid=apply-device]');
  await page.waitForFunction(() => document.querySelector('[data-testid=device]')?.value === 'custom', null, { timeout: 60000 });
  // A broken edit is refused and the edited chip stays.
  await page.fill('[data-testid=device-text]', '{"name": "x"');
  await page.click('[data-testid=apply-device]');
  await page.waitForSelector('[data-testid=error]');
  assert.match(await text(page, 'error'), /chip profile was not applied/);
  assert.equal(await page.inputValue('[data-testid=device]'), 'custom');
  await setInput(page, 'budget', 8);
  const { best } = await runToDone(page);
  assert.match(best, /^-?[0-9]/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('step, pause and resume', async () => {
  const { page, context, errors } = await open(browser, BASE);
  await setInput(page, 'budget', 30);
  await page.click('[data-testid=step]');
  // The first Step starts the engine workers (their module loads first: slower on a busy machine).
  await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.textContent === 'paused', null, { timeout: 60000 });
  assert.match(await page.textContent('.tl-progress-label'), /^1 of /);
  await page.click('[data-testid=step]');
  await page.waitForFunction(() => /^2 of /.test(document.querySelector('.tl-progress-label')?.textContent || ''), null, { timeout: 60000 });
  // Resume to the end, pausing on the way when the run is still going.
  await page.click('[data-testid=run]');
  if (await text(page, 'status') === 'running') {
    await page.click('[data-testid=pause]').catch(() => {});
  }
  const { best } = await runToDone(page);
  assert.match(best, /^-?[0-9]/);
  await page.click('[data-testid=reset]');
  assert.equal(await text(page, 'status'), 'idle');
  assert.equal(await text(page, 'best'), '');
  assert.deepEqual(errors, []);
  await context.close();
});
