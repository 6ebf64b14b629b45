#!/usr/bin/env bash
# The benchmark suite (issue 7): cpuprof beside what users would otherwise run, in one run, as Markdown tables
# of wall time (hyperfine: mean ± σ) and peak RSS (/usr/bin/time), with ratios against cpuprof.
#
#   CARGO_TARGET_DIR=/work/target-bench bash scripts/bench.sh [--only GROUP[,GROUP...]] [--runs N] [--slow-runs N]
#                                                             [--peer-timeout S] [--no-install] [--no-build]
#
# Groups (all of them by default, in this order):
#   top         `cpuprof top` vs scripts/node-aggregate.js (readFileSync + JSON.parse + sum per function, the
#               NestJS-docs approach) vs a bare typed serde_json parse (crates/cpuprof-parse/examples/
#               serde_baseline.rs: the floor of a typed parse, no attribution) vs `profile-inspect cpu --top 20
#               --include-internals` (the closest Rust peer),
#               on the 500 MB .cpuprofile, and again on a 9.5 MB one: profile-inspect's time grows with
#               samples x stack depth x functions (~1.4 ms CPU per sample here), so it cannot finish the big file
#               (it is stopped after --peer-timeout seconds and its row gives lower bounds)
#   tree        `cpuprof tree` (top-down, --bottom-up), `callers`/`callees`/`explain` of the hottest function, beside
#               `cpuprof top` on the same 500 MB .cpuprofile (the call trees should cost about what top costs), and
#               `go tool pprof -top`/`-tree`/`-peek` on the same profile converted to pprof (conversion not timed)
#   time        `cpuprof timeline`, `blocks`, and `top` with a window (`--from 0`, which reads the samples' times) and
#               `top --phase steady`, beside plain `cpuprof top` on the same 500 MB .cpuprofile, and `diff --blocks`
#               beside `diff` of the two 500 MB profiles
#   report      `cpuprof report` (the HTML page) beside `cpuprof top` on the same 500 MB .cpuprofile, the page's size,
#               and its time to interactive in headless Chromium (scripts/bench/open-report.js; needs Chromium and
#               `npm ci` in tests/browser), beside `cpuprof diff --report` and `cpuprof diff` of the two 500 MB profiles
#   ticklog     `cpuprof top` vs `node --prof-process` on the 50M tick log; `cpuprof top` on the 1G log at three
#               levels of raw-stack diversity (gen-ticklog.js --diversity 0.1, 0.45, 1: ~17%, ~50% and ~95% of the
#               tick lines have a distinct raw stack; real node 20 logs have 16-85%), MB/s and peak RSS / file size;
#               and on a log of 5M code-creation lines and no ticks (memory = the live code map)
#   jit         `cpuprof jit` beside `cpuprof top` on the 1G log with 100k deopts (gen-ticklog.js --diversity 0.45
#               --deopts 100000: code-deopt lines, lower-tier ticks after them, re-optimizations), and `cpuprof top`
#               on the same log without deopts (--diversity 0.45 alone); issue 55: jit within 1.2× of top
#   flamegraph  `cpuprof flamegraph` from the .cpuprofile and from its folded stacks vs `inferno-flamegraph` on the
#               same folded file (the folded file is `cpuprof collapse` of the .cpuprofile, as in bench-flamegraph.sh)
#   diff        `cpuprof diff` of two 500 MB .cpuprofiles (seeds 42 and 43), beside `profile-inspect diff` (stopped
#               after --peer-timeout seconds)
#   merge       `cpuprof merge` of 100 runs of one program (9.5 MB .cpuprofiles: gen-cpuprofile.js --seed 42 --run
#               1..100) into pprof, on 1 thread and on all (RAYON_NUM_THREADS): how merging scales
#   mcp         `cpuprof mcp` driven by the MCP SDK (scripts/bench/mcp.js; needs `npm ci` in tests/mcp): `load` of the
#               500 MB .cpuprofile, then `top` with every row twice and `callers` by handle from the session's cache,
#               each answer's time and size (within the 8 KB budget)
#   criterion   in-process numbers: `cargo bench` (parse of the .cpuprofile and of the 1G log from memory; `top`,
#               and the walks of `blocks` and `timeline`, on the parsed profile), with the big inputs through
#               CPUPROF_BENCH_FILE / CPUPROF_BENCH_TICKLOG
#
# Options:
#   --only LIST       comma-separated groups to run (e.g. --only top,diff)
#   --runs N          timed runs of the fast commands (default 5, or $BENCH_RUNS), after 1 warm-up run
#   --slow-runs N     timed runs of node-aggregate.js (big profile) and node --prof-process, after 1 warm-up run
#                     (default 2, or $BENCH_SLOW_RUNS; they take ~35-45 s a run on the full inputs)
#   --peer-timeout S  profile-inspect runs once and is stopped after S seconds (default 300, or $BENCH_PEER_TIMEOUT)
#   --no-install      do not install missing tools (their rows are skipped)
#   --no-build        do not run cargo build; time the existing $CARGO_TARGET_DIR/release/cpuprof
#
# Environment:
#   BENCH_QUICK=1     small inputs (20 MB and 9.25 MB .cpuprofiles, 20M and 5M tick logs, 2000 deopts), 2 runs,
#                     slow commands once without warm-up, --peer-timeout 20: checks the script in a few minutes
#                     (node --prof-process alone needs ~30 s for any log: it reads node's symbols with nm)
#   CARGO_TARGET_DIR  build directory (default target); inputs go to $CARGO_TARGET_DIR/bench (never fixtures/),
#                     results to $CARGO_TARGET_DIR/bench/suite (suite-quick with BENCH_QUICK=1)
#   BENCH_TOOLS       where missing Rust tools are installed with `cargo install --locked --root`
#                     (default $CARGO_TARGET_DIR/tools; nothing is installed into ~/.cargo)
#
# Missing tools are installed: hyperfine with apt-get (as root; else `cargo install hyperfine`), inferno and
# profile-inspect with `cargo install --locked --root $BENCH_TOOLS`. A tool that cannot be installed or fails on
# the input gets a row that says so (with the error), and the suite goes on.
# Inputs are generated once by scripts/gen-cpuprofile.js and scripts/gen-ticklog.js and reused while their stamps
# match (same files and stamps as scripts/bench-top.sh and scripts/bench-ticklog.sh: see scripts/bench/inputs.sh).
# The report goes to stdout and to report.md in the results directory; progress to stderr.
# Exit status: 0 if every command that ran succeeded, 1 if one failed (its row says why), 2 on bad usage.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

