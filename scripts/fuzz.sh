#!/usr/bin/env bash
# Coverage-guided fuzzing of the cpuprof parsers (cargo-fuzz / libFuzzer, crate in fuzz/).
#
#   scripts/fuzz.sh SECONDS [TARGET...]
#
# TARGET is one of: cpuprofile ticklog pprof trace folded perf-script preprocess auto (default: all, one after
# another). Each target parses its input with the format forced (`auto`: sniffed), with and
# without `timeline`, and checks the model invariants of what parses (fuzz/src/lib.rs).
# Needs the nightly toolchain; installs cargo-fuzz if missing. Seed corpora are (re)made
# from fixtures/ into fuzz/corpus/TARGET/ (gitignored; what the fuzzer adds there is kept
# between runs). Exits 1 if any target found a crash, a timeout or an out-of-memory input;
# the input is in fuzz/artifacts/TARGET/.
#
# Two runs on different targets may share the machine (one core each):
#   scripts/fuzz.sh 600 folded trace & scripts/fuzz.sh 600 cpuprofile auto
#
# Environment: FUZZ_SANITIZER (address, none, ...; default none: the parsers are safe Rust,
# and without ASan they run about twice as fast), FUZZ_RSS_MB (default 2048), FUZZ_TIMEOUT
# (seconds per input before it counts as a hang; default 10), FUZZ_ARGS (more libFuzzer
# flags). The `folded` seeds are made by `cpuprof collapse`, built in release mode under
# $CPUPROF_CLI_TARGET_DIR (default: fuzz/target/cli). Builds have debug assertions on
# (`cargo fuzz -a`), so an integer overflow is a crash, as it is in the test suite.
#
# A crash into a regression fixture:
#   cargo +nightly fuzz run -s none -a --fuzz-dir fuzz TARGET fuzz/artifacts/TARGET/crash-…   # reproduce
#   cargo +nightly fuzz tmin -s none -a --fuzz-dir fuzz TARGET fuzz/artifacts/TARGET/crash-…  # minimize
#   cp fuzz/artifacts/TARGET/minimized-from-… fixtures/fuzz/TARGET-WHAT.EXT
# then fix it: tests/bad_input.rs replays every file in fixtures/fuzz/ (by the target in its
# name) in the normal test suite, and the fuzzer can too:
#   cargo +nightly fuzz run -s none -a --fuzz-dir fuzz TARGET fixtures/fuzz/TARGET-*
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

all_targets=(cpuprofile ticklog pprof trace folded perf-script preprocess auto)
note() { echo "fuzz: $*" >&2; }

if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
seconds=$1
shift
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $t "* ]] || { note "unknown target $t (one of: ${all_targets[*]})"; exit 2; }
done

sanitizer=${FUZZ_SANITIZER:-none}
rss_mb=${FUZZ_RSS_MB:-2048}
timeout=${FUZZ_TIMEOUT:-10}
fuzz=(cargo +nightly fuzz)
# The fuzz crate is its own workspace with its own target dir (fuzz/target).
fuzz_env=(env -u CARGO_TARGET_DIR)

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  note "installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi

