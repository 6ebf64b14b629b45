#!/usr/bin/env node
// Generates a large synthetic V8 tick log shaped like the ones `node --prof` writes (node 20, V8 11.3), for
// benchmarking tick-log readers. `node --prof-process` accepts the output. V8 writes the format in
// src/logging/log.cc and reads it in tools/tickprocessor.mjs; fixtures/oracle/SPEC.md says what cpuprof reads.
//
//   node scripts/gen-ticklog.js --size 1G --seed 1 -o /tmp/big.log [--header LOG] [--functions 3000]
//                               [--diversity 0.5] [--compaction 0.06] [--deopts 100000]
//
// Sizes: a number with an optional suffix. K, M, G (also KiB, MiB, GiB) are powers of 1024; KB, MB, GB are powers
// of 1000; no suffix means bytes. The file is at most that many bytes, made of whole lines, and ends with
// `profiler,end`.
//
// What the log contains:
// - Header: copied from a real log recorded on this machine when the generator starts (`node --prof` on a
//   one-line script in a temporary directory), in its original order: v8-version, v8-platform, the
//   shared-library lines, shared-library-end, profiler,begin,1000, new,CodeRange, new/delete,MemoryChunk,
//   heap-capacity, heap-available, and the ~1700 Builtin and ~480 BytecodeHandler code-creation lines. So
//   library ranges, builtin addresses and the CodeRange match the node binary that runs the generator.
//   Ticks, bootstrap JS code, script-source and code-source-info lines of the recorded log are left out.
//   `--header LOG` takes the header from an existing `node --prof` log (or a file written by --save-header)
//   instead; with the same header file, seed and options the output is byte-identical. A freshly recorded header
//   differs from run to run (ASLR: CodeRange, libc, heap addresses, builtin timestamps) and so do the addresses
//   derived from it; everything else (functions, stacks, times, sizes, event order) depends on the seed only.
// - JS functions: --functions user functions (default 3000) in ~200 modules `file:///app/src/mod<k>.js`, plus
//   node-internal entry points (processTicksAndRejections, listOnTimeout, emit, Module._load, ...), a few anonymous,
//   getter and non-ASCII names (no commas, so the log stays parseable). Each function has an SFI address in
//   old-space heap chunks. A function is compiled lazily: its Ignition `code-creation,JS,10,...,~` (a
//   BytecodeArray in a heap chunk; new chunks are announced with `new,MemoryChunk,<addr>,262144`) appears just
//   before the first tick that needs it, ~300 of them in a burst at start-up. Hot functions tier up with the same
//   SFI: Sparkplug `JS,11,^` after a few samples, TurboFan `JS,13,*` after more, rarely a re-optimisation (a
//   second `*`). JIT code is bump-allocated, 64-byte aligned, in the CodeRange from the header. Code ranges never
//   overlap and addresses are never reused. At the start of some GC bursts a "compaction" emits code-move events
//   for BytecodeArrays (some moved again later: chains) and now and then for JIT code, and sfi-move events.
//   A few RegExp code-creations (escaped source, as V8 writes it) are compiled when first sampled.
// - Ticks (the bulk): `tick,<pc>,<time>,<is_ext_cb>,<tos|ext_cb>,<vmstate>,<frames...>`, time in us, increasing by
//   ~1000-1300 per tick. Stacks come from ~6000 call-path templates built as a tree (new paths extend a random
//   prefix of an existing one), sampled Zipf-like (weight 1/(rank+3)) with runs (hot loops stay on one path).
//   Depth: 4 + 36*u1*u2 JS frames mostly, plus recursive paths of 60-400 frames (the sampler's 255-frame cap is
//   applied, keeping the leaf end); mean ~15. Return addresses are fixed per template (call sites) inside the
//   current code of each function, so a stack repeats exactly until a function tiers up or moves. Builtin return
//   addresses (ArrayForEach, Call_ReceiverIsAny, JSEntry, ...) and C++ addresses appear between JS frames.
//   Leaf pc: inside JIT code, a bytecode handler (the function's BytecodeArray is then frame 0), a builtin, a
//   RegExp, a C++ Runtime_ function (frames: C++, CEntry, JS) or libc (memmove, malloc, ...).
//   vmstate: 0 JS (~86%), 1 GC (~5%: C++ heap symbols, then the interrupted JS stack), 6 EXTERNAL (~5%:
//   is_ext_cb=1 with the entry of a real node API callback in field 4, frame 0 = Builtin_HandleApiCall, as node
//   writes it), 8 IDLE (~4%: epoll_wait <- uv__io_poll <- uv_run <- SpinEventLoop <- ... <- main).
//   C++ addresses are inside real symbols of the running node binary (nm -n -S, types T/t, a few hundred of them:
//   Runtime_*, heap/GC, API callbacks, other node/V8 code) and libc (nm -D).
// - Raw-stack diversity (--diversity D, 0 to 1, default 0): with D = 0 a leaf has a few fixed pcs and tos is 0, so
//   about 17% of tick lines have a distinct raw stack (pc, tos, vmstate, frames). Real node 20 logs have 16-85%:
//   the pc moves inside the function's code on every tick and tos holds whatever was on top of the stack. With
//   probability D a JS, GC or EXTERNAL tick takes a fresh pc inside the same code object (so it resolves to the
//   same function) and, in JS, a fresh tos on the machine stack (which resolves to nothing); D = 1 gives ~95%
//   distinct raw stacks. The resolved stacks and the weights do not depend on D, nor does the output for D = 0
//   (a separate random stream). The share of distinct raw stacks is printed at the end.
// - Code-move density (--compaction P, default 0.06): the probability that a GC burst starts with a compaction
//   (1 to 12 code-move lines, 0 to 3 sfi-move lines).
// - Deoptimizations (--deopts N, default 0): about N `code-deopt` lines, as `node --prof --log-deopt` writes them
//   (`code-deopt,<time>,<size>,<code start>,<inlining id>,<script offset>,<bailout type>,<position>,<reason>`),
//   spread over the file by bytes (the k-th is due at a random point of the k-th N-th of the body) and written at
//   the first JS tick from then on with a live TurboFan code object on its stack: the leaf's, else the nearest
//   caller's (the deopt happened since the previous sample). Until the first functions are optimized none can be
//   written, so the first ~5% of the file has fewer and the next few percent more. Each names the start of the
//   function's current `*` code, never moved, at a time between the ticks around it. 90% are eager: a reason
//   V8 11.3 writes (wrong map, not a Smi, overflow, Insufficient type feedback for call, wrong call target, ...)
//   at a position `<url:line:col>` in the function (its lines run to the next function of its module), for ~35%
//   `<pos in an inlinee> inlined at <pos in the function>` with 1-2 inlinees from the same module; each function
//   has 1-4 such sites, fixed, so the same deopt repeats as in real logs. 10% are a `dependency-change` (reason
//   `code dependencies`, at the function's own line:col), a third of them followed by the `deopt-lazy` of the
//   activation (reason `(unknown)`, at a call site in the function): node 20 writes that pair on one code object,
//   the only case of two lines on one, so `--preprocess` (one deopt per code entry) lists fewer code entries with
//   a deopt than there are lines; the stats line gives both. (V8 11.3 writes no soft deopts.) After its deopt the
//   function's ticks and frames run in its Sparkplug code (or its bytecode) until it has been on the stack of 1-30
//   more JS ticks; then a new `*` code-creation (a new address) optimizes it again. Hot functions deopt hundreds
//   or thousands of times, and as every re-optimization moves their return addresses the share of distinct raw
//   stacks grows (1G, --diversity 0.45: 50% without deopts, 68% with 100k). The stats line counts the lines by
//   kind, the code objects and functions deoptimized, and the re-optimizations. --deopts 0 writes the same file as
//   before the option existed: the deopts have a random stream of their own.
// - Deterministic for (seed, header, options): only +,-,*,/ and integer ops on random numbers, no Math.pow/log.
//   Output is streamed (synchronous writes of ~4 MB chunks); memory use does not depend on --size.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');

