// The WebAssembly build of xenc-word-order against the native one: for each pair of sentences
// and position scheme, both programs' --json outputs must hold the same keys, the same strings
// and numbers within 1e-6 (the wasm build multiplies with kernels::gemm_portable, the native
// one with OpenBLAS: they differ by float rounding only).
//   node compare_word_order.js NATIVE_PROGRAM WASM_PROGRAM.js
'use strict';
const { execFileSync } = require('child_process');

const [native, wasm] = process.argv.slice(2);
if (!native || !wasm) {
  console.error('usage: node compare_word_order.js NATIVE_PROGRAM WASM_PROGRAM.js');
  process.exit(2);
}
const cases = [
  [],  // the defaults: "cat chased mouse" vs "mouse chased cat", none then sinusoidal
  ['--a', 'the dog bit the man', '--b', 'the man bit the dog', '--position', 'all'],
  ['--a', 'cat chased mouse', '--b', 'the dog chased the cat'],
  ['--a', 'Le CHAT mange la souris', '--b', 'la souris mange le chat', '--position', 'rope',
   '--d-model', '32', '--heads', '4', '--layers', '3'],
];
const tolerance = 1e-6;

// Every difference between two parsed JSON values, as "path: what".
function differences(a, b, path, out) {
  if (typeof a === 'number' && typeof b === 'number') {
    if (!(Math.abs(a - b) <= tolerance)) out.push(`${path}: ${a} vs ${b}`);
  } else if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) out.push(`${path}: ${a.length} vs ${b.length} elements`);
    else a.forEach((x, i) => differences(x, b[i], `${path}[${i}]`, out));
  } else if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      if (!(k in a) || !(k in b)) out.push(`${path}.${k}: only in ${k in a ? 'native' : 'wasm'}`);
      else differences(a[k], b[k], `${path}.${k}`, out);
    }
  } else if (a !== b) {
    out.push(`${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  }
  return out;
}

let failed = 0;
for (const args of cases) {
  const run = (cmd, pre) => JSON.parse(execFileSync(cmd, [...pre, ...args, '--json'], { encoding: 'utf8' }));
  const n = run(native, []);
  const w = run(process.execPath, [wasm]);
  const diffs = differences(n, w, '$', []);
  const label = args.length ? args.join(' ') : '(defaults)';
  if (diffs.length) {
    failed++;
    console.log(`FAIL ${label}: ${diffs.length} differences, e.g.\n  ${diffs.slice(0, 5).join('\n  ')}`);
  } else {
    console.log(`ok   ${label}`);
  }
}
console.log(`${cases.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
