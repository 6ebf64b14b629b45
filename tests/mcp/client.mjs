// The MCP server through a real client: the official TypeScript SDK spawns `cpuprof mcp`, lists
// its tools and calls each on the fixtures. The oracle is the command line: every tool's answer
// must equal the JSON `cpuprof <command> --format json` prints for the same options.
//
//   node tests/mcp/client.mjs CPUPROF_BINARY      (from the repository root; exit 0: all held)

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError, ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import readline from "node:readline";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const bin = process.argv[2];
assert.ok(bin, "usage: node tests/mcp/client.mjs CPUPROF_BINARY");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cpuprof-mcp-"));
const PACKAGES = "fixtures/cpuprofile/packages.cpuprofile";
const BLOCKS = "fixtures/cpuprofile/blocks.cpuprofile";
const PHASES = "fixtures/cpuprofile/phases.cpuprofile";
const TICKS = "fixtures/ticklog/blocks.log";
// Large enough that no answer below is cut (the budget has its own checks).
const WHOLE = 50_000_000;

/** The command line's output (stdout), as text. */
function cli(args) {
  const out = spawnSync(bin, args, { encoding: "utf8", env: { ...process.env, COLUMNS: "" }, maxBuffer: 1 << 28 });
  assert.equal(out.status, 0, `cpuprof ${args.join(" ")}: ${out.stderr}`);
  return out.stdout;
}

/** A server session. */
async function connect() {
  const transport = new StdioClientTransport({ command: bin, args: ["mcp"], stderr: "pipe" });
  const client = new Client({ name: "cpuprof-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** A tool's answer: its text, and whether it is an error. */
async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  assert.equal(result.content.length, 1, `${name}: one text block`);
  assert.equal(result.content[0].type, "text");
  return { text: result.content[0].text, isError: result.isError === true };
}

/** A tool's JSON answer (not an error). */
async function json(client, name, args) {
  const { text, isError } = await call(client, name, args);
  assert.equal(isError, false, `${name} ${JSON.stringify(args)}: ${text}`);
  return JSON.parse(text);
}

/** The protocol error a call must fail with. */
async function protocolError(client, name, args, pattern) {
  await assert.rejects(
    client.callTool({ name, arguments: args }),
    (e) => e instanceof McpError && e.code === ErrorCode.InvalidParams && pattern.test(e.message),
    `${name} ${JSON.stringify(args)} should be refused as invalid params matching ${pattern}`,
  );
}

const checks = [];
function check(name, fn) {
  checks.push([name, fn]);
}

let client;

check("the tools are the commands, with schemas made from their options", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, [
    "annotate", "blocks", "callees", "callers", "convert", "diff", "explain", "flamegraph", "jit", "load", "report", "timeline", "top", "tree",
  ]);
  const top = tools.find((t) => t.name === "top");
  const props = top.inputSchema.properties;
  assert.equal(top.inputSchema.type, "object");
  assert.deepEqual(props.by.enum, ["function", "file", "package", "line", "category"]);
  assert.equal(props.limit.type, "integer");
  assert.equal(props.include_idle.type, "boolean");
  assert.equal(props.inputs.type, "array");
  assert.ok(top.inputSchema.required.includes("inputs"));
  assert.equal(props.budget.type, "integer");
  // What the numbers mean is said.
  assert.match(top.description, /ns of CPU time/);
  // Every flag of `cpuprof top --help` (but the terminal's) is a property: one source of truth.
  const help = cli(["top", "--help"]);
  const flags = [...help.matchAll(/^\s+(?:-\w, )?--([a-z][a-z-]*)/gm)].map((m) => m[1].replaceAll("-", "_"));
  assert.ok(flags.length > 15, `top --help lists its options: ${flags}`);
  for (const flag of new Set(flags)) {
    if (["help", "wide"].includes(flag)) continue;
    assert.ok(flag in props, `top's schema lacks --${flag}`);
  }
  for (const tool of tools) {
    assert.equal(tool.inputSchema.additionalProperties, false, tool.name);
  }
  const load = tools.find((t) => t.name === "load");
  assert.deepEqual(load.inputSchema.required, ["input"]);
  assert.ok(!("by" in load.inputSchema.properties), "load takes how to read, not the report's options");
});

