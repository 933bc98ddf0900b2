// Prints the gzip -9 size of the release page's WebAssembly plus JavaScript and fails over 1 MB.
import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';

const dir = process.argv[2] || 'dist';
const LIMIT = 1024 * 1024;
let total = 0;
for (const f of readdirSync(dir).filter((f) => f.endsWith('.wasm') || f.endsWith('.js'))) {
  const raw = readFileSync(join(dir, f));
  const gz = gzipSync(raw, { level: 9 }).length;
  total += gz;
  console.log(`${f}: ${raw.length} bytes, ${gz} gzipped`);
}
console.log(`size: gzip -9 of .wasm + .js = ${total} bytes (${(total / 1024).toFixed(1)} KiB; budget ${LIMIT / 1024} KiB)`);
if (total === 0 || total > LIMIT) {
  console.error(total === 0 ? 'no .wasm or .js found in ' + dir : 'over the size budget');
  process.exit(1);
}
