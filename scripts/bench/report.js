#!/usr/bin/env node
// Markdown tables for scripts/bench.sh, from hyperfine's JSON exports and /usr/bin/time's peak RSS.
//
//   node scripts/bench/report.js table ROWS_FILE      one table per group (rows written by scripts/bench/lib.sh)
//   node scripts/bench/report.js criterion DIR MARKER criterion's estimates newer than MARKER, under DIR
//
// ROWS_FILE: one tab-separated line per command: id, label, input path, input bytes, base (1 = the cpuprof row the
// other rows on the same input are compared with), status (ok | failed | skipped), note, command. For an ok row,
// ID.json (hyperfine --export-json) and ID.rss (lines "wall_s maxrss_kib" appended by /usr/bin/time -f '%e %M',
// one per run, warm-up included) sit next to ROWS_FILE.
//
// Columns: wall time mean ± σ over the timed runs (hyperfine); MB/s = input bytes / mean; peak RSS = the largest
// over all runs; ratios = this row / the cpuprof row on the same input (> 1× means cpuprof is faster or smaller).
// MB = 10^6 bytes.
'use strict';

const fs = require('fs');
const path = require('path');

const [mode, ...args] = process.argv.slice(2);

function fmtRatio(r) {
  if (!Number.isFinite(r)) return '–';
  if (r >= 100) return `${r.toFixed(0)}×`;
  if (r >= 10) return `${r.toFixed(1)}×`;
  return `${r.toFixed(2)}×`;
}

function fmtSeconds(s) {
  if (s >= 100) return s.toFixed(1);
  if (s >= 0.1) return s.toFixed(2);
  return s.toFixed(3);
}

function table(rowsFile) {
  const dir = path.dirname(rowsFile);
  const rows = fs.readFileSync(rowsFile, 'utf8').split('\n').filter(Boolean).map((line) => {
    const [id, label, input, bytes, base, status, note, command] = line.split('\t');
    const row = { id, label, input, bytes: Number(bytes), base: base === '1', status, note, command };
    if (status === 'ok' || status === 'timeout') {
      const timed = fs.readFileSync(path.join(dir, `${id}.rss`), 'utf8').split('\n')
        .map((l) => /^(\d+(?:\.\d+)?) (\d+)$/.exec(l.trim())).filter(Boolean);
      row.rssMb = timed.length ? (Math.max(...timed.map((m) => Number(m[2]))) * 1024) / 1e6 : NaN;
      if (status === 'ok') {
        const result = JSON.parse(fs.readFileSync(path.join(dir, `${id}.json`), 'utf8')).results[0];
        row.mean = result.mean;
        row.sd = result.stddev;
        row.runs = result.times.length;
      } else {
        // killed by `timeout`: the wall time until then (/usr/bin/time's %e) is a lower bound
        row.mean = timed.length ? Number(timed[timed.length - 1][1]) : NaN;
        row.runs = 1;
      }
    }
    return row;
  });
  const baseOf = (row) => rows.find((r) => r.base && r.input === row.input && r.status === 'ok');
  const out = [];
  out.push('| tool | input | size MB | wall s (mean ± σ) | runs | MB/s | peak RSS MB | wall vs cpuprof | RSS vs cpuprof |');
  out.push('|---|---|---:|---:|---:|---:|---:|---:|---:|');
  const notes = [];
  for (const r of rows) {
    const sizeMb = (r.bytes / 1e6).toFixed(r.bytes < 1e8 ? 1 : 0);
    const input = path.basename(r.input);
    const label = r.base ? `**${r.label}**` : r.label;
    const mark = () => '¹²³⁴⁵⁶⁷⁸⁹'[notes.length - 1] || '*';
    const b = baseOf(r);
    if (r.status === 'timeout') {
      notes.push(`${r.label}: ${r.note}`);
      const mbs = r.bytes / 1e6 / r.mean;
      out.push([
        '', label, input, sizeMb, `> ${fmtSeconds(r.mean)} (timeout${mark()})`, 1, `< ${mbs >= 100 ? mbs.toFixed(0) : mbs.toFixed(2)}`,
        `≥ ${r.rssMb.toFixed(0)}`, b ? `> ${fmtRatio(r.mean / b.mean)}` : '–', b ? `≥ ${fmtRatio(r.rssMb / b.rssMb)}` : '–', '',
      ].join(' | ').trim());
      continue;
    }
    if (r.status !== 'ok') {
      notes.push(`${r.label}: ${r.status}: ${r.note}`);
      out.push(`| ${label} | ${input} | ${sizeMb} | ${r.status}${mark()} | | | | | |`);
      continue;
    }
    const wall = `${fmtSeconds(r.mean)} ± ${r.sd == null ? '–' : fmtSeconds(r.sd)}`;
    const mbs = r.bytes / 1e6 / r.mean;
    out.push([
      '', label, input, sizeMb, r.base ? `**${wall}**` : wall, r.runs, mbs >= 100 ? mbs.toFixed(0) : mbs.toFixed(1),
      r.rssMb.toFixed(0), b ? fmtRatio(r.mean / b.mean) : '–', b ? fmtRatio(r.rssMb / b.rssMb) : '–', '',
    ].join(' | ').trim());
  }
  if (notes.length) {
    out.push('');
    notes.forEach((n, i) => out.push(`${'¹²³⁴⁵⁶⁷⁸⁹'[i] || '*'} ${n}`));
  }
  out.push('');
  out.push('Commands (as timed; each wrapped in `/usr/bin/time -f \'%e %M\' -a -o ID.rss`):');
  out.push('');
  for (const r of rows) if (r.command) out.push(`- ${r.label}: \`${r.command}\``);
  console.log(out.join('\n'));
}

// criterion writes DIR/<group>/<bench>/new/{benchmark,estimates}.json; report those written after MARKER.
function criterion(dir, marker) {
  const since = fs.statSync(marker).mtimeMs;
  const found = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === 'estimates.json' && path.basename(d) === 'new' && fs.statSync(p).mtimeMs >= since) found.push(d);
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  const out = ['| benchmark | time per iteration (95% CI low / mean / high) | throughput (mean) |', '|---|---:|---:|'];
  const fmt = (ns) => (ns >= 1e9 ? `${(ns / 1e9).toFixed(3)} s` : ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(2)} µs`);
  for (const d of found.sort()) {
    const bench = JSON.parse(fs.readFileSync(path.join(d, 'benchmark.json'), 'utf8'));
    const est = JSON.parse(fs.readFileSync(path.join(d, 'estimates.json'), 'utf8')).mean;
    const ci = est.confidence_interval;
    let thr = '–';
    if (bench.throughput && bench.throughput.Bytes) thr = `${(bench.throughput.Bytes / 1e6 / (est.point_estimate / 1e9)).toFixed(0)} MB/s`;
    out.push(`| ${bench.full_id} | ${fmt(ci.lower_bound)} / **${fmt(est.point_estimate)}** / ${fmt(ci.upper_bound)} | ${thr} |`);
  }
  if (found.length === 0) out.push('| (no criterion results were written) | | |');
  console.log(out.join('\n'));
}

if (mode === 'table' && args.length === 1) table(args[0]);
else if (mode === 'criterion' && args.length === 2) criterion(args[0], args[1]);
else {
  process.stderr.write('usage: node scripts/bench/report.js table ROWS_FILE | criterion DIR MARKER\n');
  process.exit(2);
}
