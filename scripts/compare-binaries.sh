#!/usr/bin/env bash
# Runs two cpuprof binaries on the same inputs and says where their outputs differ: for a
# refactoring that must not change behaviour (stdout, stderr and the exit code of every command
# on every profile).
#
#   scripts/compare-binaries.sh OLD_BINARY NEW_BINARY [DIR_OR_FILE...]
#
# Inputs: the profiles under the given folders (default: fixtures/), files with a profile's
# extension. Commands: top (table, json, csv, markdown), tree, callers of the hottest function,
# timeline, blocks, collapse, convert (to cpuprofile, on stdout), and diff of each profile
# with itself. Exit 0 when every output is byte-identical, 1 with the differences listed.
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 OLD_BINARY NEW_BINARY [DIR_OR_FILE...]" >&2
  exit 2
fi
old=$(realpath "$1") new=$(realpath "$2")
shift 2
[ $# -gt 0 ] || set -- fixtures
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export COLUMNS=100 NO_COLOR=1

mapfile -d '' files < <(find "$@" -type f \( -name '*.cpuprofile' -o -name '*.cpuprofile.gz' -o -name '*.log' \
  -o -name '*.folded' -o -name '*.pb.gz' -o -name '*.pprof' -o -name '*.json' -o -name '*.json.gz' -o -name '*.txt' \
  -o -name '*.perf' \) -not -path '*/node_modules/*' -print0 | sort -z)

differ=0 runs=0
# Runs one command line with both binaries; reports a difference in stdout, stderr or status.
same() {
  local a b
  a=$(cd "$work" && timeout 300 "$old" "$@" >o.out 2>o.err; echo $?)
  b=$(cd "$work" && timeout 300 "$new" "$@" >n.out 2>n.err; echo $?)
  runs=$((runs + 1))
  if [ "$a" != "$b" ] || ! cmp -s "$work/o.out" "$work/n.out" || ! cmp -s "$work/o.err" "$work/n.err"; then
    differ=$((differ + 1))
    echo "DIFFERS (exit $a vs $b): cpuprof $*"
    diff <(head -c 4000 "$work/o.out") <(head -c 4000 "$work/n.out") | head -8
    diff "$work/o.err" "$work/n.err" | head -4
  fi
}

for f in "${files[@]}"; do
  f=$(realpath "$f")
  for format in table json csv markdown; do same top "$f" --format "$format"; done
  same tree "$f" --format json
  hottest=$(cd "$work" && "$old" top "$f" --format csv -n 1 2>/dev/null | sed -n 2p | cut -d, -f1)
  [ -n "$hottest" ] && same callers "$hottest" "$f" --format json
  same timeline "$f" --format json
  same blocks "$f" --format json
  same collapse "$f"
  same convert "$f" --output-format cpuprofile -o -
  same diff "$f" "$f" --format json
done
echo "$runs command lines on ${#files[@]} inputs: $differ differ"
[ "$differ" -eq 0 ]