note() { echo "bench: $*" >&2; }
die() { echo "bench: error: $*" >&2; exit 1; }
usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

all_groups=(top tree time report ticklog jit flamegraph diff merge mcp criterion)
quick=${BENCH_QUICK:-0}
[[ $quick == 0 || $quick == 1 ]] || { echo "bench: BENCH_QUICK must be 0 or 1 (got $quick)" >&2; exit 2; }
if ((quick)); then
  runs=${BENCH_RUNS:-2} slow_runs=${BENCH_SLOW_RUNS:-1} slow_warmup=0 peer_timeout=${BENCH_PEER_TIMEOUT:-20}
else
  runs=${BENCH_RUNS:-5} slow_runs=${BENCH_SLOW_RUNS:-2} slow_warmup=1 peer_timeout=${BENCH_PEER_TIMEOUT:-300}
fi
only="" install=1 build=1
while (($#)); do
  case $1 in
    --only) only=${2:?--only needs a value}; shift 2 ;;
    --only=*) only=${1#*=}; shift ;;
    --runs) runs=${2:?--runs needs a value}; shift 2 ;;
    --runs=*) runs=${1#*=}; shift ;;
    --slow-runs) slow_runs=${2:?--slow-runs needs a value}; shift 2 ;;
    --slow-runs=*) slow_runs=${1#*=}; shift ;;
    --peer-timeout) peer_timeout=${2:?--peer-timeout needs a value}; shift 2 ;;
    --peer-timeout=*) peer_timeout=${1#*=}; shift ;;
    --no-install) install=0; shift ;;
    --no-build) build=0; shift ;;
    -h | --help) usage ;;
    *) echo "bench: unknown argument: $1" >&2; usage ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "bench: --runs must be a positive integer (got $runs)" >&2; exit 2; }
[[ $slow_runs =~ ^[1-9][0-9]*$ ]] || { echo "bench: --slow-runs must be a positive integer (got $slow_runs)" >&2; exit 2; }
[[ $peer_timeout =~ ^[1-9][0-9]*$ ]] || { echo "bench: --peer-timeout must be a positive integer (got $peer_timeout)" >&2; exit 2; }
declare -A want=()
if [[ -z $only ]]; then
  for g in "${all_groups[@]}"; do want[$g]=1; done
else
  IFS=, read -r -a picked <<<"$only"
  for g in "${picked[@]}"; do
    [[ " ${all_groups[*]} " == *" $g "* ]] || { echo "bench: unknown group: $g (groups: ${all_groups[*]})" >&2; exit 2; }
    want[$g]=1
  done
fi
wants() { [[ -n ${want[$1]:-} ]]; }

if ((quick)); then
  profile_mb=20 big_log_size=20M small_log_size=5M peer_mb=9.25 code_lines=200000 merge_runs=10 jit_deopts=2000
else
  profile_mb=500 big_log_size=1G small_log_size=50M peer_mb=9.5 code_lines=5000000 merge_runs=100 jit_deopts=100000
fi
# gen-ticklog.js --diversity levels of the big tick logs: ~17%, ~50% and ~95% distinct raw stacks at 1G
diversities=(0.1 0.45 1)
# the jit group's logs: the middle level, with and without --deopts $jit_deopts
jit_diversity=0.45

