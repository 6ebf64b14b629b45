// What both pages (a profile's and a comparison's) share: reaching elements, making them with
// text (never markup: names come from other people's code), and numbers as the terminal
// reports write them. Loaded before report.js or diff.js, in the same inline script.
/* exported $, make, formatNs, fact, codePointOrder, visible, named, isolated */
"use strict";

const $ = (id) => document.getElementById(id);

/** An element with text (never markup) and an optional class. */
function make(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

// What every text output of cpuprof writes as an escape (cpuprof-model's text::is_unsafe_to_show):
// controls, bidi overrides and isolates, zero-width and other invisible characters.
const UNSAFE = /[\p{Cc}\u00ad\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufffe\uffff\u{e0000}-\u{e007f}]|##\[/gu;
// A name longer than this is shown cut (a 5 MB name would take seconds to lay out); the data keeps it whole.
const NAME_MAX = 1000;

/**
 * `s` as the tables and SVG show it (cpuprof-render's text::visible): `\n`, `\t`, `\u{202e}`
 * for what would hide or reorder text, and `##[` as `#\x23[`; cut to NAME_MAX characters.
 */
function visible(s) {
  const text = String(s);
  const head = text.length > NAME_MAX ? text.slice(0, NAME_MAX) + "…" : text;
  return head.replace(UNSAFE, (c) => {
    if (c === "##[") return "#\\x23[";
    if (c === "\n") return "\\n";
    if (c === "\r") return "\\r";
    if (c === "\t") return "\\t";
    return "\\u{" + c.codePointAt(0).toString(16) + "}";
  });
}

/** A name from the profile as an element: shown `visible`, isolated (`<bdi>`) so that its direction cannot reorder the text around it. */
function isolated(s, cls) {
  return make("bdi", visible(s), cls);
}

/** An element holding one name, isolated. */
function named(tag, s, cls) {
  const e = make(tag, null, cls);
  e.append(isolated(s));
  return e;
}

/** The units of `formatNs`, from the smallest: their length in ns and their name. */
const NS_UNITS = [
  [1, "ns"],
  [1e3, "µs"],
  [1e6, "ms"],
  [1e9, "s"],
  [60e9, "min"],
  [3600e9, "h"],
];

/**
 * A time in ns with three significant digits, by the rule of cpuprof's tables (format_ns in
 * cpuprof-render's time.rs; a test runs both on the same values): "812 ns", "12.3 µs", "1.23 ms",
 * "457 ms", "2.35 s", "12.5 min", "1.50 h". The unit is the largest not longer than the rounded
 * duration (999.6 ms is "1.00 s"); halves round away from zero, in integers.
 */
function formatNs(ns) {
  const abs = Math.round(Math.abs(ns));
  const sign = ns < 0 && abs > 0 ? "-" : "";
  if (abs < 1000) return sign + abs + " ns";
  let unit = NS_UNITS.length - 1;
  while (NS_UNITS[unit][0] > abs) unit--;
  for (;;) {
    const length = NS_UNITS[unit][0];
    let decimals = abs < 10 * length ? 2 : abs < 100 * length ? 1 : 0;
    let rounded = roundHalfUp(abs, length / 10 ** decimals);
    if (decimals > 0 && rounded >= 1000) {
      decimals--;
      rounded = roundHalfUp(abs, length / 10 ** decimals);
    }
    const scale = 10 ** decimals;
    const next = NS_UNITS[unit + 1];
    if (next && rounded >= (next[0] / length) * scale) {
      unit++;
      continue;
    }
    const digits =
      decimals === 0
        ? String(rounded)
        : Math.floor(rounded / scale) + "." + String(rounded % scale).padStart(decimals, "0");
    return sign + digits + " " + NS_UNITS[unit][1];
  }

  /** `value / step` for integers, rounded half up. */
  function roundHalfUp(value, step) {
    const rest = value % step;
    return (value - rest) / step + (rest >= Math.ceil(step / 2) ? 1 : 0);
  }
}

/** One fact of the header (`#facts`): its name, its text, and its value for a script to read. */
function fact(name, text, value) {
  const div = make("div");
  div.dataset.fact = name;
  if (value !== undefined) div.dataset.value = String(value);
  div.append(make("dt", name), make("dd", text));
  $("facts").append(div);
}

/**
 * Strings in the order cpuprof sorts them (Rust compares UTF-8 bytes, which is code point order);
 * JavaScript's `<` compares UTF-16 units, which puts 😀 before ｘ.
 */
function codePointOrder(x, y) {
  if (x === y) return 0;
  // The first UTF-16 unit that differs (no copy of the strings: a name can be megabytes long).
  const n = Math.min(x.length, y.length);
  let i = 0;
  while (i < n && x.charCodeAt(i) === y.charCodeAt(i)) i++;
  if (i === n) return x.length - y.length;
  // Inside a surrogate pair, the pair's code point.
  const high = (c) => c >= 0xd800 && c <= 0xdbff;
  if (i > 0 && high(x.charCodeAt(i - 1))) i--;
  return x.codePointAt(i) - y.codePointAt(i);
}
