//! `cpuprof top` on real node 20 tick logs, against two independent oracles:
//! `node --prof-process`'s own report (recorded beside each log) for totals, GC and
//! JavaScript, and `fixtures/oracle/ticklog-cpp.js` (the ELF symbol tables read with `nm`)
//! for C++.

use crate::common;

use std::collections::BTreeMap;
use std::process::Command;

use common::{cpuprof, files, root};
use serde_json::Value;

/// What `node --prof-process` reported.
struct NodeReport {
    ticks: i64,
    unaccounted: i64,
    gc: i64,
    /// JavaScript rows by `name script:line:col`, tiers summed (`RegExp: src` kept as is).
    js: BTreeMap<String, i64>,
    /// The [Summary] rows: `JavaScript`, `C++`, `GC`, `Shared libraries`, `Unaccounted`.
    summary: BTreeMap<String, i64>,
}

fn node_report(log: &str) -> NodeReport {
    let path = root().join(log.replace(".log", ".prof.txt"));
    let text = std::fs::read(&path).expect("node's report beside the log");
    let text = String::from_utf8_lossy(&text);
    let header = text.lines().find(|l| l.starts_with("Statistical profiling result")).expect("header");
    let number_before = |word: &str| -> i64 {
        let at = header.find(word).expect(word);
        header[..at].trim_end().rsplit([' ', '(']).next().unwrap().parse().unwrap()
    };
    let (ticks, unaccounted) = (number_before(" ticks"), number_before(" unaccounted"));
    let mut section = "";
    let mut js = BTreeMap::new();
    let mut gc = 0;
    let mut summary = BTreeMap::new();
    for line in text.lines() {
        if line.starts_with(" [") {
            section = line.trim();
            continue;
        }
        // "  ticks  total  nonlib   name": a count, one or two percentages, then the name.
        let Some((count, mut rest)) = line.trim_start().split_once(' ') else { continue };
        let Ok(count) = count.parse::<i64>() else { continue };
        while let Some((column, after)) = rest.trim_start().split_once(' ') {
            if !column.ends_with('%') {
                break;
            }
            rest = after;
        }
        let name = rest.trim_start();
        if section == "[Summary]:" {
            summary.insert(name.to_owned(), count);
        }
        match section {
            "[Summary]:" if name == "GC" => gc = count,
            "[JavaScript]:" => {
                let key = match name.split_once(": ") {
                    Some(("RegExp", src)) => format!("RegExp: {src}"),
                    Some((_, label)) => label.trim_start_matches(['~', '^', '+', '*', '-']).to_owned(),
                    None => name.to_owned(),
                };
                *js.entry(key).or_default() += count;
            }
            _ => {}
        }
    }
    NodeReport { ticks, unaccounted, gc, js, summary }
}