/** The values `--format` takes, as `cpuprof COMMAND -h` lists them (lines wrap anywhere). */
function helpFormats(command) {
  const help = cli([command, "-h"]).split(/\s+/).join(" ");
  const list = help.slice(help.indexOf("--format <FORMAT>")).match(/\[possible values: ([^\]]*)\]/);
  assert.ok(list, `${command} -h lists --format's values`);
  return list[1].split(", ");
}

check("each tool's formats are those its command's --help offers, but github", async () => {
  const { tools } = await client.listTools();
  let seen = 0;
  for (const tool of tools) {
    const format = tool.inputSchema.properties.format;
    if (!format || tool.name === "load") continue;
    const command = tool.name;
    // github appends to the file a CI job's $GITHUB_STEP_SUMMARY names: no call of a server does.
    assert.deepEqual(format.enum, helpFormats(command).filter((f) => f !== "github"), command);
    seen += 1;
  }
  assert.ok(seen >= 7, `tools with a format: ${seen}`);
  assert.ok(helpFormats("diff").includes("github"), "diff -h offers github");
  assert.ok(!tools.find((t) => t.name === "diff").inputSchema.properties.format.enum.includes("github"));
  // Asked for anyway, it is refused as invalid params that say which formats serve.
  await protocolError(client, "diff", { base: [PACKAGES], new: [PACKAGES], format: "github" }, /format github is for CI jobs/);
});

/** The warnings a command line said on stderr (after `cpuprof: warning: `), with its flags
 * named as the tools name their arguments (`--sample-type` → `sample_type`). */
function cliWarnings(args) {
  const out = spawnSync(bin, args, { encoding: "utf8", env: { ...process.env, COLUMNS: "" }, maxBuffer: 1 << 28 });
  return out.stderr
    .split("\n")
    .filter((l) => l.startsWith("cpuprof: warning: "))
    .map((l) => l.slice("cpuprof: warning: ".length).replace(/--([a-z][a-z-]*)/g, (_, flag) => flag.replaceAll("-", "_")));
}

check("every warning the command line says is in the answer, read again from the cache too", async () => {
  const pair = ["fixtures/diff/base.1.cpuprofile", "fixtures/diff/new.1.cpuprofile"];
  const diff = await json(client, "diff", { pair, budget: WHOLE });
  const said = cliWarnings(["diff", ...pair, "--format", "json"]);
  assert.ok(said.some((w) => w.startsWith("one run per side")), said.join("\n"));
  assert.deepEqual(diff.warnings, said);
  // The gate's verdict keeps them.
  const gated = await json(client, "diff", { pair, fail_on: ["self:+0%"], budget: WHOLE });
  assert.match(gated.gate, /regression/);
  assert.deepEqual(gated.warnings, said);
  // A reader's warning, on the first read and from the session's cache.
  const ignored = cliWarnings(["top", PACKAGES, "--sample-type", "cpu", "--format", "json"]);
  assert.equal(ignored.length, 1, ignored.join("\n"));
  for (let i = 0; i < 2; i++) {
    assert.deepEqual((await json(client, "top", { inputs: [PACKAGES], sample_type: "cpu", budget: WHOLE })).warnings, ignored);
  }
  // A budget cuts rows, never warnings.
  const cut = await json(client, "top", { inputs: [TICKS], all: true, profile: "1", budget: 2048 });
  assert.ok(cut.left_out.rows.rows > 0);
  assert.deepEqual(cut.warnings, cliWarnings(["top", TICKS, "--all", "--profile", "1", "--format", "json"]));
  // Answers without a JSON report: a written file's, load's, a text format's.
  const svg = path.join(tmp, "warned.svg");
  const wrote = await json(client, "flamegraph", { input: PACKAGES, output: svg, sample_type: "cpu" });
  assert.deepEqual(wrote.warnings, cliWarnings(["flamegraph", PACKAGES, "-o", path.join(tmp, "cli.svg"), "--sample-type", "cpu"]));
  assert.deepEqual((await json(client, "load", { input: PACKAGES, sample_type: "cpu" })).warnings, ignored);
  const table = await call(client, "top", { inputs: [PACKAGES], sample_type: "cpu", format: "table" });
  assert.ok(table.text.startsWith(`warning: ${ignored[0]}\n`), table.text);
});

