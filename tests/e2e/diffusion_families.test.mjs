// The diffusion families added for issues 41/42 in the browser: Sana-1600M (linear-attention
// DiT, the 32x DC-AE, Gemma-2) and HunyuanVideo (token refiner, dual- then single-stream blocks,
// causal 3-D VAE, LLaVA-Llama-3-8B and CLIP-L) are picked in the model picker's diffusion
// pipelines, run, and their timelines show every part of the call and what each pipeline
// approximates (the same lines `tunelab eval` prints); the bundled Sana LoRA fine-tune runs and
// reports images per second. With TUNELAB_CLI set, the page's baseline call is the CLI's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { BASE, CLI, launch, open, text, setInput, runToDone, shot, answered } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

// A timeline text once it has arrived and stopped changing (the engine worker prices it, asked
// again whenever a best changes: every question asked so far is answered first, which takes
// longer on a busy machine). The approximations list comes with the same answer.
async function settled(page, id) {
  await answered(page);
  let last = null, same = 0;
  for (let i = 0; i < 160 && same < 4; i++) {
    const t = (await text(page, id)) ?? '';
    same = t.trim() && t === last ? same + 1 : 0;
    last = t;
    await page.waitForTimeout(250);
  }
  return last;
}

// The diffusion stage with a pipeline picked in the model picker (the Wan2.2 scenario gives the
// stage with the pipeline's own size and steps: diffusers, 8 chips, nothing pinned; the picker
// swaps the pipeline).
async function pick(page, pipeline) {
  await page.selectOption('[data-testid=bundled]', 'wan2.2-a14b-8x910B2-diffusion');
  const options = await page.$$eval('[data-testid=model] optgroup[label="diffusion pipelines"] option', (o) => o.map((x) => x.value));
  assert.ok(options.includes(pipeline), `the picker lists ${pipeline}: ${options.join(', ')}`);
  await page.selectOption('[data-testid=model]', pipeline);
  assert.equal(await page.$eval('[data-testid=model]', (s) => s.value), pipeline);
  await setInput(page, 'budget', 8);
}

// "1078 ms per call" or "3744 s per call" from a timeline's first line, in ms.
function callMs(t) {
  const m = t.match(/: ([0-9.]+) (ms|s) per call/);
  assert.ok(m, `a call time in: ${t}`);
  return parseFloat(m[1]) * (m[2] === 's' ? 1000 : 1);
}

test('Sana-1600M from the pipeline picker: Gemma-2, 20 steps of the linear DiT, the DC-AE decoder, and what it approximates', async () => {
  const { page, context, errors } = await open(browser, BASE);
  await pick(page, 'sana-1600m-1024px');
  await runToDone(page);
  await page.waitForSelector('[data-testid=pipeline-panel]');
  const base = await settled(page, 'pipeline-baseline');
  console.log(`sana baseline:\n${base}`);
  assert.match(base, /^Sana-1600M 1024px: /);
  assert.match(base, /text_encoder/);
  assert.match(base, /20 full steps x [0-9.]+ ms/);
  assert.match(base, /VAE decoder/);
  const approx = await page.$$eval('[data-testid=pipeline-approximations] li', (l) => l.map((x) => x.textContent));
  assert.ok(approx.some((a) => a.startsWith('approximates transformer, vae, text_encoder: built from public source code')), JSON.stringify(approx));
  assert.ok(approx.some((a) => a.startsWith('approximates text_encoder: Gemma-2')), JSON.stringify(approx));
  if (CLI) {
    // The page's baseline call is the one the CLI prices for the same pipeline.
    const out = execFileSync(CLI, ['eval', 'assets/scenarios/sana-1600m-910B2-diffusion.json'], { encoding: 'utf8' });
    const cli = out.split('\n').find((l) => l.startsWith('Sana-1600M 1024px:'));
    assert.ok(cli, out);
    assert.ok(Math.abs(callMs(cli) / callMs(base) - 1) < 1e-3, `page ${callMs(base)} ms, CLI ${callMs(cli)} ms`);
  }
  await shot(page, 'diffusion-sana.png');
  assert.deepEqual(errors, []);
  await context.close();
});

test('HunyuanVideo from the pipeline picker: two text encoders, 50 steps over 33 latent frames, the causal VAE, and what it approximates', async () => {
  const { page, context, errors } = await open(browser, BASE);
  await pick(page, 'hunyuanvideo');
  await runToDone(page);
  await page.waitForSelector('[data-testid=pipeline-panel]');
  const base = await settled(page, 'pipeline-baseline');
  console.log(`hunyuanvideo baseline:\n${base}`);
  assert.match(base, /^HunyuanVideo \(text-to-video 720p\): /);
  assert.match(base, /text_encoder\n/);
  assert.match(base, /text_encoder_2/);
  assert.match(base, /50 full steps x [0-9.]+ s/);
  assert.match(base, /VAE decoder/);
  const approx = await page.$$eval('[data-testid=pipeline-approximations] li', (l) => l.map((x) => x.textContent));
  for (const part of ['approximates vae: AutoencoderKLHunyuanVideo', 'approximates text_encoder: LLaVA-Llama-3-8B', 'approximates text_encoder_2: CLIP ViT-L/14', 'approximates denoiser: as an operator graph']) {
    assert.ok(approx.some((a) => a.startsWith(part)), `${part}: ${JSON.stringify(approx)}`);
  }
  await shot(page, 'diffusion-hunyuanvideo.png');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the bundled Sana LoRA fine-tune runs and reports images per second', async () => {
  const { page, context, errors } = await open(browser, BASE);
  await page.selectOption('[data-testid=bundled]', 'sana-1600m-8x910B2-lora-training');
  assert.equal(await page.$eval('[data-testid=model]', (s) => s.value), 'sana-1600m-1024px');
  await setInput(page, 'budget', 6);
  await runToDone(page);
  await page.waitForFunction(() => /samples\/s/.test(document.body.textContent), null, { timeout: 60000 });
  const best = await page.getAttribute('[data-testid=best]', 'data-value');
  console.log(`sana lora: best ${best}`);
  assert.ok(best && parseFloat(best) > 0, `a positive best: ${best}`);
  assert.deepEqual(errors, []);
  await context.close();
});
