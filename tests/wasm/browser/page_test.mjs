// The browser test of the WebAssembly page (apps/web): serves the built folder on localhost,
// opens it in headless Chromium (playwright-core, Debian's /usr/bin/chromium) with every
// request to anywhere but localhost blocked and counted, then as a reader would:
//   - the default sentences: the tables of none and sinusoidal, their narration;
//   - types two other sentences and switches the scheme to rope: the table's rows and words, an
//     attention SVG (one cell per layer x head x word x word, the words on its axes), and every
//     number of the rope table against the native xenc-word-order --json (within 1.5e-6: the
//     wasm build multiplies without OpenBLAS, and the page prints 6 decimals);
//   - sentences that share no word, and D = 30 with 4 heads in the training tab: the library's
//     error messages on the page;
//   - the sinusoidal table's heatmap;
//   - trains none and sinusoidal at small settings in the Web Worker: the progress bar, the
//     curves redrawn while it trains, the final table, none's held-out accuracy <= 55%;
//   - no request left localhost.
// Writes screenshots of each tab to OUT_DIR.
//
//   node page_test.mjs SITE_DIR NATIVE_XENC_WORD_ORDER OUT_DIR [--train-full]
// (run `npm ci` in this directory first; CMake's test does both.) --train-full instead trains
// with the page's defaults (6 epochs, 24 nouns) and prints the accuracies and the time.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from '../../../apps/web/serve.mjs';

const [site, native, outDir, mode] = process.argv.slice(2);
if (!site || !native || !outDir) {
  console.error('usage: node page_test.mjs SITE_DIR NATIVE_XENC_WORD_ORDER OUT_DIR [--train-full]');
  process.exit(2);
}
const trainFull = mode === '--train-full';
mkdirSync(outDir, { recursive: true });

let failures = 0;
const check = (ok, what) => { console.log((ok ? 'PASS ' : 'FAIL ') + what); if (!ok) failures++; };

const { server, url } = await serve(site);
const outside = [];  // requests the page tried beyond localhost
let browser;
try {
  browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'xenc-web-chromium-')), {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1400, height: 1000 },
  });
  await browser.route('**/*', route => {
    const host = new URL(route.request().url()).hostname;
    if (host === '127.0.0.1' || host === 'localhost') return route.continue();
    outside.push(route.request().url());
    return route.abort('blockedbyclient');
  });
  const page = await browser.newPage();
  const consoleErrors = [];
  page.on('console', m => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', e => consoleErrors.push(e.message));
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });

  if (trainFull) {
    await train(page, { epochs: 6 });
  } else {
    await wordOrder(page);
    await sinusoidalTable(page);
    await train(page, { epochs: 2, nouns: 8, perPair: 2 });
  }
  check(consoleErrors.length === 0, `no error in the browser console (${consoleErrors.join(' | ') || 'none'})`);
} catch (e) {
  console.log('FAIL ' + e.message);
  failures++;
} finally {
  if (browser) await browser.close();
  server.close();
}
check(outside.length === 0, `the page requested nothing beyond localhost (${outside.join(', ') || 'no request'})`);
console.log(`${failures} checks failed`);
process.exit(failures ? 1 : 0);

// The rows of the cosine table of one scheme: [{stage, cells: {word: text}}].
async function tableOf(page, scheme) {
  return page.$$eval(`.run[data-scheme="${scheme}"] table tbody tr`, rows => rows.map(r => ({
    stage: r.querySelector('th').textContent,
    cells: Object.fromEntries([...r.querySelectorAll('td')].map(td => [td.dataset.word, td.textContent])),
  })));
}

