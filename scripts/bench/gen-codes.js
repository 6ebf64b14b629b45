#!/usr/bin/env node
// A tick log of code-creation lines only, for the reader's memory bound on code events (issue 24): COUNT JS
// functions at distinct addresses, all live at the end, and no ticks. The memory a reader needs is then the live
// code map, whatever the file's size.
//
//   node scripts/bench/gen-codes.js --header HEADER --count 5000000 -o FILE
//
// HEADER: a `node --prof` header (scripts/gen-ticklog.js --save-header writes one). Lines look like node 20's:
//   code-creation,JS,13,<time us>,<start>,<size>,<name> file:///app/src/mod<k>.js:<line>:<column>,<sfi>,*
// Deterministic for (header, count).
'use strict';

const fs = require('fs');

const args = process.argv.slice(2);
const opt = {};
for (let i = 0; i < args.length; i += 2) {
  if (!['--header', '--count', '-o'].includes(args[i]) || args[i + 1] === undefined) {
    process.stderr.write('usage: node scripts/bench/gen-codes.js --header HEADER --count N -o FILE\n');
    process.exit(2);
  }
  opt[args[i]] = args[i + 1];
}
const count = Number(opt['--count']);
if (!Number.isSafeInteger(count) || count < 0 || !opt['--header'] || !opt['-o']) {
  process.stderr.write('gen-codes: --header, --count (a whole number) and -o are required\n');
  process.exit(2);
}

const header = fs.readFileSync(opt['--header'], 'latin1').replace(/\n?$/, '\n');
const out = fs.openSync(opt['-o'], 'w');
fs.writeSync(out, header, null, 'latin1');
// Far above the CodeRange and heap chunks of a real header, 64-byte aligned, never reused.
let start = 0x5a0000000000;
let sfi = 0x3a0000000000;
let chunk = [];
for (let i = 0; i < count; i++) {
  const size = 64 + (((i * 2654435761) >>> 0) % 4000);
  const name = `handler${i}_${(i * 7919) % 100003} file:///app/src/mod${i % 2000}.js:${1 + (i % 5000)}:${1 + (i % 80)}`;
  chunk.push(`code-creation,JS,13,${100000 + i},0x${start.toString(16)},${size},${name},0x${sfi.toString(16)},*\n`);
  start += (size + 63) & ~63;
  sfi += 64;
  if (chunk.length === 10000) {
    fs.writeSync(out, chunk.join(''));
    chunk = [];
  }
}
chunk.push('profiler,end\n');
fs.writeSync(out, chunk.join(''));
fs.closeSync(out);
process.stderr.write(`gen-codes: ${count} code-creation lines\n`);
