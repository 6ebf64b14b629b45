#!/usr/bin/env node
// tests/browser/check-svg.js: opens an inferno flame graph SVG in headless Chromium and checks it.
//
// README
// ======
// Usage:
//   node tests/browser/check-svg.js SVG_FILE [--search TERM] [--expect-match | --expect-no-match]
//        [--expect-text STR]... [--zoom TITLE_PREFIX [--expect-label-start STR]]
//        [--screenshot OUT.png] [--window-size WxH] [--timeout SECONDS]
//
// Exit status: 0 when every check passed (a JSON summary goes to stdout), 1 when a check failed
// (the reasons go to stderr, the JSON summary still goes to stdout), 2 on a usage error, 77 (skip)
// when no Chromium is found: $CHROMIUM (a path or a name on PATH), else `chromium`,
// `chromium-browser`, `google-chrome`, `google-chrome-stable` on PATH. No npm packages: node
// built-ins only (node >= 18).
//
// Each check starts its own Chromium (headless, fresh --user-data-dir under the OS temp dir that is
// removed afterwards, DNS mapped to nothing and a dead loopback proxy so nothing leaves the
// machine, killed with its whole process group after --timeout seconds, default 30, and tried
// again, three times in all, when it hung):
//   1. render  `--screenshot` of file://SVG[?s=TERM] at 1200x800 (height grown to the SVG's height,
//              at most 4000). The PNG is decoded here (zlib inflate + PNG filters 0-4) and must have
//              >= 8 distinct colours, >= 1% pixels differing from the most common colour, and >= 100
//              pixels painted in exactly one of the frame fills that the SVG declares (or the
//              search colour). With a search term whose widest match is >= 2 px wide, at least one
//              pixel must be the search colour.
//   2. plain   `--dump-dom` of file://SVG, scripts run (virtual time). Safety checks below.
//   3. search  `--dump-dom` of file://SVG?s=TERM (only with --search). Safety checks, plus:
//              the `#matched` text must read "Matched: N%", the rects inferno highlighted (fill ==
//              the script's `searchcolor`, with `fg:orig_fill` saved) must be exactly the frames
//              whose <title> text matches `new RegExp(TERM)` (computed here, same engine), and N
//              must equal the share of samples the union of matched [fg:x, fg:x+fg:w) covers.
//              Enforced with --expect-match (>= 1 match) or --expect-no-match (none); without either
//              the outcome is only reported.
//   4. zoom    `--dump-dom` of file://SVG?x=X&y=Y (only with --zoom): the first frame whose <title>
//              starts with TITLE_PREFIX, zoomed to as inferno restores a zoom from the URL. Every
//              label drawn then must be the frame's whole label (its `data-label`, else its title
//              without inferno's `(N samples, P%)`) or a start of it ending in `..` (cut from the
//              right, the name first); the zoomed frame's label must start with --expect-label-start.
//   Safety checks (the SVG source, and each DOM after its scripts ran):
//     - the source parses as XML and holds only the elements inferno writes (svg, defs,
//       linearGradient, stop, style, script, rect, text, g, title, a), exactly one <script>, and no
//       event-handler attribute except the root's onload; after load the DOM has the same
//       elements and scripts as the source (nothing was injected), no `data-pwned` attribute, no
//       new on* attribute, no <title> child of the root (that is what a `document.title = ...`
//       would add) and an unchanged `#title` text; Chromium reported no uncaught script error and
//       no XML parse error;
//     - every frame's <title> text in the DOM equals the one in the source (frame names survive as
//       TEXT); names holding markup characters are listed in the summary; each --expect-text STR
//       must occur literally in some frame's <title> text.
//
// inferno SVG features relied on (inferno 0.12; the same as Brendan Gregg's FlameGraph.pl):
//   ids `frames` (frame container, attribute `total_samples`), `matched` (text "Matched: N%"),
//   `title`; each frame is a child <g> of #frames holding <title>NAME (N samples, P%)</title> and a
//   <rect fill="rgb(...)" fg:x=".." fg:w=".."> (namespace xmlns:fg); the script's
//   `var searchcolor = '...'` (default 'rgb(230,0,230)'), `function get_params`, `function search(`,
//   and `if (params.s) search(params.s)` (the `?s=TERM` URL parameter, URI-decoded, used as a
//   RegExp source); `search` saves the old fill in `fg:orig_fill` and sets `fill` to searchcolor.
//
// Fixtures (tests/browser/fixtures/), made with inferno 0.12.8 (`cargo install inferno`):
//   normal.svg  = inferno-flamegraph < normal.folded    (plain Node-like stacks)
//   hostile.svg = inferno-flamegraph < hostile.folded   (frame names with <script>, "><svg onload=,
//                 <img onerror=, ]]></script>, <title>, & ' and U+202E; each payload would set
//                 data-pwned on the root element)
//   unescaped-negative.svg = hostile.svg with the <script> frame name written unescaped (by sed):
//                 a negative control, the harness must fail it ("a payload ran").
//   Regenerate the SVGs when cpuprof moves to another inferno version; once `cpuprof flamegraph`
//   exists, also check an SVG that it writes.
//
// CI (.ci/run): Chromium comes from Debian (`apt-get install -y chromium`), then:
//   node tests/browser/check-svg.js tests/browser/fixtures/normal.svg --search crypto_hash --expect-match
//   node tests/browser/check-svg.js tests/browser/fixtures/normal.svg --search no_such_frame --expect-no-match
//   node tests/browser/check-svg.js tests/browser/fixtures/hostile.svg --search '<script>' --expect-match \
//     --expect-text '<script>' --expect-text '"><svg onload=' --expect-text '<img src=x onerror='
//   and unescaped-negative.svg must exit 1 with "a payload ran" on stderr.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const zlib = require('zlib');
const { spawn } = require('child_process');
const { pathToFileURL } = require('url');