/// `top --all` of `log` in V8's view of inlining (as node's tick processor: an inlined
/// function's ticks in the function it was inlined into).
fn top_json(log: &str) -> Value {
    let out = cpuprof().args(["top", log, "--all", "--format", "json", "--no-unroll-inlined"]).output().unwrap();
    assert!(out.status.success(), "{log}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Our JavaScript rows keyed as node labels them.
fn our_js(report: &Value) -> BTreeMap<String, i64> {
    let mut js = BTreeMap::new();
    for row in report["rows"].as_array().unwrap() {
        let key = match row["kind"].as_str().unwrap() {
            "js" => {
                let name = match row["name"].as_str().unwrap() {
                    "(anonymous)" => "<anonymous>",
                    n => n,
                };
                format!("{name} {}:{}:{}", row["file"].as_str().unwrap_or(""), row["line"], row["column"])
            }
            "regexp" => row["name"].as_str().unwrap().to_owned(),
            _ => continue,
        };
        *js.entry(key).or_default() += row["self_samples"].as_i64().unwrap();
    }
    js
}

/// node's labels that its own quirks garble, so that no function can match them: a raw
/// backslash read as a 4-digit escape (NUL), a name split by a raw line break or comma,
/// and de-duplication suffixes.
fn garbled(label: &str) -> bool {
    label.contains('\0') || label.contains(" {") || !label.contains(':') || label.starts_with("break ")
}

#[test]
fn totals_gc_and_javascript_agree_with_node() {
    let logs = files("fixtures/ticklog", &[".log"]);
    assert!(logs.len() >= 10, "expected at least 10 tick-log fixtures, found {}", logs.len());
    for log in &logs {
        let node = node_report(log);
        let ours = top_json(log);
        let summary = &ours["summary"];
        assert_eq!(ours["format"], "ticklog", "{log}");
        assert_eq!(summary["samples"].as_i64().unwrap(), node.ticks, "{log}: total ticks");
        assert_eq!(ours["samples"].as_i64().unwrap(), node.ticks, "{log}: ticks counted");
        assert_eq!(summary["gc"]["samples"].as_i64().unwrap(), node.gc, "{log}: GC ticks");

        // Only ticks node failed to resolve can move to a JavaScript function.
        let js = our_js(&ours);
        for (key, count) in &js {
            let theirs = node.js.get(key).copied().unwrap_or(0);
            assert!(
                theirs <= *count && *count <= theirs + node.unaccounted,
                "{log}: {key:?} has {count} self ticks, node {theirs} (+{} unaccounted)",
                node.unaccounted
            );
        }
        for (key, theirs) in &node.js {
            if garbled(key) {
                continue;
            }
            let count = js.get(key).copied().unwrap_or(0);
            assert!(count >= *theirs, "{log}: node gives {key:?} {theirs} self ticks, we {count}");
        }

        // Where node leaves most ticks unaccounted, we do not (given the binary's symbols).
        let node_pct = 100.0 * node.unaccounted as f64 / node.ticks as f64;
        let ours_pct = summary["unaccounted"]["pct"].as_f64().unwrap();
        if (75.0..=98.5).contains(&node_pct) && same_node() {
            assert!(ours_pct <= 2.0, "{log}: {ours_pct:.1}% unaccounted (node: {node_pct:.1}%)");
        }
    }
}

/// True when /usr/bin/node is the binary that recorded the fixtures (so its symbols apply).
fn same_node() -> bool {
    let recorded = std::fs::read_to_string(root().join("fixtures/ticklog/node.build-id")).unwrap();
    build_id("/usr/bin/node").as_deref() == Some(recorded.trim())
}

#[test]
fn the_pbkdf2_job_tops_a_log_node_calls_unaccounted() {
    let node = node_report("fixtures/ticklog/pbkdf2-login.log");
    assert!(node.unaccounted * 100 > node.ticks * 90, "node itself resolves this log now?");
    if !same_node() {
        return;
    }
    let ours = top_json("fixtures/ticklog/pbkdf2-login.log");
    let top: Vec<&str> = ours["rows"].as_array().unwrap()[..3].iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert!(top.iter().any(|n| n.contains("PBKDF2")), "top rows: {top:?}");
}

/// The GNU build id of `binary`, read by `readelf` (not by cpuprof).
fn build_id(binary: &str) -> Option<String> {
    let out = Command::new("readelf").args(["-n", binary]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().find_map(|l| l.trim().strip_prefix("Build ID: ").map(str::to_owned))
}

#[test]
#[allow(clippy::print_stderr)] // the skip message
fn cpp_attribution_equals_the_symbol_table() {
    let recorded = std::fs::read_to_string(root().join("fixtures/ticklog/node.build-id")).unwrap();
    let installed = build_id("/usr/bin/node");
    if installed.as_deref() != Some(recorded.trim()) {
        // Not a failure: symbol-level checks need the very binary that wrote the logs.
        eprintln!(
            "SKIPPED: /usr/bin/node has build id {installed:?}, the fixtures were recorded with {}; \
             C++ attribution cannot be checked on this machine",
            recorded.trim()
        );
        return;
    }
    for log in files("fixtures/ticklog", &[".log"]) {
        let out = Command::new("node")
            .args(["fixtures/oracle/ticklog-cpp.js", &log, "--by-address", "--libraries-first"])
            .current_dir(root())
            .output()
            .unwrap();
        assert!(out.status.success(), "oracle failed on {log}: {}", String::from_utf8_lossy(&out.stderr));
        let oracle: Value = serde_json::from_slice(&out.stdout).unwrap();
        // Which symbol each tick lands on is the oracle's (nm); only the spelling of the
        // names is ours, since demanglers differ in corners (binutils omits the return type
        // of a function template nested in a lambda's scope, cpp_demangle writes it).
        let mut expected: BTreeMap<String, i64> = BTreeMap::new();
        for (mangled, ticks) in oracle["cpp_mangled"].as_object().unwrap() {
            *expected.entry(cpuprof_symbols::demangle(mangled)).or_default() += ticks.as_i64().unwrap();
        }
        let spelled_by_nm: i64 = oracle["cpp"].as_object().unwrap().values().map(|v| v.as_i64().unwrap()).sum();
        assert_eq!(spelled_by_nm, expected.values().sum::<i64>(), "{log}: the oracle's two views disagree");
        let ours = top_json(&log);
        let mut actual: BTreeMap<String, i64> = BTreeMap::new();
        for row in ours["rows"].as_array().unwrap() {
            if row["kind"] == "cpp" && row["self_samples"].as_i64().unwrap() > 0 {
                *actual.entry(row["name"].as_str().unwrap().to_owned()).or_default() +=
                    row["self_samples"].as_i64().unwrap();
            }
        }
        let differences: Vec<String> = expected
            .keys()
            .chain(actual.keys())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .filter(|k| expected.get(*k) != actual.get(*k))
            .map(|k| format!("{k}: nm {:?}, cpuprof {:?}", expected.get(k), actual.get(k)))
            .collect();
        assert!(differences.is_empty(), "{log}: C++ self ticks differ:\n{}", differences.join("\n"));
        assert!(!actual.is_empty() || log.contains("deep-recursion"), "{log}: no C++ at all?");
    }
}

/// Names are spelled as `nm -C` (binutils) spells them, but for corners where the two
/// demanglers differ in notation (a function template's return type inside a lambda's scope,
/// pointer-to-member template arguments): about 1.2% of node's code symbols.
#[test]
#[allow(clippy::print_stderr)] // the skip message
fn demangled_names_read_like_binutils() {
    let listing = |args: &[&str]| -> Vec<String> {
        let out = Command::new("nm").args(args).arg("/usr/bin/node").output().expect("nm (binutils) is installed");
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let mut parts = l.splitn(3, ' ');
                let (_, kind, name) = (parts.next()?, parts.next()?, parts.next()?);
                matches!(kind, "t" | "T" | "w" | "W" | "i").then(|| name.to_owned())
            })
            .collect()
    };
    let mangled = listing(&["--defined-only"]);
    let binutils = listing(&["--defined-only", "-C"]);
    assert_eq!(mangled.len(), binutils.len());
    if mangled.len() < 10_000 {
        eprintln!("SKIPPED: /usr/bin/node has only {} code symbols (stripped?)", mangled.len());
        return;
    }
    let differ: Vec<(&String, String)> = mangled
        .iter()
        .zip(&binutils)
        .map(|(m, expected)| (expected, cpuprof_symbols::demangle(m)))
        .filter(|(expected, ours)| *expected != ours)
        .collect();
    let share = differ.len() as f64 / mangled.len() as f64;
    let sample: Vec<String> = differ.iter().take(5).map(|(e, o)| format!("nm -C: {e}\nours:  {o}")).collect();
    assert!(
        share < 0.015,
        "{} of {} names differ from nm -C, e.g.:\n{}",
        differ.len(),
        mangled.len(),
        sample.join("\n")
    );
    // The notations cpuprof rewrites must agree everywhere.
    for (expected, ours) in &differ {
        assert!(
            !expected.contains(" thunk to ") && !ours.contains("(unsigned long)"),
            "nm -C: {expected}\nours:  {ours}"
        );
    }
}

/// Damaged logs derived from regex-backtrack.log (`fixtures/ticklog/edge/make.sh`): read
/// past with one warning each, where node stops early or rejects lines.
#[test]
fn damaged_logs_give_the_clean_result_and_say_what_was_done() {
    // Warnings about this machine's libraries (libc's unnamed code) are not about the damage.
    let ours = |w: &str| !w.contains("no symbols for");
    let run = |log: &str| {
        let out = cpuprof().args(["top", log, "--all", "--format", "json"]).output().unwrap();
        assert!(out.status.success(), "{log}: {}", String::from_utf8_lossy(&out.stderr));
        let mut json: Value = serde_json::from_slice(&out.stdout).unwrap();
        json["warnings"].as_array_mut().unwrap().retain(|w| ours(w.as_str().unwrap()));
        let stderr = String::from_utf8_lossy(&out.stderr).lines().filter(|l| ours(l)).collect::<Vec<_>>().join("\n");
        (json, stderr)
    };
    let (clean, stderr) = run("fixtures/ticklog/regex-backtrack.log");
    assert!(stderr.is_empty(), "{stderr}");
    let rows = |json: &Value| json["rows"].clone();
    let warned = |stderr: &str, json: &Value, what: &str| {
        assert_eq!(stderr.matches("cpuprof: warning:").count(), 1, "{stderr}");
        assert!(stderr.contains(what), "{what:?} not in {stderr}");
        assert_eq!(json["warnings"].as_array().unwrap().len(), 1);
    };
    for (log, what) in [
        ("crlf.log", "end in CR LF"),
        ("no-version.log", "no v8-version line"),
        ("blank-line.log", "node --prof-process stops reading there"),
    ] {
        let (json, stderr) = run(&format!("fixtures/ticklog/edge/{log}"));
        assert_eq!(rows(&json), rows(&clean), "{log}");
        warned(&stderr, &json, what);
    }
    // node reads only the 6 ticks before the empty line; every tick counts here.
    assert_eq!(node_report("fixtures/ticklog/edge/blank-line.log").ticks, 6);

    let (json, stderr) = run("fixtures/ticklog/edge/version-mismatch.log");
    assert_eq!(rows(&json), rows(&clean));
    assert!(stderr.is_empty(), "{stderr}");

    // The cut-off last tick is dropped, as node drops it.
    let (json, stderr) = run("fixtures/ticklog/edge/truncated-last-line.log");
    warned(&stderr, &json, "has no line end");
    let node = node_report("fixtures/ticklog/edge/truncated-last-line.log");
    assert_eq!(json["samples"].as_i64().unwrap(), node.ticks);
    assert_eq!(json["samples"].as_i64().unwrap(), clean["samples"].as_i64().unwrap() - 1);

    let (json, _) = run("fixtures/ticklog/edge/zero-ticks.log");
    assert_eq!((json["samples"].as_i64(), json["rows"].as_array().map(Vec::len)), (Some(0), Some(0)));
    let (json, _) = run("fixtures/ticklog/edge/one-tick.log");
    assert_eq!(json["samples"].as_i64(), Some(1));
}

/// Self ticks per library, counted from the log alone: a tick's leaf is its pc (the external
/// callback when V8 was in one), and a library holds the address ranges of its
/// `shared-library` lines. Libraries that V8 creates code in (the executable, home of the
/// embedded builtins) are left out: there the leaf may be a builtin rather than the library.
fn leaf_ticks_per_library(log: &str) -> BTreeMap<String, i64> {
    let text = std::fs::read_to_string(root().join(log)).unwrap();
    let hex = |f: &str| u64::from_str_radix(f.trim_start_matches("0x"), 16).ok();
    let mut ranges: Vec<(u64, u64, &str)> = Vec::new();
    let mut code_starts = Vec::new();
    let mut leaves = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split(',').collect();
        match fields[0] {
            "shared-library" => ranges.push((hex(fields[2]).unwrap(), hex(fields[3]).unwrap(), fields[1])),
            "code-creation" => code_starts.extend(fields.get(4).and_then(|f| hex(f))),
            "tick" => leaves.push(if fields[3] == "1" { hex(fields[4]) } else { hex(fields[1]) }.unwrap()),
            _ => {}
        }
    }
    let with_code: Vec<&str> = ranges
        .iter()
        .filter(|(start, end, _)| code_starts.iter().any(|a| (start..end).contains(&a)))
        .map(|(_, _, path)| *path)
        .collect();
    let mut ticks = BTreeMap::new();
    for (_, _, path) in &ranges {
        if !with_code.contains(path) {
            ticks.insert(path.to_string(), 0);
        }
    }
    for leaf in leaves {
        if let Some((_, _, path)) = ranges.iter().find(|(start, end, _)| (*start..*end).contains(&leaf)) {
            if let Some(n) = ticks.get_mut(*path) {
                *n += 1;
            }
        }
    }
    ticks
}

