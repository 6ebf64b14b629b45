#!/usr/bin/env node
// Generates a large synthetic V8 `.cpuprofile` shaped like the ones `node --cpu-prof` writes (node 20):
// one line of JSON, keys `nodes, startTime, endTime, samples, timeDeltas`, node keys
// `id, callFrame{functionName, scriptId, url, lineNumber, columnNumber}, hitCount, [children], [positionTicks]`.
// See fixtures/oracle/SPEC.md and the DevTools protocol's `Profiler.Profile` type for what the fields mean.
//
//   node scripts/gen-cpuprofile.js --out FILE [--size-mb 500] [--seed 42] [--run R]
//
// - --run R: another recording of the same program: the functions and the call tree come from --seed, the
//   samples, their times and the start time from R as well (without --run, from --seed alone). So
//   `--seed 42 --run 1` ... `--run 100` are 100 runs (or workers) of one program, as `cpuprof merge` takes them.
// - Deterministic: the same arguments give byte-identical output. Only +,-,*,/ and integer ops are used on
//   random numbers (no Math.pow/log/exp), so the output does not depend on the Node/V8 version either.
// - Size: the file is at most --size-mb * 1,000,000 bytes and within a few bytes of it (MB = 10^6 bytes, so
//   the default 500 MB file stays under Node's 536,870,888-character string limit and `readFileSync(..,'utf8')`
//   still works on it, which is what the baseline script needs).
// - Tree: ~50,000 nodes from ~3,000 functions in ~300 files, ids in creation order (so not position+1, child id >
//   parent id, some ids skipped), written in DFS pre-order, `children` omitted on leaves, three recursive chains
//   of ~500 frames, depth otherwise capped at 60.
// - Samples: a Zipf-like mix of fresh draws and runs (a hot loop stays on one node), `(program)`/GC/`(idle)`.
//   timeDeltas are 900-1400 us mostly, the first one 2.7-4.6 ms, and about one in 50,000 samples is a deopt-style
//   extra sample with delta -1 whose next delta is 1 us longer. hitCount equals the number of samples of the node
//   (real files differ by a few; see §3 of the reference), positionTicks sum to hitCount.
// - Output is streamed through a write stream with backpressure; the samples (Uint32Array) and deltas
//   (Int16Array) are kept in memory because hitCount, which comes first in the file, depends on them.
'use strict';

const fs = require('fs');
const { once } = require('events');

// ---------------------------------------------------------------------------------------------------------------
// Arguments

function usage(msg) {
  if (msg) process.stderr.write(`gen-cpuprofile: ${msg}\n`);
  process.stderr.write('usage: node scripts/gen-cpuprofile.js --out FILE [--size-mb 500] [--seed 42] [--run R]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { out: null, sizeMb: 500, seed: 42, run: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const eq = a.indexOf('=');
    const key = eq >= 0 ? a.slice(0, eq) : a;
    const val = () => (eq >= 0 ? a.slice(eq + 1) : argv[++i]);
    if (key === '--out' || key === '-o') opts.out = val();
    else if (key === '--size-mb') opts.sizeMb = Number(val());
    else if (key === '--seed') opts.seed = Number(val());
    else if (key === '--run') opts.run = Number(val());
    else if (key === '--help' || key === '-h') usage();
    else usage(`unknown argument ${a}`);
  }
  if (!opts.out) usage('--out is required');
  if (!(opts.sizeMb > 0) || !Number.isFinite(opts.sizeMb)) usage('--size-mb must be a positive number');
  if (!Number.isSafeInteger(opts.seed)) usage('--seed must be an integer');
  if (opts.run !== null && !Number.isSafeInteger(opts.run)) usage('--run must be an integer');
  return opts;
}

// ---------------------------------------------------------------------------------------------------------------
// PRNG: mulberry32, one independent stream per purpose.

const { mulberry32, mix, int, pick, makeSampler, shuffle } = require('./lib/random');

// ---------------------------------------------------------------------------------------------------------------
// Files and functions

