#!/usr/bin/env node
// The baseline users have today: the "read the .cpuprofile and sum self time per function" script that docs
// and blog posts show. Deliberately plain (readFileSync + JSON.parse + a Map), not tuned: the benchmark
// (scripts/bench-top.sh) measures this approach, not the best possible JavaScript.
//
//   node scripts/node-aggregate.js FILE.cpuprofile
//
// Sample i is charged timeDeltas[i + 1] (the time until the next sample, as DevTools does); the last sample
// gets the mean delta. Note: readFileSync(..., 'utf8') fails on files over ~512 MiB (V8's string limit).
'use strict';

const fs = require('fs');

const file = process.argv[2];
if (!file) {
  console.error('usage: node scripts/node-aggregate.js FILE.cpuprofile');
  process.exit(2);
}

const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const { nodes, samples, timeDeltas } = profile;

const nodeById = new Map();
for (const node of nodes) nodeById.set(node.id, node);

const meanDelta = timeDeltas.reduce((a, b) => a + b, 0) / timeDeltas.length;

const selfByFunction = new Map();
let totalTime = 0;
for (let i = 0; i < samples.length; i++) {
  const node = nodeById.get(samples[i]);
  if (!node) continue;
  const time = i + 1 < timeDeltas.length ? timeDeltas[i + 1] : meanDelta;
  const { functionName, url, lineNumber } = node.callFrame;
  const key = `${functionName}|${url}|${lineNumber}`;
  const entry = selfByFunction.get(key);
  if (entry) {
    entry.self += time;
  } else {
    selfByFunction.set(key, { name: functionName || '(anonymous)', url, line: lineNumber + 1, self: time });
  }
  totalTime += time;
}

const top = [...selfByFunction.values()].sort((a, b) => b.self - a.self).slice(0, 20);

console.log(`${'self ms'.padStart(12)} ${'self %'.padStart(7)}  function`);
for (const f of top) {
  const where = f.url ? ` ${f.url}:${f.line}` : '';
  console.log(`${(f.self / 1000).toFixed(1).padStart(12)} ${((100 * f.self) / totalTime).toFixed(2).padStart(6)}%  ${f.name}${where}`);
}