#[test]
fn by_file_and_by_package_have_one_row_per_library() {
    let mut libraries_seen = 0;
    for log in files("fixtures/ticklog", &[".log"]) {
        let expected = leaf_ticks_per_library(&log);
        for by in ["file", "package"] {
            let out = cpuprof().args(["top", &log, "--all", "--by", by, "--format", "json"]).output().unwrap();
            assert!(out.status.success(), "{log}: {}", String::from_utf8_lossy(&out.stderr));
            let report: Value = serde_json::from_slice(&out.stdout).unwrap();
            let mut rows: BTreeMap<String, Vec<i64>> = BTreeMap::new();
            for row in report["rows"].as_array().unwrap() {
                rows.entry(row["name"].as_str().unwrap().to_owned())
                    .or_default()
                    .push(row["self_samples"].as_i64().unwrap());
            }
            let twice: Vec<_> = rows.iter().filter(|(_, r)| r.len() > 1).collect();
            assert!(twice.is_empty(), "{log} --by {by}: rows listed more than once: {twice:?}");
            for (path, ticks) in &expected {
                let label = match by {
                    "file" => path.clone(),
                    _ => format!("{} (native)", path.rsplit('/').next().unwrap()),
                };
                let ours = rows.get(&label).map_or(0, |r| r[0]);
                assert_eq!(ours, *ticks, "{log} --by {by}: self ticks of {label}");
                libraries_seen += usize::from(*ticks > 0);
            }
        }
    }
    assert!(libraries_seen > 10, "the logs have ticks in libc and libstdc++");
}

