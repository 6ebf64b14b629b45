#!/usr/bin/env bash
# `cpuprof diff` of two 500 MB .cpuprofiles beside one `cpuprof top` of the same file, runs
# interleaved (so the shared VM's slow and fast spells hit both alike); prints best and median
# wall time, CPU time (user + sys) and peak RSS as a Markdown table.
#
#   scripts/bench-diff.sh
#
# Environment: BENCH_RUNS (timed runs per command; default 5). The input is
# target/bench/big.cpuprofile (500 MB, seed 42), generated if missing; both sides of the diff
# are that file (a diff costs the same whatever the two files hold: the parses dominate).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=${BENCH_RUNS:-5}
bench_dir=${CARGO_TARGET_DIR:-target}/bench
file=$bench_dir/big.cpuprofile
note() { echo "bench-diff: $*" >&2; }

[[ -x /usr/bin/time ]] || { note "/usr/bin/time is needed"; exit 1; }
if [[ ! -f $file ]]; then
  note "generating $file"
  mkdir -p "$bench_dir"
  node scripts/gen-cpuprofile.js --out "$file" --size-mb 500 --seed 42
fi
cargo build --release --quiet -p cpuprof-cli --bin cpuprof
cpuprof=${CARGO_TARGET_DIR:-target}/release/cpuprof
cat "$file" >/dev/null

commands=("top $file -n 20" "diff $file $file -n 20")
for c in "${commands[@]}"; do : >"$bench_dir/diff-bench.${c%% *}"; done
for _ in $(seq "$runs"); do
  for c in "${commands[@]}"; do
    # shellcheck disable=SC2086 # the command line is split on purpose
    /usr/bin/time -f '%e %U %S %M' -a -o "$bench_dir/diff-bench.${c%% *}" "$cpuprof" $c -o /dev/null 2>/dev/null
  done
done
# "best median cpu_best cpu_median rss_mb" from lines of "wall user sys rss_kb"
stats() {
  local walls cpus
  walls=$(awk '{ print $1 }' "$1" | sort -n)
  cpus=$(awk '{ printf "%.2f\n", $2 + $3 }' "$1" | sort -n)
  pick() { awk -v k="$2" 'NR == k' <<<"$1"; }
  local middle=$(((runs + 1) / 2))
  echo "$(pick "$walls" 1) $(pick "$walls" $middle) $(pick "$cpus" 1) $(pick "$cpus" $middle)" \
    "$(awk '$4 > r { r = $4 } END { printf "%d", r / 1024 }' "$1")"
}
echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- cpuprof $(git rev-parse --short HEAD); $runs runs each, interleaved, page cache warm"
echo "- input: $file ($(awk -v b="$(stat -c %s "$file")" 'BEGIN { printf "%.0f", b / 1e6 }') MB), both sides of the diff"
echo
echo "| command | wall s best | wall s median | CPU s best | CPU s median | peak RSS MB |"
echo "|---|---:|---:|---:|---:|---:|"
for c in "${commands[@]}"; do
  read -r best median cpu_best cpu_median rss < <(stats "$bench_dir/diff-bench.${c%% *}")
  echo "| \`cpuprof ${c//$file/FILE}\` | $best | $median | $cpu_best | $cpu_median | $rss |"
done