// Each case: a tool, its arguments, and the command line that must print the same JSON.
const SAME_AS_CLI = [
  ["top", { inputs: [PACKAGES] }, ["top", PACKAGES]],
  ["top", { inputs: [PACKAGES], by: "package", limit: 3 }, ["top", PACKAGES, "--by", "package", "-n", "3"]],
  ["top", { inputs: [PACKAGES], from: "200ms", to: "60%", include_idle: true }, ["top", PACKAGES, "--from", "200ms", "--to", "60%", "--include-idle"]],
  ["top", { inputs: [TICKS], all: true }, ["top", TICKS, "--all"]],
  ["tree", { input: PACKAGES, bottom_up: true }, ["tree", PACKAGES, "--bottom-up"]],
  ["callers", { pattern: "renderRow", input: PACKAGES }, ["callers", "renderRow", PACKAGES]],
  ["callees", { pattern: "main", input: PACKAGES, depth: 2 }, ["callees", "main", PACKAGES, "--depth", "2"]],
  ["explain", { pattern: "fastHash", input: PACKAGES }, ["explain", "fastHash", PACKAGES]],
  ["annotate", { pattern: "fastHash", input: PACKAGES, context: 1 }, ["annotate", "fastHash", PACKAGES, "--context", "1"]],
  ["annotate", { input: PACKAGES, top: 2, full: true }, ["annotate", "--top", "2", PACKAGES, "--full"]],
  ["jit", { input: "fixtures/jit/jit.log.gz", limit: 3 }, ["jit", "fixtures/jit/jit.log.gz", "-n", "3"]],
  ["jit", { input: "fixtures/jit/jit.log.gz", pattern: "sumTo" }, ["jit", "fixtures/jit/jit.log.gz", "sumTo"]],
  [
    "diff",
    { base: ["fixtures/diff/base.1.cpuprofile", "fixtures/diff/base.2.cpuprofile"], new: ["fixtures/diff/new.1.cpuprofile", "fixtures/diff/new.2.cpuprofile"], explain: "3" },
    ["diff", "--base", "fixtures/diff/base.1.cpuprofile", "fixtures/diff/base.2.cpuprofile", "--new", "fixtures/diff/new.1.cpuprofile", "fixtures/diff/new.2.cpuprofile", "--explain", "3"],
  ],
  ["timeline", { input: PHASES, buckets: 20 }, ["timeline", PHASES, "--buckets", "20"]],
  ["blocks", { input: BLOCKS, min: "20ms" }, ["blocks", BLOCKS, "--min", "20ms"]],
  ["blocks", { input: TICKS, phase: "1" }, ["blocks", TICKS, "--phase", "1"]],
];

check("each tool answers what the command line prints", async () => {
  for (const [tool, args, argv] of SAME_AS_CLI) {
    const answer = await json(client, tool, { ...args, budget: WHOLE });
    const expected = JSON.parse(cli([...argv, "--format", "json"]));
    assert.deepEqual(answer, expected, `${tool} ${JSON.stringify(args)}`);
  }
});

check("answers are the same from the session's cache as from the first read", async () => {
  const first = await json(client, "top", { inputs: [BLOCKS], budget: WHOLE });
  const again = await json(client, "top", { inputs: [BLOCKS], budget: WHOLE });
  assert.deepEqual(again, first);
  // A changed file is read again: the cache knows files by path, size and time of change.
  const copy = path.join(tmp, "changing.cpuprofile");
  fs.copyFileSync(PACKAGES, copy);
  const before = await json(client, "top", { inputs: [copy], budget: WHOLE });
  fs.copyFileSync(BLOCKS, copy);
  const after = await json(client, "top", { inputs: [copy], budget: WHOLE });
  assert.notDeepEqual(after.rows, before.rows);
  assert.deepEqual(after.rows, JSON.parse(cli(["top", copy, "--format", "json"])).rows);
});

check("load returns a handle and the brief summary of `top --format brief`", async () => {
  const answer = await json(client, "load", { input: PACKAGES });
  assert.match(answer.profile, /^profile:[0-9a-f]{16}$/);
  assert.equal(answer.path, PACKAGES);
  const brief = cli(["top", PACKAGES, "--format", "brief"]);
  assert.equal(answer.summary, brief);
  assert.ok(brief.split("\n").length <= 41, "at most 40 lines");
  assert.match(brief, /categories: app/);
  assert.match(brief, /heaviest call paths/);
  const again = await json(client, "load", { input: PACKAGES });
  assert.equal(again.profile, answer.profile);
  // The handle stands for the path in every tool.
  assert.deepEqual(
    await json(client, "top", { inputs: [answer.profile], budget: WHOLE }),
    await json(client, "top", { inputs: [PACKAGES], budget: WHOLE }),
  );
  assert.deepEqual(
    await json(client, "callers", { pattern: "renderRow", input: answer.profile, budget: WHOLE }),
    JSON.parse(cli(["callers", "renderRow", PACKAGES, "--format", "json"])),
  );
  await protocolError(client, "top", { inputs: ["profile:0123456789abcdef"] }, /no profile of this session has that handle/);
});

