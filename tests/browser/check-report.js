// Opens a `cpuprof report` page in headless Chromium (playwright-core, Debian's Chromium) and
// checks what it shows against cpuprof's own JSON commands for the same input:
//   node check-report.js profile REPORT.html INPUT CPUPROF SCREENSHOT.png
//   node check-report.js blocks REPORT.html INPUT CPUPROF MIN (the page made with --min-block MIN)
//   node check-report.js hostile REPORT.html [NAMES.json: the names the page must show as text]
//   node check-report.js names REPORT.html '[[NAME, SHOWN], …]' (each name shown as SHOWN, isolated)
//   node check-report.js quick REPORT.html MS (the page is ready within MS ms, and a click within MS)
//   node check-report.js diff REPORT.html '{"base":[…],"new":[…]}' CPUPROF SCREENSHOT.png
//     (a `cpuprof diff --report` page of fixtures/diff: the rows its README says changed)
// Exit 0: every check passed; 1: a check failed (printed); 77: no Chromium or playwright-core
// here (the Rust test decides whether that is a skip).
"use strict";

const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const [mode, reportPath, input, cpuprof, screenshot] = process.argv.slice(2);

function chromiumPath() {
  if (process.env.CHROMIUM) return process.env.CHROMIUM;
  for (const p of ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]) {
    if (fs.existsSync(p)) return p;
  }
  return null;
}

let playwright;
try {
  playwright = require("playwright-core");
} catch {
  console.error("playwright-core is not installed (npm ci in tests/browser)");
  process.exit(77);
}
const executablePath = chromiumPath();
if (!executablePath) {
  console.error("no Chromium found (set CHROMIUM)");
  process.exit(77);
}

const failures = [];
function check(ok, what) {
  if (!ok) failures.push(what);
}
function same(actual, expected, what) {
  check(String(actual) === String(expected), `${what}: page ${JSON.stringify(actual)}, cpuprof ${JSON.stringify(expected)}`);
}

function cli(...args) {
  return JSON.parse(execFileSync(cpuprof, [...args, "--format", "json"], { encoding: "utf8", maxBuffer: 1 << 28 }));
}

/** The top table's rows as the page shows them. */
async function tableRows(page, selector) {
  return page.$$eval(`${selector} tbody tr`, (trs) =>
    trs.map((tr) => ({
      name: tr.querySelector("td[data-name]")?.dataset.name ?? null,
      self: tr.dataset.self === undefined ? null : Number(tr.dataset.self),
      total: Number(tr.dataset.total),
      file: tr.dataset.file ?? null,
      line: tr.dataset.line ?? null,
      location: tr.querySelector("td.loc")?.textContent ?? null,
    })),
  );
}

const where = (row) => (row.file === null ? "" : row.line === null ? row.file : `${row.file}:${row.line}`);

async function compareTop(page, top, what) {
  const rows = await tableRows(page, "#top");
  const n = Math.min(10, top.rows.length);
  check(rows.length >= n, `${what}: the page lists ${rows.length} rows, cpuprof ${top.rows.length}`);
  for (let i = 0; i < n && i < rows.length; i++) {
    const [p, c] = [rows[i], top.rows[i]];
    same(p.name, c.name, `${what} row ${i + 1} name`);
    same(p.location, where(c), `${what} row ${i + 1} location`);
    same(p.self, c.self, `${what} row ${i + 1} (${c.name}) self`);
    same(p.total, c.total, `${what} row ${i + 1} (${c.name}) total`);
  }
}

async function compareCalls(page, selector, expected, what) {
  const rows = await tableRows(page, selector);
  same(rows.length, expected.length, `${what}: number of rows`);
  const key = (name, file, line) => `${name} ${file ?? ""}:${line ?? ""}`;
  const byKey = new Map(rows.map((r) => [key(r.name, r.file || null, r.line || null), r.total]));
  for (const e of expected) {
    const name = e.name ?? "(root)";
    same(byKey.get(key(name, e.file, e.line)), e.total, `${what} ${name}`);
  }
}

