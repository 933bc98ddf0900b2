// Hostile input: corrupt and oversized links, script in a model name, malformed JSON. Each gives
// a clear error banner (or inert text), no script runs, and the page keeps working.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, CLI, launch, open, text, setInput, runToDone, shot, cliFragment } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const pwned = (page) => page.evaluate(() => window.__pwned === undefined ? null : window.__pwned);

for (const [what, fragment] of [
  ['a corrupt fragment', '#v1.this-is-not-deflate'],
  ['an oversized fragment', '#v1.' + 'A'.repeat(300 * 1024)],
  ['markup in the fragment', '#' + encodeURIComponent('<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>')],
  ['an unknown format', '#v9.abcdef'],
]) {
  test(`${what} shows the error banner and the page still works`, async () => {
    const { page, context, errors } = await open(browser, BASE + fragment);
    await page.waitForSelector('[data-testid=error]');
    assert.match(await text(page, 'error'), /could not be read/);
    assert.equal(await pwned(page), null);
    await setInput(page, 'budget', 8);
    const { best } = await runToDone(page);
    assert.match(best, /^-?[0-9]/);
    if (what === 'markup in the fragment') await shot(page, '05-hostile-link.png');
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test('script in a scenario name is shown as text and never runs', async (t) => {
  if (!CLI) return t.skip('TUNELAB_CLI not set');
  const name = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
  const frag = cliFragment(JSON.stringify({ version: 1, name, model: 'llama-2-7b', device: '910B2', stage: 'deployment', budget: 6, seed: 1 }));
  const { page, context, errors } = await open(browser, BASE + '#' + frag);
  assert.equal(await text(page, 'scenario-name'), name);
  assert.equal(await page.$('[data-testid=error]'), null);
  const { best } = await runToDone(page);
  assert.match(best, /^-?[0-9]/);
  assert.equal(await pwned(page), null);
  assert.deepEqual(errors, []);
  await context.close();
});

test('malformed model JSON is refused and the scenario is kept', async () => {
  const { page, context, errors } = await open(browser, BASE);
  const before = await text(page, 'scenario-name');
  const model = await page.inputValue('[data-testid=model]');
  await page.click('text=Paste, upload or drop a model');
  await page.fill('[data-testid=model-text]', '{"model_type": "llama", "hidden_size": ');
  await page.click('[data-testid=use-model]');
  // The engine worker's model reader gives the reason.
  await page.waitForSelector('[data-testid=error]', { timeout: 60000 });
  assert.match(await text(page, 'error'), /model was not loaded/);
  assert.equal(await text(page, 'scenario-name'), before);
  assert.equal(await page.inputValue('[data-testid=model]'), model);
  await setInput(page, 'budget', 8);
  await runToDone(page);
  assert.deepEqual(errors, []);
  await context.close();
});

test('back and forward follow the links in the fragment', async () => {
  const { page, context, errors } = await open(browser, BASE);
  const first = page.url();
  const a = await text(page, 'scenario-name');
  await page.selectOption('[data-testid=bundled]', { index: 2 });
  const b = await text(page, 'scenario-name');
  assert.notEqual(a, b);
  const second = page.url();
  // Navigate (a new history entry) to the first link, then back and forward.
  await page.goto(first);
  await page.waitForFunction((want) => document.querySelector('[data-testid=scenario-name]')?.textContent === want, a);
  await page.goBack();
  await page.waitForFunction((want) => document.querySelector('[data-testid=scenario-name]')?.textContent === want, b);
  assert.equal(page.url(), second);
  await page.goForward();
  await page.waitForFunction((want) => document.querySelector('[data-testid=scenario-name]')?.textContent === want, a);
  assert.deepEqual(errors, []);
  await context.close();
});

test('knowledge base: a corrupt store is set aside, a saved case survives a reload', async () => {
  const { page, context, errors } = await open(browser, BASE);
  await page.evaluate(() => localStorage.setItem('tunelab.kb', '{"format": "tunelab-kb/1", "cases": [oops'));
  await page.reload();
  await page.waitForSelector('[data-testid=run]');
  await page.click('[data-testid=tab-knowledge]');
  await page.waitForSelector('[data-testid=error]');
  assert.match(await text(page, 'error'), /set aside/);
  assert.ok(await page.evaluate(() => localStorage.getItem('tunelab.kb.corrupt')), 'the corrupt text is kept aside');
  await page.click('[data-testid=error] button');
  await setInput(page, 'budget', 8);
  await runToDone(page);
  await page.click('[data-testid=kb-save]');
  // A case's key reads the model, which the engine worker answers: wait for the saved case.
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=kb-cases] li').length > 0, null, { timeout: 60000 }).catch(() => {});
  assert.equal(await page.$$eval('[data-testid=kb-cases] li', (l) => l.length), 1);
  // Transfer: the next run starts from the saved case's trials.
  await page.check('[data-testid=kb-warm]');
  await runToDone(page);
  assert.match(await text(page, 'kb-warm-note'), /Warm start: [1-9][0-9]* earlier trials/);
  await page.reload();
  await page.waitForSelector('[data-testid=run]');
  await page.click('[data-testid=tab-knowledge]');
  await page.waitForSelector('[data-testid=kb-cases] li');
  assert.equal(await page.$$eval('[data-testid=kb-cases] li', (l) => l.length), 1);
  assert.equal(await page.$('[data-testid=error]'), null);
  assert.deepEqual(errors, []);
  await context.close();
});
