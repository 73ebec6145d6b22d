// The page's layout code. It computes nothing: every number, sentence and SVG comes from the
// library (xenc-web.wasm, apps/web/bindings.cpp) as JSON; a C++ error arrives as {"error": ...}
// and is shown in the tab's error line.
'use strict';

const $ = id => document.getElementById(id);

function showError(id, message) {
  const el = $(id);
  el.textContent = message ? 'Error: ' + message : '';
  el.hidden = !message;
}

// ---- tabs ---------------------------------------------------------------------------------------
for (const button of document.querySelectorAll('[role=tab]')) {
  button.addEventListener('click', () => {
    for (const b of document.querySelectorAll('[role=tab]')) {
      const selected = b === button;
      b.setAttribute('aria-selected', String(selected));
      $(b.getAttribute('aria-controls')).hidden = !selected;
    }
  });
}

function debounce(f, ms) {
  let timer;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(f, ms);
  };
}

function numberOf(id) {
  return Number($(id).value);
}

// ---- word order ---------------------------------------------------------------------------------
function renderWordOrder(lib) {
  const options = {
    a: $('sentence-a').value,
    b: $('sentence-b').value,
    position: $('scheme').value,
    d_model: numberOf('d-model'),
    heads: numberOf('heads'),
    layers: numberOf('layers'),
    seed: numberOf('seed'),
  };
  const r = JSON.parse(lib.wordOrder(JSON.stringify(options)));
  showError('order-error', r.error);
  document.body.dataset.orderState = r.error ? 'error' : 'ok';
  if (r.error) return;
  $('command').textContent = r.command;
  $('demo-text').textContent = r.text;
  const runs = $('runs'),
    attention = $('attention');
  runs.replaceChildren();
  attention.replaceChildren();
  for (const run of r.runs) {
    const block = document.createElement('div');
    block.className = 'run';
    block.dataset.scheme = run.scheme;
    const h = document.createElement('h3');
    h.textContent = run.heading;
    block.append(h, cosineTable(run, r.words));
    const p = document.createElement('p');
    p.className = 'narration';
    p.textContent = run.narration;
    block.append(p);
    runs.append(block);

    const figures = document.createElement('div');
    figures.className = 'attention-run';
    figures.dataset.scheme = run.scheme;
    for (const [which, svg] of [
      ['A', run.attention_a],
      ['B', run.attention_b],
    ]) {
      const f = document.createElement('div');
      f.className = 'figure';
      f.dataset.sentence = which;
      f.innerHTML = svg; // the library's SVG (its text is XML-escaped there)
      figures.append(f);
    }
    attention.append(figures);
  }
}

function cosineTable(run, words) {
  const table = document.createElement('table');
  table.className = 'cosines';
  const head = table.createTHead().insertRow();
  for (const label of ['stage', ...words, 'sentence']) {
    const th = document.createElement('th');
    th.textContent = label;
    head.append(th);
  }
  const body = table.createTBody();
  for (const stage of run.stages) {
    const row = body.insertRow();
    const name = document.createElement('th');
    name.textContent = stage.name;
    row.append(name);
    stage.cells.forEach((text, i) => {
      const td = row.insertCell();
      td.textContent = text;
      td.dataset.word = words[i];
      td.dataset.stage = stage.name;
      if (text !== 'n/a' && text !== '1.000000') td.className = 'moved';
    });
    const td = row.insertCell();
    td.textContent = stage.sentence_cell;
    td.dataset.word = '(sentence)';
    td.dataset.stage = stage.name;
    td.className = 'sentence' + (stage.sentence_cell !== '1.000000' ? ' moved' : '');
  }
  return table;
}

// ---- the sinusoidal table -----------------------------------------------------------------------
function renderTable(lib) {
  const options = {
    positions: numberOf('pe-positions'),
    d_model: numberOf('pe-d-model'),
  };
  const r = JSON.parse(lib.sinusoidalTable(JSON.stringify(options)));
  showError('pe-error', r.error);
  if (r.error) return;
  $('pe-figure').innerHTML = r.svg;
  const table = $('pe-rows');
  table.replaceChildren();
  const shown = Math.min(8, r.first_rows[0].length);
  const head = table.createTHead().insertRow();
  for (const label of ['p', ...Array.from({ length: shown }, (_, j) => 'j = ' + j), '…']) {
    const th = document.createElement('th');
    th.textContent = label;
    head.append(th);
  }
  r.first_rows.forEach((values, p) => {
    const row = table.insertRow();
    row.insertCell().textContent = String(p);
    for (let j = 0; j < shown; ++j) row.insertCell().textContent = values[j].toFixed(4);
    row.insertCell().textContent = '…';
  });
}

