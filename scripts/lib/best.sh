# Sourced by the single-purpose benchmark scripts (bench-flamegraph.sh, bench-sourcemap.sh).
#
# best RUNS DIR CMD...: runs CMD RUNS times under /usr/bin/time (stdout discarded, stderr to DIR/best.err)
# and prints "fastest_wall_s peak_rss_kb".
best() {
  local runs=$1 dir=$2 best_wall="" best_rss=0 out wall rss
  shift 2
  for _ in $(seq "$runs"); do
    /usr/bin/time -f '%e %M' -o "$dir/best.timing" "$@" >/dev/null 2>"$dir/best.err"
    out=$(tail -1 "$dir/best.timing")
    wall=${out% *} rss=${out#* }
    if [[ -z $best_wall ]] || awk -v a="$wall" -v b="$best_wall" 'BEGIN { exit !(a < b) }'; then best_wall=$wall; fi
    ((rss > best_rss)) && best_rss=$rss
  done
  echo "$best_wall $best_rss"
}
