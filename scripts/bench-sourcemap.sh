#!/usr/bin/env bash
# `--source-maps` on a large bundle, side by side in one run:
#   cpuprof top FILE                   (no mapping: the base cost)
#   cpuprof top --source-maps FILE     (the same, every function mapped)
#   node scripts/bench/sourcemap-baseline.js FILE
#                                      (what a user's script does: Mozilla's source-map,
#                                       originalPositionFor per callFrame, hits summed)
# and prints wall time and peak RSS as a Markdown table.
#
#   scripts/bench-sourcemap.sh
#
# The input is generated under target/bench/sourcemap/ when missing: big.js (50,000 small
# functions, 6 MB), bundled and minified by the esbuild of fixtures/sourcemap (4.5 MB, one line,
# with a 15 MB map), and a .cpuprofile of node calling every function (50 µs interval, ~41,000
# functions sampled). Environment: BENCH_RUNS (timed runs, best reported; default 3).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=${BENCH_RUNS:-3}
dir=${CARGO_TARGET_DIR:-target}/bench/sourcemap
profile=$dir/big.cpuprofile
note() { echo "bench-sourcemap: $*" >&2; }

[[ -x /usr/bin/time ]] || { note "/usr/bin/time is needed"; exit 1; }
if [[ ! -x fixtures/sourcemap/node_modules/.bin/esbuild ]]; then
  note "installing fixtures/sourcemap's packages (esbuild, source-map)"
  (cd fixtures/sourcemap && npm ci --no-audit --no-fund --loglevel=error)
fi
if [[ ! -f $profile ]]; then
  note "generating $dir"
  mkdir -p "$dir"
  node -e '
    let s = "";
    for (let i = 0; i < 50000; i++)
      s += `export function fn${i}(a, b) {\n  let x = a + ${i};\n  for (let k = 0; k < b; k++) x = (x * 31 + k) | 0;\n  return x;\n}\n`;
    s += "export const all = [" + Array.from({ length: 50000 }, (_, i) => `fn${i}`).join(",") + "];\n";
    require("fs").writeFileSync(process.argv[1], s);
  ' "$dir/big.js"
  fixtures/sourcemap/node_modules/.bin/esbuild "$dir/big.js" --bundle --minify --sourcemap --format=cjs \
    --log-level=warning --outfile="$dir/big.min.js"
  echo 'const m = require("./big.min.js"); let s = 0; for (let r = 0; r < 60; r++) for (const f of m.all) s += f(r, 200); console.log(s);' \
    >"$dir/drive.js"
  (cd "$dir" && node --cpu-prof --cpu-prof-interval 50 --cpu-prof-name big.cpuprofile drive.js >/dev/null)
fi
cargo build --release --quiet -p cpuprof-cli --bin cpuprof
cpuprof=${CARGO_TARGET_DIR:-target}/release/cpuprof
cat "$profile" "$dir/big.min.js" "$dir/big.min.js.map" >/dev/null

# shellcheck source=scripts/lib/best.sh
source scripts/lib/best.sh

read -r plain_wall plain_rss < <(best "$runs" "$dir" "$cpuprof" top "$profile")
read -r maps_wall maps_rss < <(best "$runs" "$dir" "$cpuprof" top --source-maps "$profile")
mapped=$("$cpuprof" top --source-maps "$profile" 2>&1 >/dev/null | grep -o 'mapped [0-9]* of [0-9]*' || true)
read -r node_wall node_rss < <(best "$runs" "$dir" node scripts/bench/sourcemap-baseline.js "$profile")
mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1e6 }'; }

echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- cpuprof $(git rev-parse --short HEAD); node $(node --version); best of $runs, page cache warm"
echo "- input: $(mb "$profile") MB .cpuprofile of a $(mb "$dir/big.min.js") MB minified bundle with a $(mb "$dir/big.min.js.map") MB map; cpuprof $mapped JavaScript functions"
echo
echo "| command | wall | peak RSS |"
echo "|---|---:|---:|"
echo "| \`cpuprof top FILE\` | ${plain_wall} s | $((plain_rss / 1024)) MB |"
echo "| \`cpuprof top --source-maps FILE\` | ${maps_wall} s | $((maps_rss / 1024)) MB |"
echo "| \`node scripts/bench/sourcemap-baseline.js FILE\` (Mozilla source-map) | ${node_wall} s | $((node_rss / 1024)) MB |"