check("function handles name a function in callers, callees and explain", async () => {
  const top = await json(client, "top", { inputs: [PACKAGES], budget: WHOLE });
  const row = top.rows.find((r) => r.name === "renderRow");
  assert.match(row.id, /^fn:[0-9a-f]{16}$/);
  for (const tool of ["callers", "callees", "explain"]) {
    const byHandle = await json(client, tool, { pattern: row.id, input: PACKAGES, budget: WHOLE });
    const byName = await json(client, tool, { pattern: "renderRow", input: PACKAGES, budget: WHOLE });
    assert.deepEqual(byHandle, byName, tool);
    assert.equal(byHandle.function.id, row.id);
  }
  // Handles are the function's, not the row's place: unique within the profile.
  const all = await json(client, "top", { inputs: [PACKAGES], all: true, budget: WHOLE });
  assert.equal(new Set(all.rows.map((r) => r.id)).size, all.rows.length);
});

check("handles are the same after a round trip through pprof and in another session", async () => {
  const pb = path.join(tmp, "packages.pb.gz");
  const wrote = await json(client, "convert", { input: PACKAGES, output: pb });
  assert.deepEqual(wrote.wrote, [pb]);
  const back = path.join(tmp, "packages.again.cpuprofile");
  await json(client, "convert", { input: pb, output: back });
  const ids = async (c, file) => (await json(c, "top", { inputs: [file], all: true, budget: WHOLE })).rows.map((r) => `${r.name} ${r.id}`).sort();
  const original = await ids(client, PACKAGES);
  assert.deepEqual(await ids(client, pb), original);
  assert.deepEqual(await ids(client, back), original);
  const other = await connect();
  try {
    assert.deepEqual(await ids(other, PACKAGES), original);
  } finally {
    await other.close();
  }
});

check("answers keep to the budget, whole rows left out with a count", async () => {
  const whole = await json(client, "top", { inputs: [TICKS], all: true, budget: WHOLE });
  assert.ok(JSON.stringify(whole).length > 4096, "the fixture's full answer is larger than the budget");
  for (const budget of [2048, 4096]) {
    const { text, isError } = await call(client, "top", { inputs: [TICKS], all: true, budget });
    assert.equal(isError, false);
    assert.ok(Buffer.byteLength(text) <= budget, `${Buffer.byteLength(text)} bytes > ${budget}`);
    const cut = JSON.parse(text);
    const left = cut.left_out.rows.rows;
    assert.ok(left > 0);
    assert.equal(cut.rows.length + left, whole.rows.length, "kept + left out = all rows");
    assert.deepEqual(cut.rows, whole.rows.slice(0, cut.rows.length), "the heaviest rows are kept, whole");
    assert.match(cut.left_out.note, /budget/);
  }
  // A smaller budget than the least is raised to it (2048 bytes): room for the report's head and some rows.
  const tiny = await call(client, "top", { inputs: [TICKS], all: true, budget: 100 });
  assert.ok(Buffer.byteLength(tiny.text) <= 2048, tiny.text);
  assert.ok(JSON.parse(tiny.text).rows.length > 0, tiny.text);
  // The default budget holds too.
  const { text } = await call(client, "top", { inputs: [TICKS], all: true });
  assert.ok(Buffer.byteLength(text) <= 8192);
  // An annotation loses its lightest lines first; the hottest stay, in line order.
  {
    const args = { input: "fixtures/cpuprofile/money.cpuprofile", pattern: "roundMoney", full: true };
    const whole = await json(client, "annotate", { ...args, budget: WHOLE });
    const { text } = await call(client, "annotate", { ...args, budget: 2048 });
    assert.ok(Buffer.byteLength(text) <= 2048, text);
    const cut = JSON.parse(text);
    assert.ok(cut.left_out.rows.lines > 0 && cut.lines.length > 0, text);
    const heaviest = [...whole.lines].sort((a, b) => b.self - a.self || a.line - b.line).slice(0, cut.lines.length);
    assert.deepEqual(cut.lines, whole.lines.filter((l) => heaviest.includes(l)));
  }
  // A tree loses its deepest nodes first: its upper levels stay.
  for (const [input, budget] of [[TICKS, 2048], [PACKAGES, 8192], ["fixtures/cpuprofile/deep-recursion.cpuprofile", 4096]]) {
    const tree = await call(client, "tree", { input, budget, min_percent: 0 });
    assert.ok(Buffer.byteLength(tree.text) <= budget, `${input}: ${Buffer.byteLength(tree.text)}`);
    const cut = JSON.parse(tree.text); // valid JSON however deep the tree
    assert.ok(cut.left_out.rows.children > 0, input);
    const whole = await json(client, "tree", { input, min_percent: 0, budget: WHOLE });
    // The heaviest roots stay, in order (all of them when the budget allows).
    assert.ok(cut.roots.length > 0, input);
    assert.deepEqual(cut.roots.map((r) => r.id), whole.roots.slice(0, cut.roots.length).map((r) => r.id));
    if (input !== TICKS) assert.equal(cut.roots.length, whole.roots.length, `${input}: every root is kept`);
  }
});

