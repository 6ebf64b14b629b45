#!/usr/bin/env node
// The baseline of scripts/bench-sourcemap.sh: what a user's own script does to read a
// .cpuprofile by original names: load each script's map with Mozilla's `source-map`
// (fixtures/sourcemap/node_modules), look every callFrame up with originalPositionFor, and sum
// hitCount per original (name, source, line). Prints the top 10.
//
//   node scripts/bench/sourcemap-baseline.js PROFILE.cpuprofile
"use strict";

const fs = require("fs");
const path = require("path");
const { SourceMapConsumer } = require(path.join(__dirname, "../../fixtures/sourcemap/node_modules/source-map"));

async function main() {
  const profile = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
  const consumers = new Map();
  const self = new Map();
  for (const node of profile.nodes) {
    const f = node.callFrame;
    let key = `${f.functionName} ${f.url}:${f.lineNumber + 1}`;
    if (f.url.startsWith("file://")) {
      if (!consumers.has(f.url)) {
        const script = new URL(f.url).pathname;
        const comment = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(fs.readFileSync(script, "utf8"));
        consumers.set(
          f.url,
          comment ? await new SourceMapConsumer(fs.readFileSync(path.join(path.dirname(script), comment[1]), "utf8")) : null
        );
      }
      const consumer = consumers.get(f.url);
      if (consumer) {
        const p = consumer.originalPositionFor({ line: f.lineNumber + 1, column: f.columnNumber });
        if (p.source) key = `${p.name || f.functionName} ${p.source}:${p.line}`;
      }
    }
    self.set(key, (self.get(key) || 0) + (node.hitCount || 0));
  }
  const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, 10);
  for (const [key, hits] of rows) console.log(`${String(hits).padStart(8)}  ${key}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