const NODE_INTERNAL = [
  'node:internal/main/run_main_module', 'node:internal/modules/run_main', 'node:internal/modules/cjs/loader',
  'node:internal/modules/esm/loader', 'node:internal/modules/esm/module_job', 'node:internal/process/task_queues',
  'node:internal/timers', 'node:events', 'node:internal/streams/readable', 'node:internal/streams/writable',
  'node:internal/streams/destroy', 'node:internal/stream_base_commons', 'node:_http_server', 'node:_http_common',
  'node:_http_outgoing', 'node:_http_incoming', 'node:net', 'node:internal/url', 'node:buffer', 'node:internal/util',
  'node:internal/util/inspect', 'node:internal/fs/utils', 'node:fs', 'node:internal/fs/promises', 'node:path',
  'node:internal/crypto/hash', 'node:internal/crypto/random', 'node:crypto', 'node:zlib', 'node:internal/async_hooks',
  'node:internal/async_local_storage/async_hooks', 'node:internal/console/constructor', 'node:internal/errors',
  'node:internal/validators', 'node:querystring', 'node:internal/querystring', 'node:string_decoder',
  'node:internal/http2/core', 'node:internal/worker/io', 'node:internal/perf/utils',
];
const PACKAGES = [
  'express', 'body-parser', 'router', 'qs', 'debug', 'lodash', 'rxjs', 'reflect-metadata', 'pg', 'pg-protocol',
  'ioredis', 'fastify', 'ajv', 'uuid', 'iconv-lite', 'raw-body', 'winston', 'pino', 'mongoose', 'bson', 'graphql',
  'tslib', 'class-validator', 'class-transformer', 'axios', 'follow-redirects', 'semver', 'yaml', 'jsonwebtoken',
  'moment', '@nestjs/core', '@nestjs/common', '@nestjs/platform-express', '@grpc/grpc-js', '@prisma/client',
  '@opentelemetry/api', '@opentelemetry/sdk-trace-base', '@aws-sdk/client-s3', '@smithy/smithy-client', '@babel/runtime',
];
const PKG_FILES = ['index.js', 'lib/index.js', 'lib/router.js', 'lib/parse.js', 'lib/utils.js', 'dist/cjs/index.js',
  'dist/internal/operators/map.js', 'lib/response.js', 'lib/request.js', 'build/src/client.js', 'lib/compile/index.js',
  'lib/connection.js', 'dist/index.cjs', 'lib/stringify.js', 'lib/validate.js'];
const SRC_DIRS = ['', 'controllers/', 'services/', 'repositories/', 'middleware/', 'util/', 'domain/orders/',
  'domain/users/', 'domain/billing/', 'jobs/', 'dto/'];
const SRC_NAMES = ['main', 'app', 'server', 'router', 'orders', 'users', 'billing', 'auth', 'cache', 'db', 'mapper',
  'pricing', 'render', 'report', 'search', 'session', 'tax', 'validate', 'worker', 'queue'];
const VERBS = ['handler', 'resolve', 'parse', 'validate', 'serialize', 'map', 'reduce', 'dispatch', 'render', 'compute',
  'fetch', 'transform', 'visit', 'walk', 'encode', 'decode', 'query', 'format', 'normalize', 'emit', 'next', 'flush'];
const NATIVES = ['consoleCall', 'compileFunction', 'readFileUtf8', 'lstat', 'writeUtf8String', 'writeBuffer', 'dispatch',
  'postMessage', 'get length', 'set length', 'hrtime', 'cpuUsage', 'update', 'digest', 'randomFillSync', 'stat',
  'processImmediate', 'JSONParse', 'JSONStringify', 'Map', 'push', 'slice', 'join', 'split', 'replace',
  'RegExp: ^\\/users\\/(?<id>[^/]+)$', 'RegExp: \\{\\{(\\w+)\\}\\}', 'RegExp: ^(?:\\/(?=$))?$', 'RegExp: [&<>"\']',
  'decodeURIComponent'];
// A few names that need care downstream (JSON escapes, non-ASCII, spaces, separators used by folded output).
const ODD_NAMES = ['Layer.handle [as handle_request]', 'handlers.<computed>', 'größe_berechnen', 'get body',
  'Router.<anonymous>', 'render;partial', 'formatCurrency€', 'Promise.then (async)'];