async function profileChecks(page, errors) {
  const top = cli("top", input);
  // The header and the category split.
  const fact = (name) => page.$eval(`[data-fact="${name}"]`, (e) => e.dataset.value).catch(() => null);
  same(await fact("format"), top.format, "format");
  same(await fact("duration"), top.duration_ns, "duration");
  same(await fact("samples"), top.summary.samples, "samples");
  same(await fact("interval"), top.interval_ns, "interval");
  const split = await page.$eval("#split", (e) => ({ ...e.dataset }));
  for (const [c, v] of Object.entries(top.summary.categories)) same(split[c], v.total, `category ${c}`);
  await compareTop(page, top, "top");

  // Grouped by file and by package.
  for (const by of ["file", "package"]) {
    await page.selectOption("#group", by);
    await compareTop(page, cli("top", input, "--by", by), `top --by ${by}`);
  }
  await page.selectOption("#group", "function");

  // Sorted by total.
  await page.click('th[data-sort="total"]');
  await compareTop(page, cli("top", input, "--sort", "total"), "top --sort total");
  await page.click('th[data-sort="self"]');

  // A function: its callers and callees.
  const first = top.rows[0];
  await page.click("#top tbody tr:first-child");
  const pattern = first.file === null ? first.name : `${first.name}@${first.file}${first.line === null ? "" : ":" + first.line}`;
  const callers = cli("callers", pattern, input);
  const callees = cli("callees", pattern, input);
  const facts = await page.$eval("#function-facts", (e) => ({ ...e.dataset }));
  same(facts.self, callers.function.self, "function self");
  same(facts.total, callers.function.total, "function total");
  await compareCalls(page, "#callers", callers.callers, "callers");
  await compareCalls(page, "#callees", callees.callees, "callees");

  // Its annotated source, where the page has it: the line `cpuprof annotate` marks hottest is
  // the one highlighted (and scrolled into view), with the same text.
  const shown = await page.$$eval("#annotated tbody tr:not(.gap)", (rows) =>
    rows.map((r) => ({ hot: r.classList.contains("hot"), line: Number(r.cells[0].textContent), text: r.cells[3].textContent })),
  );
  const boxHidden = await page.$eval("#annotated-box", (e) => e.hidden);
  if (!boxHidden) {
    const annotated = cli("annotate", pattern, input, "--full", "--source-root", "/work/main=" + path.resolve(__dirname, "../.."));
    // The hottest lines, at most 3, each with at least 5% of the function's self (annotate's ▶).
    const hottest = [...annotated.lines]
      .sort((a, b) => b.self - a.self || a.line - b.line)
      .slice(0, 3)
      .filter((l) => l.function_pct >= 5)
      .map((l) => l.line)
      .sort((a, b) => a - b);
    const hot = shown.filter((r) => r.hot);
    check(hot.length > 0 && hot.length <= 3, `annotated source: ${hot.length} lines highlighted`);
    same(JSON.stringify(hot.map((r) => r.line)), JSON.stringify(hottest), "annotated source: the hottest lines");
    for (const row of shown) {
      const want = annotated.lines.find((l) => l.line === row.line);
      if (want && want.text !== null && !want.text.includes("\t")) same(row.text, want.text, `annotated source: line ${row.line}'s text`);
    }
    const inView = await page.$eval("#annotated-scroll", (s) => {
      const hotRow = s.querySelector("tr.hot");
      return hotRow.offsetTop >= s.scrollTop && hotRow.offsetTop < s.scrollTop + s.clientHeight;
    });
    check(inView, "annotated source: the hottest line is scrolled into view");
  }

  // What V8 did to it, where the page says (tick logs): `cpuprof jit`'s lines for the function,
  // its table's words less the title (sub-lines nested).
  const jitShown = await page.$eval("#jit-box", (box) =>
    box.hidden ? null : [...box.querySelectorAll("#jit-lines li")].map((li) => li.firstChild.textContent),
  );
  if (jitShown !== null) {
    const table = execFileSync(cpuprof, ["jit", input, pattern], { encoding: "utf8", maxBuffer: 1 << 28 });
    const said = table.split("\n").filter((l) => l.startsWith("  ")).map((l) => l.trim());
    same(JSON.stringify(jitShown), JSON.stringify(said), "what V8 did (cpuprof jit's lines)");
    check(said.length > 0, "what V8 did: cpuprof jit says nothing of the function");
  }
  if (input.endsWith("jit.log.gz")) check(jitShown !== null, "a tick log with JIT records: no 'what V8 did' box");

  // Search: the share matched is the weight of the samples with a matching frame, which is
  // what --focus keeps.
  const term = first.name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  await page.fill("#search", term);
  const matched = Number(await page.$eval("#matched", (e) => e.dataset.weight));
  const focused = cli("top", input, "--focus", term, "--all").rows.reduce((a, r) => a + r.self, 0);
  same(matched, focused, `search ${term}: matched weight`);
  const highlighted = await page.evaluate(() => {
    const c = document.getElementById("flame");
    const ctx = c.getContext("2d");
    const { data } = ctx.getImageData(0, 0, c.width, c.height);
    let n = 0;
    for (let i = 0; i < data.length; i += 4) if (data[i] === 0xe0 && data[i + 1] === 0x40 && data[i + 2] === 0xfb) n++;
    return n;
  });
  check(highlighted > 0, "search: no frame is highlighted");
  await page.fill("#search", "");

  // Zoom: click the hottest function's frame (the widest frame above the root row).
  const before = Number(await page.$eval("#flame", (c) => c.dataset.frames));
  await page.$eval("#flame", (c) => c.scrollIntoView({ block: "end" }));
  const box = await page.$eval("#flame", (c) => {
    const r = c.getBoundingClientRect();
    return { x: r.left, y: r.top, w: r.width, h: r.height };
  });
  // The first row above the root frame ("all"): the outermost functions.
  await page.mouse.click(box.x + box.w * 0.5, box.y + box.h - 18 * 1.5);
  const zoomed = await page.$eval("#reset-zoom", (b) => !b.hidden);
  check(zoomed, "zoom: clicking a frame did not zoom");
  if (zoomed) {
    await page.click("#reset-zoom");
    same(Number(await page.$eval("#flame", (c) => c.dataset.frames)), before, "frames after reset zoom");
  }

  // Screenshot: kept, and not blank.
  await page.screenshot({ path: screenshot, fullPage: true });
  const png = fs.readFileSync(screenshot);
  check(png.length > 20000, `screenshot ${screenshot} is ${png.length} bytes: blank?`);

  // Drag a range on the timeline: the table must equal top --from --to of its ends.
  const timed = await page.$(".u-over");
  if (timed) {
    await timed.scrollIntoViewIfNeeded();
    const over = await timed.boundingBox();
    await page.mouse.move(over.x + over.width * 0.2, over.y + over.height / 2);
    await page.mouse.down();
    await page.mouse.move(over.x + over.width * 0.55, over.y + over.height / 2, { steps: 8 });
    await page.mouse.up();
    const range = await page.$eval("#range", (e) => ({ ...e.dataset }));
    check(range.fromNs !== undefined, "dragging on the timeline selected no range");
    if (range.fromNs !== undefined) {
      const windowed = cli("top", input, "--from", `${range.fromNs}ns`, "--to", `${range.toNs}ns`);
      await compareTop(page, windowed, `top --from ${range.fromNs}ns --to ${range.toNs}ns`);
      const split2 = await page.$eval("#split", (e) => ({ ...e.dataset }));
      for (const [c, v] of Object.entries(windowed.summary.categories)) same(split2[c], v.total, `window category ${c}`);
      // The selection zoomed the flame chart to it.
      const view = await page.$eval("#chart", (c) => ({ ...c.dataset }));
      if (view.t0 !== undefined) same(`${view.t0} ${view.t1}`, `${range.fromNs} ${range.toNs}`, "the flame chart after a selection");
      await page.click("#whole");
      await compareTop(page, top, "top after 'Whole profile'");
    }
  }
  await chartChecks(page);
  check(errors.length === 0, `console errors: ${errors.join(" | ")}`);
}

