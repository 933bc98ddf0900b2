import { BASE, launch, open, setInput, runToDone, shot } from './helpers.mjs';
const browser = await launch();
const { page, errors } = await open(browser, BASE);
await page.click('[data-testid=landscape-panel] > summary');
await page.selectOption('[data-testid=landscape-pick]', 'kt:pnpoly_RTX_2080_Ti');
await page.waitForFunction(() => /^Loaded:/.test(document.querySelector('[data-testid=landscape-status]')?.textContent || ''), null, { timeout: 60000 });
await setInput(page, 'budget', 40);
await runToDone(page);


await page.click('text=Diagnosis & report');
const err = () => page.evaluate(() => document.querySelector('.error, [data-testid=error], .banner')?.innerText ?? '');
await page.click('text=Check');
await page.waitForTimeout(1500);
console.log('guards:', await err(), await page.evaluate(() => document.querySelector('[data-testid=guards]')?.innerText?.slice(0,500)));
await page.click('text=Analyse');
await page.waitForTimeout(3000);
console.log('whatif:', await err(), await page.evaluate(() => document.querySelector('[data-testid=whatif], .whatif')?.innerText?.slice(0,800)));
await shot(page, 'probe-W.png');
console.log(errors);
await browser.close();