const EXIT_OK = 0;
const EXIT_FAIL = 1;
const EXIT_USAGE = 2;
const EXIT_SKIP = 77;

const USAGE =
  'usage: node tests/browser/check-svg.js SVG_FILE [--search TERM] [--expect-match | --expect-no-match]\n' +
  '         [--expect-text STR]... [--screenshot OUT.png] [--window-size WxH] [--timeout SECONDS]';

// Elements inferno writes; anything else in the SVG means a frame name escaped into markup.
const ALLOWED_ELEMENTS = new Set([
  'svg', 'defs', 'linearGradient', 'stop', 'style', 'script', 'rect', 'text', 'g', 'title', 'a',
]);
const DEFAULT_SEARCH_COLOR = 'rgb(230,0,230)';

// ---------------------------------------------------------------------------------------------
// Arguments

function usageError(msg) {
  process.stderr.write(`check-svg: ${msg}\n${USAGE}\n`);
  process.exit(EXIT_USAGE);
}

function parseArgs(argv) {
  const o = {
    svg: null, search: null, expectMatch: false, expectNoMatch: false, expectText: [], zoom: null, expectLabelStart: null,
    screenshot: null, width: 1200, height: 800, heightGiven: false, timeoutMs: 30000,
  };
  const value = (i, flag) => {
    if (i + 1 >= argv.length) usageError(`${flag} needs a value`);
    return argv[i + 1];
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    switch (a) {
      case '--search': o.search = value(i, a); i++; break;
      case '--expect-match': o.expectMatch = true; break;
      case '--expect-no-match': o.expectNoMatch = true; break;
      case '--expect-text': o.expectText.push(value(i, a)); i++; break;
      case '--zoom': o.zoom = value(i, a); i++; break;
      case '--expect-label-start': o.expectLabelStart = value(i, a); i++; break;
      case '--screenshot': o.screenshot = path.resolve(value(i, a)); i++; break;
      case '--window-size': {
        const m = /^(\d+)[x,](\d+)$/.exec(value(i, a));
        if (!m) usageError('--window-size wants WxH, e.g. 1200x800');
        o.width = +m[1]; o.height = +m[2]; o.heightGiven = true; i++; break;
      }
      case '--timeout': {
        const s = Number(value(i, a));
        if (!(s > 0)) usageError('--timeout wants a positive number of seconds');
        o.timeoutMs = s * 1000; i++; break;
      }
      case '-h': case '--help': process.stdout.write(USAGE + '\n'); process.exit(EXIT_OK); break;
      default:
        if (a.startsWith('-') && a !== '-') usageError(`unknown option ${a}`);
        if (o.svg !== null) usageError('only one SVG_FILE');
        o.svg = path.resolve(a);
    }
  }
  if (o.svg === null) usageError('SVG_FILE missing');
  if (o.expectMatch && o.expectNoMatch) usageError('--expect-match and --expect-no-match exclude each other');
  if ((o.expectMatch || o.expectNoMatch) && o.search === null) usageError('--expect-match/--expect-no-match need --search TERM');
  if (o.expectLabelStart !== null && o.zoom === null) usageError('--expect-label-start needs --zoom TITLE_PREFIX');
  if (o.search === '') usageError('--search wants a non-empty TERM (inferno ignores an empty ?s=)');
  return o;
}

// ---------------------------------------------------------------------------------------------
// Finding Chromium

function isExecutableFile(p) {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function onPath(name) {
  if (name.includes('/')) return isExecutableFile(name) ? path.resolve(name) : null;
  for (const dir of (process.env.PATH || '').split(':')) {
    if (dir && isExecutableFile(path.join(dir, name))) return path.join(dir, name);
  }
  return null;
}

function findChromium() {
  if (process.env.CHROMIUM) {
    const p = onPath(process.env.CHROMIUM);
    return p ? { bin: p } : { why: `$CHROMIUM=${process.env.CHROMIUM} is not an executable file` };
  }
  for (const name of ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']) {
    const p = onPath(name);
    if (p) return { bin: p };
  }
  return { why: 'none of chromium, chromium-browser, google-chrome, google-chrome-stable is on PATH and $CHROMIUM is unset' };
}

// ---------------------------------------------------------------------------------------------
// Running Chromium

const live = new Set(); // process group ids of running Chromiums, killed on our exit
let tempRoot = null;

function killGroup(pid) {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is gone already.
  }
}

function cleanup() {
  for (const pid of live) killGroup(pid);
  live.clear();
  if (tempRoot) {
    fs.rmSync(tempRoot, { recursive: true, force: true });
    tempRoot = null;
  }
}

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    cleanup();
    process.exit(128 + (os.constants.signals[sig] || 1));
  });
}