/**
 * The flame chart of a .cpuprofile: its frames at a time are the stack of the sample at that
 * time, computed here from the file's own nodes, samples and timeDeltas (DevTools' attribution:
 * sample i lasts until sample i + 1; idle samples, left out as top leaves them, show nothing);
 * zooming it selects on the timeline.
 */
async function chartChecks(page) {
  if (!input.endsWith(".cpuprofile")) return;
  const shown = await page.$eval("#chart-section", (e) => !e.hidden);
  check(shown, "a .cpuprofile's page has no flame chart");
  if (!shown) return;
  const profile = JSON.parse(fs.readFileSync(input, "utf8"));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  let clock = profile.startTime;
  const times = profile.samples.map((_, i) => (clock += profile.timeDeltas[i]));
  const order = times.map((_, i) => i).sort((a, b) => times[a] - times[b] || a - b);
  const stackOf = (id) => {
    const names = [];
    for (let a = id; a !== undefined; a = parent.get(a)) {
      const frame = byId.get(a).callFrame;
      if (frame.functionName !== "(root)") names.push(frame.functionName || "(anonymous)");
    }
    return names.reverse();
  };
  // Twelve samples across the recording, each at the middle of its time.
  const picks = [];
  for (let k = 0; k < 12; k++) {
    let at = Math.floor((k * (order.length - 1)) / 12);
    while (at + 1 < order.length && times[order[at + 1]] - times[order[at]] < 2) at++;
    if (at + 1 < order.length) picks.push(at);
  }
  let nonEmpty = 0;
  for (const at of picks) {
    const [i, next] = [order[at], order[at + 1]];
    const t = Math.round(((times[i] + times[next]) / 2 - profile.startTime) * 1000);
    let expected = stackOf(profile.samples[i]);
    if (expected.length === 1 && expected[0] === "(idle)") expected = [];
    if (expected.length > 0) nonEmpty++;
    const frames = await page.evaluate((t) => window.__flameChartStackAt(t), t);
    same(JSON.stringify(frames), JSON.stringify(expected), `flame chart at ${t} ns (sample ${i})`);
  }
  check(nonEmpty >= 3, `only ${nonEmpty} of the picked samples have a stack: the check checks little`);
  // Zoomed with the wheel, the chart selects what it shows on the timeline (in whole buckets).
  await page.keyboard.press("Escape");
  await page.$eval("#chart", (c) => c.scrollIntoView({ block: "center" }));
  await page.click("#chart-whole").catch(() => {});
  const box = await page.$eval("#chart", (c) => {
    const r = c.getBoundingClientRect();
    return { x: r.left, y: r.top, w: r.width, h: r.height };
  });
  const wholeView = await page.$eval("#chart", (c) => Number(c.dataset.t1) - Number(c.dataset.t0));
  await page.mouse.move(box.x + box.w * 0.4, box.y + 30);
  await page.mouse.wheel(0, -600);
  await page.waitForTimeout(600);
  const view = await page.$eval("#chart", (c) => ({ t0: Number(c.dataset.t0), t1: Number(c.dataset.t1) }));
  const range = await page.$eval("#range", (e) => ({ from: Number(e.dataset.fromNs), to: Number(e.dataset.toNs) }));
  const bucket = JSON.parse(await page.$eval("#data", (e) => e.textContent)).bucket_ns;
  check(view.t1 - view.t0 < wholeView * 0.8, `the wheel did not zoom in: ${view.t0}–${view.t1} ns of ${wholeView}`);
  check(
    range.from <= view.t0 && range.to >= view.t1 && range.from > view.t0 - bucket && range.to < view.t1 + bucket,
    `zoomed to ${view.t0}–${view.t1} ns, the timeline selects ${range.from}–${range.to} (buckets of ${bucket} ns)`,
  );
  await page.click("#whole");
}