function buildFunctions(rng) {
  const files = []; // {url, scriptId, minified}
  let scriptId = 5;
  for (const u of NODE_INTERNAL) files.push({ url: u, scriptId: String(scriptId++) });
  for (const pkg of PACKAGES) {
    const n = int(rng, 3, 7);
    const chosen = shuffle(rng, PKG_FILES.slice()).slice(0, n);
    for (const f of chosen) {
      scriptId += int(rng, 1, 4);
      files.push({ url: `file:///srv/app/node_modules/${pkg}/${f}`, scriptId: String(scriptId) });
    }
  }
  // pnpm layout and a percent-encoded path, as V8 writes them
  files.push({ url: 'file:///srv/app/node_modules/.pnpm/lodash.merge@4.6.2/node_modules/lodash.merge/index.js', scriptId: String(scriptId += 3) });
  files.push({ url: 'file:///srv/app/node_modules/.pnpm/@scope+pkg@1.2.3/node_modules/@scope/pkg/lib/x.js', scriptId: String(scriptId += 2) });
  files.push({ url: 'file:///srv/app/src/legacy%20code/m%C3%BCnze.js', scriptId: String(scriptId += 2) });
  for (const d of SRC_DIRS) {
    for (const n of shuffle(rng, SRC_NAMES.slice()).slice(0, int(rng, 4, 7))) {
      scriptId += int(rng, 1, 3);
      files.push({ url: `file:///srv/app/src/${d}${n}.js`, scriptId: String(scriptId) });
    }
  }
  const bundle = { url: 'file:///srv/app/dist/bundle.min.js', scriptId: String(scriptId += 5), minified: true };
  files.push(bundle);

  const funcs = []; // {name, file, line, col, native}
  let serial = 0;
  for (const file of files) {
    const count = file.minified ? 120 : int(rng, 4, 14);
    let line = int(rng, 0, 20);
    for (let k = 0; k < count; k++) {
      serial++;
      let name;
      const r = rng();
      if (r < 0.08) name = ''; // anonymous
      else if (r < 0.1) name = pick(rng, ODD_NAMES);
      else name = `${pick(rng, VERBS)}_${serial}`;
      if (file.minified) funcs.push({ name: r < 0.3 ? '' : name, file, line: 0, col: int(rng, 10, 250000) });
      else { line += int(rng, 3, 120); funcs.push({ name, file, line, col: int(rng, 0, 60) }); }
    }
    // top-level module code: "" at 0:0
    if (!file.url.startsWith('node:')) funcs.push({ name: '', file, line: 0, col: 0 });
  }
  const firstNative = funcs.length;
  const nativeFile = { url: '', scriptId: '0' };
  for (const n of NATIVES) funcs.push({ name: n, file: nativeFile, line: -1, col: -1, native: true });
  return { funcs, files, firstNative, nextScriptId: scriptId + 10 };
}

