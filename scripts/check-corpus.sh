#!/usr/bin/env bash
# Runs every cpuprof command over each file of a folder of real profiles and reports, per file, the format
# cpuprof recognised, the samples it read, each command's exit code, the warnings and the first error line,
# and the time `top` took. Use it on any folder of profiles users hand you (it descends into subfolders).
#
#   bash scripts/check-corpus.sh [--no-build] [--bin PATH] [--timeout S] DIR
#
# Commands per file: `top --format json`, `flamegraph`, `collapse`, `convert --output-format pprof` and
# `convert --output-format cpuprofile` (each to a scratch file), and `diff FILE FILE --fail-on self:+0%` (a file
# against itself must never trip the gate). Outputs go to a scratch folder, removed at the end.
#
# If DIR has an EXPECT.md with the sections "**Must be read**" and "**May be refused**" (lists of `path`
# items), each file is checked against it: a must-read file must pass every command; a file that may be
# refused must be read or refused with exactly one error line.
#
# The report (Markdown) goes to stdout, progress to stderr. Exit status: 0 if every file is read by every
# command or refused cleanly by all of them (one line, exit 1) and EXPECT.md (if any) holds; 1 if a command
# panicked, timed out, wrote more than one error line, disagreed with the others (one reads, another
# refuses), or a must-read file was refused; 2 on bad usage.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

build=1 bin="" timeout_s=120 dir=""
while (($#)); do
  case $1 in
    --no-build) build=0; shift ;;
    --bin) bin=${2:?--bin needs a value}; shift 2 ;;
    --timeout) timeout_s=${2:?--timeout needs a value}; shift 2 ;;
    -h | --help) usage ;;
    -*) echo "check-corpus: unknown option: $1" >&2; usage ;;
    *) [[ -z $dir ]] || { echo "check-corpus: one folder only" >&2; usage; }; dir=$1; shift ;;
  esac
done
[[ -n $dir ]] || usage
[[ -d $dir ]] || { echo "check-corpus: not a folder: $dir" >&2; exit 2; }
command -v node >/dev/null || { echo "check-corpus: node is required (it reads the JSON reports)" >&2; exit 2; }

if [[ -z $bin ]]; then
  target=${CARGO_TARGET_DIR:-target}
  if ((build)); then
    echo "check-corpus: cargo build --release" >&2
    cargo build --release --locked -q -p cpuprof-cli >&2
  fi
  bin=$target/release/cpuprof