async function hostileChecks(page) {
  // Nothing from the data became markup: the page has only the elements it builds itself.
  const kind = await page.$eval("body", (b) => b.dataset.kind);
  const found = await page.evaluate(() => ({
    scripts: document.scripts.length,
    images: [...document.images].filter((img) => img.id !== "flame-image" || !img.src.startsWith("blob:")).length,
    handlers: [...document.querySelectorAll("*")].filter((e) => [...e.attributes].some((a) => a.name.startsWith("on"))).length,
    links: [...document.querySelectorAll("a[href]")].filter((a) => a.id !== "save-flame" || !a.href.startsWith("blob:")).length,
    pwned: window.pwned === true,
    names: [...document.querySelectorAll("#top td[data-name], #verdicts tbody td.name")].map((td) => td.dataset.name ?? td.textContent),
  }));
  same(found.scripts, 2, "script elements");
  same(found.images, 0, "img elements but the flame graph");
  same(found.handlers, 0, "elements with on… attributes");
  same(found.links, 0, "links but the flame graph's");
  check(!found.pwned, "an injected script ran");
  // Every name of the set, exactly, as text.
  const expected = input ? JSON.parse(input) : ["<script>alert(1)</script>"];
  const missing = expected.filter((n) => !found.names.includes(n));
  check(missing.length === 0, `names not shown as text: ${JSON.stringify(missing)} (shown: ${JSON.stringify(found.names.slice(0, 8))})`);
  // Every hostile row can be opened and searched.
  if (kind === "diff") {
    await page.click("#verdicts tbody tr:first-child");
    await page.fill("#filter", "<script>");
  } else {
    await page.click("#top tbody tr:first-child");
    await page.fill("#search", "<script>");
  }
  check(!(await page.evaluate(() => window.pwned === true)), "an injected script ran after a click");
}