async function wordOrder(page) {
  // the defaults: none, then sinusoidal
  const schemes = await page.$$eval('.run', runs => runs.map(r => r.dataset.scheme));
  check(schemes.join() === 'none,sinusoidal', `the default page shows none and sinusoidal (${schemes})`);
  const none = await tableOf(page, 'none');
  check(none.length === 4 && none.every(r => Object.values(r.cells).every(c => c === '1.000000')),
        'without positions every cosine of the default sentences prints as 1.000000');
  const noneText = await page.textContent('.run[data-scheme="none"] .narration');
  check(/permutation-equivariant/.test(noneText), `the narration under none: "${noneText.slice(0, 80)}..."`);
  await page.screenshot({ path: join(outDir, 'word_order_default.png'), fullPage: true });

  // two other sentences, and rope
  const a = 'the dog bit the man', b = 'the man bit the dog';
  await page.fill('#sentence-a', a);
  await page.fill('#sentence-b', b);
  await page.selectOption('#scheme', 'rope');
  await page.waitForFunction(() => {
    const heads = [...document.querySelectorAll('.run[data-scheme="rope"] thead th')].map(t => t.textContent);
    return heads.includes('man');
  }, null, { timeout: 10000 });
  const rope = await tableOf(page, 'rope');
  const words = await page.$$eval('.run[data-scheme="rope"] thead th', t => t.map(x => x.textContent));
  check(words.join() === 'stage,the,dog,bit,the#2,man,sentence', `the rope table's columns: ${words}`);
  check(rope.map(r => r.stage).join() === 'token embedding,+ positions,layer 1,layer 2',
        `the rope table's stages: ${rope.map(r => r.stage)}`);
  const ropeText = await page.textContent('.run[data-scheme="rope"] .narration');
  check(/With rope positions nothing is added to the input/.test(ropeText),
        `the narration under rope: "${ropeText.slice(0, 80)}..."`);
  const shownCommand = await page.textContent('#command');
  check(shownCommand.includes(`--a '${a}' --b '${b}' --position rope`), `the equivalent command: ${shownCommand}`);

  // the numbers against the native program's JSON
  const nativeJson = JSON.parse(execFileSync(native, ['--a', a, '--b', b, '--position', 'rope', '--json'],
                                             { encoding: 'utf8' }));
  let compared = 0, worst = 0;
  rope.forEach((row, s) => {
    const stage = nativeJson.with_rope.stages[s];
    check(stage.stage === row.stage, `stage ${s} is "${row.stage}" on the page and in the native JSON`);
    for (const [word, text] of Object.entries(row.cells)) {
      const value = word === '(sentence)' ? stage.sentence_cosine : stage.token_cosine[word];
      const diff = Math.abs(Number(text) - value);
      worst = Math.max(worst, diff);
      compared++;
      if (!(diff <= 1.5e-6)) check(false, `${row.stage} / ${word}: page ${text}, native ${value}`);
    }
  });
  const dogLayer2 = rope[3].cells.dog;
  check(compared === 24 && worst <= 1.5e-6,
        `all ${compared} numbers of the rope table equal the native xenc-word-order --json within 1.5e-6 ` +
        `(largest difference ${worst.toExponential(1)}; "dog" after layer 2: page ${dogLayer2}, native ` +
        `${nativeJson.with_rope.stages[3].token_cosine.dog})`);
  check(rope.slice(2).some(r => r.cells.dog !== '1.000000'), 'with rope "dog" differs after layer 1');

  // an attention SVG: 2 layers x 2 heads, 5 x 5 words, the words on the axes
  const svg = '.attention-run[data-scheme="rope"] .figure[data-sentence="A"] svg';
  const cells = await page.$$eval(`${svg} rect.cell`, r => r.length);
  check(cells === 2 * 2 * 5 * 5, `the attention SVG of rope, sentence A, has ${cells} cells (2 layers x 2 heads x 5 x 5)`);
  const labels = await page.$$eval(`${svg} text`, t => t.map(x => x.textContent));
  check(['the', 'dog', 'bit', 'man'].every(w => labels.includes(w)) && labels.includes('layer 2, head 2'),
        'its axes carry the words, its panels the layer and head');
  const figures = await page.$$eval('.attention-run .figure svg', s => s.length);
  check(figures === 4, `attention figures for none and rope, sentences A and B (${figures})`);
  await page.locator('#attention').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(outDir, 'word_order_rope.png'), fullPage: true });

  // an error of the library, shown on the page
  await page.fill('#sentence-b', 'a bird sang');
  await page.waitForSelector('#order-error:not([hidden])', { timeout: 10000 });
  const error = await page.textContent('#order-error');
  check(/share no word/.test(error), `sentences without a shared word: the page says "${error}"`);
  await page.screenshot({ path: join(outDir, 'word_order_error.png') });
  await page.fill('#sentence-b', b);
  await page.waitForSelector('#order-error[hidden]', { state: 'attached', timeout: 10000 });
}

