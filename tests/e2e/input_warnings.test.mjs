// Issue 44: a misspelled key in an opened scenario (a link, or a scenario pasted into the page)
// is listed in a banner with its path and the nearest known key, and the scenario is kept: every
// other field opens as given, and nothing is refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { deflateRawSync } from 'node:zlib';
import { BASE, launch, open, text } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

// A link's fragment as the app writes one (crates/scenario/src/spec/url.rs: "v1." + base64url
// of the raw-deflated JSON, no padding), made here from the raw JSON so the misspelled key
// survives (`tunelab url FILE` reads the scenario first and would drop it).
function fragment(json) {
  return 'v1.' + deflateRawSync(Buffer.from(json), { level: 9 }).toString('base64url');
}

const TYPO = JSON.stringify({
  stage: 'deployment', model: 'qwen2.5-7b', device: '910B3', budget: 7,
  deployment: { serving: { graph_mod: 'full_decode_only' } },
  training: { chips: 8, framwork: 'deepspeed' },
});

async function kept(page) {
  assert.equal(await page.inputValue('[data-testid=model]'), 'qwen2.5-7b');
  assert.equal(await page.inputValue('[data-testid=device]'), '910B3');
  assert.equal(await page.inputValue('[data-testid=stage]'), 'deployment');
  assert.equal(await page.inputValue('[data-testid=budget]'), '7');
}

test('a link with misspelled keys opens with a banner naming each and the rest kept', async () => {
  const { page, context, errors } = await open(browser, BASE + '#' + fragment(TYPO));
  await page.waitForSelector('[data-testid=input-warnings]');
  const banner = await text(page, 'input-warnings');
  assert.match(banner, /deployment\.serving\.graph_mod/);
  assert.match(banner, /did you mean `?graph_mode`?/);
  assert.match(banner, /training\.framwork/);
  assert.match(banner, /did you mean `?framework`?/);
  // Nothing refused: no error, and every other field as the link gave it.
  assert.equal(await page.$('[data-testid=error]'), null, await page.$('[data-testid=error]') && await text(page, 'error'));
  await kept(page);
  // Dismissed, it goes; the scenario stays.
  await page.click('[data-testid=input-warnings] button.dismiss');
  await page.waitForSelector('[data-testid=input-warnings]', { state: 'detached' });
  await kept(page);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a link without unknown keys shows no banner', async () => {
  const clean = JSON.stringify({ stage: 'deployment', model: 'qwen2.5-7b', device: '910B3', budget: 7, deployment: { serving: { graph_mode: 'full_decode_only' } } });
  const { page, context, errors } = await open(browser, BASE + '#' + fragment(clean));
  await kept(page);
  assert.equal(await page.$('[data-testid=input-warnings]'), null);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a pasted scenario with a misspelled key opens with the banner', async () => {
  const { page, context, errors } = await open(browser, BASE);
  assert.equal(await page.$('[data-testid=input-warnings]'), null);
  await page.click('text=Paste, upload or drop a model');
  await page.fill('[data-testid=model-text]', TYPO);
  await page.click('[data-testid=open-scenario]');
  await page.waitForSelector('[data-testid=input-warnings]');
  const banner = await text(page, 'input-warnings');
  assert.match(banner, /deployment\.serving\.graph_mod/);
  assert.match(banner, /did you mean `?graph_mode`?/);
  await kept(page);
  assert.deepEqual(errors, []);
  await context.close();
});