/**
 * Names with bidi overrides and invisible characters (the fourth argument: each name and how the
 * tables show it, `\u{202e}` for U+202E, written by hand): no text on the page holds such a
 * character, before or after a function is opened, and every name is in a <bdi> of its own, so
 * that its direction cannot reorder the text around it (the heading and the facts line too).
 */
async function namesChecks(page) {
  const pairs = JSON.parse(input);
  // Written here from Unicode's lists, not taken from the page: controls (Cc), bidi embeddings,
  // overrides, isolates and marks, zero-width and other invisible characters.
  const rawText = () =>
    page.evaluate(() => {
      const bad = /[\p{Cc}\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/u;
      const found = [];
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let t = walker.nextNode(); t; t = walker.nextNode()) {
        if (t.parentElement.closest("script")) continue;
        // White space between the template's elements is not text.
        if (/^\s*$/.test(t.data)) continue;
        if (bad.test(t.data)) found.push(JSON.stringify(t.data));
      }
      if (bad.test(document.title)) found.push("title " + JSON.stringify(document.title));
      return found;
    });
  const unisolated = () =>
    page.evaluate(() => {
      const out = [];
      for (const e of document.querySelectorAll("#top td.name, #top td.loc, #callers td.name, #callees td.name, #function-name, #source")) {
        if (e.textContent !== "" && !e.querySelector("bdi")) out.push(`${e.id || e.className}: ${JSON.stringify(e.textContent)}`);
      }
      return out;
    });
  let raw = await rawText();
  check(raw.length === 0, `text with raw bidi or invisible characters: ${raw.join(", ")}`);
  const shown = await page.$$eval("#top td.name", (tds) => tds.map((td) => [td.dataset.name, td.querySelector("bdi")?.textContent ?? null]));
  for (const [name, expected] of pairs) {
    const row = shown.find(([n]) => n === name);
    check(row !== undefined, `${JSON.stringify(name)}: no row`);
    if (row) same(row[1], expected, `${JSON.stringify(name)} shown`);
  }
  let bare = await unisolated();
  check(bare.length === 0, `names not isolated: ${bare.join(", ")}`);
  // Each function opened: its name, its location in the facts line, its callers and callees.
  const rows = (await page.$$("#top tbody tr")).length;
  for (let i = 1; i <= rows; i++) {
    await page.click(`#top tbody tr:nth-child(${i})`);
    raw = await rawText();
    check(raw.length === 0, `row ${i} opened: text with raw bidi or invisible characters: ${raw.join(", ")}`);
    bare = await unisolated();
    check(bare.length === 0, `row ${i} opened: names not isolated: ${bare.join(", ")}`);
    const facts = await page.$eval("#function-facts", (e) => ({ bdi: e.querySelector("bdi")?.textContent ?? null, text: e.textContent }));
    const location = await page.$eval(`#top tbody tr:nth-child(${i}) td.loc`, (td) => td.textContent);
    if (location !== "") {
      same(facts.bdi, location, `row ${i}: the facts line's location`);
      check(facts.text.startsWith(location + " — self"), `row ${i}: the facts line reads ${JSON.stringify(facts.text)}`);
    }
  }
}

/**
 * The page of a profile with megabyte names is ready within `ms` (the fourth argument), and a
 * click on a row (the function view, the flame graph redrawn) takes no longer.
 */