// ---------------------------------------------------------------------------------------------------------------
// Arguments

const USAGE = 'usage: node scripts/gen-ticklog.js --size SIZE -o FILE [--seed 1] [--header LOG] [--save-header FILE]\n' +
  '                                   [--functions 3000] [--templates 6000] [--diversity 0] [--compaction 0.06]\n' +
  '                                   [--deopts 0] [--quiet]\n' +
  '  SIZE: bytes, or with K/M/G (1024-based; also KiB/MiB/GiB) or KB/MB/GB (1000-based), e.g. 50M, 1G\n' +
  '  -o -  writes to stdout\n';

function usage(msg) {
  if (msg) process.stderr.write(`gen-ticklog: ${msg}\n`);
  process.stderr.write(USAGE);
  process.exit(2);
}

function parseSize(s) {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)$/i.exec(String(s).trim());
  if (!m) return NaN;
  const exp = ' kmgt'.indexOf(m[2].toLowerCase() || ' ');
  const decimal = m[3].toLowerCase() === 'b' && m[2] !== '';
  const base = decimal ? 1000 : 1024;
  let mult = 1;
  for (let i = 0; i < exp; i++) mult *= base;
  return Math.floor(Number(m[1]) * mult);
}

function parseArgs(argv) {
  const opts = { out: null, size: null, seed: 1, header: null, saveHeader: null, functions: 3000, templates: 6000,
    diversity: 0, compaction: 0.06, deopts: 0, quiet: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    const key = eq >= 0 ? a.slice(0, eq) : a;
    const val = () => {
      const v = eq >= 0 ? a.slice(eq + 1) : argv[++i];
      if (v === undefined) usage(`${key} needs a value`);
      return v;
    };
    if (key === '--out' || key === '-o') opts.out = val();
    else if (key === '--size' || key === '-s') opts.size = parseSize(val());
    else if (key === '--seed') opts.seed = Number(val());
    else if (key === '--header') opts.header = val();
    else if (key === '--save-header') opts.saveHeader = val();
    else if (key === '--functions') opts.functions = Number(val());
    else if (key === '--templates') opts.templates = Number(val());
    else if (key === '--diversity') opts.diversity = Number(val());
    else if (key === '--compaction') opts.compaction = Number(val());
    else if (key === '--deopts') opts.deopts = Number(val());
    else if (key === '--quiet' || key === '-q') opts.quiet = true;
    else if (key === '--help' || key === '-h') { process.stdout.write(USAGE); process.exit(0); }
    else usage(`unknown argument ${a}`);
  }
  if (!opts.out) usage('-o FILE is required');
  if (opts.size === null) usage('--size is required');
  if (!Number.isSafeInteger(opts.size) || opts.size <= 0) usage('--size must be a positive size like 50M or 1G');
  if (!Number.isSafeInteger(opts.seed)) usage('--seed must be an integer');
  if (!Number.isSafeInteger(opts.functions) || opts.functions < 50) usage('--functions must be an integer >= 50');
  if (!Number.isSafeInteger(opts.templates) || opts.templates < 10) usage('--templates must be an integer >= 10');
  if (!Number.isSafeInteger(opts.deopts) || opts.deopts < 0) usage('--deopts must be an integer >= 0');
  for (const k of ['diversity', 'compaction']) {
    if (!(opts[k] >= 0 && opts[k] <= 1)) usage(`--${k} must be a number from 0 to 1`);
  }
  return opts;
}

function die(msg) {
  process.stderr.write(`gen-ticklog: error: ${msg}\n`);
  process.exit(1);
}

// ---------------------------------------------------------------------------------------------------------------
// PRNG: mulberry32, one independent stream per purpose (same as gen-cpuprofile.js).

const { mulberry32, mix, int, pick, makeSampler, shuffle } = require('./lib/random');

const hex = (n) => '0x' + n.toString(16);

// V8's escaping of strings that go through AppendCharacter (script names, RegExp sources).
function escapeV8(s) {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x2c) out += '\\x2C';
    else if (c === 0x5c) out += '\\\\';
    else if (c === 0x0a) out += '\\n';
    else if (c >= 0x20 && c <= 0x7e) out += s[i];
    else if (c <= 0xff) out += '\\x' + c.toString(16).padStart(2, '0');
    else out += '\\u' + c.toString(16).padStart(4, '0');
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Header: from a real `node --prof` log

const HEADER_TAGS = new Set(['v8-version', 'v8-platform', 'shared-library', 'shared-library-end', 'profiler', 'new',
  'delete', 'heap-capacity', 'heap-available']);