check("flamegraph and report write their file and say where", async () => {
  const svg = path.join(tmp, "flame.svg");
  assert.deepEqual((await json(client, "flamegraph", { input: PACKAGES, output: svg })).wrote, [svg]);
  assert.match(fs.readFileSync(svg, "utf8"), /<svg/);
  const html = path.join(tmp, "page.html");
  assert.deepEqual((await json(client, "report", { input: BLOCKS, output: html })).wrote, [html]);
  assert.match(fs.readFileSync(html, "utf8"), /^<!DOCTYPE html>/i);
  // Without an output, the flame graph goes beside the profile (as on a terminal).
  const copy = path.join(tmp, "beside.cpuprofile");
  fs.copyFileSync(PACKAGES, copy);
  assert.deepEqual((await json(client, "flamegraph", { input: copy })).wrote, [path.join(tmp, "beside.svg")]);
});

check("errors: a missing file and a refused write are tool errors, a bad option a protocol error", async () => {
  const missing = await call(client, "top", { inputs: [path.join(tmp, "no-such.cpuprofile")] });
  assert.equal(missing.isError, true);
  const error = JSON.parse(missing.text);
  assert.equal(error.exit_code, 1);
  assert.match(error.error, /cannot open .*no-such\.cpuprofile/);
  // Never over an input, however named.
  const copy = path.join(tmp, "input.cpuprofile");
  fs.copyFileSync(PACKAGES, copy);
  const link = path.join(tmp, "link.cpuprofile");
  fs.symlinkSync(copy, link);
  for (const output of [copy, link]) {
    const refused = await call(client, "convert", { input: copy, output, output_format: "cpuprofile" });
    assert.equal(refused.isError, true, output);
    assert.equal(JSON.parse(refused.text).exit_code, 2);
    assert.match(JSON.parse(refused.text).error, /refusing to write the output over the input/);
  }
  assert.deepEqual(fs.readFileSync(copy), fs.readFileSync(PACKAGES), "the input is untouched");
  // Standard input and output carry the session: neither is a profile nor an output file.
  const stdin = await call(client, "top", { inputs: ["-"] });
  assert.equal(stdin.isError, true);
  assert.match(JSON.parse(stdin.text).error, /standard input carries the MCP session/);
  const devStdin = await call(client, "top", { inputs: ["/dev/stdin"] });
  assert.equal(devStdin.isError, true);
  assert.match(JSON.parse(devStdin.text).error, /regular files only/);
  await protocolError(client, "convert", { input: PACKAGES, output: "-", output_format: "folded" }, /output: a file path/);
  const device = await call(client, "convert", { input: PACKAGES, output: "/dev/stdout", output_format: "folded" });
  assert.equal(device.isError, true);
  assert.match(JSON.parse(device.text).error, /regular files only/);
  await protocolError(client, "top", { inputs: [PACKAGES], by: "nope" }, /by: invalid value 'nope' \(expected one of function, file/);
  await protocolError(client, "top", { inputs: [PACKAGES], bogus: 1 }, /top takes no argument bogus/);
  // Scalars in the type the schema gives (as a command line's words are), or refused naming the argument.
  assert.deepEqual(
    await json(client, "top", { inputs: PACKAGES, limit: "3", include_idle: "true", budget: WHOLE }),
    JSON.parse(cli(["top", PACKAGES, "-n", "3", "--include-idle", "--format", "json"])),
  );
  await protocolError(client, "top", { inputs: [PACKAGES], limit: "many" }, /limit: expected a whole number/);
  await protocolError(client, "diff", { pair: [PACKAGES, PACKAGES], flamegraph: "-" }, /flamegraph: a file path/);
  // Usage errors come before an output is claimed (as on the command line).
  const usage = await call(client, "flamegraph", { input: PACKAGES, width: 5, output: path.join(tmp, "no-such-dir", "f.svg") });
  assert.equal(JSON.parse(usage.text).exit_code, 2, usage.text);
  assert.match(JSON.parse(usage.text).error, /^width 5/);
  await protocolError(client, "top", {}, /required/);
  await protocolError(client, "no_such_tool", {}, /no tool named no_such_tool/);
  const between = await call(client, "top", { inputs: [PACKAGES], between: ["main", "renderRow", "other.cpuprofile"] });
  assert.equal(between.isError, true);
  assert.equal(JSON.parse(between.text).exit_code, 2);
  assert.match(JSON.parse(between.text).error, /^between: expected 2 patterns/);
  await protocolError(client, "load", { input: PACKAGES, format: "json" }, /load takes no argument format/);
  // A null is an argument left out.
  assert.deepEqual(
    await json(client, "top", { inputs: [PACKAGES], limit: null, budget: WHOLE }),
    JSON.parse(cli(["top", PACKAGES, "--format", "json"])),
  );
  // No call writes where none was named: the GitHub format appends to $GITHUB_STEP_SUMMARY.
  await protocolError(client, "diff", { pair: ["fixtures/diff/base.1.cpuprofile", "fixtures/diff/new.1.cpuprofile"], format: "github" }, /format github/);
  // The session goes on after errors.
  assert.ok((await json(client, "top", { inputs: [PACKAGES] })).rows.length > 0);
});

/** The peak memory (kB) of a finished process, as GNU time reports it, and its time (s). */
function cliCost(args) {
  const started = process.hrtime.bigint();
  const out = spawnSync("/usr/bin/time", ["-f", "%M", bin, ...args], { encoding: "utf8", maxBuffer: 1 << 30 });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  assert.equal(out.status, 0, `cpuprof ${args.join(" ")}: ${out.stderr}`);
  return { seconds, kb: Number(out.stderr.trim().split("\n").at(-1)), bytes: Buffer.byteLength(out.stdout) };
}

/** A process's peak memory so far (kB). */
function peakKb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+)/.exec(status)[1]);
}