async function quickChecks(page, readyMs) {
  const ms = Number(input);
  check(readyMs < ms, `ready in ${readyMs} ms (at most ${ms})`);
  const started = Date.now();
  await page.click("#top tbody tr:first-child");
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => done())));
  const took = Date.now() - started;
  check(took < ms, `a click took ${took} ms (at most ${ms})`);
  const shown = await page.$eval("#top td.name", (td) => td.textContent.length);
  check(shown < 5000, `a name of ${shown} characters in a table cell`);
}

/**
 * The blocks table against `cpuprof blocks INPUT --min MIN --format json` (MIN is the fifth
 * argument): a row per block, and "blocked in" reads "(spread out)", explained in its tooltip
 * and a line under the table, exactly where `blocks` has neither a common nor a native frame.
 */
async function blocksChecks(page, min) {
  const expected = JSON.parse(
    execFileSync(cpuprof, ["blocks", input, "--min", min, "--all", "--format", "json"], { encoding: "utf8", maxBuffer: 1 << 28 }),
  );
  const rows = await page.$$eval("#blocks tbody tr", (trs) =>
    trs.map((tr) => ({ start: Number(tr.dataset.startNs), where: tr.children[3].textContent, title: tr.children[3].title })),
  );
  same(rows.length, expected.blocks.length, "blocks listed");
  let spread = 0;
  for (const b of expected.blocks) {
    const row = rows.find((r) => r.start === b.start_ns);
    check(row !== undefined, `no row for the block at ${b.start_ns} ns`);
    if (!row) continue;
    const spreadOut = b.common === null && b.native === null;
    if (spreadOut) spread++;
    same(row.where === "(spread out)", spreadOut, `block at ${b.start_ns} ns reads ${JSON.stringify(row.where)}`);
    check(!spreadOut || /more than half/.test(row.title), `block at ${b.start_ns} ns: "(spread out)" without its explanation`);
  }
  check(spread > 0, "the fixture has no spread-out block: the check checks nothing");
  const legend = await page.$eval("#blocks-legend", (e) => e.textContent).catch(() => "(none)");
  check(legend.startsWith("(spread out):") && /more than half/.test(legend), `the legend line says ${JSON.stringify(legend)}`);
}

/** What fixtures/diff/README.md says changed between base.js and new.js. */
const DIFF_EXPECTED = { doubledWork: "hotter", addedWork: "new", halvedWork: "cooler", removedWork: "gone" };