/// The rows of our report that are VM-state pseudo-frames (`(OTHER)`, `(GC)`, …), by name.
fn state_rows(report: &Value) -> BTreeMap<String, i64> {
    let mut rows = BTreeMap::new();
    for row in report["rows"].as_array().unwrap() {
        let name = row["name"].as_str().unwrap();
        if matches!(row["kind"].as_str().unwrap(), "program" | "gc" | "idle") && name.starts_with('(') {
            *rows.entry(name.to_owned()).or_default() += row["self_samples"].as_i64().unwrap();
        }
    }
    rows
}

/// V8 11's VM state names by number (`StateTag`).
const STATES: [&str; 9] =
    ["JS", "GC", "PARSER", "BYTECODE_COMPILER", "COMPILER", "OTHER", "EXTERNAL", "ATOMICS_WAIT", "IDLE"];

#[test]
fn ticks_without_a_pc_are_named_by_their_vm_state() {
    let mut seen = 0;
    for log in files("fixtures/ticklog", &[".log"]) {
        // Counted from the text: `tick,0x0,time,0,tos,state,…` has no pc and no callback.
        let text = std::fs::read(root().join(&log)).unwrap();
        let mut expected: BTreeMap<String, i64> = BTreeMap::new();
        for line in String::from_utf8_lossy(&text).lines() {
            let f: Vec<&str> = line.split(',').collect();
            if f.len() >= 6 && f[0] == "tick" && f[1] == "0x0" && f[3] == "0" {
                *expected.entry(format!("({})", STATES[f[5].parse::<usize>().unwrap()])).or_default() += 1;
            }
        }
        seen += expected.values().sum::<i64>();
        let ours = top_json(&log);
        assert_eq!(state_rows(&ours), expected, "{log}");
        // node counts them as unaccounted; we do not.
        let node = node_report(&log);
        let unaccounted = ours["summary"]["unaccounted"]["samples"].as_i64().unwrap();
        assert!(unaccounted + expected.values().sum::<i64>() <= node.unaccounted.max(unaccounted), "{log}");
    }
    assert!(seen >= 5, "the fixtures hold only {seen} ticks without a pc");
}