function callFrameJson(f) {
  return `{"functionName":${JSON.stringify(f.name)},"scriptId":${JSON.stringify(f.file.scriptId)},` +
    `"url":${JSON.stringify(f.file.url)},"lineNumber":${f.line},"columnNumber":${f.col}}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Tree

const TARGET_NODES = 50000;
const MAX_DEPTH = 60;

function buildTree(rng, fx) {
  const { funcs, firstNative } = fx;
  const metaFile = { url: '', scriptId: '0' };
  const metaFunc = (name) => { funcs.push({ name, file: metaFile, line: -1, col: -1, meta: true }); return funcs.length - 1; };
  const F_ROOT = metaFunc('(root)'), F_PROGRAM = metaFunc('(program)'), F_GC = metaFunc('(garbage collector)'), F_IDLE = metaFunc('(idle)');

  // nodes in creation order; index = creation order, id assigned with occasional gaps
  const nodes = [];
  let nextId = 1;
  const add = (parent, func, opts = {}) => {
    const n = { idx: nodes.length, id: nextId, parent, func, depth: parent ? parent.depth + 1 : 0, children: [],
      canParent: !opts.leaf && !funcs[func].native && !funcs[func].meta, chain: !!opts.chain };
    nextId += rng() < 0.06 ? int(rng, 2, 40) : 1; // skipped ids (nodes V8 created and later dropped)
    nodes.push(n);
    if (parent) parent.children.push(n);
    return n;
  };
  const byName = (url, name, line, col) => {
    for (let i = 0; i < funcs.length; i++) {
      const f = funcs[i];
      if (f.file.url === url && f.name === name && (line === undefined || (f.line === line && f.col === col))) return i;
    }
    let file = fx.files.find((f) => f.url === url);
    if (!file) { file = { url, scriptId: String(fx.nextScriptId++) }; fx.files.push(file); }
    funcs.push({ name, file, line: line ?? int(rng, 10, 900), col: col ?? int(rng, 0, 40) });
    return funcs.length - 1;
  };

  const root = add(null, F_ROOT, { leaf: true });
  const program = add(root, F_PROGRAM), gc = add(root, F_GC), idle = add(root, F_IDLE);

  // entry points as in a server process
  let cur = add(root, byName('node:internal/main/run_main_module', '', 0, 0));
  for (const [url, name] of [['node:internal/modules/run_main', 'executeUserEntryPoint'],
    ['node:internal/modules/cjs/loader', 'Module._load'], ['node:internal/modules/cjs/loader', 'Module.load'],
    ['node:internal/modules/cjs/loader', 'Module._extensions..js'], ['node:internal/modules/cjs/loader', 'Module._compile']]) {
    cur = add(cur, byName(url, name));
  }
  add(cur, byName('file:///srv/app/src/main.js', '', 0, 0));
  add(root, byName('node:internal/process/task_queues', 'processTicksAndRejections'));
  add(root, byName('node:internal/timers', 'listOnTimeout'));
  add(root, byName('node:internal/timers', 'processTimers'));
  add(root, byName('node:events', 'emit'));
  add(root, byName('node:internal/async_hooks', 'emitHook'));

  // function popularity for new call-tree nodes: 1/(rank+4) over a random ranking of non-native functions
  const jsFuncs = [];
  for (let i = 0; i < funcs.length; i++) if (!funcs[i].native && !funcs[i].meta) jsFuncs.push(i);
  shuffle(rng, jsFuncs);
  const pickJs = makeSampler(jsFuncs.map((_, r) => 1 / (r + 4)));
  const nativeCount = NATIVES.length;

  // three deep recursive chains, created at random points of the growth
  const isEvenF = byName('file:///srv/app/src/util/walk.js', 'isEven');
  const isOddF = byName('file:///srv/app/src/util/walk.js', 'isOdd');
  const walkF = byName('file:///srv/app/node_modules/graphql/index.js', 'visitInParallel');
  const deepF = byName('file:///srv/app/src/domain/orders/tree.js', 'flattenCategories');
  const chainPlan = [
    { at: 9000, len: 520, fns: [isEvenF, isOddF] },
    { at: 23000, len: 480, fns: [walkF] },
    { at: 41000, len: 450, fns: [deepF] },
  ];

  const eligible = nodes.filter((n) => n.canParent); // may become stale (depth/children), checked on use
  while (nodes.length < TARGET_NODES) {
    const plan = chainPlan.find((c) => !c.done && nodes.length >= c.at);
    if (plan) {
      plan.done = true;
      let p;
      do { p = pick(rng, eligible); } while (p.depth < 6 || p.depth > 20 || p.chain);
      for (let k = 0; k < plan.len; k++) {
        p = add(p, plan.fns[k % plan.fns.length], { chain: true });
        p.canParent = false; // chains are not grown further except by the leaves below
        if (rng() < 0.05) add(p, firstNative + int(rng, 0, nativeCount - 1), { chain: true });
      }
      continue;
    }
    // pick a parent: mostly the node just created (call chains), else any eligible node
    let parent = null;
    const last = nodes[nodes.length - 1];
    if (rng() < 0.55 && last.canParent && last.depth < MAX_DEPTH) parent = last;
    while (!parent) {
      const c = pick(rng, eligible);
      if (c.depth < MAX_DEPTH && c.children.length < 40) parent = c;
    }
    let func = -1;
    for (let attempt = 0; attempt < 8 && func < 0; attempt++) {
      const f = rng() < 0.07 ? firstNative + int(rng, 0, nativeCount - 1) : jsFuncs[pickJs(rng)];
      if (!parent.children.some((ch) => ch.func === f)) func = f; // no two siblings with one callFrame
    }
    if (func < 0) continue;
    const n = add(parent, func);
    if (n.canParent) eligible.push(n);
  }
  return { nodes, program, gc, idle };
}

// DFS pre-order without recursion (chains are ~500 deep)
function preorder(root) {
  const out = [];
  const stack = [root];
  while (stack.length) {
    const n = stack.pop();
    out.push(n);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Samples

function digits(n) {
  if (n < 0) return 1 + digits(-n);
  let d = 1;
  while (n >= 10) { n = Math.floor(n / 10); d++; }
  return d;
}

function normalDelta(rng) {
  const r = rng();
  if (r < 0.006) return int(rng, 1401, 4800); // late ticks (GC pauses, busy machine)
  return 900 + Math.floor(rng() * 300) + Math.floor(rng() * 201); // 900..1400, peaked around 1150
}

function generateSamples(rngS, rngD, tree, budgetBytes) {
  const { nodes, program, gc, idle } = tree;
  // sample targets: leaves weigh 1/rank, inner JS nodes a tenth of that, meta nodes a fixed share
  const leaves = [], inner = [];
  for (const n of nodes) {
    if (n.parent === null || n === program || n === gc || n === idle) continue;
    (n.children.length === 0 ? leaves : inner).push(n.idx);
  }
  shuffle(rngS, leaves); shuffle(rngS, inner);
  const targets = [], weights = [];
  let jsWeight = 0;
  leaves.forEach((idx, r) => { targets.push(idx); weights.push(1 / (r + 1)); jsWeight += 1 / (r + 1); });
  inner.forEach((idx, r) => { targets.push(idx); weights.push(0.1 / (r + 1)); jsWeight += 0.1 / (r + 1); });
  const jsOnly = makeSampler(weights);
  // (program) 5%, GC 2.5%, (idle) 3% of the fresh draws
  targets.push(program.idx, gc.idx, idle.idx);
  weights.push(jsWeight * 0.05 / 0.895, jsWeight * 0.025 / 0.895, jsWeight * 0.03 / 0.895);
  const any = makeSampler(weights);

  const est = Math.ceil(budgetBytes / 9) + 1024;
  let samples = new Uint32Array(est), deltas = new Int16Array(est);
  const idOf = new Uint32Array(nodes.length);
  const idDigits = new Uint8Array(nodes.length);
  for (const n of nodes) { idOf[n.idx] = n.id; idDigits[n.idx] = digits(n.id); }

  let n = 0, bytes = 0, prev = targets[jsOnly(rngS)], pendingComp = false;
  while (bytes < budgetBytes) {
    if (n === samples.length) { // grow (rare: only when the estimate was low)
      const s2 = new Uint32Array(Math.ceil(samples.length * 1.25)); s2.set(samples); samples = s2;
      const d2 = new Int16Array(s2.length); d2.set(deltas); deltas = d2;
    }
    let cur, delta;
    const prevNode = nodes[prev];
    if (n > 0 && !pendingComp && rngD() < 0.00002 && !isMeta(prevNode, tree)) {
      // deopt-style extra sample: a JS node, timestamped 1 us before the previous tick
      cur = prevNode.parent && prevNode.parent.parent && rngS() < 0.5 ? prevNode.parent.idx : prev;
      delta = -1; pendingComp = true;
    } else {
      const r = rngS();
      if (r < 0.6) cur = prev; // hot loop: same stack again
      else if (r < 0.68 && prevNode.parent && prevNode.parent.parent) cur = prevNode.parent.idx; // back in the caller
      else if (r < 0.74 && prevNode.children.length) cur = prevNode.children[Math.floor(rngS() * prevNode.children.length)].idx;
      else cur = targets[any(rngS)];
      delta = n === 0 ? int(rngD, 2700, 4600) : normalDelta(rngD) + (pendingComp ? 1 : 0); // makes up for the -1
      pendingComp = false;
    }
    samples[n] = cur; deltas[n] = delta;
    bytes += idDigits[cur] + 1 + digits(delta) + 1;
    n++;
    prev = cur;
  }
  return { samples, deltas, n, bytes, idOf, idDigits };
}

function isMeta(node, tree) {
  return node === tree.program || node === tree.gc || node === tree.idle || node.parent === null;
}

// ---------------------------------------------------------------------------------------------------------------
// Node serialization

// [[line, ticks], ...] for a node with `hits` hits, or null. Depends only on (seed, node id, hits).
function positionTicks(node, func, hits, seed) {
  if (hits === 0 || func.native || func.meta) return null;
  const rng = mulberry32(mix(seed, 1000003 + node.id));
  if (rng() < 0.35) return null; // some nodes have hits but no line info in this synthetic file
  const k = Math.min(hits, int(rng, 1, 4));
  const base = func.line >= 0 ? func.line + 1 : 1; // positionTicks lines are 1-based
  const out = [];
  let left = hits;
  for (let i = 0; i < k; i++) {
    let line;
    do { line = base + int(rng, 0, 25); } while (out.some((e) => e[0] === line));
    // split the hits: earlier lines get more, every line at least one
    const take = i === k - 1 ? left : Math.max(1, Math.floor(left * (0.4 + rng() * 0.5)));
    const t = Math.min(take, left - (k - 1 - i));
    out.push([line, t]);
    left -= t;
  }
  return out;
}

// Node JSON = head + hitCount + children + positionTicks + "}". Heads and children parts do not depend on the
// samples, so they are built once; `bytes(hitCount)` is cheap enough to call in the size bisection.
function makeNodeWriter(order, funcs, frameJson, seed) {
  const heads = order.map((n) => `{"id":${n.id},"callFrame":${frameJson[n.func]},"hitCount":`);
  const kids = order.map((n) => (n.children.length ? `,"children":[${n.children.map((c) => c.id).join(',')}]` : ''));
  let constBytes = order.length - 1; // commas between nodes
  for (let i = 0; i < order.length; i++) constBytes += Buffer.byteLength(heads[i]) + kids[i].length + 1;
  return {
    bytes(hitCount) {
      let b = constBytes;
      for (let i = 0; i < order.length; i++) {
        const n = order[i], hits = hitCount[n.idx];
        b += digits(hits);
        const pt = positionTicks(n, funcs[n.func], hits, seed);
        if (pt) {
          b += ',"positionTicks":['.length + pt.length; // + "]" and k-1 commas
          for (const [l, t] of pt) b += '{"line":,"ticks":}'.length + digits(l) + digits(t);
        }
      }
      return b;
    },
    str(i, hitCount) {
      const n = order[i], hits = hitCount[n.idx];
      const pt = positionTicks(n, funcs[n.func], hits, seed);
      const pts = pt ? `,"positionTicks":[${pt.map(([l, t]) => `{"line":${l},"ticks":${t}}`).join(',')}]` : '';
      return `${heads[i]}${hits}${kids[i]}${pts}}`;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Output

class Out {
  constructor(stream) { this.ws = stream; this.size = 1 << 20; this.buf = Buffer.allocUnsafe(this.size); this.pos = 0; this.total = 0; }
  str(s) {
    const len = Buffer.byteLength(s);
    if (this.pos + len > this.size) this.spill();
    if (len > this.size) { this.pending.push(Buffer.from(s)); this.total += len; return; }
    this.pos += this.buf.write(s, this.pos);
    this.total += len;
  }
  // writes a (possibly negative) integer as ASCII
  int(v) {
    const b = this.buf;
    let p = this.pos;
    if (v < 0) { b[p++] = 45; v = -v; }
    const start = p;
    do { b[p++] = 48 + (v % 10); v = Math.floor(v / 10); } while (v > 0);
    for (let i = start, j = p - 1; i < j; i++, j--) { const t = b[i]; b[i] = b[j]; b[j] = t; }
    this.total += p - this.pos;
    this.pos = p;
  }
  byte(c) { this.buf[this.pos++] = c; this.total++; }
  get full() { return this.pos > this.size - 64; }
  spill() {
    (this.pending ||= []).push(this.buf.subarray(0, this.pos));
    this.buf = Buffer.allocUnsafe(this.size); this.pos = 0;
  }
  async flush() {
    if (this.pos > 0) this.spill();
    const chunks = this.pending || [];
    this.pending = [];
    for (const c of chunks) if (!this.ws.write(c)) await once(this.ws, 'drain');
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const t0 = process.hrtime.bigint();
  const targetBytes = Math.floor(opts.sizeMb * 1e6);
  const seed = opts.seed;
  // What differs between runs of one program (see --run).
  const runSeed = opts.run === null ? seed : mix(seed, 7000003 + opts.run);

  const fx = buildFunctions(mulberry32(mix(seed, 1)));
  const tree = buildTree(mulberry32(mix(seed, 2)), fx);
  const order = preorder(tree.nodes[0]);
  const frameJson = fx.funcs.map(callFrameJson);
  const hitCount = new Uint32Array(tree.nodes.length);

  const startTime = 1100000000 + int(mulberry32(mix(runSeed, 5)), 0, 900000000);
  const endPad = int(mulberry32(mix(runSeed, 6)), 100, 3100); // endTime is 0.1-3.1 ms after the last sample
  // fixed parts: {"nodes":[ ... ],"startTime":S,"endTime":E,"samples":[ ... ],"timeDeltas":[ ... ]}
  const fixedBytes = (endTime) => '{"nodes":['.length + '],"startTime":'.length + digits(startTime) +
    ',"endTime":'.length + digits(endTime) + ',"samples":['.length + '],"timeDeltas":['.length + ']}'.length;
  const nodeWriter = makeNodeWriter(order, fx.funcs, frameJson, seed);
  const baseNodes = nodeWriter.bytes(hitCount);
  // hitCount digits and positionTicks are not counted yet, so this overshoots a little; trimmed below
  const budget = Math.max(64, targetBytes - fixedBytes(startTime * 100) - baseNodes);
  const gen = generateSamples(mulberry32(mix(runSeed, 3)), mulberry32(mix(runSeed, 4)), tree, budget);
  const { samples, deltas, idDigits } = gen;

  // Pick the sample count: the largest n whose whole file fits in targetBytes (bisection; the size grows with n,
  // also through hitCount digits and positionTicks). sampleBytes counts a comma after every sample and delta;
  // the arrays have n-1 commas each.
  let n = 0, sampleBytes = 0, sumDeltas = 0;
  const setN = (m) => {
    for (; n < m; n++) { hitCount[samples[n]]++; sampleBytes += idDigits[samples[n]] + digits(deltas[n]) + 2; sumDeltas += deltas[n]; }
    for (; n > m; ) { n--; hitCount[samples[n]]--; sampleBytes -= idDigits[samples[n]] + digits(deltas[n]) + 2; sumDeltas -= deltas[n]; }
  };
  const sizeAt = (m) => {
    setN(m);
    return fixedBytes(startTime + sumDeltas + endPad) + nodeWriter.bytes(hitCount) + sampleBytes - (m > 0 ? 2 : 0);
  };
  let lo = 0, hi = gen.n; // invariant: sizeAt(lo) fits (or lo == 0); answer in [lo, hi]
  if (sizeAt(hi) <= targetBytes) lo = hi;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (sizeAt(mid) <= targetBytes) lo = mid; else hi = mid - 1;
  }
  const total = sizeAt(lo);
  const endTime = startTime + sumDeltas + endPad;

  const ws = fs.createWriteStream(opts.out, { highWaterMark: 1 << 22 });
  const wsError = new Promise((_, reject) => ws.on('error', reject));
  wsError.catch(() => {});
  const out = new Out(ws);
  const run = (async () => {
    out.str('{"nodes":[');
    for (let i = 0; i < order.length; i++) {
      if (i > 0) out.byte(44);
      out.str(nodeWriter.str(i, hitCount));
      if (out.full) await out.flush();
    }
    out.str(`],"startTime":${startTime},"endTime":${endTime},"samples":[`);
    const { idOf } = gen;
    for (let i = 0; i < n; i++) {
      if (i > 0) out.byte(44);
      out.int(idOf[samples[i]]);
      if (out.full) await out.flush();
    }
    out.str('],"timeDeltas":[');
    for (let i = 0; i < n; i++) {
      if (i > 0) out.byte(44);
      out.int(deltas[i]);
      if (out.full) await out.flush();
    }
    out.str(']}');
    await out.flush();
    ws.end();
    await once(ws, 'finish');
  })();
  await Promise.race([run, wsError]);

  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  if (out.total !== total) throw new Error(`internal: wrote ${out.total} bytes, computed ${total}`);
  let maxDepth = 0, maxPlain = 0;
  for (const nd of tree.nodes) {
    if (nd.depth > maxDepth) maxDepth = nd.depth;
    if (!nd.chain && nd.depth > maxPlain) maxPlain = nd.depth;
  }
  process.stderr.write(`gen-cpuprofile: ${opts.out}: nodes ${tree.nodes.length}, samples ${n}, ` +
    `bytes ${out.total} (target ${targetBytes}), max depth ${maxDepth} (${maxPlain} outside the recursive chains), ${secs.toFixed(1)} s\n`);
}

main().catch((err) => {
  process.stderr.write(`gen-cpuprofile: error: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