async function diffChecks(page) {
  const sides = JSON.parse(input);
  const oracle = JSON.parse(
    execFileSync(cpuprof, ["diff", "--base", ...sides.base, "--new", ...sides.new, "--all", "--format", "json"], {
      encoding: "utf8",
      maxBuffer: 1 << 28,
    }),
  );
  const rows = () =>
    page.$$eval("#verdicts tbody tr", (trs) =>
      trs.map((tr) => ({
        verdict: tr.dataset.verdict,
        name: tr.children[0].textContent,
        location: tr.children[7].textContent,
        shown: tr.children[1].textContent,
      })),
    );
  // The rows as ranked, each with its verdict and location.
  const all = await rows();
  same(all.length, Math.min(500, oracle.rows.length), "rows shown");
  oracle.rows.slice(0, 50).forEach((r, i) => {
    const location = r.file === null ? "" : r.line === null ? r.file : `${r.file}:${r.line}`;
    same(`${all[i]?.name} ${all[i]?.verdict} ${all[i]?.location}`, `${r.name} ${r.verdict} ${location}`, `row ${i}`);
  });
  // The changes the fixture was made with, and nothing else significant.
  await page.selectOption("#verdict", "changed");
  const changed = await rows();
  same(
    JSON.stringify(changed.map((r) => [r.name, r.verdict]).sort()),
    JSON.stringify(Object.entries(DIFF_EXPECTED).sort()),
    "significant changes",
  );
  const counts = JSON.parse(await page.$eval("#summary", (e) => e.dataset.counts));
  same(JSON.stringify(counts, Object.keys(counts).sort()), JSON.stringify({ cooler: 1, gone: 1, hotter: 1, new: 1 }), "summary counts");
  for (const verdict of ["hotter", "new", "cooler", "gone"]) {
    await page.selectOption("#verdict", verdict);
    const shown = await rows();
    check(shown.every((r) => r.verdict === verdict), `--verdict ${verdict} shows other rows`);
    check(shown.some((r) => DIFF_EXPECTED[r.name] === verdict), `no ${verdict} row from the fixture`);
  }
  await page.selectOption("#verdict", "");
  // Filter and sort.
  await page.fill("#filter", "work");
  check((await rows()).every((r) => (r.name + r.location).toLowerCase().includes("work")), "the filter let other rows through");
  await page.fill("#filter", "");
  await page.click("#verdicts th[data-sort=p]");
  const byP = await page.$$eval("#verdicts tbody tr", (trs) => trs.map((tr) => Number(tr.dataset.row)));
  const pOf = (i) => oracle.rows[i].p_value;
  check(byP.every((row, i) => i === 0 || pOf(byP[i - 1]) <= pOf(row)), "sorted by p: not ascending");
  await page.click("#verdicts th[data-sort=p]");

  // Each run of a function, against `cpuprof top` of that run.
  for (const name of Object.keys(DIFF_EXPECTED)) {
    await page.click(`#verdicts tbody tr:has(td[data-name="${name}"])`);
    const runs = await page.$$eval("#runs tbody tr", (trs) => trs.map((tr) => ({ side: tr.dataset.side, self: Number(tr.dataset.self), total: Number(tr.dataset.total) })));
    const files = [...sides.base.map((f) => ["base", f]), ...sides.new.map((f) => ["new", f])];
    same(runs.length, files.length, `${name}: runs`);
    files.forEach(([side, file], i) => {
      const top = cli("top", file, "--all").rows.find((r) => r.name === name && r.file && r.file.endsWith("fixtures/diff/app.js"));
      same(`${runs[i]?.side} ${runs[i]?.self} ${runs[i]?.total}`, `${side} ${top ? top.self : 0} ${top ? top.total : 0}`, `${name}: ${file}`);
    });
    check((await page.$$("#strip circle")).length === files.length, `${name}: a dot per run`);
    // Where the change came from: its callers in the new runs (main, for every function here).
    const callers = await page.$$eval("#explain-callers tbody tr", (trs) => trs.map((tr) => tr.dataset.name));
    const expected = cli("callers", name, DIFF_EXPECTED[name] === "gone" ? sides.base[0] : sides.new[0]);
    const names = expected.callers.map((c) => c.name);
    check(callers.length > 0 && callers.every((c) => names.includes(c)), `${name}: callers ${JSON.stringify(callers)} not among ${JSON.stringify(names)}`);
  }

  // The differential flame graph: an image that decodes, of the new side's functions.
  const image = await page.$eval("#flame-image", (img) => ({ width: img.naturalWidth, src: img.src }));
  check(image.width > 0 && image.src.startsWith("blob:"), "the flame graph image did not load");
  const data = JSON.parse(await page.$eval("#data", (e) => e.textContent));
  const svg = require("node:zlib").gunzipSync(Buffer.from(data.flame_svg_gzip_base64, "base64")).toString("utf8");
  check(svg.includes("doubledWork") && svg.includes("addedWork"), "the flame graph lacks the changed functions");
  check(!svg.includes("removedWork") || svg.includes("only in base"), "a gone function drawn as present");

  await page.click(`#verdicts tbody tr:has(td[data-name="doubledWork"])`);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: screenshot.replace(/\.png$/, ".screen.png") });
  await page.screenshot({ path: screenshot, fullPage: true });
  const png = fs.readFileSync(screenshot);
  check(png.length > 20000, `screenshot ${screenshot} is ${png.length} bytes: blank?`);
}

/**
 * The page at a phone's width (390×844) and a laptop's (1400×900): screenshots of both (kept as
 * test artifacts), and at the phone's width no table widens the page (each scrolls inside its
 * wrapper), no function name breaks inside a word, and every table of functions has the name
 * first.
 */
