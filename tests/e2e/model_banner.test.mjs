// Issue 41: the model banner. A user pastes DeepSeek-V4-Flash's config.json, or uploads a
// multimodal wrapper's (GLM-4.1V), in the built page: the banner beside the model shows the
// total and active parameters the engine counts (the same `identity_line` as `tunelab eval`),
// the layer stack, and the list of what Tunelab approximates; the scenario takes the model's
// name. The configs are the verbatim public copies the model-zoo tests read.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BASE, launch, open, text, shot } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const DATA = 'crates/sim/tests/data/models/';

/** Waits for the banner of the model just loaded and returns its identity line, its layer
 *  stack and the approximations listed (opened). */
async function banner(page, want) {
  await page.waitForFunction((re) => new RegExp(re).test(document.querySelector('[data-testid=model-identity]')?.textContent || ''), want.source, { timeout: 60000 });
  const identity = await text(page, 'model-identity');
  const stack = await text(page, 'model-stack');
  const details = await page.$('[data-testid=model-approximations]');
  let approx = [];
  if (details) {
    await page.click('[data-testid=model-approximations] summary');
    approx = await page.$$eval('[data-testid=model-approximations] li', (li) => li.map((l) => l.textContent));
  }
  return { identity, stack, approx };
}

async function waitCustom(page) {
  await page.waitForFunction(() => document.querySelector('[data-testid=model]')?.value === 'custom', null, { timeout: 60000 });
}

test('a pasted DeepSeek-V4 config shows its parameters, stack and approximations, and names the scenario', async () => {
  const { page, context, errors } = await open(browser, BASE);
  const before = await text(page, 'scenario-name');
  const config = readFileSync(DATA + 'deepseek-v4-flash.config.json', 'utf8');
  await page.click('text=Paste, upload or drop a model');
  await page.fill('[data-testid=model-text]', config);
  await page.click('[data-testid=use-model]');
  await waitCustom(page);
  assert.equal(await page.$('[data-testid=error]'), null, 'the model loads without an error');
  // 284B total (the card's figure), about 13.8B active with the embeddings; weights per precision.
  const b = await banner(page, /parameters/);
  assert.match(b.identity, /\b28[34]\.\d\dB parameters \(13\.\d\dB active\); weights /, b.identity);
  // Its own layer stack: compressed attention by layer, 256 experts, the MTP layer.
  assert.match(b.stack, /43 layers/);
  assert.match(b.stack, /compressed attention \(1 row per 4 tokens, top-512 rows by an indexer/);
  assert.match(b.stack, /MoE 256 experts top-6/);
  // What is approximated is listed, each naming the part and how; the compressors, indexer and
  // hyper-connections are counted and priced (no longer "neither counted nor priced").
  assert.ok(b.approx.length >= 3, `approximations: ${JSON.stringify(b.approx)}`);
  assert.ok(b.approx.some((a) => /lightning indexer/.test(a) && /counted, held and priced/.test(a)), JSON.stringify(b.approx));
  assert.ok(b.approx.some((a) => /hyper-connection/.test(a)), JSON.stringify(b.approx));
  assert.ok(b.approx.some((a) => /hash routing/.test(a)), JSON.stringify(b.approx));
  assert.ok(!b.approx.some((a) => /neither counted nor priced/.test(a) && /(compressor|hyper-connection)/.test(a)), JSON.stringify(b.approx));
  // The scenario is renamed after the model.
  const after = await text(page, 'scenario-name');
  assert.notEqual(after, before, 'the scenario takes the model\'s name');
  assert.match(after, / on .+, /, after);
  await shot(page, 'model-banner-deepseek-v4.png');
  assert.deepEqual(errors, []);
  await context.close();
});

test('an uploaded multimodal wrapper shows its vision tower in the count and the list', async () => {
  const { page, context, errors } = await open(browser, BASE);
  await page.click('text=Paste, upload or drop a model');
  await page.setInputFiles('[data-testid=model-file]', DATA + 'glm-4.1v-9b-thinking.config.json');
  await waitCustom(page);
  assert.equal(await page.$('[data-testid=error]'), null, 'the model loads without an error');
  const b = await banner(page, /parameters/);
  // GLM-4.1V-9B: the 9.4B language model and its 24-block ViT, about 11.2B in all (dense: no
  // separate active figure).
  assert.match(b.identity, /\b11\.\d\dB parameters; weights /, b.identity);
  assert.match(b.stack, /40 layers/);
  assert.match(b.stack, /vision tower 24 x 1536/);
  assert.ok(b.approx.some((a) => /^vision tower \(glm4v\)/.test(a)), JSON.stringify(b.approx));
  // The upload names the scenario after the file.
  const name = await text(page, 'scenario-name');
  assert.match(name, /glm-4\.1v-9b-thinking\.config\.json/, name);
  await shot(page, 'model-banner-glm-4.1v.png');
  assert.deepEqual(errors, []);
  await context.close();
});
