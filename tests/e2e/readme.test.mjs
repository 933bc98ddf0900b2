// Issue 46, point 10: the README stands alone in a clone. Every relative link it gives resolves
// to a file or folder of this repository (no `../shared/...`, which a clone does not have), and it
// sends a contributor to the design notes in docs/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';

test('every relative link of the README resolves inside the repository, and it points to docs/design.md', () => {
  const md = readFileSync('README.md', 'utf8');
  const links = [...md.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((l) => !/^[a-z]+:/.test(l) && !l.startsWith('#'));
  assert.ok(links.length > 0, 'the README links its docs');
  const bad = links.filter((l) => l.startsWith('..') || l.startsWith('/') || !existsSync(l.split('#')[0]));
  assert.deepEqual(bad, [], 'links that leave the repository or do not resolve');
  assert.ok(!/\.\.\/shared\//.test(md), 'no ../shared/ path in the README');
  assert.ok(links.some((l) => l.startsWith('docs/design.md')), 'the design notes are linked from docs/');
});