async function sinusoidalTable(page) {
  await page.click('#tab-pe-button');
  const cells = await page.$$eval('#pe-figure svg rect.cell', r => r.length);
  check(cells === 64 * 64, `the sinusoidal table's heatmap has ${cells} cells (64 positions x D = 64)`);
  const first = await page.$$eval('#pe-rows tr', rows => rows.map(r => [...r.cells].map(c => c.textContent)));
  // PE(1, 0) = sin(1), PE(1, 1) = cos(1)
  check(first[2][1] === Math.sin(1).toFixed(4) && first[2][2] === Math.cos(1).toFixed(4),
        `PE(1, 0) = sin 1 and PE(1, 1) = cos 1 in the table under it (${first[2][1]}, ${first[2][2]})`);
  await page.screenshot({ path: join(outDir, 'sinusoidal_table.png'), fullPage: true });
}

async function train(page, { epochs, nouns, perPair }) {
  await page.click('#tab-train-button');
  await page.fill('#train-epochs', String(epochs));
  if (nouns) {
    await page.click('#train-form summary');
    await page.fill('#train-nouns', String(nouns));
    await page.fill('#train-per-pair', String(perPair));
  }
  if (nouns) {
    // a setting the library refuses: its message on the page, before any training
    await page.fill('#train-d-model', '30');
    await page.click('#train-start');
    await page.waitForFunction(() => document.body.dataset.trainState === 'error', null, { timeout: 30000 });
    const refused = await page.textContent('#train-error');
    check(/divisible by --heads/.test(refused), `D = 30 with 4 heads: the training tab says "${refused}"`);
    await page.fill('#train-d-model', '32');
  }
  // count the curve figures drawn before the run ends
  await page.evaluate(() => {
    window.curveDraws = 0;
    new MutationObserver(() => {
      if (document.body.dataset.trainState === 'running' && document.querySelector('#train-curves svg')) window.curveDraws++;
    }).observe(document.getElementById('train-curves'), { childList: true });
  });
  const started = Date.now();
  await page.click('#train-start');
  await page.waitForFunction(() => document.querySelector('#train-progress').value > 0, null, { timeout: 30000 });
  await page.screenshot({ path: join(outDir, 'training_running.png'), fullPage: true });
  await page.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.trainState), null,
                             { timeout: trainFull ? 600000 : 60000, polling: 200 });
  const seconds = (Date.now() - started) / 1000;
  const error = await page.textContent('#train-error');
  check(await page.getAttribute('body', 'data-train-state') === 'done', `training finished ${error ? '(' + error + ')' : ''}`);
  const draws = await page.evaluate(() => window.curveDraws);
  check(draws >= 3, `the curves were redrawn ${draws} times while the models trained`);
  check(await page.$eval('#train-progress', p => p.value) === 1, 'the progress bar is full');
  const series = await page.$$eval('#train-curves svg polyline.series', p => p.length);
  check(series >= 4, `the final curves: ${series} lines (loss and held-out accuracy of none and sinusoidal)`);
  const table = await page.textContent('#train-table');
  check(/none/.test(table) && /sinusoidal/.test(table), 'the accuracy table names none and sinusoidal');
  const results = await page.evaluate(() => window.xencLastTraining.results);
  const acc = Object.fromEntries(results.map(r => [r.scheme, r.heldout.accuracy]));
  check(acc.none <= 0.55, `none's held-out accuracy ${(100 * acc.none).toFixed(1)}% <= 55%`);
  if (trainFull) {
    check(acc.sinusoidal >= 0.98, `sinusoidal's held-out accuracy ${(100 * acc.sinusoidal).toFixed(1)}% >= 98%`);
    console.log(`MEASURED ${JSON.stringify(results.map(r => ({ scheme: r.scheme, heldout: r.heldout.accuracy,
      train: r.train.accuracy, seconds: r.seconds })))} total ${seconds.toFixed(1)} s in headless Chromium`);
  }
  await page.screenshot({ path: join(outDir, trainFull ? 'training_full.png' : 'training_done.png'), fullPage: true });
}