#[test]
fn preprocess_json_agrees_with_node_on_the_same_log() {
    // `node --prof-process --preprocess async-await.log`, and node's text report of that log.
    let json = "fixtures/ticklog/async-await.preprocess.json.gz";
    let node = node_report("fixtures/ticklog/async-await.log");
    let ours = top_json(json);
    assert_eq!(ours["format"], "preprocess");
    assert_eq!(ours["samples"].as_i64().unwrap(), node.ticks, "ticks");
    assert_eq!(ours["summary"]["gc"]["samples"].as_i64().unwrap(), node.gc, "GC ticks");
    // The JSON is node's own attribution: its JavaScript rows are node's, exactly.
    let mut js = our_js(&ours);
    js.retain(|_, self_ticks| *self_ticks > 0);
    assert_eq!(js, node.js);
    assert!(node.js.len() >= 3, "{:?}", node.js);
    // node's unaccounted ticks are ours, plus those without a pc, which we name by state.
    let unaccounted = ours["summary"]["unaccounted"]["samples"].as_i64().unwrap();
    let states: i64 = state_rows(&ours).values().sum();
    assert!(states > 0);
    assert_eq!(unaccounted + states, node.unaccounted);
    // The JSON keeps V8's tier markers: --split-tiers applies (and is not called ignored).
    let out = cpuprof().args(["top", json, "--all", "--format", "json", "--split-tiers"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !stderr.contains("ignored"), "{stderr}");
    let split: Value = serde_json::from_slice(&out.stdout).unwrap();
    let js_rows = |report: &Value| report["rows"].as_array().unwrap().iter().filter(|r| r["kind"] == "js").count();
    assert!(js_rows(&split) > js_rows(&ours), "--split-tiers gives scoreBatch a row per tier");
}

/// A regular expression has one name whatever recorded it: V8's `.cpuprofile` spelling
/// (`RegExp: SOURCE`), which is also what `node --prof-process` prints for a tick log, so a
/// diff of a `.cpuprofile` against a tick log of the same workload matches it instead of
/// reporting it gone on one side and new on the other.
#[test]
fn a_regexp_is_named_alike_in_a_cpuprofile_and_a_tick_log() {
    let name = "RegExp: ^(a+)+b$";
    let cpuprofile = std::fs::read_to_string(root().join("fixtures/cpuprofile/regex-backtrack.cpuprofile")).unwrap();
    assert!(cpuprofile.contains(&format!("\"functionName\":\"{name}\"")), "V8's own spelling");
    let processed = std::fs::read_to_string(root().join("fixtures/ticklog/regex-backtrack.prof.txt")).unwrap();
    assert!(processed.lines().any(|l| l.trim_end().ends_with(name)), "--prof-process's spelling");
    let out = cpuprof()
        .args(["diff", "fixtures/cpuprofile/regex-backtrack.cpuprofile", "fixtures/ticklog/regex-backtrack.log"])
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows: Vec<&Value> = report["rows"].as_array().unwrap().iter().filter(|r| r["kind"] == "regexp").collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["name"], name);
    assert!(rows[0]["base_self"].as_f64().unwrap() > 0.0 && rows[0]["new_self"].as_f64().unwrap() > 0.0, "{}", rows[0]);
}