target_dir=${CARGO_TARGET_DIR:-target}
bench_dir=$target_dir/bench
tools=${BENCH_TOOLS:-$target_dir/tools}
mkdir -p "$bench_dir" "$tools"
tools=$(cd "$tools" && pwd)
work=$bench_dir/suite
((quick)) && work=$bench_dir/suite-quick
mkdir -p "$work"
rm -f "$work"/*.rows
crit_ok=1
cpuprof=$target_dir/release/cpuprof

# shellcheck source=scripts/bench/inputs.sh
source scripts/bench/inputs.sh
# shellcheck source=scripts/bench/lib.sh
source scripts/bench/lib.sh

command -v node >/dev/null || die "node not found"
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (Debian package: time)"

# -----------------------------------------------------------------------------------------------------------------
# Tools

export PATH=$tools/bin:$PATH
if ! command -v hyperfine >/dev/null && ((install)); then
  if [[ $EUID -eq 0 ]] && command -v apt-get >/dev/null; then
    note "apt-get install -y hyperfine"
    apt-get install -y hyperfine >&2 || { apt-get update >&2 && apt-get install -y hyperfine >&2; } || true
  fi
  if ! command -v hyperfine >/dev/null; then
    note "cargo install hyperfine --locked --root $tools"
    cargo install hyperfine --locked --root "$tools" >&2 || true
  fi
fi
command -v hyperfine >/dev/null || die "hyperfine not found (apt-get install hyperfine, or cargo install hyperfine)"

# cargo_tool CRATE BIN: sets tool_bin to BIN under $tools (installed when missing), or tool_why to the reason it
# is not there.
cargo_tool() {
  local crate=$1 bin=$2 log=$work/install-$1.log
  tool_bin="" tool_why=""
  if [[ ! -x $tools/bin/$bin ]]; then
    if ((!install)); then
      tool_why="$bin is not installed under $tools (--no-install)"
      return 0
    fi
    note "cargo install $crate --locked --root $tools (log: $log)"
    if ! cargo install "$crate" --locked --root "$tools" >"$log" 2>&1; then
      tool_why="\`cargo install $crate --locked\` failed: $(grep -m 1 -E '^error' "$log" || tail -n 1 "$log")"
      return 0
    fi
  fi
  tool_bin=$tools/bin/$bin
}

inferno="" inferno_why=""
if wants flamegraph; then
  cargo_tool inferno inferno-flamegraph
  inferno=$tool_bin inferno_why=$tool_why
fi
profile_inspect="" profile_inspect_why=""
if wants top || wants diff; then
  cargo_tool profile-inspect profile-inspect
  profile_inspect=$tool_bin profile_inspect_why=$tool_why
fi

if ((build)); then
  note "cargo build --release -p cpuprof-cli --bin cpuprof (CARGO_TARGET_DIR=$target_dir)"
  cargo build --release -p cpuprof-cli --bin cpuprof >&2 || die "cargo build failed"
fi
[[ -x $cpuprof ]] || die "$cpuprof not found (build it, or drop --no-build)"
# The floor a bare typed serde_json parse sets (crates/cpuprof-parse/examples/serde_baseline.rs), for the top group.
serde_baseline=$target_dir/release/examples/serde_baseline serde_baseline_why=""
if wants top && ((build)); then
  note "cargo build --release -p cpuprof-parse --example serde_baseline"
  cargo build --release -p cpuprof-parse --example serde_baseline >&2 ||
    serde_baseline_why="\`cargo build --example serde_baseline\` failed"
fi
[[ -n $serde_baseline_why || -x $serde_baseline ]] || serde_baseline_why="$serde_baseline is not built (--no-build)"
# the commit the binary was built from (read right after the build: others may commit while the suite runs)
git_rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- crates Cargo.toml Cargo.lock 2>/dev/null || git_rev="$git_rev (+ uncommitted changes under crates/)"
((build)) || git_rev="$git_rev (--no-build: the binary may be older)"

# -----------------------------------------------------------------------------------------------------------------
# Inputs (each generated once; see scripts/bench/inputs.sh)

if ((profile_mb == 500)); then
  profile_a=$bench_dir/big.cpuprofile # the file of bench-top.sh, bench-flamegraph.sh and bench-diff.sh
else
  profile_a=$bench_dir/cpuprofile-${profile_mb}MB-seed42.cpuprofile
fi
profile_b=$bench_dir/cpuprofile-${profile_mb}MB-seed43.cpuprofile
folded=${profile_a%.cpuprofile}.folded
ticklog_dir=$bench_dir/cpuprof-bench
if wants top || wants tree || wants time || wants flamegraph || wants diff || wants criterion; then ensure_cpuprofile "$profile_a" "$profile_mb" 42; fi
if wants diff; then ensure_cpuprofile "$profile_b" "$profile_mb" 43; fi
profile_peer=$bench_dir/cpuprofile-${peer_mb}MB-seed42.cpuprofile
if wants top; then ensure_cpuprofile "$profile_peer" "$peer_mb" 42; fi
big_logs=() big_log="" small_log="" codes_log=""
if wants ticklog || wants criterion; then
  for d in "${diversities[@]}"; do big_logs+=("$(ensure_ticklog "$ticklog_dir" "$big_log_size" 1 "$d")"); done
  big_log=${big_logs[1]} # criterion's input: the middle level
fi
if wants ticklog; then
  small_log=$(ensure_ticklog "$ticklog_dir" "$small_log_size" 1)
  codes_log=$(ensure_codes_log "$ticklog_dir" "$code_lines")
fi
jit_log="" jit_plain_log=""
if wants jit; then
  jit_plain_log=$(ensure_ticklog "$ticklog_dir" "$big_log_size" 1 "$jit_diversity")
  jit_log=$(ensure_ticklog "$ticklog_dir" "$big_log_size" 1 "$jit_diversity" "$jit_deopts")
fi
if wants flamegraph; then ensure_folded "$cpuprof" "$profile_a" "$folded"; fi
merge_dir=$bench_dir/merge-runs-$merge_runs
merge_inputs=()
if wants merge; then
  for ((run = 1; run <= merge_runs; run++)); do
    merge_inputs+=("$merge_dir/run$run.cpuprofile")
    ensure_cpuprofile "$merge_dir/run$run.cpuprofile" 9.5 42 "$run"
  done
fi
# Write out what generating the inputs left dirty (GBs): the kernel's write-back would otherwise run during the
# first group's timings (one `top` run of 0.87 s among 0.42-0.46 s, seen after a fresh generation).
sync

# -----------------------------------------------------------------------------------------------------------------
# Report header

# samples_of FILE: the number of samples of a generated .cpuprofile (commas in its "samples" array + 1)
samples_of() { grep -o -P '"samples":\[[^\]]*' "$1" | tr -cd , | wc -c | awk '{ print $1 + 1 }'; }
mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf(b < 1e8 ? "%.1f" : "%.0f", b / 1e6) }'; }
cpu_model=$(lscpu 2>/dev/null | awk -F': *' '/^Model name/ { print $2; exit }')
ram_gb=$(awk '/^MemTotal/ { printf "%.1f", $2 * 1024 / 1e9 }' /proc/meminfo)
tool_version() { # cargo install --list prints "crate vX.Y.Z:"
  cargo install --list --root "$tools" 2>/dev/null | awk -v c="$1" '$1 == c { sub(":", "", $2); print $2 }'
}
{
  echo "# cpuprof benchmark suite"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')$( ((quick)) && echo ' — BENCH_QUICK=1 (small inputs)')"
  echo "- machine: $(nproc) vCPUs, ${cpu_model:-unknown CPU}, $ram_gb GB RAM, $(uname -sr); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- cpuprof $git_rev ($("$cpuprof" --version)), $(rustc --version 2>/dev/null)"
  echo "- node $(node --version); $(hyperfine --version)$([[ -n $inferno ]] && echo "; inferno $(tool_version inferno)")$([[ -n $profile_inspect ]] && echo "; profile-inspect $(tool_version profile-inspect)")"
  echo "- method: hyperfine --warmup 1 --runs $runs (node-aggregate.js on the big profile and node --prof-process:"
  echo "  --warmup $slow_warmup --runs $slow_runs; profile-inspect: 1 run, stopped after $peer_timeout s), page cache warm; peak RSS by"
  echo "  /usr/bin/time -f '%e %M' around every run (largest over the runs); MB = 10^6 bytes; ratios = tool / cpuprof on"
  echo "  the same input (wall: means; > 1× means cpuprof is faster or smaller)"
  echo "- inputs:"
  if [[ -f $profile_a ]]; then
    echo "  - \`$profile_a\` ($(mb "$profile_a") MB): \`node scripts/gen-cpuprofile.js --out FILE --size-mb $profile_mb --seed 42\`"
  fi
  if wants top; then
    echo "  - \`$profile_peer\` ($(mb "$profile_peer") MB): the same with \`--size-mb $peer_mb\` (for profile-inspect)"
  fi
  if wants diff; then
    echo "  - \`$profile_b\` ($(mb "$profile_b") MB): the same with \`--seed 43\`"
  fi
  if [[ -n $small_log ]]; then
    echo "  - \`$small_log\` ($(mb "$small_log") MB): \`node scripts/gen-ticklog.js --size $small_log_size --seed 1\`, $(grep -o -m 1 'distinct raw stacks.*' "$small_log.info")"
  fi
  for i in "${!big_logs[@]}"; do
    log=${big_logs[$i]}
    echo "  - \`$log\` ($(mb "$log") MB): \`node scripts/gen-ticklog.js --size $big_log_size --seed 1 --diversity ${diversities[$i]}\`, $(grep -o -m 1 'distinct raw stacks.*' "$log.info")"
  done
  if [[ -n $jit_plain_log && " ${big_logs[*]} " != *" $jit_plain_log "* ]]; then
    echo "  - \`$jit_plain_log\` ($(mb "$jit_plain_log") MB): \`node scripts/gen-ticklog.js --size $big_log_size --seed 1 --diversity $jit_diversity\`, $(grep -o -m 1 'distinct raw stacks.*' "$jit_plain_log.info")"
  fi
  if [[ -n $jit_log ]]; then
    echo "  - \`$jit_log\` ($(mb "$jit_log") MB): \`node scripts/gen-ticklog.js --size $big_log_size --seed 1 --diversity $jit_diversity --deopts $jit_deopts\`, $(grep -o -m 1 'distinct raw stacks.*' "$jit_log.info"); $(grep -o -m 1 'code-deopt [0-9]* lines.*' "$jit_log.info")"
  fi
  if [[ -n $codes_log ]]; then
    echo "  - \`$codes_log\` ($(mb "$codes_log") MB): \`node scripts/bench/gen-codes.js --count $code_lines\` (code-creation lines at distinct addresses, no ticks)"
  fi
  if wants merge; then
    echo "  - \`$merge_dir/run{1..$merge_runs}.cpuprofile\` ($(mb "${merge_inputs[0]}") MB each): \`node scripts/gen-cpuprofile.js --out FILE --size-mb 9.5 --seed 42 --run N\`"
  fi
  if wants flamegraph; then
    echo "  - \`$folded\` ($(mb "$folded") MB, $(wc -l <"$folded") lines): \`cpuprof collapse $(basename "$profile_a")\`"
  fi
} | tee "$work/report.md"

section() { printf '\n## %s\n\n' "$1" | tee -a "$work/report.md"; }
report_table() {
  if [[ -f $work/$1.rows ]]; then node scripts/bench/report.js table "$work/$1.rows" | tee -a "$work/report.md"; fi
}
# serde_baseline_row GROUP ID INPUT: the bare serde_json parse's row, or a skipped row
serde_baseline_row() {
  local label="serde_json typed parse (serde_baseline: parse only, no attribution)"
  if [[ -z $serde_baseline_why ]]; then
    measure "$1" "$2" 0 fast "$label" "$3" "$serde_baseline" "$3"
  else
    skip "$1" "$2" "$label" "$3" "$serde_baseline_why"
  fi
}
# profile_inspect_row GROUP ID LABEL INPUT SUBCOMMAND ARGS...: profile-inspect's row (one run, stopped after
# $peer_timeout s: its cost grows with samples x stack depth x functions, see BENCHMARKS.md), or a skipped row
profile_inspect_row() {
  local group=$1 id=$2 label=$3 input=$4
  shift 4
  if [[ -n $profile_inspect ]]; then
    measure "$group" "$id" 0 once "$label" "$input" "$profile_inspect" "$@"
  else
    skip "$group" "$id" "$label" "$input" "$profile_inspect_why"
  fi
}

# -----------------------------------------------------------------------------------------------------------------
# (a) top on the .cpuprofile; profile-inspect also on a profile small enough for it to finish

if wants top; then
  note "group top"
  measure top top-cpuprof 1 fast "cpuprof top" "$profile_a" "$cpuprof" top "$profile_a" -n 20 -o /dev/null
  measure top top-node 0 slow "node-aggregate.js (readFileSync + JSON.parse + Map)" "$profile_a" \
    node scripts/node-aggregate.js "$profile_a"
  serde_baseline_row top top-serde "$profile_a"
  profile_inspect_row top top-profile-inspect "profile-inspect cpu" "$profile_a" \
    cpu "$profile_a" --top 20 --include-internals --format text
  section "(a) top functions of a $(mb "$profile_a") MB .cpuprofile"
  report_table top

  note "group top (small profile, for profile-inspect)"
  measure top-small tops-cpuprof 1 fast "cpuprof top" "$profile_peer" "$cpuprof" top "$profile_peer" -n 20 -o /dev/null
  measure top-small tops-node 0 fast "node-aggregate.js (readFileSync + JSON.parse + Map)" "$profile_peer" \
    node scripts/node-aggregate.js "$profile_peer"
  serde_baseline_row top-small tops-serde "$profile_peer"
  profile_inspect_row top-small tops-profile-inspect "profile-inspect cpu" "$profile_peer" \
    cpu "$profile_peer" --top 20 --include-internals --format text
  section "(a′) the same on a $(mb "$profile_peer") MB .cpuprofile ($(samples_of "$profile_peer") samples), small enough for profile-inspect"
  report_table top-small
fi

# -----------------------------------------------------------------------------------------------------------------
# (a2) call trees: tree, callers, callees, beside top; go tool pprof's views of the same profile as pprof

if wants tree; then
  note "group tree"
  # The hottest function by self, named unambiguously (the generator reuses names across files).
  read -r hottest at < <("$cpuprof" top "$profile_a" -n 1 --format json | node -e \
    'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s).rows[0];console.log(r.name, `${r.name}@${r.file}:${r.line}`)})')
  pattern="^${hottest}\$"
  measure tree tree-top 1 fast "cpuprof top" "$profile_a" "$cpuprof" top "$profile_a" -n 20 -o /dev/null
  measure tree tree-td 0 fast "cpuprof tree" "$profile_a" "$cpuprof" tree "$profile_a" -o /dev/null
  measure tree tree-bu 0 fast "cpuprof tree --bottom-up" "$profile_a" "$cpuprof" tree "$profile_a" --bottom-up -o /dev/null
  measure tree tree-callers 0 fast "cpuprof callers $hottest" "$profile_a" "$cpuprof" callers "$at" "$profile_a" -o /dev/null
  measure tree tree-callees 0 fast "cpuprof callees $hottest" "$profile_a" "$cpuprof" callees "$at" "$profile_a" -o /dev/null
  measure tree tree-explain 0 fast "cpuprof explain $hottest --depth 3" "$profile_a" \
    "$cpuprof" explain "$at" "$profile_a" --depth 3 -o /dev/null
  if command -v go >/dev/null; then
    pprof_file=$work/tree.pb.gz
    "$cpuprof" convert "$profile_a" -o "$pprof_file"
    for view in top tree; do
      measure tree "tree-go-$view" 0 fast "go tool pprof -$view (on the converted pprof)" "$pprof_file" \
        go tool pprof "-$view" -nodecount=20 "$pprof_file"
    done
    measure tree tree-go-peek 0 fast "go tool pprof -peek $hottest (on the converted pprof)" "$pprof_file" \
      go tool pprof -peek "$pattern" "$pprof_file"
  else
    skip tree tree-go-top "go tool pprof" "$profile_a" "go is not installed (Debian: golang-go)"
  fi
  section "(a2) call trees of a $(mb "$profile_a") MB .cpuprofile, beside top (go tool pprof: a $(mb "$work/tree.pb.gz" 2>/dev/null || echo '?') MB pprof of it)"
  report_table tree
fi

# -----------------------------------------------------------------------------------------------------------------
# (a3) time: timeline, blocks and windows beside top (they read every sample's time, top does not need to)

if wants time; then
  note "group time"
  measure time time-top 1 fast "cpuprof top" "$profile_a" "$cpuprof" top "$profile_a" -n 20 -o /dev/null
  measure time time-from 0 fast "cpuprof top --from 0 (a window: reads the samples' times)" "$profile_a" \
    "$cpuprof" top "$profile_a" -n 20 --from 0 -o /dev/null
  measure time time-phase 0 fast "cpuprof top --phase steady" "$profile_a" "$cpuprof" top "$profile_a" -n 20 --phase steady -o /dev/null
  measure time time-timeline 0 fast "cpuprof timeline" "$profile_a" "$cpuprof" timeline "$profile_a" -o /dev/null
  measure time time-blocks 0 fast "cpuprof blocks" "$profile_a" "$cpuprof" blocks "$profile_a" -o /dev/null
  if wants diff; then
    ensure_cpuprofile "$profile_b" "$profile_mb" 43
    measure time time-diff 0 fast "cpuprof diff" "$profile_a" "$cpuprof" diff "$profile_a" "$profile_b" -o /dev/null
    measure time time-diff-blocks 0 fast "cpuprof diff --blocks" "$profile_a" "$cpuprof" diff "$profile_a" "$profile_b" --blocks -o /dev/null
  fi
  section "(a3) timeline, blocks and windows of a $(mb "$profile_a") MB .cpuprofile, beside top"
  report_table time
fi

# -----------------------------------------------------------------------------------------------------------------
# (a4) report: the HTML page beside top, its size, and how long it takes to open

if wants report; then
  note "group report"
  page=$work/report.html
  measure report report-top 1 fast "cpuprof top" "$profile_a" "$cpuprof" top "$profile_a" -n 20 -o /dev/null
  measure report report-page 0 fast "cpuprof report" "$profile_a" "$cpuprof" report "$profile_a" -o "$page"
  ensure_cpuprofile "$profile_b" "$profile_mb" 43
  measure report report-diff 0 fast "cpuprof diff" "$profile_a" "$cpuprof" diff "$profile_a" "$profile_b" -o /dev/null
  measure report report-diff-page 0 fast "cpuprof diff --report" "$profile_a" \
    "$cpuprof" diff "$profile_a" "$profile_b" -o /dev/null --report "$work/diff-report.html"
  section "(a4) the HTML report of a $(mb "$profile_a") MB .cpuprofile, beside top"
  report_table report
  {
    printf '\nPage: %s MB.' "$(mb "$page")"
    if [[ -f $work/diff-report.html ]]; then printf ' Diff page: %s MB.' "$(mb "$work/diff-report.html")"; fi
    if [[ -d tests/browser/node_modules/playwright-core ]] && { [[ -n ${CHROMIUM:-} ]] || command -v chromium >/dev/null; }; then
      printf ' Time to interactive in headless Chromium (navigation to the page drawn, 5 runs after a warm-up): %s\n' \
        "$(node scripts/bench/open-report.js "$page" 5)"
    else
      printf ' Time to interactive: skipped (no Chromium, or no npm ci in tests/browser)\n'
    fi
  } | tee -a "$work/report.md"
fi

# -----------------------------------------------------------------------------------------------------------------
# (b) tick logs

if wants ticklog; then
  note "group ticklog"
  measure ticklog tl-cpuprof-small 1 fast "cpuprof top" "$small_log" "$cpuprof" top "$small_log" -o /dev/null
  measure ticklog tl-node 0 slow "node --prof-process" "$small_log" node --prof-process "$small_log"
  for i in "${!big_logs[@]}"; do
    log=${big_logs[$i]}
    measure ticklog "tl-cpuprof-big-$i" 1 fast "cpuprof top (--diversity ${diversities[$i]}: $(grep -o -m 1 -P 'distinct raw stacks [0-9]+ \(\K[0-9.]+%' "$log.info") distinct raw stacks)" \
      "$log" "$cpuprof" top "$log" -o /dev/null
  done
  measure ticklog tl-cpuprof-codes 1 fast "cpuprof top ($code_lines code-creation lines, no ticks)" "$codes_log" \
    "$cpuprof" top "$codes_log" -o /dev/null
  section "(b) V8 tick logs (node --prof): $(mb "$small_log") MB, $(mb "$big_log") MB at three levels of raw-stack diversity, and code events only"
  report_table ticklog
  # peak_ratio ID FILE: the largest peak RSS of ID's runs over FILE's size
  peak_ratio() { awk -v b="$(stat -c %s "$2")" '{ if ($2 > m) m = $2 } END { printf "%.2f×", m * 1024 / b }' "$work/$1.rss"; }
  {
    printf '\nPeak RSS / file size:'
    for i in "${!big_logs[@]}"; do printf ' %s' "$(peak_ratio "tl-cpuprof-big-$i" "${big_logs[$i]}")"; done
    printf ' (the three %s logs); %s for the code-creation log.\n' "$big_log_size" "$(peak_ratio tl-cpuprof-codes "$codes_log")"
  } | tee -a "$work/report.md"

fi

# -----------------------------------------------------------------------------------------------------------------
# (b2) jit: what V8 did, beside top, on a tick log with deopts

if wants jit; then
  note "group jit"
  measure jit jit-top 1 fast "cpuprof top" "$jit_log" "$cpuprof" top "$jit_log" -o /dev/null
  measure jit jit-jit 0 fast "cpuprof jit" "$jit_log" "$cpuprof" jit "$jit_log" -o /dev/null
  measure jit jit-top-plain 1 fast "cpuprof top (the same log without deopts)" "$jit_plain_log" \
    "$cpuprof" top "$jit_plain_log" -o /dev/null
  section "(b2) cpuprof jit beside top on a $(mb "$jit_log") MB tick log with $jit_deopts deopts (issue 55: within 1.2×)"
  report_table jit
  if [[ -f $work/jit-top.json && -f $work/jit-jit.json ]]; then
    # medians: one slow run (page cache, write-back) moves a mean of 5 more than it moves the median
    node -e '
      const f = (p) => JSON.parse(require("fs").readFileSync(p, "utf8")).results[0];
      const [top, jit] = [f(process.argv[1]), f(process.argv[2])];
      const r = jit.median / top.median;
      console.log(`\nMedians: top ${top.median.toFixed(3)} s, jit ${jit.median.toFixed(3)} s: jit / top = ${r.toFixed(2)}× ` +
        `(${r <= 1.2 ? "within" : "above"} 1.2×).`)' "$work/jit-top.json" "$work/jit-jit.json" | tee -a "$work/report.md"
  fi
fi

# -----------------------------------------------------------------------------------------------------------------
# (c) flame graphs

if wants flamegraph; then
  note "group flamegraph"
  measure flamegraph fg-cpuprof 1 fast "cpuprof flamegraph (parse + fold + SVG)" "$profile_a" \
    "$cpuprof" flamegraph "$profile_a" -o /dev/null
  measure flamegraph fg-cpuprof-folded 1 fast "cpuprof flamegraph --input-format folded" "$folded" \
    "$cpuprof" flamegraph "$folded" --input-format folded -o /dev/null
  if [[ -n $inferno ]]; then
    measure flamegraph fg-inferno 0 fast "inferno-flamegraph" "$folded" "$inferno" "$folded"
  else
    skip flamegraph fg-inferno "inferno-flamegraph" "$folded" "$inferno_why"
  fi
  section "(c) flame graph SVG from a $(mb "$profile_a") MB .cpuprofile and from its folded stacks ($(mb "$folded") MB)"
  report_table flamegraph
fi

# -----------------------------------------------------------------------------------------------------------------
# (d) diff

if wants diff; then
  note "group diff"
  measure diff diff-cpuprof 1 fast "cpuprof diff" "$profile_a" "$cpuprof" diff "$profile_a" "$profile_b" -n 20 -o /dev/null
  profile_inspect_row diff diff-profile-inspect "profile-inspect diff" "$profile_a" diff "$profile_a" "$profile_b"
  section "(d) diff of two $(mb "$profile_a") MB .cpuprofiles (size = the first one; both are read)"
  report_table diff
fi

# -----------------------------------------------------------------------------------------------------------------
# (e) merge: how it scales with threads

if wants merge; then
  note "group merge"
  # The inputs by a glob in the command (100 paths would fill the report).
  merge_cmd='exec "$0" merge "$1"/run*.cpuprofile -o "$2"'
  measure merge merge-1 1 fast "cpuprof merge, 1 thread (RAYON_NUM_THREADS=1)" "${merge_inputs[0]}" \
    env RAYON_NUM_THREADS=1 bash -c "$merge_cmd" "$cpuprof" "$merge_dir" "$work/merged.pb.gz"
  measure merge merge-all 0 fast "cpuprof merge, $(nproc) threads" "${merge_inputs[0]}" \
    bash -c "$merge_cmd" "$cpuprof" "$merge_dir" "$work/merged.pb.gz"
  section "(e) merge of $merge_runs runs of one program ($(mb "${merge_inputs[0]}") MB .cpuprofiles, $((merge_runs * 95 / 10)) MB in all; MB/s of one input)"
  report_table merge
  printf '\nSpeed-up on %s threads: %s\n' "$(nproc)" "$(node -e '
    const f = (p) => JSON.parse(require("fs").readFileSync(p, "utf8")).results[0].mean;
    console.log((f(process.argv[1]) / f(process.argv[2])).toFixed(2) + "×")' "$work/merge-1.json" "$work/merge-all.json")" |
    tee -a "$work/report.md"
fi

# -----------------------------------------------------------------------------------------------------------------
# (f) the MCP server: an agent's session on the big profile

if wants mcp; then
  note "group mcp"
  section "(f) cpuprof mcp on the $(mb "$profile_a") MB .cpuprofile: load, then answers from the session's cache"
  if [[ -d tests/mcp/node_modules/@modelcontextprotocol/sdk ]]; then
    node scripts/bench/mcp.js "$cpuprof" "$profile_a" 5 | tee -a "$work/report.md"
  else
    printf 'skipped: no npm ci in tests/mcp\n' | tee -a "$work/report.md"
  fi
fi

# -----------------------------------------------------------------------------------------------------------------
# In-process numbers (criterion)

if wants criterion; then
  note "group criterion"
  marker=$work/criterion.marker
  touch "$marker"
  # cargo bench builds from the working tree as it is now, which may have moved on since the build above
  crit_rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  git diff --quiet HEAD -- crates Cargo.toml Cargo.lock 2>/dev/null || crit_rev="$crit_rev (+ uncommitted changes under crates/)"
  CPUPROF_BENCH_FILE=$(realpath "$profile_a") CPUPROF_BENCH_TICKLOG=$(realpath "$big_log") \
    cargo bench -p cpuprof-parse --bench parse -- summed >&2 || crit_ok=0
  CPUPROF_BENCH_FILE=$(realpath "$profile_a") cargo bench -p cpuprof-analysis --bench analysis >&2 || crit_ok=0
  section "In-process (criterion): parse from memory ($(basename "$profile_a"), $(basename "$big_log")), top, blocks and timeline on the parsed profile"
  node scripts/bench/report.js criterion "$target_dir/criterion" "$marker" | tee -a "$work/report.md"
  {
    echo
    echo "Commands: \`CPUPROF_BENCH_FILE=$profile_a CPUPROF_BENCH_TICKLOG=$big_log cargo bench -p cpuprof-parse --bench parse -- summed\`,"
    echo "\`CPUPROF_BENCH_FILE=$profile_a cargo bench -p cpuprof-analysis --bench analysis\`; built from $crit_rev"
    ((crit_ok)) || echo "(a cargo bench command failed: see the progress output)"
  } | tee -a "$work/report.md"
fi

printf '\nLoad average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$work/report.md"
note "report written to $work/report.md"
if grep -q -P '\tfailed\t' "$work"/*.rows 2>/dev/null || ((!crit_ok)); then exit 1; fi
exit 0
