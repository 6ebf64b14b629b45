#!/usr/bin/env bash
# The flame graph of a large synthetic .cpuprofile, side by side in one run:
#   cpuprof flamegraph FILE            (parse + fold + SVG, end to end)
#   cpuprof collapse FILE              (parse + fold, folded text)
#   inferno-flamegraph FILE.folded     (the SVG from the same folded stacks, by inferno's own CLI)
# and prints wall time and peak RSS as a Markdown table.
#
#   scripts/bench-flamegraph.sh
#
# Environment: BENCH_RUNS (timed runs, best reported; default 3). The input is
# target/bench/big.cpuprofile, made by scripts/bench-top.sh (500 MB, seed 42) if missing.
# inferno's CLI is installed under target/bench/inferno with `cargo install` when missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=${BENCH_RUNS:-3}
bench_dir=${CARGO_TARGET_DIR:-target}/bench
file=$bench_dir/big.cpuprofile
folded=$bench_dir/big.folded
inferno=$bench_dir/inferno/bin/inferno-flamegraph
note() { echo "bench-flamegraph: $*" >&2; }

[[ -x /usr/bin/time ]] || { note "/usr/bin/time is needed"; exit 1; }
if [[ ! -f $file ]]; then
  note "generating $file"
  mkdir -p "$bench_dir"
  node scripts/gen-cpuprofile.js --out "$file" --size-mb 500 --seed 42
fi
if [[ ! -x $inferno ]]; then
  note "installing inferno's CLI into $bench_dir/inferno"
  cargo install --quiet inferno --root "$bench_dir/inferno" >&2
fi
cargo build --release --quiet -p cpuprof-cli --bin cpuprof
cpuprof=${CARGO_TARGET_DIR:-target}/release/cpuprof
cat "$file" >/dev/null

# shellcheck source=scripts/lib/best.sh
source scripts/lib/best.sh

"$cpuprof" collapse "$file" -o "$folded"
"$cpuprof" flamegraph "$file" -o /dev/null
read -r fg_wall fg_rss < <(best "$runs" "$bench_dir" "$cpuprof" flamegraph "$file" -o /dev/null)
read -r co_wall co_rss < <(best "$runs" "$bench_dir" "$cpuprof" collapse "$file" -o /dev/null)
read -r in_wall in_rss < <(best "$runs" "$bench_dir" "$inferno" "$folded")
size_mb=$(awk -v b="$(stat -c %s "$file")" 'BEGIN { printf "%.0f", b / 1e6 }')
folded_mb=$(awk -v b="$(stat -c %s "$folded")" 'BEGIN { printf "%.1f", b / 1e6 }')
lines=$(wc -l <"$folded")

echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- cpuprof $(git rev-parse --short HEAD); $("$inferno" --version 2>/dev/null || echo inferno); best of $runs, page cache warm"
echo "- input: $file ($size_mb MB); its folded stacks: $lines lines, $folded_mb MB"
echo
echo "| tool | input | wall s | peak RSS MB |"
echo "|---|---|---:|---:|"
echo "| **cpuprof flamegraph** (parse + fold + SVG) | big.cpuprofile | **$fg_wall** | $((fg_rss / 1024)) |"
echo "| cpuprof collapse (parse + fold) | big.cpuprofile | $co_wall | $((co_rss / 1024)) |"
echo "| inferno-flamegraph (SVG only) | big.folded | $in_wall | $((in_rss / 1024)) |"
