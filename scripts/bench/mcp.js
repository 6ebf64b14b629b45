// The MCP server on a large profile, as an agent uses it: `load`, then `top` with every row (`all`) twice,
// then `callers` of the hottest function by its handle. Prints a Markdown table: each call's wall time
// (from the request to the answer, in the client), the answer's size and whether it kept to the budget.
// The first call reads the profile; the later ones answer from the session's cache.
//
//   node scripts/bench/mcp.js CPUPROF_BINARY PROFILE [RUNS]
//
// Needs the MCP SDK of tests/mcp (`npm ci` there).

'use strict';

const path = require('path');
const sdk = path.join(__dirname, '../../tests/mcp/node_modules/@modelcontextprotocol/sdk/dist/cjs');
const { Client } = require(path.join(sdk, 'client/index.js'));
const { StdioClientTransport } = require(path.join(sdk, 'client/stdio.js'));

const BUDGET = 8192;

async function main() {
  const [bin, profile, runsText] = process.argv.slice(2);
  if (!bin || !profile) {
    console.error('usage: node scripts/bench/mcp.js CPUPROF_BINARY PROFILE [RUNS]');
    process.exit(2);
  }
  const runs = Number(runsText ?? 5);
  const rows = [];
  for (let run = 0; run < runs; run += 1) {
    const client = new Client({ name: 'cpuprof-bench', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: bin, args: ['mcp'], stderr: 'ignore' }));
    const timed = async (label, name, args) => {
      const start = process.hrtime.bigint();
      const result = await client.callTool({ name, arguments: args });
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (result.isError) throw new Error(`${name}: ${result.content[0].text}`);
      const text = result.content[0].text;
      rows.push({ run, label, ms, bytes: Buffer.byteLength(text) });
      return text;
    };
    await timed('load (reads the profile)', 'load', { input: profile });
    const top = JSON.parse(await timed('top, all rows (cached)', 'top', { inputs: [profile], all: true }));
    await timed('top, all rows, again (cached)', 'top', { inputs: [profile], all: true });
    await timed('callers of the hottest function, by handle (cached)', 'callers', { pattern: top.rows[0].id, input: profile });
    await client.close();
  }
  const labels = [...new Set(rows.map((r) => r.label))];
  console.log(`| call (${runs} sessions) | wall ms (median) | min | max | answer bytes | within ${BUDGET} |`);
  console.log('|---|---:|---:|---:|---:|---|');
  for (const label of labels) {
    const these = rows.filter((r) => r.label === label);
    const ms = these.map((r) => r.ms).sort((a, b) => a - b);
    const median = ms[Math.floor(ms.length / 2)];
    const bytes = Math.max(...these.map((r) => r.bytes));
    const fmt = (v) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
    console.log(`| ${label} | ${fmt(median)} | ${fmt(ms[0])} | ${fmt(ms[ms.length - 1])} | ${bytes} | ${bytes <= BUDGET ? 'yes' : 'NO'} |`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
