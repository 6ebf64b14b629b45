// What both pages (a profile's and a comparison's) share: reaching elements, making them with
// text (never markup: names come from other people's code), and numbers as the terminal
// reports write them. Loaded before report.js or diff.js, in the same inline script.
/* exported $, make, formatNs, fact, codePointOrder */
"use strict";

const $ = (id) => document.getElementById(id);

/** An element with text (never markup) and an optional class. */
function make(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

/** A time in ns with the unit that keeps it short. */
function formatNs(ns) {
  const a = Math.abs(ns);
  if (a >= 60e9) return (ns / 60e9).toFixed(2) + " min";
  if (a >= 1e9) return (ns / 1e9).toFixed(2) + " s";
  if (a >= 1e6) return (ns / 1e6).toFixed(2) + " ms";
  if (a >= 1e3) return (ns / 1e3).toFixed(2) + " µs";
  return Math.round(ns) + " ns";
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
  const a = [...x];
  const b = [...y];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i].codePointAt(0) - b[i].codePointAt(0);
  }
  return a.length - b.length;
}