// One headless Chromium with a fresh profile; resolves with its output, never rejects.
function runChromium(bin, modeArgs, url, opts) {
  const profile = fs.mkdtempSync(path.join(tempRoot, 'profile-'));
  const args = [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    `--user-data-dir=${profile}`,
    '--disable-extensions', '--disable-default-apps', '--no-default-browser-check',
    '--disable-dev-shm-usage', '--mute-audio', '--hide-scrollbars',
    '--disable-features=Translate,MediaRouter,OptimizationHints',
    // No network: names resolve to nothing, anything else would go to a closed loopback port.
    '--host-resolver-rules=MAP * ~NOTFOUND', '--proxy-server=http://127.0.0.1:9',
    // Exact colours and 1 CSS px = 1 device px, so that the PNG holds the SVG's fills verbatim.
    '--force-color-profile=srgb', '--force-device-scale-factor=1',
    `--window-size=${opts.width},${opts.height}`,
    // Let inferno's setTimeout(restore_state, 0) (which runs ?s=) finish before the dump.
    '--virtual-time-budget=5000',
    // Console messages (uncaught errors) on stderr.
    '--enable-logging=stderr', '--v=0',
    ...modeArgs,
    url,
  ];
  const env = {
    ...process.env,
    XDG_CONFIG_HOME: path.join(profile, 'xdg-config'),
    XDG_CACHE_HOME: path.join(profile, 'xdg-cache'),
  };
  const started = Date.now();
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(bin, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
    } catch (e) {
      resolve({ code: null, signal: null, stdout: '', stderr: String(e), timedOut: false, ms: 0, spawnError: String(e) });
      return;
    }
    live.add(child.pid);
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    let timedOut = false;
    let spawnError = null;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, opts.timeoutMs);
    // Pipes may be held by stray helpers after the browser exits: kill the group at exit.
    child.on('exit', () => killGroup(child.pid));
    child.on('error', (e) => { spawnError = String(e); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      killGroup(child.pid);
      live.delete(child.pid);
      fs.rmSync(profile, { recursive: true, force: true });
      resolve({
        code, signal, timedOut, spawnError,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        ms: Date.now() - started,
      });
    });
  });
}

// Headless Chromium's --screenshot/--dump-dom with virtual time now and then hangs before it
// loads the page at all (seen on CI's loaded 2-core machine; the same file then passes in under a
// second). A hung start says nothing about the page, so a timed-out run is tried again, up to
// three times in all, each with a fresh profile; the attempts are in the summary.
async function runChromiumPatiently(bin, modeArgs, url, opts) {
  let r;
  for (let attempt = 1; attempt <= 3; attempt++) {
    r = await runChromium(bin, modeArgs, url, opts);
    r.attempts = attempt;
    if (!r.timedOut) break;
  }
  return r;
}

function consoleMessages(stderr) {
  const msgs = [];
  for (const line of stderr.split('\n')) {
    const m = /:CONSOLE[^\]]*\] "(.*)", source: (.*)$/.exec(line);
    if (m) msgs.push({ message: m[1], source: m[2] });
  }
  return msgs;
}

function stderrTail(stderr) {
  const lines = stderr.split('\n').filter((l) => l && !/dbus|unexpected operator|vaapi|sandbox_linux|idle_linux/.test(l));
  return lines.slice(-15).join('\n');
}

function describeRun(r, timeoutMs) {
  let s;
  if (r.spawnError) s = `could not start Chromium: ${r.spawnError}`;
  else if (r.timedOut) s = `Chromium did not finish within ${timeoutMs / 1000} s and was killed`;
  else s = `Chromium exited with ${r.signal ? 'signal ' + r.signal : 'status ' + r.code}`;
  const tail = stderrTail(r.stderr);
  return tail ? `${s}; its stderr ends:\n${tail}` : s;
}

// ---------------------------------------------------------------------------------------------
// A small XML reader: enough for inferno's SVG and Chromium's serialization of its DOM.

function decodeEntities(s) {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|lt|gt|amp|quot|apos);/g, (all, e) => {
    switch (e) {
      case 'lt': return '<';
      case 'gt': return '>';
      case 'amp': return '&';
      case 'quot': return '"';
      case 'apos': return "'";
      default: return String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    }
  });
}

function parseXml(src) {
  const root = { name: '#document', attrs: {}, children: [], parent: null };
  let cur = root;
  let i = 0;
  const fail = (msg) => { throw new Error(`${msg} at offset ${i}`); };
  const until = (s, from) => {
    const j = src.indexOf(s, from);
    if (j < 0) fail(`unterminated construct, no ${JSON.stringify(s)}`);
    return j;
  };
  while (i < src.length) {
    if (src[i] !== '<') {
      const j = src.indexOf('<', i);
      const end = j < 0 ? src.length : j;
      cur.children.push({ text: decodeEntities(src.slice(i, end)) });
      i = end;
    } else if (src.startsWith('<!--', i)) {
      i = until('-->', i + 4) + 3;
    } else if (src.startsWith('<![CDATA[', i)) {
      const j = until(']]>', i + 9);
      cur.children.push({ text: src.slice(i + 9, j), cdata: true });
      i = j + 3;
    } else if (src.startsWith('<?', i)) {
      i = until('?>', i + 2) + 2;
    } else if (src.startsWith('<!', i)) {
      // DOCTYPE, possibly with an internal subset in [...] and quoted ids.
      let depth = 0;
      let q = null;
      let j = i + 2;
      for (; j < src.length; j++) {
        const c = src[j];
        if (q) { if (c === q) q = null; } else if (c === '"' || c === "'") q = c;
        else if (c === '[') depth++;
        else if (c === ']') depth--;
        else if (c === '>' && depth <= 0) break;
      }
      if (j >= src.length) fail('unterminated <!...>');
      i = j + 1;
    } else if (src[i + 1] === '/') {
      const j = until('>', i + 2);
      const name = src.slice(i + 2, j).trim();
      if (cur.name !== name) fail(`</${name}> closes <${cur.name}>`);
      cur = cur.parent;
      i = j + 1;
    } else {
      const m = /^<([A-Za-z_][\w:.-]*)/.exec(src.slice(i, i + 200));
      if (!m) fail('bad "<"');
      const el = { name: m[1], attrs: {}, attrOrder: [], children: [], parent: cur };
      let j = i + m[0].length;
      const attrRe = /\s*([A-Za-z_][\w:.-]*)\s*=\s*("([^"]*)"|'([^']*)')|\s*(\/?>)/y;
      for (;;) {
        attrRe.lastIndex = j;
        const a = attrRe.exec(src);
        if (!a) fail(`bad attribute in <${el.name}>`);
        j = attrRe.lastIndex;
        if (a[5]) {
          cur.children.push(el);
          if (a[5] === '>') cur = el;
          break;
        }
        if (Object.prototype.hasOwnProperty.call(el.attrs, a[1])) fail(`duplicate attribute ${a[1]}`);
        el.attrs[a[1]] = decodeEntities(a[3] !== undefined ? a[3] : a[4]);
        el.attrOrder.push(a[1]);
      }
      i = j;
    }
  }
  if (cur !== root) fail(`<${cur.name}> is not closed`);
  return root;
}

