# Measurement helpers of the benchmark suite (sourced by scripts/bench.sh; bash). Needs $work (a directory for
# the results), $runs, $slow_runs, $slow_warmup, $peer_timeout, hyperfine, /usr/bin/time, and the functions note
# and die.
#
# Every command is timed by hyperfine (--warmup, --runs, --export-json) and, in the same runs, wrapped in
# `/usr/bin/time -f '%e %M' -a -o ID.rss` for its peak RSS (the wrapper costs a fork and a wait4, well under a
# millisecond; hyperfine subtracts its shell's own start-up). Rows are appended to $work/GROUP.rows for
# scripts/bench/report.js.

# row GROUP ID LABEL INPUT BASE STATUS NOTE COMMAND: appends one row (see report.js for the format).
row() {
  local group=$1 id=$2 label=$3 input=$4 base=$5 status=$6 why=$7 command=$8 bytes=0
  [[ -f $input ]] && bytes=$(stat -c %s "$input")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$label" "$input" "$bytes" "$base" "$status" \
    "${why//$'\t'/ }" "$command" >>"$work/$group.rows"
}

# skip GROUP ID LABEL INPUT REASON: a row for a tool that could not run (not installed, does not build, ...).
skip() {
  row "$1" "$2" "$3" "$4" 0 skipped "$5" ""
  note "$3: skipped: $5"
}

# measure GROUP ID BASE KIND LABEL INPUT CMD...: times CMD (stdout discarded, stderr kept in $work/ID.err) on
# INPUT; BASE=1 marks the cpuprof row that the other rows on the same INPUT are compared with. KIND:
#   fast   1 warm-up + $runs timed runs
#   slow   $slow_warmup warm-up + $slow_runs timed runs (node-aggregate.js, node --prof-process)
#   once   1 timed run, no warm-up, killed after $peer_timeout s (a peer that may not finish: its row then gives
#          lower bounds)
# A failing command gives a "failed" row with the first error line of its stderr; the suite goes on.
measure() {
  local group=$1 id=$2 base=$3 kind=$4 label=$5 input=$6
  shift 6
  local json=$work/$id.json rss=$work/$id.rss err=$work/$id.err shown cmd warmup n limit=""
  case $kind in
    fast) warmup=1 n=$runs ;;
    slow) warmup=$slow_warmup n=$slow_runs ;;
    once) warmup=0 n=1 limit="timeout $peer_timeout " ;;
    *) die "measure: unknown kind $kind" ;;
  esac
  rm -f "$json" "$rss" "$err"
  shown=$(printf '%q ' "$@")
  shown=${shown% }
  cmd="/usr/bin/time -f '%e %M' -a -o $(printf %q "$rss") $limit$shown >/dev/null 2>>$(printf %q "$err")"
  note "$label: hyperfine --warmup $warmup --runs $n: $limit$shown"
  local style=()
  [[ -t 2 ]] || style=(--style basic)
  if hyperfine "${style[@]}" --warmup "$warmup" --runs "$n" --export-json "$json" --command-name "$label" "$cmd" >&2; then
    row "$group" "$id" "$label" "$input" "$base" ok "" "$shown"
    return 0
  fi
  local status why
  status=$(grep -m 1 -o -E 'non-zero status [0-9]+' "$rss" 2>/dev/null | grep -o -E '[0-9]+$' || echo '?')
  if [[ -n $limit && $status == 124 ]]; then
    row "$group" "$id" "$label" "$input" "$base" timeout "did not finish within $peer_timeout s (stopped by \`timeout $peer_timeout\`; RSS is its peak until then)" "$shown"
    note "$label: did not finish within $peer_timeout s"
    return 0
  fi
  why=$(grep -v -e '^Command exited with non-zero status' -e ExperimentalWarning -e 'trace-warnings' "$err" 2>/dev/null |
    grep -m 1 -i -E 'error|panic|unsupported|invalid|cannot|failed' ||
    grep -v '^Command exited with non-zero status' "$err" 2>/dev/null | tail -n 1 || true)
  row "$group" "$id" "$label" "$input" "$base" failed "exit status $status: ${why:-no message} (stderr: $err)" "$shown"
  note "$label: failed: ${why:-see $err}"
}
