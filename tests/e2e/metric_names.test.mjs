// Issue 46, point 4: every metric is named in words with its unit, the same everywhere, from
// the metric registry (`tunelab_scenario::metrics`): the page's report table and headline, the
// trials CSV's header, and the CLI's tables (`tunelab eval` of the link's scenario).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BASE, CLI, launch, open, setInput, runToDone } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

// A metric id as the engine names it (snake case with an underscore): never what a person reads.
const RAW_ID = /\b[a-z0-9]+_[a-z0-9_]+\b/;

test('metric names and units: page report, trials CSV and the CLI agree, and no raw id is shown', async (t) => {
  const { page, context, errors } = await open(browser, BASE);
  await setInput(page, 'budget', 8);
  await runToDone(page);
  await page.click('[data-testid=tab-report]');
  await page.waitForSelector('[data-testid=report-table] tbody tr');
  // The label cell's own text (before its meaning, which is prose).
  const labels = await page.$$eval('[data-testid=report-table] tbody tr td:first-child', (l) => l.map((td) => td.firstChild.textContent.trim()));
  assert.ok(labels.length >= 5, `${labels.length} metrics in the report`);
  for (const l of labels) assert.doesNotMatch(l, RAW_ID, `report table label "${l}"`);
  assert.ok(labels.includes('Energy per token (J/token)'), `energy per token with its unit: ${labels}`);
  assert.ok(labels.includes('Throughput per chip (tokens/s)'), `${labels}`);
  const headline = await page.$eval('[data-testid=report-best]', (b) => b.parentElement.textContent);
  assert.match(headline, /^Best Throughput per chip: [0-9.,k]+ tokens\/s/, headline);
  assert.doesNotMatch(headline, RAW_ID, headline);
  assert.doesNotMatch(headline, /\(tokens\/s\)/, `the unit is said once: ${headline}`);

  // The CSV keeps ids (a machine reads it) with the same unit as the page: J/token, not J.
  const [d] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=export-csv]')]);
  const head = readFileSync(await d.path(), 'utf8').split('\n')[0].split(',');
  assert.ok(head.includes('energy_j_per_token (J/token)'), `CSV header: ${head.join(',')}`);
  assert.ok(head.includes('tokens_per_s_per_chip (tokens/s)'), `CSV header: ${head.join(',')}`);
  assert.ok(!head.some((h) => h === 'energy_j_per_token (J)'), 'the energy per token is J/token');

  // The CLI prints the page's labels for the link's scenario.
  if (!CLI) {
    t.diagnostic('TUNELAB_CLI unset: the CLI part is skipped');
  } else {
    const fragment = page.url().split('#')[1];
    const json = execFileSync(CLI, ['url', '--decode', fragment], { encoding: 'utf8' });
    const file = join(mkdtempSync(join(tmpdir(), 'tunelab-names-')), 'scenario.json');
    writeFileSync(file, json);
    const out = execFileSync(CLI, ['eval', file], { encoding: 'utf8', maxBuffer: 16 << 20 });
    for (const l of ['Energy per token (J/token)', 'Throughput per chip (tokens/s)', 'Time to first token (p90) (ms)']) {
      assert.ok(out.includes(l), `tunelab eval prints "${l}"`);
      assert.ok(labels.includes(l), `the page's report shows "${l}"`);
    }
  }
  assert.deepEqual(errors, []);
  await context.close();
});