function recordLog() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gen-ticklog-'));
  try {
    fs.writeFileSync(path.join(dir, 'tiny.js'), 'let s = 0; for (let i = 0; i < 1000; i++) s += i;\n');
    const r = spawnSync(process.execPath, ['--prof', '--no-logfile-per-isolate', '--logfile=v8.log', 'tiny.js'],
      { cwd: dir, encoding: 'latin1', maxBuffer: 1 << 20 });
    if (r.error) die(`cannot run ${process.execPath} --prof: ${r.error.message}`);
    if (r.status !== 0) die(`${process.execPath} --prof exited with ${r.status}: ${r.stderr}`);
    const log = path.join(dir, 'v8.log');
    if (!fs.existsSync(log)) die(`${process.execPath} --prof wrote no v8.log in ${dir}`);
    return { text: fs.readFileSync(log, 'latin1'), from: `fresh \`${process.execPath} --prof\` run` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function readLogHead(file) {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(16 << 20);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return { text: buf.toString('latin1', 0, n), from: file };
  } finally {
    fs.closeSync(fd);
  }
}

// Parses the header-relevant lines of a real log. Lines are kept as latin1 strings (bytes), so paths with
// non-ASCII bytes are copied through unchanged.
function loadHeader(src) {
  const all = src.text.split('\n');
  let last = -1;
  for (let i = 0; i < all.length; i++) if (all[i].startsWith('code-creation,BytecodeHandler,')) last = i;
  if (last < 0) die(`${src.from}: no BytecodeHandler code-creation lines (not a node 20 --prof log?)`);
  if (!all[0].startsWith('v8-version,')) die(`${src.from}: first line is not v8-version`);
  const lines = [];
  const H = { from: src.from, lines, libs: [], builtins: [], handlers: [], chunks: [], codeRange: 0, maxTime: 0, hasBegin: false };
  const deleted = new Set();
  for (let i = 0; i <= last; i++) {
    const l = all[i];
    const f = l.split(',');
    const tag = f[0];
    if (tag === 'code-creation' && (f[1] === 'Builtin' || f[1] === 'BytecodeHandler')) {
      const e = { name: f.slice(6).join(','), start: parseInt(f[4], 16), size: parseInt(f[5], 10) };
      (f[1] === 'Builtin' ? H.builtins : H.handlers).push(e);
      H.maxTime = Math.max(H.maxTime, parseInt(f[3], 10) || 0);
      lines.push(l);
    } else if (HEADER_TAGS.has(tag)) {
      if (tag === 'profiler') {
        if (f[1] !== 'begin') continue;
        H.hasBegin = true;
      }
      if (tag === 'shared-library') {
        H.libs.push({ path: f.slice(1, f.length - 3).join(','), start: parseInt(f[f.length - 3], 16), end: parseInt(f[f.length - 2], 16) });
      }
      if (tag === 'new' && f[1] === 'CodeRange') H.codeRange = parseInt(f[2], 16);
      if (tag === 'new' && f[1] === 'MemoryChunk') H.chunks.push(parseInt(f[2], 16));
      if (tag === 'delete' && f[1] === 'MemoryChunk') deleted.add(parseInt(f[2], 16));
      lines.push(l);
    }
  }
  H.chunks = H.chunks.filter((c) => !deleted.has(c));
  if (!H.hasBegin) lines.push('profiler,begin,1000');
  if (!H.codeRange) die(`${src.from}: no new,CodeRange line`);
  if (!H.libs.length) die(`${src.from}: no shared-library lines`);
  if (H.builtins.length < 100) die(`${src.from}: only ${H.builtins.length} Builtin code-creation lines`);
  H.text = lines.join('\n') + '\n';
  H.bytes = Buffer.byteLength(H.text, 'latin1');
  return H;
}

// ---------------------------------------------------------------------------------------------------------------
// Static code: real symbols of the node binary and libc

function runNm(args, file) {
  const r = spawnSync('nm', [...args, file], { encoding: 'latin1', maxBuffer: 512 << 20 });
  if (r.error) return { error: r.error.message };
  if (r.status !== 0) return { error: `nm exited with ${r.status}: ${String(r.stderr).slice(0, 200)}` };
  return { out: r.stdout };
}

function parseNm(out, libStart, libEnd, types) {
  const syms = [];
  const re = /^([0-9a-f]{8,16}) ([0-9a-f]{8,16}) ([A-Za-z]) (.*)$/;
  for (const line of out.split('\n')) {
    const m = re.exec(line);
    if (!m || !types.includes(m[3])) continue;
    let start = parseInt(m[1], 16);
    const size = parseInt(m[2], 16);
    if (size < 16) continue;
    if (start < libStart) start += libStart; // PIE / shared object: nm addresses are relative
    if (start + size > libEnd) continue;
    syms.push({ name: m[4].replace(/@.*$/, ''), start, size });
  }
  return syms;
}

function loadStatics(H, rng) {
  const nodeLibs = H.libs.filter((l) => l.start === H.libs[0].start && l.path === H.libs[0].path);
  const nodePath = H.libs[0].path;
  const nodeEnd = Math.max(...nodeLibs.map((l) => l.end));
  const r = runNm(['-n', '-S'], nodePath);
  if (r.error) die(`nm -n -S ${nodePath}: ${r.error} (binutils' nm is needed; node --prof-process needs it too)`);
  const syms = parseNm(r.out, H.libs[0].start, nodeEnd, 'Tt');
  if (syms.length < 1000) die(`nm ${nodePath}: only ${syms.length} sized text symbols`);
  const byName = (re) => syms.find((s) => re.test(s.name));
  const take = (re, n) => shuffle(rng, syms.filter((s) => re.test(s.name))).slice(0, n);
  const S = {
    nodePath,
    runtime: take(/^_ZN2v88internal\d+Runtime_/, 90),
    gc: take(/^_ZN2v88internal.*(Scavenger|MarkCompact|Sweeper|Evacuat|MarkingVisitor|ConcurrentMarking|PagedSpace|Heap[0-9A-Z]|HeapObject)/, 90),
    api: take(/^_ZN4node.*FunctionCallbackInfo/, 90),
    misc: take(/^_ZN(4node|2v88internal|2v8)\d/, 120),
    handleApiCall: byName(/Builtin_HandleApiCall[A-Z]/) || byName(/HandleApiCall/),
    idle: ['uv__io_poll', 'uv_run', /^_ZN4node21SpinEventLoopInternal/, /^_ZN4node13SpinEventLoop/, /^_ZN4node16NodeMainInstance3RunEPNS/,
      /^_ZN4node16NodeMainInstance3RunEv/, /^_ZN4node5StartEv?i/, 'main']
      .map((n) => (typeof n === 'string' ? syms.find((s) => s.name === n) : byName(n))).filter(Boolean),
    libc: [],
    nSyms: 0,
  };
  if (!S.handleApiCall) S.handleApiCall = S.misc[0];
  for (const k of ['runtime', 'gc', 'api', 'misc']) if (S[k].length < 10) S[k] = take(/^_Z/, 60);
  const libc = H.libs.find((l) => /\/libc\.so/.test(l.path));
  if (libc) {
    const rl = runNm(['-D', '-n', '-S'], libc.path);
    if (!rl.error) {
      const want = new Set(['epoll_wait', 'memcpy', 'memmove', 'memset', 'malloc', 'free', 'read', 'write', 'pthread_mutex_lock',
        'pthread_mutex_unlock', 'clock_gettime', 'strlen', 'memcmp', 'calloc', 'realloc']);
      const seen = new Set();
      for (const s of parseNm(rl.out, libc.start, libc.end, 'TW')) {
        if (want.has(s.name) && !seen.has(s.name)) { seen.add(s.name); S.libc.push(s); }
      }
    }
  }
  S.epoll = S.libc.find((s) => s.name === 'epoll_wait');
  S.nSyms = S.runtime.length + S.gc.length + S.api.length + S.misc.length + S.idle.length + 1;
  return S;
}

// ---------------------------------------------------------------------------------------------------------------
// Address space: heap chunks (BytecodeArrays, SFIs) and the CodeRange (JIT code, RegExp code)

const CHUNK = 262144;

class Space {
  // Keeps new chunks away from each other, the CodeRange, and (by page number mod 2^32, as the tick processor
  // computes it) from the pages of the shared libraries, where it would look up static code only.
  constructor(H, rng) {
    this.rng = rng;
    this.used = new Set(H.chunks.map((c) => Math.floor(c / CHUNK)));
    this.marked = H.libs.map((l) => [Math.floor(l.start / 4096) % 4294967296, Math.floor(l.end / 4096) % 4294967296]);
    this.codeRange = H.codeRange;
  }
  pagesOk(start, end) {
    const a = Math.floor(start / 4096) % 4294967296, b = Math.floor(end / 4096) % 4294967296;
    if (b < a) return false; // wraps mod 2^32; just avoid
    for (const [lo, hi] of this.marked) if (a <= hi && lo <= b) return false;
    return true;
  }
  newChunk() {
    for (;;) {
      const k = int(this.rng, 0x4000000, 0xfe00000); // chunk index: address 0x10000000000 .. 0x3f8000000000
      const addr = k * CHUNK;
      if (this.used.has(k) || !this.pagesOk(addr, addr + CHUNK)) continue;
      this.used.add(k);
      return addr;
    }
  }
}

// Bump allocator in 256 KiB heap chunks; announces new chunks through onChunk(addr).
class HeapAlloc {
  constructor(space, first, onChunk) { this.space = space; this.onChunk = onChunk; this.cur = first; this.top = first + 0x2000; }
  alloc(bytes) {
    bytes = (bytes + 7) & ~7;
    if (this.cur === 0 || this.top + bytes > this.cur + CHUNK - 64) {
      this.cur = this.space.newChunk();
      this.top = this.cur + 0x100;
      this.onChunk(this.cur);
    }
    const a = this.top;
    this.top += bytes;
    return a;
  }
}

class JitAlloc {
  constructor(space, rng) { this.space = space; this.rng = rng; this.top = space.codeRange + 0x40000; }
  alloc(size) {
    for (;;) {
      let a = Math.ceil(this.top / 64) * 64;
      if (this.rng() < 0.2) a += 64 * int(this.rng, 1, 16); // gaps: freed or non-code objects
      const end = a + size;
      this.top = end;
      if (this.space.pagesOk(a, end)) return a;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// JS functions

const VERBS = ['handle', 'parse', 'validate', 'serialize', 'map', 'reduce', 'dispatch', 'render', 'compute', 'fetch',
  'transform', 'visit', 'walk', 'encode', 'decode', 'query', 'format', 'normalize', 'emit', 'flush', 'resolve', 'apply',
  'build', 'merge', 'update', 'load', 'save', 'check', 'hash', 'compare', 'sort', 'filter', 'collect', 'scan', 'read',
  'write', 'next', 'run', 'process', 'create'];
const NOUNS = ['Request', 'Response', 'Header', 'Body', 'Row', 'Column', 'Token', 'Node', 'Tree', 'Order', 'User', 'Invoice',
  'Price', 'Tax', 'Cart', 'Session', 'Cache', 'Entry', 'Key', 'Value', 'Buffer', 'Chunk', 'Record', 'Batch', 'Query', 'Plan',
  'Index', 'Route', 'Params', 'Template', 'Style', 'Event', 'Queue', 'Job', 'Task', 'State', 'Config', 'Schema', 'Field', 'Item'];
const ODD = ['größeBerechnen', '計算する', 'get total', 'set value', 'Router.handle', 'Module.exports.run', 'ƒ_compose', '$init'];
const INTERNAL = [
  ['processTicksAndRejections', 'node:internal/process/task_queues', 95, 35],
  ['runMicrotasks', 'node:internal/process/task_queues', 140, 22],
  ['processTimers', 'node:internal/timers', 512, 25],
  ['listOnTimeout', 'node:internal/timers', 532, 25],
  ['processImmediate', 'node:internal/timers', 449, 28],
  ['emit', 'node:events', 517, 44],
  ['onStreamRead', 'node:internal/stream_base_commons', 163, 22],
  ['parserOnIncoming', 'node:_http_server', 1041, 26],
  ['', 'node:internal/main/run_main_module', 1, 1],
  ['executeUserEntryPoint', 'node:internal/modules/run_main', 126, 31],
  ['Module._load', 'node:internal/modules/cjs/loader', 1011, 24],
  ['Module.load', 'node:internal/modules/cjs/loader', 1187, 33],
  ['Module._extensions..js', 'node:internal/modules/cjs/loader', 1411, 37],
  ['Module._compile', 'node:internal/modules/cjs/loader', 1356, 37],
];
const REGEXPS = ['^\\/users\\/([^/]+)$', '(\\d+),\\s*(\\w+)', '\\{\\{(\\w+)\\}\\}', '[&<>"\']', '^(?:\\/(?=$))?$',
  '\\s+', '^([a-z0-9._%+-]+)@([a-z0-9.-]+\\.[a-z]{2,})$', 'größe|Größe'];

function buildFunctions(rng, nUser, sfiAlloc) {
  const fns = [];
  const add = (name, url, line, col, module) => {
    const sizeSkew = rng() * rng();
    const f = {
      id: fns.length, name, url, line, col, module,
      label: `${name} ${url}:${line}:${col}`,
      sfi: sfiAlloc.alloc(int(rng, 5, 64) * 8),
      bcSize: 4 + Math.floor(sizeSkew * 2400),
      codes: [], cur: null, tier: 0, hits: 0,
      th1: rng() < 0.85 ? int(rng, 3, 40) : Infinity,
      th2: 0, templates: [], moved: 0,
    };
    f.th2 = rng() < 0.7 ? f.th1 + int(rng, 30, 900) : Infinity;
    fns.push(f);
    return f;
  };
  const internal = {};
  for (const [name, url, line, col] of INTERNAL) internal[name || 'main'] = add(name, url, line, col, -1);
  const nModules = Math.max(4, Math.round(nUser / 15));
  const modules = [];
  let left = nUser;
  for (let k = 0; k < nModules; k++) {
    const url = `file:///app/src/mod${k}.js`;
    const mod = { k, url, fns: [] };
    mod.top = add('', url, 1, 1, k); // module wrapper / top-level code
    left--;
    const n = k === nModules - 1 ? Math.max(0, left) : Math.min(left, int(rng, 4, 26));
    left -= n;
    let line = int(rng, 2, 30);
    for (let i = 0; i < n; i++) {
      line += int(rng, 3, 90);
      const r = rng();
      let name;
      if (r < 0.06) name = ''; // anonymous: label starts with a space
      else if (r < 0.07) name = pick(rng, ODD);
      else name = pick(rng, VERBS) + pick(rng, NOUNS);
      mod.fns.push(add(name, url, line, int(rng, 1, 40), k));
    }
    modules.push(mod);
  }
  return { fns, internal, modules };
}

// ---------------------------------------------------------------------------------------------------------------
// Call-path templates

function builtinPicker(H, rng) {
  const byName = new Map(H.builtins.map((b) => [b.name, b]));
  const named = (names) => names.map((n) => byName.get(n)).filter(Boolean);
  const fallback = (n) => shuffle(rng, H.builtins.slice()).slice(0, n);
  const ensure = (arr, n) => (arr.length ? arr : fallback(n));
  return {
    // builtins that call back into JS (appear between JS frames)
    calls: ensure(named(['ArrayForEach', 'ArrayMap', 'ArrayFilter', 'ArrayReduce', 'ArrayPrototypeSort', 'ArraySome',
      'ArrayFind', 'FunctionPrototypeApply', 'FunctionPrototypeCall', 'ReflectApply', 'Call_ReceiverIsAny',
      'CallFunction_ReceiverIsAny', 'CallWithSpread', 'InterpreterEntryTrampoline', 'PromiseFulfillReactionJob',
      'AsyncFunctionAwaitResolveClosure', 'RunMicrotasks', 'ArrayPrototypeJoin', 'JSONStringify', 'StringPrototypeReplace']), 8),
    entry: ensure(named(['JSEntryTrampoline', 'JSEntry']), 2),
    centry: ensure(named(['CEntry_Return1_ArgvOnStack_NoBuiltinExit', 'CEntry_Return1_ArgvOnStack_BuiltinExit',
      'CEntry_Return1_ArgvInRegister_NoBuiltinExit']), 2),
    regexp: ensure(named(['RegExpPrototypeExec', 'RegExpExecInternal', 'RegExpPrototypeTest', 'RegExpReplace',
      'StringPrototypeReplace']), 2),
    // leaf builtins: a fixed hot set
    leaf: shuffle(rng, H.builtins.filter((b) => b.size >= 32)).slice(0, 60).concat(named(['KeyedLoadIC_Megamorphic',
      'LoadIC', 'StringAdd_CheckNone', 'ArrayPrototypePush', 'CreateShallowObjectLiteral', 'StringEqual', 'FindOrderedHashMapEntry',
      'ObjectAssign', 'FastNewObject', 'RecordWriteSaveFP', 'GrowFastElements', 'StringIndexOf', 'NumberToString'])),
    handlers: (() => {
      const hs = H.handlers.filter((h) => h.size >= 16 && !h.name.includes('Wide'));
      return shuffle(rng, hs.length ? hs : H.handlers.slice()).slice(0, 80);
    })(),
  };
}

const MAX_FRAMES = 255;

function buildTemplates(rng, F, S, B, regexps, nTemplates) {
  const { fns, internal, modules } = F;
  const user = [];
  for (const m of modules) for (const f of m.fns) user.push(f);
  const popular = makeSampler(shuffle(rng, user.map((_, i) => i)).map((r) => 1 / (r + 5)));
  const pickUser = () => user[popular(rng)];
  const inside = (sym) => sym.start + int(rng, 1, Math.max(1, sym.size - 1));
  const roots = [
    [internal.processTicksAndRejections],
    [internal.processTicksAndRejections, internal.runMicrotasks],
    [internal.processTimers, internal.listOnTimeout],
    [internal.processImmediate],
    [internal.onStreamRead, internal.emit],
    [internal.parserOnIncoming, internal.emit],
    [internal.main, internal.executeUserEntryPoint, internal['Module._load'], internal['Module.load'],
      internal['Module._extensions..js'], internal['Module._compile']],
  ];
  const rootWeights = [30, 10, 12, 6, 14, 20, 3];
  const pickRoot = makeSampler(rootWeights);

  // entry kinds: {fn, frac, old} JS call site, or {addr} a static return address
  const jsEntry = (fn) => ({ fn, frac: rng(), old: rng() < 0.05 });
  const extend = (entries, depth) => {
    let last = null;
    for (let i = entries.length - 1; i >= 0; i--) if (entries[i].fn) { last = entries[i].fn; break; }
    while (entries.length < depth) {
      const r = rng();
      if (r < 0.07) entries.push({ addr: inside(pick(rng, B.calls)) });
      else if (r < 0.085) { // callback from C++: JS -> C++ -> JSEntry -> JS
        entries.push({ addr: inside(pick(rng, S.misc)) });
        entries.push({ addr: inside(pick(rng, B.entry)) });
      } else if (r < 0.1) entries.push(jsEntry(internal.emit));
      let f;
      if (last && last.module >= 0 && rng() < 0.5) f = pick(rng, modules[last.module].fns.length ? modules[last.module].fns : user);
      else f = pickUser();
      if (f === last) f = pickUser();
      entries.push(jsEntry(f));
      last = f;
    }
    return entries;
  };
  const templates = [];
  const mk = (entries) => {
    let leafFn = null;
    for (let i = entries.length - 1; i >= 0; i--) if (entries[i].fn) { leafFn = entries[i].fn; break; }
    // drop trailing static frames: the leaf is a JS function, leaf kinds add their own frames
    while (!entries[entries.length - 1].fn) entries.pop();
    const r = rng();
    const t = { entries, leafFn, kind: 'self', dirty: true, ready: false, hits: 0,
      fracs: [], handlers: [], extra: [], pcSym: null, regexp: null, api: pick(rng, S.api), apiPc: null,
      pcStrs: null, frames: '', framesFromPc: '', all: null };
    if (r < 0.1) { t.kind = 'builtin'; t.pcSym = pick(rng, B.leaf); }
    else if (r < 0.16) {
      t.kind = 'cpp'; t.pcSym = pick(rng, S.runtime);
      for (let k = int(rng, 0, 3); k > 0; k--) t.extra.push(inside(pick(rng, S.misc)));
      t.extra.push(inside(pick(rng, B.centry)));
    } else if (r < 0.18 && S.libc.length) {
      t.kind = 'libc'; t.pcSym = pick(rng, S.libc);
      t.extra.push(inside(pick(rng, S.misc)));
      if (rng() < 0.5) t.extra.push(inside(pick(rng, S.runtime)));
      t.extra.push(inside(pick(rng, B.centry)));
    } else if (r < 0.2) {
      t.kind = 'regexp'; t.regexp = pick(rng, regexps);
      t.extra.push(inside(pick(rng, B.regexp)));
    }
    const nPcs = int(rng, 1, 1 + Math.floor(rng() * rng() * 8));
    for (let k = 0; k < nPcs; k++) { t.fracs.push(rng()); t.handlers.push(pick(rng, B.handlers)); }
    if (t.pcSym) t.pcOffs = t.fracs.map((fr) => 1 + Math.floor(fr * (t.pcSym.size - 1)));
    t.apiPc = rng() < 0.7 ? inside(t.api) : (S.libc.length && rng() < 0.5 ? inside(pick(rng, S.libc)) : inside(pick(rng, S.misc)));
    for (const e of entries) if (e.fn && e.fn.templates[e.fn.templates.length - 1] !== t) e.fn.templates.push(t);
    templates.push(t);
    return t;
  };
  const drawDepth = () => 7 + Math.floor(48 * rng() * rng());
  while (templates.length < nTemplates) {
    const r = rng();
    if (r < 0.012) {
      // deep recursion: a prefix, then one function (or a pair) calling itself
      const base = extend(roots[pickRoot(rng)].map(jsEntry), int(rng, 6, 14));
      const a = pickUser(), b = rng() < 0.4 ? pickUser() : a;
      const n = rng() < 0.35 ? int(rng, 260, 400) : int(rng, 40, 200);
      for (let k = 0; base.length < n; k++) base.push(jsEntry(k % 2 ? b : a));
      mk(base);
    } else if (r < 0.75 && templates.length > 20) {
      // branch off an existing path
      const p = templates[Math.floor(rng() * rng() * templates.length)];
      const cut = int(rng, 1, p.entries.length);
      const d = Math.max(cut + 1, drawDepth());
      mk(extend(p.entries.slice(0, cut).map((e) => (e.fn ? jsEntry(e.fn) : e)), Math.min(d, cut + int(rng, 1, 20))));
    } else {
      mk(extend(roots[pickRoot(rng)].map(jsEntry), drawDepth()));
    }
  }
  return templates;
}

// ---------------------------------------------------------------------------------------------------------------
// Output

class Out {
  constructor(file, limit) {
    this.fd = file === '-' ? 1 : fs.openSync(file, 'w');
    this.limit = limit; // bytes available for body lines (the final `profiler,end\n` is reserved)
    this.bytes = 0;
    this.pending = '';
    this.full = false;
    this.lines = 0;
  }
  // ASCII line (with its newline); false when it does not fit
  line(s) {
    if (this.bytes + s.length > this.limit) { this.full = true; return false; }
    this.bytes += s.length;
    this.lines++;
    this.pending += s;
    if (this.pending.length > (4 << 20)) this.flush();
    return true;
  }
  // line that may contain non-ASCII characters (function names)
  uline(s) {
    const n = Buffer.byteLength(s);
    if (this.bytes + n > this.limit) { this.full = true; return false; }
    this.bytes += n;
    this.lines++;
    this.pending += s;
    return true;
  }
  raw(buf) { this.flush(); this.writeAll(buf); this.bytes += buf.length; }
  writeAll(buf) {
    let off = 0;
    while (off < buf.length) {
      try {
        off += fs.writeSync(this.fd, buf, off, buf.length - off);
      } catch (e) {
        if (e.code !== 'EAGAIN') throw e;
      }
    }
  }
  flush() {
    if (!this.pending) return;
    this.writeAll(Buffer.from(this.pending, 'utf8'));
    this.pending = '';
  }
  close() { this.flush(); if (this.fd !== 1) fs.closeSync(this.fd); }
}

// ---------------------------------------------------------------------------------------------------------------
// Main

// A 53-bit hash of a tick line without its time: ticks with equal keys have the same raw stack (pc, tos, vmstate,
// frames). Two 32-bit FNV-1a variants; a collision among a few million keys is unlikely and would only lower the
// printed share a little.
function rawStackKey(line) {
  let a = 0x811c9dc5, b = 0x01000193 ^ 0x9e3779b9;
  const t1 = line.indexOf(',', 5), t2 = line.indexOf(',', t1 + 1);
  for (let i = 5; i < line.length; i++) {
    if (i === t1 + 1) i = t2;
    const c = line.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 13);
  }
  return (a >>> 0) * 0x200000 + (b >>> 11);
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const t0 = process.hrtime.bigint();
  const seed = opts.seed;
  const log = (s) => { if (!opts.quiet) process.stderr.write(`gen-ticklog: ${s}\n`); };

  const H = loadHeader(opts.header ? readLogHead(opts.header) : recordLog());
  if (opts.saveHeader) fs.writeFileSync(opts.saveHeader, Buffer.from(H.text, 'latin1'));
  const END = 'profiler,end\n';
  if (H.bytes + END.length > opts.size) die(`--size ${opts.size} is smaller than the header (${H.bytes + END.length} bytes)`);
  const S = loadStatics(H, mulberry32(mix(seed, 1)));

  const out = new Out(opts.out, opts.size - END.length);
  out.raw(Buffer.from(H.text, 'latin1'));

  const stats = { creations: [0, 0, 0, 0], reopt: 0, regexp: 0, codeMoves: 0, chainMoves: 0, jitMoves: 0, sfiMoves: 0,
    chunks: 0, ticks: 0, vm: { 0: 0, 1: 0, 6: 0, 8: 0 }, frames: 0, maxFrames: 0,
    deopts: 0, deoptKinds: { eager: 0, dependency: 0, lazy: 0 }, deoptCodes: 0, deoptFns: 0, deoptMax: 0, deoptReopt: 0 };
  let now = Math.ceil((H.maxTime + 30000) / 1000) * 1000; // us; the body starts after the header's last event
  const rngE = mulberry32(mix(seed, 2));
  const evTime = () => (now += int(rngE, 1, 40));
  const space = new Space(H, mulberry32(mix(seed, 3)));
  const onChunk = (addr) => { stats.chunks++; out.line(`new,MemoryChunk,${hex(addr)},${CHUNK}\n`); };
  const usable = H.chunks.filter((c) => space.pagesOk(c, c + CHUNK));
  const sfiHeap = new HeapAlloc(space, usable.length ? usable[usable.length - 1] : 0, () => {}); // SFIs: chunks pre-announced
  const bcHeap = new HeapAlloc(space, 0, onChunk);
  const jit = new JitAlloc(space, mulberry32(mix(seed, 4)));

  const F = buildFunctions(mulberry32(mix(seed, 5)), opts.functions, sfiHeap);
  const B = builtinPicker(H, mulberry32(mix(seed, 6)));
  const regexps = REGEXPS.map((src) => ({ src, code: null, size: 0 }));
  const rngT = mulberry32(mix(seed, 7));
  const templates = buildTemplates(rngT, F, S, B, regexps, opts.templates);
  const rngC = mulberry32(mix(seed, 8));

  // ---- code events
  const KIND = [0, 10, 11, 13], STATE = ['', '~', '^', '*'];
  const dirty = (fn) => { const ts = fn.templates; for (let i = 0; i < ts.length; i++) ts[i].dirty = true; };
  const creation = (fn, tier) => {
    let start, size;
    if (tier === 1) {
      size = fn.bcSize;
      start = bcHeap.alloc(0x36 + size) + 0x36; // BytecodeArray header: code starts at +0x36, as in real logs
    } else {
      const k = tier === 2 ? 4 + rngC() * 5 : 2 + rngC() * 10;
      size = 64 + Math.floor(fn.bcSize * k);
      start = jit.alloc(size);
    }
    const code = { start, size, tier };
    if (!out.uline(`code-creation,JS,${KIND[tier]},${evTime()},${hex(start)},${size},${fn.label},${hex(fn.sfi)},${STATE[tier]}\n`)) return false;
    fn.codes.push(code);
    if (tier === 2) fn.lower = code; // where its ticks go after a deopt (--deopts)
    fn.cur = code;
    fn.tier = tier;
    stats.creations[tier]++;
    dirty(fn);
    return true;
  };
  const compiled = [];
  const compile = (fn) => { if (creation(fn, 1)) compiled.push(fn); };
  const recentlyMoved = [];
  const compaction = () => {
    const n = int(rngC, 1, 12);
    for (let i = 0; i < n && compiled.length; i++) {
      const chain = recentlyMoved.length && rngC() < 0.3;
      const fn = chain ? pick(rngC, recentlyMoved) : pick(rngC, compiled);
      const jitMove = fn.codes.length > 1 && rngC() < 0.08;
      const code = jitMove ? fn.codes[fn.codes.length - 1] : fn.codes[0];
      const to = code.tier === 1 ? bcHeap.alloc(0x36 + code.size) + 0x36 : jit.alloc(code.size);
      if (!out.line(`code-move,${hex(code.start)},${hex(to)}\n`)) return;
      code.start = to;
      code.moved = true; // never deoptimized (--deopts)
      stats.codeMoves++;
      if (jitMove) stats.jitMoves++;
      if (fn.moved++ > 0) stats.chainMoves++;
      if (recentlyMoved.length < 64) recentlyMoved.push(fn); else recentlyMoved[int(rngC, 0, 63)] = fn;
      dirty(fn);
    }
    for (let i = rngC() < 0.5 ? int(rngC, 1, 3) : 0; i > 0 && compiled.length; i--) {
      const fn = pick(rngC, compiled);
      const to = sfiHeap.alloc(int(rngC, 5, 64) * 8);
      if (!out.line(`sfi-move,${hex(fn.sfi)},${hex(to)}\n`)) return;
      fn.sfi = to;
      stats.sfiMoves++;
    }
  };
  const makeReady = (t) => {
    const es = t.entries;
    for (let i = 0; i < es.length; i++) if (es[i].fn && !es[i].fn.cur) compile(es[i].fn);
    if (t.regexp && !t.regexp.code) {
      const re = t.regexp;
      const size = 400 + int(rngC, 0, 40) * 64;
      const start = jit.alloc(size);
      if (out.uline(`code-creation,RegExp,3,${evTime()},${hex(start)},${size},${escapeV8(re.src)}\n`)) {
        re.code = { start, size };
        stats.regexp++;
      }
    }
    if (out.full) return false;
    t.ready = true;
    return true;
  };

  // ---- rendering a template's pcs and frames (cached until one of its functions gets new code or moves)
  // hex string of a frame entry, cached per entry until its code object changes or moves
  const entryStr = (e) => {
    if (!e.fn) return e.str || (e.str = hex(e.addr));
    const c = e.old ? e.fn.codes[0] : e.fn.cur;
    if (e.code !== c || e.at !== c.start) {
      e.code = c;
      e.at = c.start;
      e.str = hex(c.start + 1 + Math.floor(e.frac * (c.size - 1)));
    }
    return e.str;
  };
  const render = (t) => {
    const leaf = t.leafFn, lc = leaf.cur;
    const addrs = [];
    let pcs;
    const es = t.entries;
    let from = es.length - 1;
    let pcCode; // the code object of each pc, for fresh pcs inside it (--diversity)
    if (t.kind === 'self') {
      if (lc.tier === 1) { // interpreted: pc in a bytecode handler, frame 0 in the BytecodeArray
        pcs = t.handlers.map((h, i) => h.start + Math.floor(t.fracs[i] * h.size));
        pcCode = t.handlers;
      } else {
        pcs = t.fracs.map((fr) => lc.start + Math.floor(fr * lc.size));
        pcCode = t.fracs.map(() => lc);
        from--; // the leaf function is the pc, not a frame
      }
    } else if (t.kind === 'regexp') {
      const rc = t.regexp.code;
      pcs = t.fracs.map((fr) => rc.start + Math.floor(fr * rc.size));
      pcCode = t.fracs.map(() => rc);
      for (const a of t.extra) addrs.push(a);
    } else {
      pcs = t.pcOffs.map((o) => t.pcSym.start + o);
      pcCode = t.pcOffs.map(() => t.pcSym);
      for (const a of t.extra) addrs.push(a);
    }
    const all = addrs.map(hex);
    for (let i = from; i >= 0 && all.length < MAX_FRAMES; i--) all.push(entryStr(es[i]));
    t.pcStrs = pcs.map(hex);
    t.pcCode = pcCode;
    t.frames = all.length ? ',' + all.join(',') : '';
    t.nFrames = all.length;
    t.all = all;
    // as seen from a GC or API callback: the JS pc becomes frame 0
    const withPc = [t.pcStrs[0]].concat(all).slice(0, MAX_FRAMES);
    t.withPc = withPc;
    t.framesFromPc = ',' + withPc.join(',');
    t.dirty = false;
  };
  const prefixed = (prefix, t) => { // prefix: array of hex strings
    if (prefix.length + t.withPc.length <= MAX_FRAMES) return ',' + prefix.join(',') + t.framesFromPc;
    return ',' + prefix.concat(t.withPc).slice(0, MAX_FRAMES).join(',');
  };

  // ---- fixed non-JS stacks
  const rngS = mulberry32(mix(seed, 9));
  const insideS = (sym) => sym.start + int(rngS, 1, Math.max(1, sym.size - 1));
  const gcStacks = [];
  for (let i = 0; i < 40; i++) {
    const pcSym = pick(rngS, S.gc);
    const pc = hex(insideS(pcSym));
    const fr = [];
    for (let k = int(rngS, 1, 5); k > 0; k--) fr.push(hex(insideS(pick(rngS, S.gc))));
    if (rngS() < 0.7) fr.push(hex(insideS(pick(rngS, S.runtime)))); // Runtime_AllocateIn*, StackGuard...
    fr.push(hex(insideS(pick(rngS, B.centry))));
    gcStacks.push({ pc, pcSym, fr, w: 1 / (i + 2) });
  }
  const pickGc = makeSampler(gcStacks.map((g) => g.w));
  const idleStacks = [];
  const idleChain = S.idle.map((s) => s);
  for (let i = 0; i < 8; i++) {
    const pcSym = S.epoll && rngS() < 0.8 ? S.epoll : (idleChain[0] || pick(rngS, S.misc));
    const fr = (pcSym === S.epoll ? idleChain : idleChain.slice(1)).map((s) => hex(insideS(s)));
    idleStacks.push({ pc: hex(insideS(pcSym)), fr: fr.length ? ',' + fr.join(',') : '', n: fr.length });
  }
  const handleApi = hex(S.handleApiCall.start);

  // ---- start-up burst: module loading compiles the entry paths and a few hundred functions
  const rngB = mulberry32(mix(seed, 10));
  for (const fn of Object.values(F.internal)) compile(fn);
  for (const m of F.modules) {
    compile(m.top);
    for (const fn of m.fns) if (rngB() < 0.08) compile(fn);
  }

  // ---- deoptimizations (--deopts): a random stream of their own, so that --deopts 0 changes nothing
  const rngX = mulberry32(mix(seed, 13));
  for (const m of F.modules) { // a function's lines run to the next function of its module
    for (let i = 0; i < m.fns.length; i++) m.fns[i].span = i + 1 < m.fns.length ? m.fns[i + 1].line - m.fns[i].line : 40;
  }
  for (const fn of F.fns) { fn.wait = 0; fn.seen = -1; fn.deopts = 0; fn.sites = null; fn.lazyAt = null; if (!fn.span) fn.span = 30; }
  // script offsets: as if each module's lines had a fixed length
  const offsetOf = (fn, line, col) => (line - 1) * (24 + ((fn.module + 2) * 7) % 19) + col - 1;
  const posIn = (fn) => {
    const line = fn.line + int(rngX, 0, Math.max(0, fn.span - 1));
    const col = line === fn.line ? fn.col + int(rngX, 8, 60) : int(rngX, 3, 70);
    return { fn, line, col };
  };
  const posStr = (p) => `<${escapeV8(p.fn.url)}:${p.line}:${p.col}>`;
  const REASONS = [['wrong map', 30], ['not a Smi', 8], ['Insufficient type feedback for call', 8],
    ['Insufficient type feedback for generic named access', 8], ['Insufficient type feedback for binary operation', 6],
    ['overflow', 5], ['out of bounds', 5], ['Insufficient type feedback for generic keyed access', 4],
    ['Insufficient type feedback for compare operation', 4], ['wrong call target', 4], ['not a heap number', 4],
    ['hole', 3], ['lost precision', 2], ['minus zero', 2], ['wrong instance type', 2], ['not a Number or Oddball', 2],
    ['division by zero', 1], ['wrong value', 1], ['not a JavaScript object', 1], ['wrong feedback cell', 1],
    ['not an array index', 1], ['Insufficient type feedback for construct', 1]];
  const pickReason = makeSampler(REASONS.map((r) => r[1]));
  // a function's eager deopt sites: position (with its inlining chain), inlining id, script offset, reason
  const sitesOf = (fn) => {
    if (fn.sites) return fn.sites;
    fn.sites = [];
    for (let n = 1 + Math.floor(rngX() * rngX() * 4); n > 0; n--) {
      const chain = [posIn(fn)]; // outermost last: the call site in fn, then in each inlinee
      if (rngX() < 0.35) {
        const pool = fn.module >= 0 ? F.modules[fn.module].fns : [fn];
        for (let d = rngX() < 0.3 ? 2 : 1; d > 0; d--) {
          let g = pick(rngX, pool);
          if (g === fn || g === chain[0].fn) g = pick(rngX, pool);
          chain.unshift(posIn(g));
        }
      }
      const inner = chain[0];
      fn.sites.push({ text: chain.map(posStr).join(' inlined at '), offset: offsetOf(inner.fn, inner.line, inner.col),
        id: chain.length === 1 ? -1 : chain.length - 2 + int(rngX, 0, 1), reason: REASONS[pickReason(rngX)][0] });
    }
    return fn.sites;
  };
  const nDeopts = opts.deopts;
  const deoptFrom = out.bytes, deoptSpan = (out.limit - out.bytes) * 0.995;
  const dueAt = (k) => (k > nDeopts ? Infinity : deoptFrom + Math.floor(deoptSpan * (k - 1 + rngX()) / nDeopts));
  let deoptDue = nDeopts > 0 ? dueAt(1) : Infinity;
  let waiting = 0; // deoptimized functions not yet optimized again
  const liveOpt = (fn) => fn.cur !== null && fn.cur.tier === 3 && !fn.cur.deopted && !fn.cur.moved;
  // deoptimizes fn's current TurboFan code: eager (its own reason and site) or a dependency change (then, now and
  // then, the lazy deopt of its activation); its ticks and frames go to its Sparkplug code (or bytecode)
  const deopt = (fn, eager) => {
    const code = fn.cur;
    const head = `,${Math.ceil((code.size + int(rngX, 40, 100)) / 64) * 64},${hex(code.start)},`;
    const at = () => (now += int(rngX, 1, 40));
    if (eager) {
      const sites = sitesOf(fn);
      const st = sites[Math.floor(rngX() * rngX() * sites.length)];
      if (!out.line(`code-deopt,${at()}${head}${st.id},${st.offset},deopt-eager,${st.text},${escapeV8(st.reason)}\n`)) return;
      stats.deoptKinds.eager++;
      stats.deopts++;
    } else {
      const own = { fn, line: fn.line, col: fn.col };
      if (!out.line(`code-deopt,${at()}${head}-1,${offsetOf(fn, fn.line, fn.col)},dependency-change,${posStr(own)},code dependencies\n`)) return;
      stats.deoptKinds.dependency++;
      stats.deopts++;
      if (rngX() < 0.35) {
        const p = fn.lazyAt || (fn.lazyAt = posIn(fn));
        if (out.line(`code-deopt,${at()}${head}-1,${offsetOf(fn, p.line, p.col)},deopt-lazy,${posStr(p)},(unknown)\n`)) {
          stats.deoptKinds.lazy++;
          stats.deopts++;
        }
      }
    }
    code.deopted = true;
    stats.deoptCodes++;
    if (fn.deopts++ === 0) stats.deoptFns++;
    if (fn.deopts > stats.deoptMax) stats.deoptMax = fn.deopts;
    const low = fn.lower || fn.codes[0];
    fn.cur = low;
    fn.tier = low.tier;
    fn.wait = int(rngX, 1, 30);
    waiting++;
    dirty(fn);
    deoptDue = dueAt(stats.deopts + 1);
  };
  // at a JS tick once a deopt is due: the leaf's optimized code, else the nearest optimized caller's (the deopt
  // happened since the last sample, when that function may have been on top)
  const tryDeopt = (t) => {
    const es = t.entries;
    for (let i = es.length - 1; i >= 0; i--) {
      const fn = es[i].fn;
      if (fn && liveOpt(fn)) return deopt(fn, rngX() < 0.9);
    }
  };
  // V8 optimizes a deoptimized function again once it has run a while: here after it has been on the stack of
  // `wait` JS ticks (leaf or caller)
  const reoptimize = (t, tick) => {
    const es = t.entries;
    for (let i = es.length - 1; i >= 0; i--) {
      const fn = es[i].fn;
      if (!fn || fn.wait === 0 || fn.seen === tick) continue;
      fn.seen = tick;
      if (--fn.wait === 0) {
        waiting--;
        if (creation(fn, 3)) stats.deoptReopt++;
      }
    }
  };

  // ---- ticks
  const rngK = mulberry32(mix(seed, 11));
  // Zipf-like popularity over a random ranking; very deep paths (recursion) are damped so that the mean depth
  // does not hinge on whether one of them lands among the top ranks.
  const pickTemplate = makeSampler(shuffle(rngK, templates.map((_, i) => i))
    .map((r, i) => (templates[i].entries.length > 60 ? 0.2 : 1) / (r + 3)));
  // Bursts of one vmstate. Mean run lengths: JS ~8.5 ticks, GC 3.5, EXTERNAL 2.5, IDLE ~21; burst weights =
  // share / mean run for tick shares of about 86/5/5/4 %.
  const burstW = [0.86 / 8.5, 0.05 / 3.5, 0.05 / 2.5, 0.04 / 21];
  const burstSum = burstW[0] + burstW[1] + burstW[2] + burstW[3];
  const modeP = [burstW[0] / burstSum, (burstW[0] + burstW[1]) / burstSum, (burstW[0] + burstW[1] + burstW[2]) / burstSum];
  let mode = 0, runLeft = 0, t = templates[0], gc = gcStacks[0], idle = idleStacks[0];
  let lastTick = now;
  const rngD = mulberry32(mix(seed, 12));
  const insideD = (code) => code.start + int(rngD, 1, Math.max(1, code.size - 1));
  const rawStacks = new Set();
  while (!out.full) {
    if (runLeft === 0) {
      const r = rngK();
      if (r < modeP[0]) { mode = 0; runLeft = 1 + Math.floor(rngK() * rngK() * 30); }
      else if (r < modeP[1]) { mode = 1; runLeft = 1 + Math.floor(rngK() * 6); gc = gcStacks[pickGc(rngK)]; if (rngK() < opts.compaction) compaction(); }
      else if (r < modeP[2]) { mode = 6; runLeft = 1 + Math.floor(rngK() * 4); }
      else { mode = 8; runLeft = 1 + Math.floor(rngK() * rngK() * 80); idle = idleStacks[int(rngK, 0, idleStacks.length - 1)]; }
      t = templates[pickTemplate(rngK)];
    } else if (mode !== 8 && rngK() < 0.35) {
      t = templates[pickTemplate(rngK)];
    }
    runLeft--;
    if (mode !== 8) {
      if (!t.ready && !makeReady(t)) break;
      if (mode === 0 && waiting > 0) reoptimize(t, stats.ticks);
      if (mode === 0 && out.bytes >= deoptDue) tryDeopt(t);
      // tier-up of the leaf function (and its caller, less often)
      const leaf = t.leafFn;
      if (mode === 0 && ++leaf.hits >= leaf.th1 && leaf.tier < 3) {
        if (leaf.tier === 1) creation(leaf, 2);
        else if (leaf.hits >= leaf.th2 && leaf.wait === 0) creation(leaf, 3);
      } else if (mode === 0 && leaf.tier === 3 && rngK() < 0.00002) {
        if (creation(leaf, 3)) stats.reopt++;
      }
      if (t.dirty) render(t);
    }
    // time: sampling interval 1000 us plus jitter, sometimes a late sample
    let dt = 1000 + int(rngK, 0, 320);
    if (rngK() < 0.01) dt += int(rngK, 200, 9000);
    now = Math.max(now + 1, lastTick + dt);
    lastTick = now;
    const k = t.pcStrs ? int(rngK, 0, t.pcStrs.length - 1) : 0;
    // --diversity: a fresh pc inside the same code object (and, in JS, a fresh tos on the machine stack)
    const fresh = opts.diversity > 0 && mode !== 8 && rngD() < opts.diversity;
    let line, nf;
    if (mode === 0) {
      const pc = fresh ? hex(insideD(t.pcCode[k])) : t.pcStrs[k];
      const tos = fresh ? hex(0x7ffc00000000 + 8 * int(rngD, 0, (1 << 20) - 1)) : '0x0';
      line = 'tick,' + pc + ',' + now + ',0,' + tos + ',0' + t.frames + '\n';
      nf = t.nFrames;
    } else if (mode === 1) {
      const js = rngK() < 0.8;
      const pc = fresh ? hex(insideD(gc.pcSym)) : gc.pc;
      line = 'tick,' + pc + ',' + now + ',0,0x0,1' + (js ? prefixed(gc.fr, t) : ',' + gc.fr.join(',')) + '\n';
      nf = js ? Math.min(MAX_FRAMES, gc.fr.length + t.withPc.length) : gc.fr.length;
    } else if (mode === 6) {
      const pc = fresh ? hex(insideD(t.api)) : (t.apiStr || (t.apiStr = hex(t.apiPc)));
      line = 'tick,' + pc + ',' + now + ',1,' + (t.apiCbStr || (t.apiCbStr = hex(t.api.start))) + ',6,' + handleApi + t.framesFromPc + '\n';
      nf = Math.min(MAX_FRAMES, 1 + t.withPc.length);
    } else {
      line = 'tick,' + idle.pc + ',' + now + ',0,0x0,8' + idle.fr + '\n';
      nf = idle.n;
    }
    if (!out.line(line)) break;
    rawStacks.add(rawStackKey(line));
    stats.ticks++;
    stats.vm[mode]++;
    stats.frames += nf;
    if (nf > stats.maxFrames) stats.maxFrames = nf;
  }
  out.full = false;
  out.limit += END.length;
  out.line(END);
  out.close();

  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const pct = (n) => (100 * n / Math.max(1, stats.ticks)).toFixed(1);
  log(`${opts.out}: ${out.bytes} bytes (limit ${opts.size}), ${out.lines + H.lines.length} lines, header ${H.lines.length} lines from ${H.from}`);
  log(`ticks ${stats.ticks} (JS ${pct(stats.vm[0])}%, GC ${pct(stats.vm[1])}%, EXTERNAL ${pct(stats.vm[6])}%, IDLE ${pct(stats.vm[8])}%), ` +
    `frames/tick mean ${(stats.frames / Math.max(1, stats.ticks)).toFixed(1)} max ${stats.maxFrames}, ` +
    `distinct raw stacks ${rawStacks.size} (${pct(rawStacks.size)}%)`);
  log(`functions ${F.fns.length}, templates ${templates.length}, C++ symbols ${S.nSyms} (+${S.libc.length} libc); code-creation ~ ${stats.creations[1]}, ` +
    `^ ${stats.creations[2]}, * ${stats.creations[3]} (re-opt ${stats.reopt}), RegExp ${stats.regexp}; code-move ${stats.codeMoves} ` +
    `(chained ${stats.chainMoves}, JIT ${stats.jitMoves}), sfi-move ${stats.sfiMoves}, new MemoryChunk ${stats.chunks}`);
  if (nDeopts > 0) {
    log(`code-deopt ${stats.deopts} lines of ${nDeopts} asked (eager ${stats.deoptKinds.eager}, dependency-change ` +
      `${stats.deoptKinds.dependency}, lazy ${stats.deoptKinds.lazy}) on ${stats.deoptCodes} code objects of ${stats.deoptFns} ` +
      `functions (up to ${stats.deoptMax} of one), re-optimized after a deopt ${stats.deoptReopt}`);
  }
  log(`${secs.toFixed(1)} s, ${(out.bytes / 1e6 / secs).toFixed(0)} MB/s`);
}

main();
