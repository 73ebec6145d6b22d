// The browser test of xenc-kernel: Debian's `jupyter notebook` serves a scratch copy of the
// notebooks on localhost with the kernel; headless Chromium (driven by playwright-core) opens
// notebook 02, runs Kernel > Restart & Run All, and checks that every code cell ran, no cell
// shows an error, and the positional-encoding heatmap is an <svg> in the page. Writes a
// screenshot of the page.
//
//   JUPYTER_PATH=build/notebooks/kernel/jupyter node browser_test.mjs NOTEBOOK_DIR OUT_DIR
// (run `npm ci` in this directory first; CMake's test does both)
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, mkdirSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const [notebookDir, outDir] = process.argv.slice(2);
const notebook = '02_positional_encoding.ipynb';
mkdirSync(outDir, { recursive: true });
// A scratch copy: running the notebook in the page saves it, and the committed ones must stay.
const served = mkdtempSync(join(tmpdir(), 'xenc-browser-'));
for (const f of readdirSync(notebookDir)) if (f.endsWith('.ipynb')) cpSync(join(notebookDir, f), join(served, f));

const port = 20000 + (process.pid % 20000);
const token = 'xenc' + process.pid;
const server = spawn('jupyter', ['notebook', '--no-browser', `--port=${port}`, '--ip=127.0.0.1',
  `--NotebookApp.token=${token}`, `--notebook-dir=${served}`,
  ...(process.getuid() === 0 ? ['--allow-root'] : [])], { stdio: ['ignore', 'inherit', 'inherit'] });

let failures = 0;
const check = (ok, what) => { console.log((ok ? 'PASS ' : 'FAIL ') + what); if (!ok) failures++; };

async function waitForServer() {
  for (let i = 0; i < 120; i++) {
    try { if ((await fetch(`http://127.0.0.1:${port}/api?token=${token}`)).ok) return; } catch {}
    await new Promise(r => setTimeout(r, 500));
  }
  throw new Error('jupyter notebook did not start');
}

let browser;
try {
  await waitForServer();
  // A fresh profile (--user-data-dir, which playwright takes as the context's userDataDir).
  browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'xenc-chromium-')), {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1200, height: 900 },
  });
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${port}/notebooks/${notebook}?token=${token}`);
  // No kernel-picker dialog: the notebook's kernelspec (xenc-cpp17) starts xenc-kernel.
  await page.waitForFunction(() => window.Jupyter && Jupyter.notebook && Jupyter.notebook.kernel &&
                                   Jupyter.notebook.kernel.is_connected(), null, { timeout: 60000 });
  const kernelName = await page.evaluate(() => Jupyter.notebook.kernel.name);
  check(kernelName === 'xenc-cpp17', `the notebook opened on kernel xenc-cpp17 (got ${kernelName})`);
  check(await page.locator('.modal-dialog').count() === 0, 'no kernel-picker dialog');
  // Kernel > Restart & Run All
  await page.evaluate(() => Jupyter.notebook.restart_run_all({ confirm: false }));
  await page.waitForFunction(() => {
    const cells = Jupyter.notebook.get_cells().filter(c => c.cell_type === 'code');
    return cells.length > 0 && cells.every(c => Number.isInteger(c.input_prompt_number));
  }, null, { timeout: 600000, polling: 500 });
  const codeCells = await page.evaluate(() => Jupyter.notebook.get_cells().filter(c => c.cell_type === 'code').length);
  check(codeCells > 0, `all ${codeCells} code cells ran (each has an execution count)`);
  check(await page.locator('.output_area .output_error').count() === 0, 'no cell shows an error');
  const svgs = await page.locator('.output_area svg').count();
  check(svgs > 0, `the figures are inline <svg> elements in the page (${svgs})`);
  const heatmap = await page.evaluate(() => [...document.querySelectorAll('.output_area svg')]
    .some(s => /positional encoding/i.test(s.textContent) && s.querySelectorAll('rect').length > 100));
  check(heatmap, 'the positional-encoding heatmap (an <svg> with its title and >100 cells) is in the page');
  const firstSvg = page.locator('.output_area svg').first();
  await firstSvg.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(outDir, 'notebook02_heatmap.png') });
  await page.screenshot({ path: join(outDir, 'notebook02_full.png'), fullPage: true });
  console.log(`screenshots: ${outDir}/notebook02_heatmap.png, notebook02_full.png`);
} catch (e) {
  console.log('FAIL ' + e.message);
  failures++;
} finally {
  if (browser) await browser.close();
  server.kill('SIGTERM');
}
console.log(`${failures} checks failed`);
process.exit(failures ? 1 : 0);
