#!/usr/bin/env bash
# One side-by-side run on a large synthetic .cpuprofile:
#   cpuprof top            (target/release/cpuprof top FILE -n 20 -o /dev/null)
#   serde_baseline         (a bare typed serde_json parse: crates/cpuprof-parse/examples/serde_baseline.rs)
#   node-aggregate.js      (readFileSync + JSON.parse + sum per function: what users do today)
# and prints wall time and peak RSS as a Markdown table.
#
#   scripts/bench-top.sh
#
# Environment:
#   BENCH_SIZE_MB  size of target/bench/big.cpuprofile in MB (10^6 bytes); default 500. Node cannot read files
#                  over ~536 MB with readFileSync(.., 'utf8'), so its row fails above that.
#   BENCH_SEED     generator seed; default 42.
#   BENCH_RUNS     timed runs of cpuprof and serde_baseline, the best (lowest wall) is reported; default 3.
#                  node-aggregate.js is timed once (it is slow).
#   BENCH_TIMER    auto (default: /usr/bin/time if present, else python3), time, or python.
#
# The page cache is warmed first (cat the file, one untimed run of each Rust tool), so the numbers are
# parse + compute, not disk. The input is generated once and reused while its stamp (size, seed, generator hash)
# matches. It lives under target/, never under fixtures/.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

size_mb=${BENCH_SIZE_MB:-500}
seed=${BENCH_SEED:-42}
runs=${BENCH_RUNS:-3}
timer=${BENCH_TIMER:-auto}
target_dir=${CARGO_TARGET_DIR:-target}
bench_dir=$target_dir/bench
file=$bench_dir/big.cpuprofile
mkdir -p "$bench_dir"

die() { echo "bench-top: $*" >&2; exit 1; }
note() { echo "bench-top: $*" >&2; }

case $timer in
  auto) if [[ -x /usr/bin/time ]]; then timer=time; else timer=python; fi ;;
  time | python) ;;
  *) die "BENCH_TIMER must be auto, time or python (got $timer)" ;;
esac
[[ $timer == time && ! -x /usr/bin/time ]] && die "/usr/bin/time not found; use BENCH_TIMER=python"
[[ $timer == python ]] && ! command -v python3 >/dev/null && die "python3 not found (needed without /usr/bin/time)"
command -v node >/dev/null || die "node not found"

# ---------------------------------------------------------------------------------------------------------------
# Input

target_bytes=$(awk -v m="$size_mb" 'BEGIN { printf "%d", m * 1000000 }')
stamp="size-mb=$size_mb seed=$seed gen=$(sha256sum scripts/gen-cpuprofile.js | cut -c1-16)"
file_bytes() { stat -c %s "$1"; }
if [[ -f $file && -f $file.stamp && $(cat "$file.stamp") == "$stamp" ]] &&
  (($(file_bytes "$file") <= target_bytes && $(file_bytes "$file") > target_bytes - 4096)); then
  note "reusing $file ($stamp)"
else
  note "generating $file ($stamp)"
  rm -f "$file" "$file.stamp"
  node scripts/gen-cpuprofile.js --out "$file.tmp" --size-mb "$size_mb" --seed "$seed"
  mv "$file.tmp" "$file"
  echo "$stamp" >"$file.stamp"
fi
bytes=$(file_bytes "$file")

# ---------------------------------------------------------------------------------------------------------------
# Builds (a failed build leaves that row out instead of stopping the run)

cpuprof_bin=$target_dir/release/cpuprof
serde_bin=$target_dir/release/examples/serde_baseline
have_cpuprof=1 have_serde=1
note "cargo build --release -p cpuprof-cli --bin cpuprof"
cargo build --release -p cpuprof-cli --bin cpuprof >&2 || { have_cpuprof=0; note "cpuprof did not build; its row is skipped"; }
note "cargo build --release -p cpuprof-parse --example serde_baseline"
cargo build --release -p cpuprof-parse --example serde_baseline >&2 ||
  { have_serde=0; note "serde_baseline did not build; its row is skipped"; }

cpuprof_cmd=("$cpuprof_bin" top "$file" -n 20 -o /dev/null)
serde_cmd=("$serde_bin" "$file")
node_cmd=(node scripts/node-aggregate.js "$file")

# ---------------------------------------------------------------------------------------------------------------
# Measurement: `measure NAME CMD...` runs CMD once, appends "wall_s maxrss_kib" to $bench_dir/NAME.times,
# keeps stdout in NAME.out and stderr in NAME.err. Returns CMD's exit status.

py_timer='
import resource, subprocess, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
rc = subprocess.call(cmd)
wall = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
with open(out, "w") as f:
    f.write(f"{wall:.3f} {rss}\n")
sys.exit(rc)
'