# ---- seed corpora --------------------------------------------------------------------
corpus=fuzz/corpus
seed() { # seed TARGET FILE [NAME]: copy FILE into TARGET's corpus
  cp "$2" "$corpus/$1/seed-${3:-$(basename "$2")}"
}
head_lines() { # head_lines BYTES FILE: at most BYTES of FILE, cut at a line end
  head -c "$1" "$2" | sed '$d'
}
mkdir -p "$corpus"/{cpuprofile,ticklog,pprof,trace,folded,perf-script,preprocess,auto} fuzz/artifacts
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for f in fixtures/cpuprofile/*.cpuprofile fixtures/edge/*.cpuprofile fixtures/trace/*.cpuprofile \
  fixtures/cpuprofile/*.cpuprofile.gz fixtures/bad/*.cpuprofile fixtures/bad/*.cpuprofile.gz; do
  [[ -f $f ]] && seed cpuprofile "$f"
done
for f in fixtures/ticklog/*.log fixtures/ticklog/edge/*.log; do
  name=$(basename "$f" .log)
  [[ $f == */edge/* ]] && name=edge-$name
  head_lines 16384 "$f" >"$tmp/$name.head16k.log"
  seed ticklog "$tmp/$name.head16k.log"
  tail -c 16384 "$f" | sed '1d' >"$tmp/$name.tail16k.log" # JS code-creation, code-move and ticks
  seed ticklog "$tmp/$name.tail16k.log"
done
for f in fixtures/ticklog/{eval,code-moves,hostile-names}.log fixtures/ticklog/edge/crlf.log; do
  [[ -f $f ]] || continue
  head_lines 204800 "$f" >"$tmp/$(basename "$f" .log).head200k.log"
  seed ticklog "$tmp/$(basename "$f" .log).head200k.log"
done
for f in fixtures/bad/*.log; do seed ticklog "$f"; done
for f in fixtures/perf/*.perf-script.txt; do
  name=$(basename "$f" .txt)
  head_lines 16384 "$f" >"$tmp/$name.head16k.txt" # the header and the first samples
  seed perf-script "$tmp/$name.head16k.txt"
  tail -c 16384 "$f" | sed '1,/^$/d' >"$tmp/$name.tail16k.txt" # from the first whole event
  seed perf-script "$tmp/$name.tail16k.txt"
done
for f in fixtures/ticklog/*.preprocess.json.gz; do
  name=$(basename "$f" .json.gz)
  # 7 MB unzipped: the first 40 ticks, the code entries their stacks name (renumbered) and the
  # functions of those entries.
  gunzip -c "$f" | python3 -c '
import json, sys
d = json.load(sys.stdin)
ticks = d["ticks"][:40]
used = sorted({c for t in ticks for c in t["s"][0::2] if c >= 0})
new = {old: i for i, old in enumerate(used)}
for t in ticks:
    t["s"] = [new.get(v, v) if i % 2 == 0 else v for i, v in enumerate(t["s"])]
functions = []
for fn in d.get("functions", []):
    codes = [new[c] for c in fn["codes"] if c in new]
    if codes:
        functions.append(dict(fn, codes=codes))
json.dump({"code": [d["code"][c] for c in used], "functions": functions, "ticks": ticks, "scripts": []}, sys.stdout)
' >"$tmp/$name.json"
  seed preprocess "$tmp/$name.json"
done
for f in fixtures/pprof/*.pb.gz fixtures/bad/*.pb; do
  seed pprof "$f"
  if [[ $f == *.gz ]]; then
    gunzip -c "$f" >"$tmp/$(basename "$f" .gz)"
    seed pprof "$tmp/$(basename "$f" .gz)"
  fi
done
for f in fixtures/trace/*.json.gz; do
  name=$(basename "$f" .gz)
  if [[ $name == chromium-* ]]; then
    # 11 MB: keep the metadata, the first 300 other events and the first 40 profile events.
    gunzip -c "$f" | python3 -c '
import sys
head, events, other, prof = [], [], 0, 0
for line in sys.stdin:
    if not line.startswith("{\"args\""):
        if not events and not line.startswith("]"):
            head.append(line)
        continue
    if "\"name\":\"Profile" in line:
        if prof < 40: events.append(line); prof += 1
    elif other < 300:
        events.append(line); other += 1
sys.stdout.write("".join(head) + "".join(events).rstrip().rstrip(",") + "\n]}\n")
' >"$tmp/$name"
  else
    gunzip -c "$f" >"$tmp/$name"
  fi
  seed trace "$tmp/$name"
done
for f in fixtures/bad/*.trace.json; do seed trace "$f"; done
# Each JSON parser gets the other's inputs too: a trace embeds .cpuprofile nodes.
for f in "$corpus"/cpuprofile/seed-*; do cp "$f" "$corpus/trace/"; done
for f in "$corpus"/trace/seed-*.json; do cp "$f" "$corpus/cpuprofile/"; done

cli_target=${CPUPROF_CLI_TARGET_DIR:-${CARGO_TARGET_DIR:-$PWD/fuzz/target/cli}}
if CARGO_TARGET_DIR=$cli_target cargo build --release --quiet -p cpuprof-cli --bin cpuprof; then
  for f in fixtures/cpuprofile/{money,hostile-names,control-names,anon-arrows,workers.main}.cpuprofile \
    fixtures/edge/shuffled-sparse.cpuprofile; do
    [[ -f $f ]] || continue
    "$cli_target/release/cpuprof" collapse "$f" >"$tmp/$(basename "$f" .cpuprofile).folded" &&
      seed folded "$tmp/$(basename "$f" .cpuprofile).folded"
  done
else
  note "could not build cpuprof: the folded corpus has only the fixtures/bad seeds"
fi
for f in fixtures/bad/*.folded; do seed folded "$f"; done
printf 'main;work /app/a.js:3:9;(anonymous) 12\n(root);(program) 3\r\n' >"$tmp/handmade.folded"
seed folded "$tmp/handmade.folded"
for t in cpuprofile ticklog pprof trace folded perf-script preprocess; do
  for f in "$corpus/$t"/seed-*; do cp "$f" "$corpus/auto/$t-$(basename "$f")"; done
done
cat fuzz/dict/json.dict fuzz/dict/ticklog.dict fuzz/dict/folded.dict >"$corpus/auto.dict"

dict_of() {
  case $1 in
    cpuprofile | trace | preprocess) echo fuzz/dict/json.dict ;;
    ticklog) echo fuzz/dict/ticklog.dict ;;
    folded) echo fuzz/dict/folded.dict ;;
    auto) echo "$corpus/auto.dict" ;;
    *) echo "" ;;
  esac
}

# ---- build and run -------------------------------------------------------------------
"${fuzz_env[@]}" "${fuzz[@]}" build -s "$sanitizer" -a --fuzz-dir fuzz

root=$PWD
artifacts() { if [[ -d fuzz/artifacts/$1 ]]; then find "fuzz/artifacts/$1" -type f | wc -l; else echo 0; fi; }
failed=()
for t in "${targets[@]}"; do
  dict=$(dict_of "$t")
  before=$(artifacts "$t")
  note "$t: ${seconds}s"
  status=0
  # With -jobs, libFuzzer runs the fuzzer as a child that logs to ./fuzz-0.log (printed when
  # it ends): run from a folder of the target's own, so that the file lands there, not in the
  # work tree, and two runs of this script (different targets) can share the machine.
  mkdir -p "fuzz/artifacts/run-$t"
  # shellcheck disable=SC2086 # FUZZ_ARGS is a list of flags
  (cd "fuzz/artifacts/run-$t" && "${fuzz_env[@]}" "${fuzz[@]}" run -s "$sanitizer" -a --fuzz-dir "$root/fuzz" "$t" \
    "$root/$corpus/$t" -- -max_total_time="$seconds" -jobs=1 -workers=1 -rss_limit_mb="$rss_mb" \
    -timeout="$timeout" -print_final_stats=1 ${dict:+-dict="$root/$dict"} ${FUZZ_ARGS:-}) 2>&1 |
    tee "fuzz/artifacts/$t.log" || status=$?
  rm -rf "fuzz/artifacts/run-$t"
  after=$(artifacts "$t")
  if [[ $status -ne 0 || $after -gt $before ]]; then
    failed+=("$t")
    note "$t FAILED (exit $status); artifacts:"
    { ls -t fuzz/artifacts/"$t"/* 2>/dev/null || true; } | head -n $((after - before > 0 ? after - before : 5)) >&2
  fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
  note "crashes in: ${failed[*]} (inputs under fuzz/artifacts/, logs in fuzz/artifacts/TARGET.log)"
  exit 1
fi
note "no crashes in: ${targets[*]}"