check("adversarial shapes answer within the budget for no more than the command line's time and memory", async () => {
  // A 20,000-deep chain (folded), a 100,000-deep .cpuprofile, a function with 100,000 callers
  // (callers of the hub, and its bottom-up tree: megabytes of JSON on the command line).
  const chain = path.join(tmp, "chain.folded");
  fs.writeFileSync(chain, `${Array.from({ length: 20_000 }, (_, i) => `f${i}`).join(";")} 10\n`);
  const deep = path.join(tmp, "deep.cpuprofile");
  const n = 100_000;
  const nodes = Array.from({ length: n }, (_, i) => ({
    id: i + 1,
    callFrame: { functionName: `f${i}`, scriptId: "1", url: "file:///a.js", lineNumber: i, columnNumber: 0 },
    hitCount: i + 1 === n ? 5 : 0,
    children: i + 1 < n ? [i + 2] : [],
  }));
  fs.writeFileSync(deep, JSON.stringify({ nodes, startTime: 0, endTime: 5000, samples: Array(5).fill(n), timeDeltas: Array(5).fill(1000) }));
  const fan = path.join(tmp, "fan.folded");
  fs.writeFileSync(fan, Array.from({ length: 100_000 }, (_, i) => `main;caller${i};hub ${1 + (i % 7)}\n`).join(""));
  const cases = [
    ["tree", { input: chain }, ["tree", chain]],
    ["tree", { input: deep }, ["tree", deep]],
    ["callers", { pattern: "hub", input: fan }, ["callers", "hub", fan]],
    ["tree", { input: fan, bottom_up: true, min_percent: 0 }, ["tree", fan, "--bottom-up", "--min-percent", "0"]],
  ];
  for (const [tool, args, argv] of cases) {
    const cost = cliCost([...argv, "--format", "json"]);
    assert.ok(cost.bytes > 8192, `${argv.join(" ")}: the whole answer (${cost.bytes} bytes) is over the budget`);
    // A session of its own, so that its peak is this call's.
    const transport = new StdioClientTransport({ command: bin, args: ["mcp"], stderr: "pipe" });
    const session = new Client({ name: "cpuprof-test", version: "1.0.0" });
    await session.connect(transport);
    try {
      const started = process.hrtime.bigint();
      const result = await session.callTool({ name: tool, arguments: args }, undefined, { timeout: 600_000 });
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const text = result.content[0].text;
      assert.equal(result.isError === true, false, text);
      assert.ok(Buffer.byteLength(text) <= 8192, `${tool}: ${Buffer.byteLength(text)} bytes`);
      const answer = JSON.parse(text);
      assert.ok(Object.values(answer.left_out.rows).reduce((a, b) => a + b, 0) > 0, text);
      const kb = peakKb(transport.pid);
      const what = `${tool} ${JSON.stringify(args)}: MCP ${seconds.toFixed(2)} s ${kb} kB, CLI ${cost.seconds.toFixed(2)} s ${cost.kb} kB`;
      // Twice the command line's, and a little for a loaded machine's noise and the server's own.
      assert.ok(seconds <= 2 * cost.seconds + 1, what);
      assert.ok(kb <= 2 * cost.kb + 16_384, what);
    } finally {
      await session.close();
    }
  }
});

