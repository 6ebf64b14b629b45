// How long a `cpuprof report` page takes to open and become interactive in headless Chromium:
// from navigation to the page's `data-ready` mark (its data parsed, every view drawn).
//   node scripts/bench/open-report.js REPORT.html [RUNS]
// Prints one JSON line: {"runs": [ms, …], "min_ms", "median_ms"}. Needs playwright-core (npm ci in
// tests/browser) and Chromium (/usr/bin/chromium, or $CHROMIUM).
"use strict";

const fs = require("node:fs");
const path = require("node:path");

const [reportPath, runsArg] = process.argv.slice(2);
if (!reportPath) {
  console.error("usage: node scripts/bench/open-report.js REPORT.html [RUNS]");
  process.exit(2);
}
const runs = Number(runsArg || 5);
const { chromium } = require(path.join(__dirname, "../../tests/browser/node_modules/playwright-core"));
const executablePath =
  process.env.CHROMIUM || ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => fs.existsSync(p));

(async () => {
  const browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] });
  const times = [];
  try {
    const url = "file://" + path.resolve(reportPath);
    // One warm-up, then the timed runs, each in a fresh page.
    for (let i = 0; i <= runs; i++) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      const started = Date.now();
      await page.goto(url);
      await page.waitForSelector("body[data-ready]", { timeout: 60000 });
      const ms = Date.now() - started;
      if (errors.length > 0) throw new Error(errors.join(" | "));
      if (i > 0) times.push(ms);
      await page.close();
    }
  } finally {
    await browser.close();
  }
  const sorted = [...times].sort((a, b) => a - b);
  console.log(JSON.stringify({ runs: times, min_ms: sorted[0], median_ms: sorted[Math.floor(sorted.length / 2)] }));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