measure() {
  local name=$1
  shift
  local tf=$bench_dir/$name.timing rc=0
  if [[ $timer == time ]]; then
    /usr/bin/time -f '%e %M' -o "$tf" "$@" >"$bench_dir/$name.out" 2>"$bench_dir/$name.err" || rc=$?
  else
    python3 -c "$py_timer" "$tf" "$@" >"$bench_dir/$name.out" 2>"$bench_dir/$name.err" || rc=$?
  fi
  if ((rc != 0)); then
    # the first line that names an error (node prints the source line first), else the last line
    local why
    why=$(grep -m 1 -E '^[A-Za-z]*Error|error' "$bench_dir/$name.err" || tail -n 1 "$bench_dir/$name.err")
    echo "$name: exit $rc: ${why:-no message}" >>"$bench_dir/failures"
    note "$name failed (exit $rc): $why"
    return "$rc"
  fi
  tail -n 1 "$tf" >>"$bench_dir/$name.times"
}

# run_tool NAME WARMUP TIMED CMD...: prints "best_wall max_rss_kib", or "failed" if a run failed
run_tool() {
  local name=$1 warm=$2 timed=$3
  shift 3
  rm -f "$bench_dir/$name.times"
  local i
  for ((i = 0; i < warm + timed; i++)); do
    measure "$name" "$@" || { echo failed; return 0; }
    ((i < warm)) && rm -f "$bench_dir/$name.times"
  done
  # best wall of the timed runs; peak RSS = max over the timed runs
  awk 'NR == 1 || $1 < w { w = $1 } $2 > r { r = $2 } END { print w, r }' "$bench_dir/$name.times"
}

rm -f "$bench_dir/failures"
note "warming the page cache"
cat "$file" >/dev/null

results=()
if ((have_cpuprof)); then
  note "cpuprof top: 1 warm-up + $runs timed"
  results+=("cpuprof top|$(run_tool cpuprof 1 "$runs" "${cpuprof_cmd[@]}")|${cpuprof_cmd[*]}")
fi
if ((have_serde)); then
  note "serde_baseline: 1 warm-up + $runs timed"
  results+=("serde_json typed parse (serde_baseline)|$(run_tool serde_baseline 1 "$runs" "${serde_cmd[@]}")|${serde_cmd[*]}")
fi
note "node-aggregate.js: 1 timed run"
results+=("node JSON.parse + Map (node-aggregate.js)|$(run_tool node_aggregate 0 1 "${node_cmd[@]}")|${node_cmd[*]}")

# ---------------------------------------------------------------------------------------------------------------
# Report

mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }
cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
ram_gb=$(awk '/^MemTotal/ { printf "%.1f", $2 * 1024 / 1e9 }' /proc/meminfo 2>/dev/null || true)
timer_desc=$([[ $timer == time ]] && echo "/usr/bin/time -f '%e %M'" || echo "python3 (perf_counter, getrusage(RUSAGE_CHILDREN).ru_maxrss)")

echo "## cpuprof top vs baselines"
echo
echo "- machine: $(nproc) CPUs, ${cpu_model:-unknown CPU}, ${ram_gb:-?} GB RAM, $(uname -sr)"
echo "- tools: $(node --version 2>/dev/null) ($(command -v node)), $(rustc --version 2>/dev/null)"
echo "- input: \`$file\`: $bytes bytes ($(mb "$bytes") MB), generated by \`node scripts/gen-cpuprofile.js --out $file --size-mb $size_mb --seed $seed\`"
echo "- method: page cache warm; cpuprof and serde_baseline: 1 warm-up, best wall of $runs runs; node: 1 run;"
echo "  timer $timer_desc; MB = 10^6 bytes; peak RSS = max over the timed runs"
echo
echo "| tool | wall s | MB/s | peak RSS MB | RSS / file size | wall vs cpuprof | RSS vs cpuprof |"
echo "|---|---:|---:|---:|---:|---:|---:|"
base_wall="" base_rss=""
for r in "${results[@]}"; do
  IFS='|' read -r name res _ <<<"$r"
  if [[ $name == "cpuprof top" && $res != failed ]]; then read -r base_wall base_rss <<<"$res"; fi
done
for r in "${results[@]}"; do
  IFS='|' read -r name res _ <<<"$r"
  if [[ $res == failed ]]; then
    echo "| $name | failed¹ | | | | | |"
    continue
  fi
  read -r wall rss <<<"$res"
  awk -v n="$name" -v w="$wall" -v r="$rss" -v b="$bytes" -v bw="$base_wall" -v br="$base_rss" 'BEGIN {
    rss_b = r * 1024
    mbs = (w > 0) ? sprintf("%.0f", b / 1e6 / w) : "-"
    vw = (bw != "" && bw > 0) ? sprintf("%.1f×", w / bw) : "-"
    vr = (br != "" && br > 0) ? sprintf("%.1f×", r / br) : "-"
    printf "| %s | %.2f | %s | %.0f | %.2f | %s | %s |\n", n, w, mbs, rss_b / 1e6, rss_b / b, vw, vr
  }'
done
if [[ -s $bench_dir/failures ]]; then
  echo
  sed 's/^/¹ /' "$bench_dir/failures"
fi
echo
echo "Commands:"
echo
for r in "${results[@]}"; do
  IFS='|' read -r name _ cmd <<<"$r"
  echo "- $name: \`$cmd\`"
done
if [[ -s $bench_dir/serde_baseline.out ]]; then
  echo
  echo "serde_baseline output: $(tr '\n' ' ' <"$bench_dir/serde_baseline.out")"
fi