async function widthChecks(page, screenshot) {
  for (const [width, height] of [[390, 844], [1400, 900]]) {
    await page.setViewportSize({ width, height });
    // The page lays out again on resize (the chart, the flame graph).
    await page.waitForTimeout(150);
    if (screenshot) await page.screenshot({ path: screenshot.replace(/\.png$/, `.${width}x${height}.png`), fullPage: true });
    if (width !== 390) continue;
    const found = await page.evaluate(() => {
      const visible = (e) => e.getClientRects().length > 0;
      const tables = [...document.querySelectorAll("table")].filter(visible);
      const issues = [];
      const pageWidth = document.scrollingElement.scrollWidth;
      for (const table of tables) {
        // The nearest ancestor that scrolls sideways, and no wider than the page.
        let box = table.parentElement;
        while (box && box !== document.body && !["auto", "scroll"].includes(window.getComputedStyle(box).overflowX)) box = box.parentElement;
        if (!box || box === document.body) issues.push(`#${table.id}: no wrapper that scrolls sideways`);
        else if (box.getBoundingClientRect().right > window.innerWidth + 0.5) issues.push(`#${table.id}: its wrapper ends past the screen`);
        const head = table.tHead ? [...table.tHead.rows[0].cells].map((c) => c.textContent.trim()) : [];
        const nameCells = [...table.querySelectorAll("tbody td.name")];
        for (const td of nameCells) {
          const style = window.getComputedStyle(td);
          if (style.whiteSpace !== "nowrap" && style.whiteSpace !== "pre") issues.push(`#${table.id}: a name may wrap (white-space ${style.whiteSpace})`);
          // Wrapped, the cell's text lies on more than one line.
          const text = document.createRange();
          text.selectNodeContents(td);
          const tops = [...text.getClientRects()].filter((r) => r.width > 0).map((r) => r.top);
          if (tops.some((t) => Math.abs(t - tops[0]) > 4)) {
            issues.push(`#${table.id}: the name ${JSON.stringify(td.textContent.slice(0, 40))} breaks across lines`);
          }
          if (td.cellIndex !== 0) issues.push(`#${table.id}: the name is column ${td.cellIndex + 1}, not the first (${head.join(" | ")})`);
        }
        table.dataset.nameCells = String(nameCells.length);
      }
      return { pageWidth, issues: [...new Set(issues)], named: tables.filter((t) => t.querySelector("tbody td.name")).map((t) => t.id) };
    });
    check(found.pageWidth <= 390, `at 390 px the page is ${found.pageWidth} px wide: something does not scroll inside its box`);
    for (const issue of found.issues) check(false, `at 390 px: ${issue}`);
    // The tables of functions the page always shows have their names marked.
    const kind = await page.$eval("body", (b) => b.dataset.kind);
    for (const id of kind === "diff" ? ["verdicts"] : ["top"]) check(found.named.includes(id), `#${id}: no name cells (td.name)`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.waitForTimeout(150);
}

(async () => {
  const browser = await playwright.chromium.launch({ executablePath, args: ["--no-sandbox"] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = [];
    const requests = [];
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") errors.push(m.text());
    });
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("dialog", async (d) => {
      errors.push(`dialog: ${d.message()}`);
      await d.dismiss();
    });
    const url = "file://" + path.resolve(reportPath);
    page.on("request", (r) => {
      // blob: URLs are the page's own data (the diff page's inflated flame graph), not the network.
      if (r.url() !== url && !r.url().startsWith("blob:")) requests.push(r.url());
    });
    const started = Date.now();
    await page.goto(url);
    await page.waitForSelector("body[data-ready]", { timeout: 20000 });
    const readyMs = Date.now() - started;
    // What opens on a screen (docs/report.png is one), before anything is clicked.
    if (screenshot && mode === "profile") await page.screenshot({ path: screenshot.replace(/\.png$/, ".screen.png") });
    if (mode === "blocks") await blocksChecks(page, screenshot);
    else if (mode === "hostile") await hostileChecks(page);
    else if (mode === "names") await namesChecks(page);
    else if (mode === "quick") await quickChecks(page, readyMs);
    else if (mode === "diff") await diffChecks(page);
    else await profileChecks(page, errors);
    if (mode === "profile" || mode === "diff") await widthChecks(page, screenshot);
    check(errors.length === 0, `console errors: ${errors.join(" | ")}`);
    check(requests.length === 0, `network requests: ${requests.join(" ")}`);
    console.log(JSON.stringify({ ready_ms: readyMs }));
  } finally {
    await browser.close();
  }
  if (failures.length > 0) {
    for (const f of failures) console.error("FAIL " + f);
    process.exit(1);
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