function* elements(node) {
  for (const c of node.children || []) {
    if (c.name) {
      yield c;
      yield* elements(c);
    }
  }
}

const textOf = (node) => (node.children ? node.children.map((c) => (c.name ? textOf(c) : c.text)).join('') : node.text);
const childEls = (node) => node.children.filter((c) => c.name);
const byId = (doc, id) => { for (const e of elements(doc)) if (e.attrs.id === id) return e; return null; };
const firstDesc = (node, name) => { for (const e of elements(node)) if (e.name === name) return e; return null; };
const documentElement = (doc) => childEls(doc)[0] || null;

// What the checks need from one document (the SVG source or a dumped DOM).
function digest(doc) {
  const all = [...elements(doc)];
  const names = {};
  for (const e of all) names[e.name] = (names[e.name] || 0) + 1;
  const root = documentElement(doc);
  const framesEl = byId(doc, 'frames');
  const frames = framesEl ? childEls(framesEl).map((g) => {
    const t = firstDesc(g, 'title');
    const r = firstDesc(g, 'rect');
    const label = firstDesc(g, 'text');
    return {
      title: t ? textOf(t) : null,
      label: label ? textOf(label) : null,
      dataLabel: g.attrs['data-label'],
      y: r ? r.attrs.y : undefined,
      fill: r ? r.attrs.fill : undefined,
      origFill: r ? r.attrs['fg:orig_fill'] : undefined,
      x: r ? parseInt(r.attrs['fg:x'], 10) : NaN,
      w: r ? parseInt(r.attrs['fg:w'], 10) : NaN,
    };
  }) : null;
  const onAttrs = [];
  const pwned = [];
  for (const e of all) {
    for (const a of e.attrOrder) {
      if (/^on/i.test(a)) onAttrs.push({ element: e.name, attr: a, value: e.attrs[a], isRoot: e === root });
      if (/^data-pwned$/i.test(a)) pwned.push(`<${e.name} ${a}="${e.attrs[a]}">`);
      if (/(^|:)href$/i.test(a) && /^\s*javascript:/i.test(e.attrs[a])) onAttrs.push({ element: e.name, attr: a, value: e.attrs[a], isRoot: false });
    }
  }
  const scripts = all.filter((e) => e.name === 'script').map(textOf);
  const matchedEl = byId(doc, 'matched');
  const titleEl = byId(doc, 'title');
  return {
    rootName: root ? root.name : null,
    rootAttrs: root ? root.attrs : {},
    names, frames, onAttrs, pwned, scripts,
    rootTitle: root ? childEls(root).filter((e) => e.name === 'title').map(textOf) : [],
    matchedText: matchedEl ? textOf(matchedEl) : null,
    titleText: titleEl ? textOf(titleEl) : null,
    parserError: all.some((e) => e.name === 'parsererror') ? textOf(all.find((e) => e.name === 'parsererror')).trim() : null,
    totalSamples: framesEl ? parseInt(framesEl.attrs.total_samples, 10) : NaN,
  };
}

// ---------------------------------------------------------------------------------------------
// PNG decoding (8-bit grey/RGB/grey+alpha/RGBA, not interlaced: what Chromium writes).