// ---- training, in a Web Worker ------------------------------------------------------------------
let worker = null;

function trainingOptions() {
  return {
    schemes: ['none', $('train-scheme').value],
    epochs: numberOf('train-epochs'),
    nouns: numberOf('train-nouns'),
    verbs: numberOf('train-verbs'),
    sentences_per_pair: numberOf('train-per-pair'),
    d_model: numberOf('train-d-model'),
    heads: numberOf('train-heads'),
    layers: numberOf('train-layers'),
    seed: numberOf('train-seed'),
  };
}

function setTraining(running) {
  $('train-start').disabled = running;
  $('train-stop').disabled = !running;
  document.body.dataset.trainState = running ? 'running' : document.body.dataset.trainState;
}

function startTraining() {
  if (worker) worker.terminate();
  showError('train-error', '');
  for (const id of ['train-header', 'train-table', 'train-time']) $(id).textContent = '';
  $('train-curves').replaceChildren();
  $('train-attention').replaceChildren();
  $('train-progress').value = 0;
  $('train-status').textContent = 'Starting the worker…';
  setTraining(true);
  const options = trainingOptions();
  const started = performance.now();
  worker = new Worker('worker.js');
  worker.onmessage = e => {
    const m = e.data;
    if (m.type === 'ready') {
      $('train-header').textContent = m.header;
    } else if (m.type === 'step') {
      $('train-progress').value = (m.scheme_index * m.steps + m.step) / (m.schemes * m.steps);
      $('train-status').textContent =
        `${m.scheme}: step ${m.step} of ${m.steps}` +
        (m.heldout_accuracy !== undefined
          ? `, held-out accuracy ${(100 * m.heldout_accuracy).toFixed(1)}%` +
            ` at epoch ${m.epoch.toFixed(2)}`
          : '');
      if (m.curves_svg) $('train-curves').innerHTML = m.curves_svg;
    } else if (m.type === 'trained') {
      $('train-curves').innerHTML = m.curves_svg;
      const f = document.createElement('div');
      f.dataset.scheme = m.scheme;
      f.innerHTML = m.attention_svg;
      $('train-attention').append(f);
    } else if (m.type === 'done') {
      worker.terminate();
      worker = null;
      const seconds = (performance.now() - started) / 1000;
      document.body.dataset.trainState = m.result.error ? 'error' : 'done';
      setTraining(false);
      if (m.result.error) {
        showError('train-error', m.result.error);
        $('train-status').textContent = 'Stopped by an error.';
        return;
      }
      window.xencLastTraining = m.result; // for the browser test (tests/wasm/browser)
      $('train-progress').value = 1;
      $('train-status').textContent = 'Done.';
      $('train-curves').innerHTML = m.result.curves_svg;
      $('train-table').textContent = m.result.table;
      const perScheme = m.result.results.map(s => `${s.scheme} ${s.seconds.toFixed(1)} s`);
      $('train-time').textContent =
        `In this browser: ${seconds.toFixed(1)} s from pressing Train to this table ` +
        `(${perScheme.join(', ')} of training).`;
      $('train-time').dataset.seconds = seconds.toFixed(2);
    }
  };
  worker.onerror = e => {
    showError('train-error', e.message || 'the worker failed');
    document.body.dataset.trainState = 'error';
    setTraining(false);
  };
  worker.postMessage(options);
}

$('train-form').addEventListener('submit', e => {
  e.preventDefault();
  startTraining();
});
$('train-stop').addEventListener('click', () => {
  if (worker) worker.terminate();
  worker = null;
  $('train-status').textContent = 'Stopped.';
  document.body.dataset.trainState = 'stopped';
  setTraining(false);
});

// ---- start --------------------------------------------------------------------------------------
XencWeb().then(
  lib => {
    $('loading').hidden = true;
    const order = debounce(() => renderWordOrder(lib), 120);
    $('order-form').addEventListener('input', order);
    $('order-form').addEventListener('submit', e => e.preventDefault());
    const table = debounce(() => renderTable(lib), 120);
    $('pe-form').addEventListener('input', table);
    $('pe-form').addEventListener('submit', e => e.preventDefault());
    renderWordOrder(lib);
    renderTable(lib);
    document.body.dataset.ready = 'true';
  },
  error => {
    $('loading').textContent =
      'The library did not load: ' +
      error +
      (location.protocol === 'file:'
        ? ' (the page was opened from disk: browsers load its .wasm and its Web Worker ' +
          'only from a web server, for example bash scripts/web.sh)'
        : '');
    $('loading').className = 'error';
  },
);