fi
[[ -x $bin ]] || { echo "check-corpus: no binary at $bin (build it, or give --bin)" >&2; exit 2; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The lists in EXPECT.md: every `path` item under each heading.
must_read="" may_refuse=""
if [[ -f $dir/EXPECT.md ]]; then
  must_read=$(awk '/^\*\*Must be read\*\*/ {s=1; next} /^\*\*/ {s=0} s && /^- `/ {split($0, a, "`"); print a[2]}' "$dir/EXPECT.md")
  may_refuse=$(awk '/^\*\*May be refused\*\*/ {s=1; next} /^\*\*/ {s=0} s && /^- `/ {split($0, a, "`"); print a[2]}' "$dir/EXPECT.md")
fi
listed() { grep -qxF -- "$2" <<<"$1"; }

# A cell's text: Markdown table cells keep no pipes, backticks or newlines of the input's own text.
cell() { tr '\n|`' '   ' | sed 's/ *$//' | cut -c1-"${1:-160}"; }

# run NAME ARGS...: runs one command under the timeout; sets rc, err (stderr file).
run() {
  local name=$1; shift
  err=$scratch/$name.err
  set +e
  timeout "$timeout_s" "$bin" "$@" >"$scratch/$name.out" 2>"$err" </dev/null
  rc=$?
  set -e
  ((rc != 124)) || echo "cpuprof: timed out after ${timeout_s}s" >>"$err"
}

files=() read_ok=0 refused=0 bad=0
while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$dir" -type f ! -name '*.md' -print0 | sort -z)

echo "| file | format | samples | top | flame | collapse | pprof | cpuprofile | diff | warnings | top s | verdict |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
problems=()
for f in "${files[@]}"; do
  rel=${f#"$dir"/}
  echo "check-corpus: $rel" >&2
  codes=() errors=() warnings=0 problem=""
  start=$(date +%s.%N)
  run top top "$f" --all --format json
  top_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  codes+=("$rc")
  format="" samples=""
  if ((rc == 0)); then
    read -r format samples < <(node -e '
      const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      console.log(r.format, r.samples);' "$scratch/top.out") || problem="top's JSON does not parse"
  fi
  top_err=$scratch/top.err
  warnings=$(grep -c '^cpuprof: warning' "$top_err" || true)
  first_error=$(grep -m1 '^cpuprof: error' "$top_err" || true)
  first_error=${first_error#cpuprof: error: }
  first_error=${first_error//"$f"/FILE}
  for cmd in "flame:flamegraph $f -o $scratch/out.svg" "collapse:collapse $f -o $scratch/out.folded" \
    "pprof:convert $f --output-format pprof -o $scratch/out.pb.gz" \
    "cpuprofile:convert $f --output-format cpuprofile -o $scratch/out.cpuprofile" \
    "diff:diff $f $f --fail-on self:+0% --format json"; do
    name=${cmd%%:*}
    # shellcheck disable=SC2086 # the command's words are split on purpose (paths here have no spaces)
    run "$name" ${cmd#*:}
    codes+=("$rc")
  done
  # Each command's stderr: no panic, no abort, at most one error line.
  for e in "$scratch"/*.err; do
    if grep -q 'panicked\|RUST_BACKTRACE\|timed out' "$e"; then problem="$(basename "$e" .err): $(head -c 200 "$e" | cell)"; fi
    if (($(grep -c '^cpuprof: error' "$e" || true) > 1)); then problem="$(basename "$e" .err): more than one error line"; fi
  done
  ok=0 failed=0
  for c in "${codes[@]}"; do if ((c == 0)); then ok=$((ok + 1)); else failed=$((failed + 1)); fi; done
  for c in "${codes[@]}"; do ((c == 0 || c == 1)) || problem=${problem:-"exit code $c"}; done
  if ((failed == 0)); then
    verdict="read"
    if [[ -n $must_read || -n $may_refuse ]] && ! listed "$must_read" "$rel" && ! listed "$may_refuse" "$rel"; then
      verdict="read (not in EXPECT.md)"
    fi
  elif ((ok == 0)); then
    verdict="refused: $(cell 200 <<<"$first_error")"
    if listed "$must_read" "$rel"; then problem=${problem:-"must be read (EXPECT.md) but is refused"}; fi
  else
    verdict="mixed"
    problem=${problem:-"some commands read it, others refuse it"}
  fi
  rm -f "$scratch"/*.err "$scratch"/*.out "$scratch"/out.*
  if [[ -n $problem ]]; then
    bad=$((bad + 1)); problems+=("$rel: $problem"); verdict="**PROBLEM**: $(cell 200 <<<"$problem")"
  elif [[ $verdict == read* ]]; then
    read_ok=$((read_ok + 1))
  else
    refused=$((refused + 1))
  fi
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$(cell 80 <<<"$rel")" "${format:--}" \
    "${samples:--}" "${codes[@]}" "$warnings" "$top_s" "$verdict"
done

echo
echo "**${#files[@]} files: $read_ok read by every command, $refused refused with one line, $bad with problems.**"
if [[ -n $must_read ]]; then
  missing=0
  while IFS= read -r m; do [[ -z $m || -e $dir/$m ]] || missing=$((missing + 1)); done <<<"$must_read"
  ((missing == 0)) || echo "EXPECT.md lists $missing must-read file(s) that are not in the folder."
fi
for p in "${problems[@]}"; do echo "- $p"; done
((bad == 0))
