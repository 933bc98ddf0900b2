// Offline and installable: the service worker caches the build, so the page reloads and runs
// with the network off; the manifest is served.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, launch, open, text, setInput } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('the page reloads and runs offline after one visit', async () => {
  const { page, context, errors } = await open(browser, BASE);
  const version = await page.evaluate(async () => {
    const reg = await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      await new Promise((r) => navigator.serviceWorker.addEventListener('controllerchange', r, { once: true }));
    }
    const keys = await caches.keys();
    return { scope: reg.scope, caches: keys };
  });
  assert.ok(version.caches.some((k) => /^tunelab-\d+$/.test(k)), `a versioned cache: ${version.caches}`);
  const manifest = await page.evaluate(async () => (await fetch('manifest.webmanifest')).json());
  assert.equal(manifest.short_name, 'Tunelab');
  await context.setOffline(true);
  await page.reload();
  await page.waitForSelector('[data-testid=run]', { timeout: 60000 });
  // The engine (worker included) runs offline too.
  await setInput(page, 'budget', 3);
  await page.click('[data-testid=step]');
  // The first Step starts the engine workers (their module compiles first: slower on a busy machine).
  await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.textContent === 'paused', null, { timeout: 60000 });
  assert.match(await page.textContent('.tl-progress-label'), /^1 of /);
  console.log(`offline reload: ok (cache ${version.caches.join(', ')}), engine ${await page.evaluate(() => window.__tunelabEngine)}`);
  await context.setOffline(false);
  assert.deepEqual(errors, []);
  await context.close();
});