/// Builtins and bytecode handlers that V8 logged inside a library's mapping (node 14's
/// embedded blob, in the binary's text) are that library's code in the summary, as node's
/// tick processor looks addresses up in the libraries first: not JavaScript.
#[test]
fn builtins_inside_the_binary_are_summed_as_node_sums_them() {
    // node 14's shape (one mapping for the binary, no symbols for it: derived/make.sh):
    // every category of node's [Summary] exactly.
    let log = "fixtures/ticklog/derived/embedded-builtins.one-mapping.log";
    let node = node_report(log);
    let ours = top_json(log);
    let summary = &ours["summary"];
    let samples = |key: &str| summary[key]["samples"].as_i64().unwrap();
    let theirs = |row: &str| node.summary.get(row).copied().unwrap_or(0);
    assert!(theirs("Shared libraries") > 5 * theirs("JavaScript"), "the fixture's builtins: {:?}", node.summary);
    assert_eq!(samples("javascript"), theirs("JavaScript"), "JavaScript");
    assert_eq!(samples("cpp"), theirs("C++"), "C++");
    assert_eq!(samples("gc"), theirs("GC"), "GC");
    assert_eq!(samples("shared_libraries"), theirs("Shared libraries"), "shared libraries");
    let no_pc: i64 = state_rows(&ours).values().sum();
    assert_eq!(samples("unaccounted") + no_pc, theirs("Unaccounted"), "unaccounted");
    // The rows still name the builtins, in the binary.
    let rows = ours["rows"].as_array().unwrap();
    let timsort = rows.iter().find(|r| r["name"] == "ArrayTimSort").expect("an ArrayTimSort row");
    assert_eq!(timsort["kind"], "shared-lib");
    assert_eq!(timsort["file"], "/nonexistent/node/bin/node");

    // The log as recorded (three mappings of /usr/bin/node, which node leaves Unaccounted):
    // whatever names the binary's code, the JavaScript is node's.
    let log = "fixtures/ticklog/embedded-builtins.log";
    let node = node_report(log);
    let ours = top_json(log);
    assert_eq!(ours["summary"]["javascript"]["samples"].as_i64().unwrap(), node.summary["JavaScript"]);
}

