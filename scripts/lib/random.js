// Seeded randomness shared by the generators (gen-cpuprofile.js, gen-ticklog.js): a mulberry32
// stream per purpose, so that one seed gives the same file every time.
'use strict';

function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function mix(seed, stream) {
  // splitmix-style 32-bit mixing of (seed, stream) into a stream seed
  let h = (Math.imul((seed >>> 0) ^ (Math.floor(seed / 4294967296) >>> 0), 0x9e3779b1) ^ Math.imul(stream, 0x85ebca6b)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

const int = (rng, lo, hi) => lo + Math.floor(rng() * (hi - lo + 1)); // inclusive
const pick = (rng, arr) => arr[Math.floor(rng() * arr.length)];

// Weighted sampler over a cumulative Float64Array.
function makeSampler(weights) {
  const cum = new Float64Array(weights.length);
  let s = 0;
  for (let i = 0; i < weights.length; i++) { s += weights[i]; cum[i] = s; }
  return (rng) => {
    const r = rng() * s;
    let lo = 0, hi = cum.length - 1;
    while (lo < hi) { const mid = (lo + hi) >>> 1; if (cum[mid] > r) hi = mid; else lo = mid + 1; }
    return lo;
  };
}

function shuffle(rng, arr) {
  for (let i = arr.length - 1; i > 0; i--) { const j = Math.floor(rng() * (i + 1)); const t = arr[i]; arr[i] = arr[j]; arr[j] = t; }
  return arr;
}

module.exports = { mulberry32, mix, int, pick, makeSampler, shuffle };