/** A session spoken by hand (the SDK sends only well-formed messages): `send` a line, `next` answer. */
async function rawSession() {
  const child = spawn(bin, ["mcp"], { stdio: ["pipe", "pipe", "ignore"] });
  const lines = readline.createInterface({ input: child.stdout });
  const waiting = [];
  const queued = [];
  lines.on("line", (l) => (waiting.length ? waiting.shift()(l) : queued.push(l)));
  const next = (ms = 30_000) =>
    new Promise((resolve, reject) => {
      if (queued.length) return resolve(JSON.parse(queued.shift()));
      const timer = setTimeout(() => reject(new Error("no answer")), ms);
      waiting.push((l) => { clearTimeout(timer); resolve(JSON.parse(l)); });
    });
  const send = (line) => child.stdin.write(`${typeof line === "string" ? line : JSON.stringify(line)}\n`);
  const exited = new Promise((resolve) => child.on("exit", resolve));
  send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
  await next();
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return { child, send, next, exited };
}

/** A process's CPU time so far (s). */
function cpuSeconds(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

check("protocol edges are answered as JSON-RPC says, and the session goes on", async () => {
  const s = await rawSession();
  try {
    const cases = [
      ["{not json}", -32700, null],
      ["[]", -32600, null],
      [JSON.stringify([{ jsonrpc: "2.0", id: 9, method: "ping" }]), -32600, null],
      ['{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}', -32700, null],
      ['{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', -32600, null],
      ['{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[1,2]}', -32602, 5],
      [`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"top","arguments":{"inputs":["${"a".repeat(17 << 20)}"]}}}`, -32600, null],
    ];
    for (const [line, code, id] of cases) {
      s.send(line);
      const answer = await s.next();
      assert.equal(answer.error?.code, code, `${line.slice(0, 80)}: ${JSON.stringify(answer)}`);
      assert.ok("id" in answer && answer.id === id, `${line.slice(0, 80)}: ${JSON.stringify(answer)}`);
    }
    s.send({ jsonrpc: "2.0", id: 7, method: "tools/list" });
    assert.ok((await s.next()).result.tools.length > 5);
  } finally {
    s.child.kill();
  }
});

/** A folded file the debug build takes seconds to read. */
function slowInput() {
  const file = path.join(tmp, "slow.folded");
  if (!fs.existsSync(file)) {
    fs.writeFileSync(file, Array.from({ length: 600_000 }, (_, i) => `main;caller${i % 50_000};f${i} 1\n`).join(""));
  }
  return file;
}

check("a call in progress stops when the client cancels it or closes the session", async () => {
  const input = slowInput();
  // Cancelled: the server stops working on it and answers the next call at once.
  const transport = new StdioClientTransport({ command: bin, args: ["mcp"], stderr: "pipe" });
  const session = new Client({ name: "cpuprof-test", version: "1.0.0" });
  await session.connect(transport);
  try {
    const abort = new AbortController();
    const call = session.callTool({ name: "top", arguments: { inputs: [input] } }, undefined, { signal: abort.signal });
    await new Promise((r) => setTimeout(r, 300));
    abort.abort();
    await assert.rejects(call);
    await new Promise((r) => setTimeout(r, 500));
    const before = cpuSeconds(transport.pid);
    await new Promise((r) => setTimeout(r, 1000));
    assert.ok(cpuSeconds(transport.pid) - before < 0.3, "the cancelled call still runs");
    assert.ok((await session.listTools()).tools.length > 5);
  } finally {
    await session.close();
  }
  // Standard input closed during a call: the server ends within moments, not when the call would have.
  const s = await rawSession();
  s.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "top", arguments: { inputs: [input] } } });
  await new Promise((r) => setTimeout(r, 300));
  const closed = Date.now();
  s.child.stdin.end();
  const timer = setTimeout(() => s.child.kill("SIGKILL"), 10_000);
  const code = await s.exited;
  clearTimeout(timer);
  assert.equal(code, 0, "the server ended by itself");
  assert.ok(Date.now() - closed < 3000, `ended ${Date.now() - closed} ms after its input closed`);
});

