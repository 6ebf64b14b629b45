// Opens a `cpuprof report` page in headless Chromium (playwright-core, Debian's Chromium) and
// checks what it shows against cpuprof's own JSON commands for the same input:
//   node check-report.js profile REPORT.html INPUT CPUPROF SCREENSHOT.png
//   node check-report.js hostile REPORT.html
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
      await page.click("#whole");
      await compareTop(page, top, "top after 'Whole profile'");
    }
  }
  check(errors.length === 0, `console errors: ${errors.join(" | ")}`);
}

async function hostileChecks(page) {
  // Nothing from the data became markup: the page has only the elements it builds itself.
  const found = await page.evaluate(() => ({
    scripts: document.scripts.length,
    images: document.images.length,
    handlers: [...document.querySelectorAll("*")].filter((e) => [...e.attributes].some((a) => a.name.startsWith("on"))).length,
    links: [...document.querySelectorAll("a[href]")].length,
    pwned: window.pwned === true,
    names: [...document.querySelectorAll("#top td[data-name]")].map((td) => td.dataset.name),
  }));
  same(found.scripts, 2, "script elements");
  same(found.images, 0, "img elements");
  same(found.handlers, 0, "elements with on… attributes");
  same(found.links, 0, "links");
  check(!found.pwned, "an injected script ran");
  check(found.names.includes("<script>alert(1)</script>"), `the name <script>alert(1)</script> is not shown as text: ${JSON.stringify(found.names.slice(0, 5))}`);
  // Every hostile row can be opened and searched.
  await page.click("#top tbody tr:first-child");
  await page.fill("#search", "<script>");
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
      if (r.url() !== url) requests.push(r.url());
    });
    const started = Date.now();
    await page.goto(url);
    await page.waitForSelector("body[data-ready]", { timeout: 20000 });
    const readyMs = Date.now() - started;
    if (mode === "hostile") await hostileChecks(page);
    else await profileChecks(page, errors);
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