function decodePng(buf) {
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (buf.length < 8 || !buf.subarray(0, 8).equals(sig)) throw new Error('not a PNG file');
  let off = 8;
  let ihdr = null;
  const idat = [];
  while (off + 8 <= buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString('latin1', off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    off += 12 + len;
    if (type === 'IHDR') {
      ihdr = { w: data.readUInt32BE(0), h: data.readUInt32BE(4), depth: data[8], ctype: data[9], interlace: data[12] };
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
  }
  if (!ihdr) throw new Error('PNG without IHDR');
  const channels = { 0: 1, 2: 3, 4: 2, 6: 4 }[ihdr.ctype];
  if (ihdr.depth !== 8 || !channels || ihdr.interlace !== 0) {
    throw new Error(`unsupported PNG: bit depth ${ihdr.depth}, colour type ${ihdr.ctype}, interlace ${ihdr.interlace}`);
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const { w, h } = ihdr;
  const bpp = channels;
  const stride = w * bpp;
  if (raw.length < h * (stride + 1)) throw new Error(`PNG data too short: ${raw.length} < ${h * (stride + 1)}`);
  const px = Buffer.alloc(h * stride);
  for (let y = 0; y < h; y++) {
    const ft = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const o = y * stride;
    const p = o - stride; // previous line in px
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? px[o + x - bpp] : 0;
      const b = y > 0 ? px[p + x] : 0;
      const c = x >= bpp && y > 0 ? px[p + x - bpp] : 0;
      let v;
      switch (ft) {
        case 0: v = line[x]; break;
        case 1: v = line[x] + a; break;
        case 2: v = line[x] + b; break;
        case 3: v = line[x] + ((a + b) >> 1); break;
        case 4: {
          const pa = Math.abs(b - c);
          const pb = Math.abs(a - c);
          const pc = Math.abs(a + b - 2 * c);
          v = line[x] + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
          break;
        }
        default: throw new Error(`bad PNG filter type ${ft} on line ${y}`);
      }
      px[o + x] = v & 0xff;
    }
  }
  // To 0xRRGGBB per pixel (alpha ignored: Chromium paints an opaque page).
  const rgb = new Uint32Array(w * h);
  for (let k = 0, o = 0; k < rgb.length; k++, o += bpp) {
    rgb[k] = channels >= 3 ? (px[o] << 16) | (px[o + 1] << 8) | px[o + 2] : px[o] * 0x010101;
  }
  return { width: w, height: h, rgb };
}

function parseColor(s) {
  if (typeof s !== 'string') return null;
  const t = s.replace(/\s+/g, '').toLowerCase();
  let m = /^rgb\((\d{1,3}),(\d{1,3}),(\d{1,3})\)$/.exec(t);
  if (m) return (+m[1] << 16) | (+m[2] << 8) | +m[3];
  m = /^#([0-9a-f]{6})$/.exec(t);
  if (m) return parseInt(m[1], 16);
  m = /^#([0-9a-f])([0-9a-f])([0-9a-f])$/.exec(t);
  if (m) return parseInt(m[1] + m[1] + m[2] + m[2] + m[3] + m[3], 16);
  return null;
}

const hex = (c) => '#' + c.toString(16).padStart(6, '0');
const sameColor = (a, b) => typeof a === 'string' && typeof b === 'string' && a.replace(/\s+/g, '').toLowerCase() === b.replace(/\s+/g, '').toLowerCase();

// ---------------------------------------------------------------------------------------------
// The checks

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const t0 = Date.now();
  const failures = [];
  const fail = (check, msg) => failures.push(`${check}: ${msg}`);
  const summary = { svg: o.svg, chromium: null, ok: false, checks: {}, timingsMs: {} };

  let src;
  try {
    src = fs.readFileSync(o.svg, 'utf8');
  } catch (e) {
    process.stderr.write(`check-svg: FAIL: cannot read ${o.svg}: ${e.message}\n`);
    return EXIT_FAIL;
  }

  const found = findChromium();
  if (!found.bin) {
    process.stderr.write(`check-svg: SKIP: no Chromium binary: ${found.why} (Debian: apt-get install -y chromium)\n`);
    return EXIT_SKIP;
  }
  summary.chromium = found.bin;

  // --- Static checks on the source --------------------------------------------------------------
  const stat = {};
  summary.checks.source = stat;
  let srcDoc = null;
  try {
    srcDoc = digest(parseXml(src));
  } catch (e) {
    fail('source', `the SVG is not well-formed XML: ${e.message}`);
  }
  let searchColor = DEFAULT_SEARCH_COLOR;
  if (srcDoc) {
    stat.frames = srcDoc.frames ? srcDoc.frames.length : 0;
    stat.totalSamples = srcDoc.totalSamples;
    if (srcDoc.rootName === null) fail('source', src.trim() ? 'no root element' : 'the file is empty');
    else if (srcDoc.rootName !== 'svg') fail('source', `root element is <${srcDoc.rootName}>, not <svg>`);
    if (!srcDoc.frames) fail('source', 'no element with id="frames" (is this an inferno flame graph?)');
    else if (srcDoc.frames.length === 0) fail('source', '#frames has no frames');
    else {
      const bad = srcDoc.frames.filter((f) => f.title === null || f.fill === undefined || !Number.isFinite(f.x) || !Number.isFinite(f.w));
      if (bad.length) fail('source', `${bad.length} frame(s) lack a <title> or a <rect> with fill, fg:x, fg:w`);
    }
    if (srcDoc.matchedText === null) fail('source', 'no element with id="matched"');
    const unexpected = Object.keys(srcDoc.names).filter((n) => !ALLOWED_ELEMENTS.has(n));
    if (unexpected.length) fail('source', `elements inferno does not write: ${unexpected.map((n) => `<${n}> x${srcDoc.names[n]}`).join(', ')} (a frame name turned into markup?)`);
    if (srcDoc.scripts.length !== 1) fail('source', `${srcDoc.scripts.length} <script> elements, inferno writes exactly 1`);
    const badOn = srcDoc.onAttrs.filter((a) => !(a.isRoot && a.attr === 'onload'));
    if (badOn.length) fail('source', `event-handler attributes: ${badOn.map((a) => `<${a.element} ${a.attr}="${a.value}">`).join(', ')}`);
    if (srcDoc.pwned.length) fail('source', `data-pwned attribute in the source: ${srcDoc.pwned.join(', ')}`);
    const script = srcDoc.scripts.join('\n');
    const sc = /\bsearchcolor\s*=\s*(['"])(.*?)\1/.exec(script);
    if (sc) searchColor = sc[2];
    stat.searchColor = searchColor;
    stat.searchColorFrom = sc ? 'script' : 'default';
    const features = {
      get_params: /function\s+get_params\s*\(/.test(script),
      search: /function\s+search\s*\(/.test(script),
      paramS: /params\.s\b/.test(script),
    };
    stat.scriptFeatures = features;
    if (o.search !== null && !(features.get_params && features.search && features.paramS)) {
      fail('source', `the script lacks ?s= search support (${Object.entries(features).filter(([, v]) => !v).map(([k]) => k).join(', ')} missing)`);
    }
    if (srcDoc.frames) {
      const markup = srcDoc.frames.filter((f) => /[<>"'&]/.test(f.title || ''));
      stat.framesWithMarkupChars = markup.length;
      stat.markupNamesSample = markup.slice(0, 5).map((f) => f.title);
      for (const t of o.expectText) {
        if (!srcDoc.frames.some((f) => (f.title || '').includes(t))) fail('source', `no frame <title> text contains ${JSON.stringify(t)}`);
      }
    }
  }
  // The browser checks need the frames; they also run when a static check failed, to show what the
  // failure does in a browser (e.g. that an unescaped payload really runs).
  const browserable = !!(srcDoc && srcDoc.frames && srcDoc.frames.length && srcDoc.matchedText !== null);

  // Expected search outcome, computed here with node's RegExp (the same engine as Chromium's).
  let expected = null;
  if (o.search !== null && srcDoc && srcDoc.frames) {
    try {
      const re = new RegExp(o.search);
      const idx = [];
      srcDoc.frames.forEach((f, k) => { if (f.title !== null && re.test(f.title)) idx.push(k); });
      const maxW = Math.max(...srcDoc.frames.map((f) => f.w));
      const iv = idx.map((k) => [srcDoc.frames[k].x, srcDoc.frames[k].x + srcDoc.frames[k].w]).sort((a, b) => a[0] - b[0] || b[1] - a[1]);
      let covered = 0;
      let end = -Infinity;
      for (const [a, b] of iv) {
        if (b <= end) continue;
        covered += b - Math.max(a, end);
        end = b;
      }
      const widest = idx.length ? Math.max(...idx.map((k) => srcDoc.frames[k].w)) : 0;
      expected = { indices: idx, pct: maxW > 0 ? (100 * covered) / maxW : 0, widestPx: (widest / maxW) * (o.width - 20) };
    } catch (e) {
      expected = { error: `invalid RegExp: ${e.message}` };
    }
  }

  tempRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'check-svg-'));
  const fileUrl = pathToFileURL(o.svg).href;
  const searchUrl = o.search !== null ? `${fileUrl}?s=${encodeURIComponent(o.search)}` : null;
  const svgHeight = srcDoc ? parseFloat(srcDoc.rootAttrs.height) : NaN;
  const width = o.width;
  const height = !o.heightGiven && svgHeight > o.height ? Math.min(Math.ceil(svgHeight), 4000) : o.height;
  const runOpts = { width, height, timeoutMs: o.timeoutMs };

  let browserBroken = false;
  if (browserable) {
    // --- 1. render ------------------------------------------------------------------------------
    {
      const c = { url: searchUrl || fileUrl, windowSize: `${width}x${height}` };
      summary.checks.render = c;
      const shot = o.screenshot || path.join(tempRoot, 'screenshot.png');
      try { fs.rmSync(shot, { force: true }); } catch { /* absent */ }
      if (o.screenshot) fs.mkdirSync(path.dirname(shot), { recursive: true });
      const r = await runChromiumPatiently(found.bin, [`--screenshot=${shot}`, '--run-all-compositor-stages-before-draw'], c.url, runOpts);
      summary.timingsMs.render = r.ms;
      if (r.attempts > 1) c.attempts = r.attempts;
      if (r.timedOut || r.spawnError || !fs.existsSync(shot)) {
        fail('render', `no screenshot: ${describeRun(r, o.timeoutMs)}`);
        if (r.timedOut || r.spawnError) browserBroken = true;
      } else {
        try {
          const png = decodePng(fs.readFileSync(shot));
          const counts = new Map();
          for (const v of png.rgb) counts.set(v, (counts.get(v) || 0) + 1);
          let bg = 0;
          let bgN = -1;
          for (const [k, n] of counts) if (n > bgN) { bg = k; bgN = n; }
          const fills = new Set(srcDoc.frames.map((f) => parseColor(f.fill)).filter((v) => v !== null));
          const sc = parseColor(searchColor);
          let framePx = 0;
          let searchPx = 0;
          for (const [k, n] of counts) {
            if (fills.has(k) || k === sc) framePx += n;
            if (k === sc) searchPx += n;
          }
          const total = png.width * png.height;
          Object.assign(c, {
            png: { width: png.width, height: png.height },
            distinctColours: counts.size,
            background: hex(bg),
            nonBackgroundFraction: +((total - bgN) / total).toFixed(4),
            frameFillPixels: framePx,
            searchColourPixels: o.search !== null ? searchPx : undefined,
            screenshot: o.screenshot || undefined,
          });
          if (png.width !== width || png.height !== height) fail('render', `screenshot is ${png.width}x${png.height}, asked for ${width}x${height}`);
          if (counts.size < 8) fail('render', `screenshot looks blank: only ${counts.size} distinct colours`);
          if ((total - bgN) / total < 0.01) fail('render', `screenshot looks blank: ${(100 * (total - bgN) / total).toFixed(2)}% of pixels differ from the background ${hex(bg)}`);
          if (framePx < 100) fail('render', `only ${framePx} pixels have a frame fill colour of the SVG: frames were not painted`);
          if (o.search !== null && expected && expected.indices && expected.indices.length && expected.widestPx >= 2 && sc !== null && searchPx === 0) {
            const msg = `no pixel in the search colour ${searchColor} although a ${expected.widestPx.toFixed(1)} px wide frame matches`;
            if (o.expectMatch) fail('render', msg); else c.note = msg;
          }
        } catch (e) {
          fail('render', `cannot decode the screenshot: ${e.message}`);
        }
      }
    }

    // --- 2./3. DOM after load, without and with search ------------------------------------------
    const domCheck = async (name, url) => {
      const c = { url };
      summary.checks[name] = c;
      if (browserBroken) {
        fail(name, 'not run: an earlier Chromium run timed out or did not start');
        return null;
      }
      const r = await runChromiumPatiently(found.bin, ['--dump-dom'], url, runOpts);
      summary.timingsMs[name] = r.ms;
      if (r.attempts > 1) c.attempts = r.attempts;
      const msgs = consoleMessages(r.stderr);
      c.console = msgs.map((m) => m.message);
      if (r.timedOut || r.spawnError || r.code !== 0 || !r.stdout.trim()) {
        fail(name, `no DOM dump: ${describeRun(r, o.timeoutMs)}`);
        if (r.timedOut || r.spawnError) browserBroken = true;
        return null;
      }
      let d;
      try {
        d = digest(parseXml(r.stdout));
      } catch (e) {
        fail(name, `Chromium's DOM dump does not parse: ${e.message}`);
        return null;
      }
      if (d.parserError) fail(name, `Chromium reports an XML error: ${d.parserError.slice(0, 300)}`);
      // Nothing injected: same elements, same scripts, no new handlers, no payload marker.
      const keys = new Set([...Object.keys(d.names), ...Object.keys(srcDoc.names)]);
      const diff = [...keys].filter((k) => (d.names[k] || 0) !== (srcDoc.names[k] || 0)).map((k) => `<${k}> ${srcDoc.names[k] || 0} -> ${d.names[k] || 0}`);
      if (diff.length) fail(name, `the DOM's elements differ from the SVG's after load: ${diff.join(', ')}`);
      if (d.scripts.length !== srcDoc.scripts.length || d.scripts.some((s, k) => s !== srcDoc.scripts[k])) fail(name, 'the <script> elements differ from the SVG\'s after load');
      const srcOn = new Set(srcDoc.onAttrs.map((a) => `${a.element} ${a.attr}=${a.value}`));
      const newOn = d.onAttrs.filter((a) => !srcOn.has(`${a.element} ${a.attr}=${a.value}`));
      if (newOn.length) fail(name, `event-handler attributes appeared: ${newOn.map((a) => `<${a.element} ${a.attr}="${a.value}">`).join(', ')}`);
      if (d.pwned.length) fail(name, `a payload ran: ${d.pwned.join(', ')}`);
      if (d.rootTitle.length !== srcDoc.rootTitle.length) fail(name, `the document title was set: ${JSON.stringify(d.rootTitle)}`);
      if (d.titleText !== srcDoc.titleText) fail(name, `#title changed from ${JSON.stringify(srcDoc.titleText)} to ${JSON.stringify(d.titleText)}`);
      // Frame names are text, unchanged.
      const titles = d.frames ? d.frames.map((f) => f.title) : [];
      const changed = srcDoc.frames.map((f, k) => (f.title !== titles[k] ? k : -1)).filter((k) => k >= 0);
      if (titles.length !== srcDoc.frames.length) fail(name, `${titles.length} frames in the DOM, ${srcDoc.frames.length} in the SVG`);
      else if (changed.length) fail(name, `${changed.length} frame <title> texts differ from the SVG's, e.g. ${JSON.stringify(srcDoc.frames[changed[0]].title)} -> ${JSON.stringify(titles[changed[0]])}`);
      c.framesWithMarkupCharsAsText = titles.filter((t) => /[<>"'&]/.test(t || '')).length;
      for (const t of o.expectText) {
        if (!titles.some((x) => (x || '').includes(t))) fail(name, `no frame <title> text in the DOM contains ${JSON.stringify(t)}`);
      }
      c.documentTitle = d.rootTitle.length ? d.rootTitle[0] : '';
      c.uncaughtErrors = msgs.filter((m) => /^Uncaught\b/.test(m.message)).map((m) => m.message);
      c.injectionFree = diff.length === 0 && newOn.length === 0 && d.pwned.length === 0 && d.rootTitle.length === srcDoc.rootTitle.length;
      return d;
    };

    const plain = await domCheck('plain', fileUrl);
    if (plain) {
      const c = summary.checks.plain;
      if (c.uncaughtErrors.length) fail('plain', `the SVG's script threw: ${c.uncaughtErrors.join(' | ')}`);
      const hl = plain.frames.filter((f) => f.origFill !== undefined).length;
      if (hl) fail('plain', `${hl} frames are highlighted without a search`);
    }

    if (searchUrl) {
      const d = await domCheck('search', searchUrl);
      if (d) {
        const c = summary.checks.search;
        const enforce = o.expectMatch || o.expectNoMatch;
        const matchedText = (d.matchedText || '').trim();
        const m = /^Matched: (\d+(?:\.\d+)?)%$/.exec(matchedText);
        const hlIdx = [];
        d.frames.forEach((f, k) => { if (sameColor(f.fill, searchColor) && f.origFill !== undefined) hlIdx.push(k); });
        const strayHl = d.frames.filter((f) => f.origFill !== undefined && !sameColor(f.fill, searchColor)).length;
        Object.assign(c, {
          term: o.search,
          matchedText,
          matchedPct: m ? Number(m[1]) : null,
          highlightedFrames: hlIdx.length,
          highlightedSample: hlIdx.slice(0, 5).map((k) => d.frames[k].title),
          expectedFrames: expected && expected.indices ? expected.indices.length : null,
          expectedPct: expected && expected.indices ? +expected.pct.toFixed(2) : null,
          matched: hlIdx.length > 0 && m !== null,
        });
        if (expected && expected.error) c.termError = expected.error;
        const problems = [];
        if (c.uncaughtErrors.length) problems.push(`the SVG's script threw: ${c.uncaughtErrors.join(' | ')}`);
        if (expected && expected.error) problems.push(`TERM is not a valid JavaScript RegExp (${expected.error})`);
        if (strayHl) problems.push(`${strayHl} frames have fg:orig_fill but not the search colour ${searchColor}`);
        if (expected && expected.indices) {
          const exp = new Set(expected.indices);
          const missing = expected.indices.filter((k) => !hlIdx.includes(k));
          const extra = hlIdx.filter((k) => !exp.has(k));
          if (missing.length) problems.push(`${missing.length} frames match /${o.search}/ but were not highlighted, e.g. ${JSON.stringify(d.frames[missing[0]].title)}`);
          if (extra.length) problems.push(`${extra.length} frames were highlighted but do not match /${o.search}/, e.g. ${JSON.stringify(d.frames[extra[0]].title)}`);
          if (expected.indices.length) {
            if (!m) problems.push(`#matched reads ${JSON.stringify(matchedText)}, not "Matched: N%"`);
            else if (Math.abs(Number(m[1]) - expected.pct) > 0.051) problems.push(`#matched says ${m[1]}% but the matched frames cover ${expected.pct.toFixed(2)}% of the samples`);
          } else if (matchedText !== '') problems.push(`#matched reads ${JSON.stringify(matchedText)} although no frame matches`);
        }
        c.consistent = problems.length === 0;
        if (o.expectMatch && !c.matched) problems.unshift(`--expect-match: nothing matched ${JSON.stringify(o.search)} (#matched ${JSON.stringify(matchedText)}, ${hlIdx.length} highlighted frames)`);
        if (o.expectNoMatch && (hlIdx.length || matchedText !== '')) problems.unshift(`--expect-no-match: ${hlIdx.length} frames highlighted, #matched ${JSON.stringify(matchedText)}`);
        if (o.expectNoMatch && expected && expected.indices && expected.indices.length) problems.unshift(`--expect-no-match: ${expected.indices.length} frame titles match /${o.search}/`);
        if (enforce) problems.forEach((p) => fail('search', p));
        else if (problems.length) c.problems = problems;
      }
    }

    if (o.zoom !== null && srcDoc && srcDoc.frames && !browserBroken) {
      const target = srcDoc.frames.find((f) => (f.title || '').startsWith(o.zoom));
      if (!target) {
        fail('zoom', `no frame's title starts with ${JSON.stringify(o.zoom)}`);
      } else {
        const d = await domCheck('zoom', `${fileUrl}?x=${target.x}&y=${target.y}`);
        if (d) {
          const c = summary.checks.zoom;
          const zoomed = d.frames.find((f) => f.x === target.x && f.y === target.y);
          const whole = (f) => (f.dataLabel !== undefined ? f.dataLabel : (f.title || '').replace(/\([^(]*\)$/, ''));
          const drawn = d.frames.filter((f) => f.label);
          const bad = drawn.filter((f) => f.label !== whole(f) && !(f.label.endsWith('..') && whole(f).startsWith(f.label.slice(0, -2))));
          Object.assign(c, { frame: target.title, zoomedLabel: zoomed ? zoomed.label : null, labelsDrawn: drawn.length, labelsNotStartingWithTheName: bad.length });
          if (c.uncaughtErrors.length) fail('zoom', `the SVG's script threw: ${c.uncaughtErrors.join(' | ')}`);
          if (!zoomed) fail('zoom', 'the zoomed frame is not in the DOM');
          if (bad.length) fail('zoom', `${bad.length} labels are not their frame's label cut from the right, e.g. ${JSON.stringify(bad[0].label)} for ${JSON.stringify(whole(bad[0]))}`);
          if (o.expectLabelStart !== null && zoomed && !(zoomed.label || '').startsWith(o.expectLabelStart)) {
            fail('zoom', `the zoomed frame's label is ${JSON.stringify(zoomed.label)}, not one starting with ${JSON.stringify(o.expectLabelStart)}`);
          }
        }
      }
    }
  }

  summary.timingsMs.total = Date.now() - t0;
  summary.ok = failures.length === 0;
  if (failures.length) summary.failures = failures;
  process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  for (const f of failures) process.stderr.write(`check-svg: FAIL: ${f}\n`);
  return failures.length ? EXIT_FAIL : EXIT_OK;
}

main()
  .then((code) => { cleanup(); process.exit(code); })
  .catch((e) => {
    cleanup();
    process.stderr.write(`check-svg: FAIL: internal error: ${e && e.stack ? e.stack : e}\n`);
    process.exit(EXIT_FAIL);
  });