check("handles: a file changed since load is refused; a flame graph of a handle goes beside the profile", async () => {
  const copy = path.join(tmp, "handled.cpuprofile");
  fs.copyFileSync(PACKAGES, copy);
  const { profile } = await json(client, "load", { input: copy });
  const wrote = await json(client, "flamegraph", { input: profile });
  assert.deepEqual(wrote.wrote, [path.join(tmp, "handled.svg")]);
  assert.match(fs.readFileSync(path.join(tmp, "handled.svg"), "utf8"), /<svg/);
  // A new file under the old handle is never read as if it were the loaded one.
  fs.copyFileSync(BLOCKS, copy);
  await protocolError(client, "top", { inputs: [profile] }, /changed since load/);
  await protocolError(client, "diff", { pair: [profile, copy] }, /changed since load/);
  const again = await json(client, "load", { input: copy });
  assert.notEqual(again.profile, profile);
  assert.deepEqual(
    (await json(client, "top", { inputs: [again.profile], budget: WHOLE })).rows,
    JSON.parse(cli(["top", copy, "--format", "json"])).rows,
  );
});

check("a report written to a file is answered with its path and beginning; errors keep to the budget", async () => {
  const out = path.join(tmp, "top.csv");
  const answer = await json(client, "top", { inputs: [PACKAGES], output: out, format: "csv" });
  assert.deepEqual(answer.wrote, [out]);
  assert.equal(answer.bytes[0], fs.statSync(out).size);
  assert.ok(answer.summary.length > 0 && fs.readFileSync(out, "utf8").startsWith(answer.summary), answer.summary);
  const long = path.join(tmp, `${"x".repeat(200)}/`.repeat(20), "missing.cpuprofile");
  const refused = await call(client, "top", { inputs: [long], budget: 2048 });
  assert.equal(refused.isError, true);
  assert.ok(Buffer.byteLength(refused.text) <= 2048, `${Buffer.byteLength(refused.text)} bytes`);
  assert.equal(JSON.parse(refused.text).exit_code, 1);
});

check("the file opened is checked, not the path: a link flipped to standard input is never read", async () => {
  const target = path.join(tmp, "flip-target.cpuprofile");
  fs.copyFileSync(PACKAGES, target);
  const link = path.join(tmp, "flip.cpuprofile");
  fs.symlinkSync(target, link);
  const flipper = spawn("bash", ["-c", `while :; do ln -sfn /dev/stdin "$0"; ln -sfn "$1" "$0"; done`, link, target], { stdio: "ignore" });
  try {
    for (let i = 0; i < 60; i++) {
      const answer = await Promise.race([
        call(client, "top", { inputs: [link], limit: 1 }),
        new Promise((_, reject) => setTimeout(() => reject(new Error("no answer: the server read its own input")), 20_000)),
      ]);
      if (answer.isError) assert.match(JSON.parse(answer.text).error, /regular files only|cannot open|changed while it was read/, answer.text);
    }
  } finally {
    flipper.kill();
  }
});

client = await connect();
let failed = 0;
try {
  for (const [name, fn] of checks) {
    try {
      await fn();
      console.log(`ok - ${name}`);
    } catch (e) {
      failed += 1;
      console.log(`not ok - ${name}\n${e.stack}`);
    }
  }
} finally {
  await client.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