/// V8's tick-log forms before 2013 (hand-made fixtures in `fixtures/ticklog/old/`, README
/// there): 2012's `tick,pc,sp,time,is_ext,tos,vmstate,…` and 2011's `tick,pc,sp,is_ext,tos,
/// vmstate,…` with `code-creation,type,start,size,name,func,state` (no kind, no time). The
/// numbers are V8's tick processor of the time, worked by hand from the lines: it skipped stubs
/// and ICs, which node 20's defaults (and cpuprof) keep as rows of their own, so a function's
/// total is what it gave as self (node 20's own --prof-process reads every tick as unaccounted).
#[test]
fn pre_2013_tick_forms_are_read() {
    let totals = |report: &Value| -> BTreeMap<String, (i64, i64)> {
        let rows = report["rows"].as_array().unwrap();
        rows.iter()
            .map(|r| {
                let name = format!("{} {}", r["name"].as_str().unwrap(), r["file"].as_str().unwrap_or(""));
                (
                    name.trim_end().to_owned(),
                    (r["self_samples"].as_i64().unwrap(), r["total_samples"].as_i64().unwrap()),
                )
            })
            .collect()
    };
    let summary = |report: &Value, key: &str| report["summary"][key]["samples"].as_i64().unwrap();

    // Ticks 1-2: a stub under `inner` (tos) under `outer`; 3: `inner` (its tos no code);
    // 4: `outer`; 5: an IC under `inner`; 6: libm, in GC, under `inner` and `outer`.
    let ours = top_json("fixtures/ticklog/old/v8-2012.log");
    assert_eq!(ours["samples"].as_i64().unwrap(), 6);
    let expected: BTreeMap<String, (i64, i64)> = [
        ("Stub: CompareStub_LT", (2, 2)),
        ("LoadIC: length", (1, 1)),
        ("inner bench.js", (1, 5)),
        ("outer bench.js", (1, 6)),
        ("libm-2.7.so /lib32/libm-2.7.so", (1, 1)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    assert_eq!(totals(&ours), expected);
    let inner = ours["rows"].as_array().unwrap().iter().find(|r| r["name"] == "inner").unwrap();
    assert_eq!((inner["line"].as_i64(), inner["column"].as_i64()), (Some(5), None), "`fn script:line` then");
    assert_eq!(
        [
            summary(&ours, "javascript"),
            summary(&ours, "gc"),
            summary(&ours, "shared_libraries"),
            summary(&ours, "unaccounted")
        ],
        [5, 1, 1, 0]
    );
    // The times are µs (100 … 5100), the interval milliseconds (`profiler,"begin",1`).
    assert_eq!(ours["interval_ns"].as_i64(), Some(1_000_000));
    assert_eq!(ours["duration_ns"].as_i64(), Some(6_000_000));

    // 2011: no time; the ticks are placed one interval apart, with a warning.
    let ours = top_json("fixtures/ticklog/old/v8-2011.log");
    assert_eq!(ours["samples"].as_i64().unwrap(), 3);
    let expected: BTreeMap<String, (i64, i64)> =
        [("Stub: CompareStub_LT", (1, 1)), ("inner bench.js", (1, 2)), ("outer bench.js", (1, 3))]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
    assert_eq!(totals(&ours), expected);
    assert_eq!([summary(&ours, "javascript"), summary(&ours, "gc"), summary(&ours, "unaccounted")], [3, 1, 0]);
    assert!(ours["warnings"].to_string().contains("3 tick(s) have no time"), "{}", ours["warnings"]);
}

/// Ticks in a library that its symbols cannot name (a stripped `.so` keeps only its exported
/// functions) get a warning on stderr and in the JSON, with the file's build id, as they do for
/// a missing file. The library is built here (gcc, strip); its layout, the hidden function's
/// address and the build id come from binutils (`readelf`, `nm`), not from cpuprof.
#[test]
#[allow(clippy::print_stderr)] // the skip message
fn ticks_no_symbol_names_are_warned_about_with_the_build_id() {
    let dir = tempfile::tempdir().unwrap();
    let run = |program: &str, args: &[&str]| -> Option<String> {
        let out = Command::new(program).args(args).current_dir(dir.path()).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let source = "static int __attribute__((noinline)) hidden_work(int n) {\n\
                  int s = 0; for (int i = 0; i < n; i++) s += i * i; return s; }\n\
                  int exported_entry(int n) { return hidden_work(n) + 1; }\n";
    std::fs::write(dir.path().join("t.c"), source).unwrap();
    if run("gcc", &["-O1", "-shared", "-fPIC", "-Wl,--build-id", "t.c", "-o", "full.so"]).is_none()
        || run("strip", &["--strip-all", "full.so", "-o", "libt.so"]).is_none()
    {
        eprintln!("SKIPPED: no gcc/strip to build a stripped library");
        return;
    }
    let symbol = |name: &str| -> u64 {
        let nm = run("nm", &["full.so"]).unwrap();
        let line = nm.lines().find(|l| l.ends_with(&format!(" {name}"))).expect(name);
        u64::from_str_radix(line.split(' ').next().unwrap(), 16).unwrap()
    };
    let (hidden, exported) = (symbol("hidden_work"), symbol("exported_entry"));
    assert!(run("nm", &["libt.so"]).is_none_or(|nm| !nm.contains("hidden_work")), "stripped");
    // The mapping V8 would log: the load base to the page-rounded end of the code segment.
    let headers = run("readelf", &["-lW", "libt.so"]).unwrap();
    let segment = headers.lines().find(|l| l.trim_start().starts_with("LOAD") && l.contains(" R E ")).unwrap();
    let f: Vec<&str> = segment.split_whitespace().collect();
    let (vaddr, memsz) = (u64::from_str_radix(&f[2][2..], 16).unwrap(), u64::from_str_radix(&f[5][2..], 16).unwrap());
    let base = 0x7f12_3400_0000_u64;
    let end = base + (vaddr + memsz).next_multiple_of(0x1000);
    let notes = run("readelf", &["-n", "libt.so"]).unwrap();
    let build_id = notes.lines().find_map(|l| l.trim().strip_prefix("Build ID: ")).unwrap().to_owned();

    let library = dir.path().join("libt.so");
    let mut log = format!(
        "v8-version,11,3,244,8,-node.38,0\nshared-library,{},{base:#x},{end:#x},0\nprofiler,begin,1000\n",
        library.display()
    );
    for i in 0..5 {
        log.push_str(&format!("tick,{:#x},{},0,0x0,0\n", base + hidden + 1, 1000 * i));
    }
    log.push_str(&format!("tick,{:#x},9000,0,0x0,0\n", base + exported + 1));
    let path = dir.path().join("stripped.log");
    std::fs::write(&path, log).unwrap();

    let out = cpuprof().args(["top", path.to_str().unwrap(), "--format", "json"]).output().unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings: Vec<&str> = report["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
    let warning = warnings.iter().find(|w| w.contains("libt.so")).unwrap_or_else(|| panic!("{warnings:?}"));
    assert!(warning.contains(&build_id) && warning.contains("5 tick(s)"), "{warning}");
    assert!(stderr.contains(*warning), "{stderr}");
    // The exported function is named; the hidden one's ticks are the library's row.
    let rows = report["rows"].as_array().unwrap();
    let row = |name: &str| rows.iter().find(|r| r["name"] == name).map(|r| r["self_samples"].as_i64().unwrap());
    assert_eq!((row("libt.so"), row("exported_entry")), (Some(5), Some(1)));
}

/// Every `JS: <marker>name file:line:col` node's report prints (the flat list and the bottom-up
/// profile): (name, location, tier), the marker read as V8 defines it.
fn node_tiers(log: &str) -> std::collections::BTreeSet<(String, String, String)> {
    let text = std::fs::read(root().join(log.replace(".log", ".prof.txt"))).unwrap();
    let text = String::from_utf8_lossy(&text);
    let mut tiers = std::collections::BTreeSet::new();
    for line in text.lines() {
        let Some((_, label)) = line.split_once("JS: ") else { continue };
        let tier = match label.chars().next() {
            Some('~') => "interpreted",
            Some('^') => "sparkplug",
            Some('+') => "maglev",
            Some('*') => "turbofan",
            _ => continue,
        };
        let Some((name, location)) = label[1..].rsplit_once(' ') else { continue };
        if garbled(label) || name.contains(' ') {
            continue;
        }
        let name = if name == "<anonymous>" { "(anonymous)" } else { name };
        tiers.insert((name.to_owned(), location.to_owned(), tier.to_owned()));
    }
    tiers
}

#[test]
fn split_tiers_rows_name_the_function_and_give_its_tier_apart() {
    let log = "fixtures/ticklog/phases.log";
    let node = node_tiers(log);
    let kinds: std::collections::BTreeSet<&str> = node.iter().map(|(_, _, t)| t.as_str()).collect();
    assert!(kinds.len() >= 3, "the log has functions in several tiers: {kinds:?}");
    let out = cpuprof().args(["top", log, "--split-tiers", "--all", "--format", "json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut ours = std::collections::BTreeSet::new();
    for row in json["rows"].as_array().unwrap().iter().filter(|r| r["kind"] == "js") {
        let name = row["name"].as_str().unwrap();
        assert!(!name.starts_with(['~', '^', '+', '*']), "a name, not a tier: {row}");
        let tier = row["tier"].as_str().unwrap_or_else(|| panic!("a JavaScript row has its tier: {row}"));
        let location = format!("{}:{}:{}", row["file"].as_str().unwrap(), row["line"], row["column"]);
        ours.insert((name.to_owned(), location, tier.to_owned()));
    }
    let missing: Vec<_> = node.difference(&ours).collect();
    assert!(missing.is_empty(), "node's tiers of these functions are not rows of ours: {missing:?}");
    // The table keeps V8's markers; CSV has the plain name and a tier column, as JSON.
    let table = cpuprof().args(["top", log, "--split-tiers", "--all"]).output().unwrap();
    let (name, _, tier) = node.iter().find(|(_, _, t)| t == "turbofan").unwrap();
    assert!(String::from_utf8_lossy(&table.stdout).contains(&format!("*{name}")), "{tier}");
    let csv = cpuprof().args(["top", log, "--split-tiers", "--all", "--format", "csv"]).output().unwrap();
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert!(csv.lines().next().unwrap().ends_with(",tier"));
    assert!(csv.lines().any(|l| l.starts_with(&format!("{name},")) && l.ends_with(",turbofan")), "{csv}");
    // The tree's JSON names them alike.
    let out =
        cpuprof().args(["callers", &format!("*{name}"), log, "--split-tiers", "--format", "json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let callers: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(callers["function"]["name"].as_str(), Some(name.as_str()));
    assert_eq!(callers["function"]["tier"], "turbofan");
}

/// Every `name` (and its `tier` when given) and `entry` in a JSON value.
fn walk(v: &Value, names: &mut Vec<String>, tiers: &mut usize) {
    match v {
        Value::Object(o) => {
            if let Some(Value::String(name)) = o.get("name") {
                names.push(name.clone());
                *tiers += usize::from(o.get("tier").is_some_and(Value::is_string));
            }
            if let Some(Value::String(entry)) = o.get("entry") {
                names.push(entry.clone());
            }
            o.values().for_each(|x| walk(x, names, tiers));
        }
        Value::Array(a) => a.iter().for_each(|x| walk(x, names, tiers)),
        _ => {}
    }
}

/// `--split-tiers` in timeline and blocks: their functions are named plainly in JSON, with the
/// tier apart, as top's rows are (issue 51, item 14).
#[test]
fn timeline_and_blocks_name_tiers_apart() {
    let markers = ['~', '^', '+', '*'];
    for args in [
        &["blocks", "fixtures/ticklog/blocks.log", "--split-tiers", "--all", "--format", "json"][..],
        &["timeline", "fixtures/ticklog/phases.log", "--split-tiers", "--format", "json"],
    ] {
        let out = cpuprof().args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let report: Value = serde_json::from_str(&text).unwrap();
        let mut tiers = 0;
        let mut names = Vec::new();
        walk(&report, &mut names, &mut tiers);
        assert!(tiers > 0, "{args:?}: no tier given");
        assert!(names.iter().all(|n| !n.starts_with(markers)), "{args:?}: a marked name in {names:?}");
    }
}
