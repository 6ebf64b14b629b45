//! `cpuprof annotate`: every fixture's lines against the independent oracle (`top.js --by line
//! --per-function`, DevTools' line-level arithmetic), asked of the library; end to end, the
//! listing, its source's origins and what is said when the source does not fit.

use std::collections::BTreeMap;

use crate::common;

use common::{cpuprof, files, oracle, root};
use serde_json::Value;

/// A line of a function: (name, file, function line, function column, line).
type LineKey = (String, String, i64, i64, i64);

/// Every function's lines with self time, as `annotate --top` gives them (the self on no known
/// line at the function's own line, where the oracle puts it): (self, self_samples).
fn ours(fixture: &str) -> BTreeMap<LineKey, (i64, i64)> {
    let json = common::library_json(&["annotate", fixture, "--top", "100000"])
        .unwrap_or_else(|(_, e)| panic!("annotate failed on {fixture}: {e}"));
    let mut out = BTreeMap::new();
    for f in json["functions"].as_array().expect("functions") {
        let function = &f["function"];
        let key = |line: i64| {
            (
                function["name"].as_str().unwrap().to_owned(),
                function["file"].as_str().unwrap().to_owned(),
                function["line"].as_i64().unwrap_or(0),
                function["column"].as_i64().unwrap_or(0),
                line,
            )
        };
        assert_eq!(f["call_sites"], false, "{fixture}: a .cpuprofile has no call-site lines");
        for line in f["lines"].as_array().unwrap() {
            assert!(line["total"].is_null(), "{fixture}: {line}");
            let amount = (line["self"].as_i64().unwrap(), line["self_samples"].as_i64().unwrap());
            if amount != (0, 0) {
                let at = out.entry(key(line["line"].as_i64().unwrap())).or_insert((0, 0));
                (at.0, at.1) = (at.0 + amount.0, at.1 + amount.1);
            }
        }
        let unlined = (f["unlined"].as_i64().unwrap(), f["unlined_samples"].as_i64().unwrap());
        if unlined != (0, 0) {
            let at = out.entry(key(function["line"].as_i64().unwrap_or(0))).or_insert((0, 0));
            (at.0, at.1) = (at.0 + unlined.0, at.1 + unlined.1);
        }
    }
    out
}

/// The oracle's lines of the functions with a script and self time.
fn theirs(fixture: &str) -> BTreeMap<LineKey, (i64, i64)> {
    let json = oracle(&[fixture, "--by", "line", "--per-function"]);
    let mut self_of: BTreeMap<(String, String, i64, i64), i64> = BTreeMap::new();
    let rows = json["rows"].as_array().expect("rows");
    let function = |r: &Value| {
        (
            r["name"].as_str().unwrap().to_owned(),
            r["file"].as_str().unwrap_or_default().to_owned(),
            r["function_line"].as_i64().unwrap_or(0),
            r["function_column"].as_i64().unwrap_or(0),
        )
    };
    for r in rows {
        *self_of.entry(function(r)).or_default() += r["self"].as_i64().unwrap();
    }
    // Keyed as `ours` keys them: functions that only their kind tells apart (an empty name
    // and a literal "(anonymous)") add up, as there.
    let mut out = BTreeMap::new();
    for r in rows.iter().filter(|r| r["file"].is_string() && self_of[&function(r)] > 0) {
        let amount = (r["self"].as_i64().unwrap(), r["self_samples"].as_i64().unwrap());
        if amount != (0, 0) {
            let (name, file, line, column) = function(r);
            let at = out.entry((name, file, line, column, r["line"].as_i64().unwrap())).or_insert((0, 0));
            (at.0, at.1) = (at.0 + amount.0, at.1 + amount.1);
        }
    }
    out
}

#[test]
fn every_fixture_matches_the_oracle() {
    let mut fixtures = files("fixtures/cpuprofile", &[".cpuprofile", ".cpuprofile.gz"]);
    fixtures.extend(files("fixtures/edge", &[".cpuprofile"]));
    fixtures.extend(files("fixtures/cpuprofile/legacy", &[".cpuprofile"]));
    let mut failures = Vec::new();
    let mut lines = 0;
    for fixture in &fixtures {
        let (ours, theirs) = (ours(fixture), theirs(fixture));
        lines += theirs.len();
        for key in ours.keys().chain(theirs.keys()).collect::<std::collections::BTreeSet<_>>() {
            if ours.get(key) != theirs.get(key) {
                failures.push(format!("{fixture} {key:?}: ours {:?}, oracle {:?}", ours.get(key), theirs.get(key)));
            }
        }
    }
    assert!(lines > 300, "the fixtures have lines with samples: {lines}");
    assert!(failures.is_empty(), "{} lines differ from the oracle:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn every_traces_lines_match_the_oracle() {
    // The oracle turns a trace's profile (its samples' `lines` included) into a .cpuprofile
    // (fixtures/oracle/trace-to-cpuprofile.js), whose lines it computes as for any other.
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut lines = 0;
    for trace in files("fixtures/trace", &[".json", ".json.gz"]) {
        let out = std::process::Command::new("node")
            .args(["fixtures/oracle/trace-to-cpuprofile.js", &trace])
            .current_dir(root())
            .output()
            .expect("node runs the oracle");
        assert!(out.status.success(), "{trace}: {}", String::from_utf8_lossy(&out.stderr));
        let converted = dir.path().join(format!("{}.cpuprofile", trace.replace('/', "_")));
        std::fs::write(&converted, out.stdout).unwrap();
        let (ours, theirs) = (ours(&trace), theirs(converted.to_str().unwrap()));
        lines += theirs.len();
        for key in ours.keys().chain(theirs.keys()).collect::<std::collections::BTreeSet<_>>() {
            if ours.get(key) != theirs.get(key) {
                failures.push(format!("{trace} {key:?}: ours {:?}, oracle {:?}", ours.get(key), theirs.get(key)));
            }
        }
    }
    assert!(lines > 20, "the traces have lines with samples: {lines}");
    assert!(failures.is_empty(), "{} lines differ from the oracle:\n{}", failures.len(), failures.join("\n"));
}

/// Where the fixtures were recorded: their scripts are read below the checkout instead.
const RECORDED_AT: &str = "/work/main";

/// The binary run with `args` (no colour, no terminal width); an `annotate` reads the fixtures'
/// scripts from this checkout (`--source-root`), wherever it is.
fn run(args: &[&str]) -> std::process::Output {
    let mut command = cpuprof();
    command.args(args).env_remove("COLUMNS");
    if args.first() == Some(&"annotate") && !args.contains(&"--source-root") {
        command.args(["--source-root", &format!("{RECORDED_AT}={}", root().display())]);
    }
    command.output().unwrap()
}

#[test]
fn the_listing_marks_the_oracles_hottest_line_and_folds_cold_runs() {
    let fixture = "fixtures/cpuprofile/money.cpuprofile";
    let hottest = theirs(fixture)
        .into_iter()
        .filter(|(k, _)| k.0 == "handleRequest")
        .max_by_key(|(_, (w, _))| *w)
        .map(|(k, _)| k.4)
        .unwrap();
    let out = run(&["annotate", "handleRequest", fixture, "--context", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let marked: Vec<&str> = text.lines().filter(|l| l.contains('▶')).collect();
    assert!(!marked.is_empty() && marked.len() <= 3, "{text}");
    let source = std::fs::read_to_string(root().join("fixtures/workloads/money.js")).unwrap();
    let hot_text = source.lines().nth(hottest as usize - 1).unwrap().trim();
    let first =
        marked.iter().find(|l| l.contains(hot_text)).unwrap_or_else(|| panic!("line {hottest} marked:\n{text}"));
    assert!(first.contains(&format!(" {hottest} ▶ ")), "{first}");
    assert!(text.contains("source: /") && text.contains("(disk)"), "{text}");
    assert!(text.contains("self time only"), "{text}");
    assert!(text.contains("⋮ lines "), "a cold run is folded with --context 1:\n{text}");
    // --full folds nothing.
    let full = String::from_utf8(run(&["annotate", "handleRequest", fixture, "--full"]).stdout).unwrap();
    assert!(!full.contains('⋮'), "{full}");
}

#[test]
fn formats_agree_on_every_line() {
    let fixture = "fixtures/cpuprofile/money.cpuprofile";
    let json: Value =
        serde_json::from_slice(&run(&["annotate", "roundMoney", fixture, "--format", "json"]).stdout).unwrap();
    assert_eq!(json["script"]["origin"], "disk");
    assert!(json["script"]["lines_total"].as_u64().unwrap() > 10);
    let csv = String::from_utf8(run(&["annotate", "roundMoney", fixture, "--format", "csv"]).stdout).unwrap();
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let headers = rows.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let lines = json["lines"].as_array().unwrap();
    let records: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), lines.len());
    for (record, line) in records.iter().zip(lines) {
        assert_eq!(record[column("line")], line["line"].to_string());
        assert_eq!(record[column("self")], line["self"].to_string());
        assert_eq!(&record[column("text")], line["text"].as_str().unwrap());
        assert_eq!(&record[column("total")], "", "no total on a .cpuprofile");
    }
    let markdown = String::from_utf8(run(&["annotate", "roundMoney", fixture, "--format", "markdown"]).stdout).unwrap();
    assert!(markdown.contains("### roundMoney") && markdown.contains("```text"), "{markdown}");
    let hot = lines.iter().max_by_key(|l| l["self"].as_i64().unwrap()).unwrap();
    let pct = format!("{:.1}%", hot["function_pct"].as_f64().unwrap());
    assert!(markdown.lines().any(|l| l.contains(&pct) && l.contains('▶')), "{pct}:\n{markdown}");
}

#[test]
fn a_missing_or_changed_script_is_said_not_misaligned() {
    let fixture = "fixtures/cpuprofile/money.cpuprofile";
    let dir = tempfile::tempdir().unwrap();
    let root_rule = format!("{RECORDED_AT}/fixtures/workloads={}", dir.path().display());
    // Missing: the numbers alone, and why.
    let out = run(&["annotate", "roundMoney", fixture, "--source-root", &root_rule, "--format", "json"]);
    assert!(out.status.success());
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["script"]["origin"], "none");
    assert!(json["lines"].as_array().unwrap().iter().all(|l| l["text"].is_null()));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("no source for") && said.contains("not found"), "{said}");
    assert_eq!(json["warnings"][0].as_str().unwrap(), said.trim().trim_start_matches("cpuprof: warning: "));
    // Changed: shorter than the lines with samples.
    std::fs::write(dir.path().join("money.js"), "// rewritten\n").unwrap();
    let out = run(&["annotate", "roundMoney", fixture, "--source-root", &root_rule]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("changed since the profile was recorded"), "{said}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("rewritten") && text.contains("source: none shown"), "{text}");
    // Changed: the function is no longer where the profile says it starts.
    let moved =
        std::fs::read_to_string(root().join("fixtures/workloads/money.js")).unwrap().replace("roundMoney", "round");
    std::fs::write(dir.path().join("money.js"), moved).unwrap();
    let out = run(&["annotate", "roundMoney", fixture, "--source-root", &root_rule]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("does not name roundMoney"), "{said}");
    // Not changed: a function whose start line does not name it (V8 starts a method at its
    // parameters, a class at its constructor) is shown.
    let source = std::fs::read_to_string(root().join("fixtures/workloads/money.js")).unwrap();
    let unnamed = source.replacen("function roundMoney(", "function (", 1);
    assert_ne!(unnamed, source);
    std::fs::write(dir.path().join("money.js"), unnamed).unwrap();
    let out = run(&["annotate", "roundMoney", fixture, "--source-root", &root_rule, "--format", "json"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["script"]["origin"], "disk", "{json}");
    // A FIFO where the script should be is not read (it could block for ever).
    let fifo = dir.path().join("money.js");
    std::fs::remove_file(&fifo).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let out = run(&["annotate", "roundMoney", fixture, "--source-root", &root_rule]);
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a regular file"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn usage_errors_and_ambiguous_patterns() {
    let fixture = "fixtures/cpuprofile/money.cpuprofile";
    for args in [
        &["annotate", "roundMoney", fixture, "--top", "2"][..],
        &["annotate", fixture][..],
        &["annotate", "roundMoney", fixture, "--source-root", "nothing"][..],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    // As `callers`: a pattern that names nothing in this profile is bad input for it (exit 1).
    assert_eq!(run(&["annotate", "noSuchFunction", fixture]).status.code(), Some(1));
    // A regular expression matching several: the hottest, the others named.
    let out = run(&["annotate", "^(roundMoney|handleRequest)$", fixture, "--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["function"]["name"], "roundMoney");
    assert!(json["warnings"][0].as_str().unwrap().contains("annotating the hottest"), "{json}");
}

#[test]
fn a_source_maps_sources_content_is_shown_when_the_original_is_not_on_disk() {
    // The fixture's map without sourcesContent, given it in a copy: each source's own text.
    let dir = tempfile::tempdir().unwrap();
    let dist = root().join("fixtures/sourcemap/dist");
    let mut map: Value = serde_json::from_slice(&std::fs::read(dist.join("app.js.map")).unwrap()).unwrap();
    let contents: Vec<Value> = map["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| Value::from(std::fs::read_to_string(dist.join(s.as_str().unwrap())).unwrap()))
        .collect();
    map["sourcesContent"] = Value::from(contents);
    std::fs::write(dir.path().join("app.js.map"), map.to_string()).unwrap();
    let maps = dir.path().display().to_string();
    let away = format!("{RECORDED_AT}/fixtures/sourcemap/app={}", dir.path().join("gone").display());
    let out = run(&[
        "annotate",
        "computeInvoiceTotal",
        "fixtures/sourcemap/app.cpuprofile",
        "--source-map-dir",
        &maps,
        "--source-root",
        &away,
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["script"]["origin"], "sourcemap", "{json}");
    let warnings = json["warnings"].to_string();
    assert!(
        !warnings.contains("source for") && !warnings.contains("changed"),
        "the carried text needs no warning: {warnings}"
    );
    let original = std::fs::read_to_string(root().join("fixtures/sourcemap/app/src/pricing.ts")).unwrap();
    let lines = json["lines"].as_array().unwrap();
    assert!(lines.iter().any(|l| l["self"].as_i64().unwrap() > 0));
    for line in lines {
        let n = line["line"].as_u64().unwrap() as usize;
        assert_eq!(line["text"].as_str(), original.lines().nth(n - 1), "line {n}");
    }
    // With the original on disk, the disk wins.
    let out = run(&[
        "annotate",
        "computeInvoiceTotal",
        "fixtures/sourcemap/app.cpuprofile",
        "--source-map-dir",
        &maps,
        "--format",
        "json",
    ]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["script"]["origin"], "disk", "{json}");
}

/// `go tool pprof -list` of the function named exactly `name`: line → (flat, cum), in ns; `None`
/// when several functions have the name (pprof lists them all).
fn go_list(go: &std::path::Path, file: &str, name: &str) -> Option<BTreeMap<i64, (i64, i64)>> {
    let out = std::process::Command::new(go)
        .args(["tool", "pprof", "-sample_index=1", "-unit=ns", "-list", &format!("^{}$", regex::escape(name))])
        // The scripts as recorded, found in this checkout.
        .args([&format!("-trim_path={RECORDED_AT}"), &format!("-source_path={}", root().display()), file])
        .current_dir(root())
        .output()
        .expect("go runs");
    assert!(out.status.success(), "go tool pprof -list {name}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    if text.matches("ROUTINE").count() != 1 {
        return None;
    }
    let value = |s: &str| if s == "." { 0 } else { s.trim_end_matches("ns").parse::<i64>().unwrap() };
    let lines = text.lines().filter_map(|l| {
        let mut words = l.split_whitespace();
        let (flat, cum, line) = (words.next()?, words.next()?, words.next()?);
        let line = line.strip_suffix(':').or_else(|| line.split_once(':').map(|(n, _)| n))?.parse().ok()?;
        Some((line, (value(flat), value(cum))))
    });
    Some(lines.filter(|(_, v)| *v != (0, 0)).collect())
}

#[test]
#[allow(clippy::print_stderr)] // the skip message
fn pprof_lines_match_go_tool_pprof_list() {
    let Some(go) = common::go() else {
        eprintln!("SKIPPED: no go tool pprof");
        return;
    };
    let fixture = "fixtures/pprof/ddpprof-wall-lines.pb.gz";
    let json = common::library_json(&["annotate", fixture, "--top", "12"]).unwrap();
    let functions = json["functions"].as_array().unwrap();
    let mut compared = 0;
    for f in functions {
        assert_eq!(f["call_sites"], true, "pprof frames carry their lines");
        let name = f["function"]["name"].as_str().unwrap();
        // pprof lists lines of the files it can read.
        let file = f["function"]["file"].as_str().unwrap();
        if !file.strip_prefix(RECORDED_AT).is_some_and(|rest| root().join(rest.trim_start_matches('/')).is_file()) {
            continue;
        }
        let ours: BTreeMap<i64, (i64, i64)> = f["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| (l["line"].as_i64().unwrap(), (l["self"].as_i64().unwrap(), l["total"].as_i64().unwrap())))
            .filter(|(_, v)| *v != (0, 0))
            .collect();
        assert!(!ours.is_empty(), "{name}");
        let Some(theirs) = go_list(&go, fixture, name) else { continue };
        assert_eq!(ours, theirs, "{name}: annotate's self/total against go tool pprof -list's flat/cum");
        compared += 1;
    }
    assert!(compared >= 5, "{compared} functions compared");
}

#[test]
#[allow(clippy::print_stderr)] // the skip message
fn what_convert_writes_lists_each_lines_self_as_annotate_does() {
    let Some(go) = common::go() else {
        eprintln!("SKIPPED: no go tool pprof");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for fixture in ["fixtures/cpuprofile/money.cpuprofile", "fixtures/lines/hot-lines.cpuprofile"] {
        let pprof = dir.path().join("converted.pb.gz");
        let out = cpuprof().args(["convert", fixture, "-o"]).arg(&pprof).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let json = common::library_json(&["annotate", fixture, "--top", "4"]).unwrap();
        for f in json["functions"].as_array().unwrap() {
            let name = f["function"]["name"].as_str().unwrap();
            // pprof lists a function's lines from its first on; V8 puts the lines of what it
            // inlined into a function (other functions' lines, maybe above) in its positionTicks.
            let first = f["function"]["line"].as_i64().unwrap_or(0);
            let ours: BTreeMap<i64, i64> = f["lines"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| (l["line"].as_i64().unwrap(), l["self"].as_i64().unwrap()))
                .filter(|(line, v)| *v != 0 && *line >= first)
                .collect();
            let Some(theirs) = go_list(&go, pprof.to_str().unwrap(), name) else { continue };
            // Flat only: a .cpuprofile has no call-site lines (cum is at the function's line).
            let flat: BTreeMap<i64, i64> =
                theirs.into_iter().map(|(l, (flat, _))| (l, flat)).filter(|(_, v)| *v != 0).collect();
            assert_eq!(ours, flat, "{fixture} {name}: annotate's self against go tool pprof -list's flat");
            compared += 1;
        }
    }
    assert!(compared >= 4, "{compared} functions compared");
}

#[test]
#[allow(clippy::print_stderr)] // the skip message
fn top_by_line_on_pprof_matches_go_tool_pprof_top_lines() {
    let Some(go) = common::go() else {
        eprintln!("SKIPPED: no go tool pprof");
        return;
    };
    let fixture = "fixtures/pprof/ddpprof-wall-lines.pb.gz";
    let out = std::process::Command::new(&go)
        .args(["tool", "pprof", "-sample_index=1", "-unit=ns", "-top", "-lines", "-nodecount=1000000"])
        .args(["-nodefraction=0", "-edgefraction=0", "-symbolize=none", fixture])
        .current_dir(root())
        .output()
        .expect("go runs");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let value = |s: &str| s.trim_end_matches("ns").parse::<i64>().unwrap();
    let theirs: BTreeMap<String, (i64, i64)> = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("flat "))
        .skip(1)
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            (words[5..].join(" "), (value(words[0]), value(words[3])))
        })
        .collect();
    let ours = common::library_json(&["top", fixture, "--by", "line", "--all"]).unwrap();
    let mut compared = 0;
    for row in ours["rows"].as_array().unwrap() {
        let (Some(file), Some(line)) = (row["file"].as_str(), row["line"].as_i64()) else { continue };
        let label = format!("{} {}:{line}", row["name"].as_str().unwrap(), common::clean(file));
        let Some(theirs) = theirs.get(&label) else { continue };
        assert_eq!((row["self"].as_i64().unwrap(), row["total"].as_i64().unwrap()), *theirs, "{label}");
        compared += 1;
    }
    assert!(compared >= 40, "{compared} lines compared of {}", theirs.len());
}

/// A function of a tick log: (name, file, line, column).
type FunctionKey = (String, String, i64, i64);
/// Its self and total ticks, and each line's (self, total); the line 0 for ticks on no line.
type Ticks = ((i64, i64), BTreeMap<i64, (i64, i64)>);

/// The oracle's functions with self ticks and a script (`ticklog-lines.js`, SPEC §15), with
/// cpuprof's leaf rule (node's: the libraries first, `--libraries-first`).
fn oracle_ticks(log: &str, unroll: bool) -> BTreeMap<FunctionKey, Ticks> {
    let mut args = vec![log, "--format", "json", "--libraries-first"];
    if unroll {
        args.push("--unroll-inlined");
    }
    let json = common::oracle_script("fixtures/oracle/ticklog-lines.js", &args);
    let mut out = BTreeMap::new();
    for f in json["functions"].as_array().unwrap() {
        let (Some(file), true) = (f["file"].as_str(), f["self"].as_i64().unwrap() > 0) else { continue };
        let key = (
            f["name"].as_str().unwrap().to_owned(),
            file.to_owned(),
            f["line"].as_i64().unwrap_or(0),
            f["column"].as_i64().unwrap_or(0),
        );
        let mut lines = BTreeMap::new();
        for l in f["lines"].as_array().unwrap() {
            let line = l["line"].as_i64().unwrap_or(0);
            // Ticks on no line: self only, as `unlined` has them.
            let total = if line == 0 { 0 } else { l["total"].as_i64().unwrap() };
            lines.insert(line, (l["self"].as_i64().unwrap(), total));
        }
        lines.retain(|_, v| *v != (0, 0));
        out.insert(key, ((f["self"].as_i64().unwrap(), f["total"].as_i64().unwrap()), lines));
    }
    out
}

/// `annotate --top` of every function with self ticks, in ticks.
fn our_ticks(log: &str, unroll: bool) -> BTreeMap<FunctionKey, Ticks> {
    let mut args =
        vec!["annotate", log, "--top", "100000", "--weight", "samples", "--include-idle", "--format", "json"];
    if !unroll {
        args.push("--no-unroll-inlined");
    }
    let out = run(&args);
    assert!(out.status.success(), "{log}: {}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut ours = BTreeMap::new();
    for f in json["functions"].as_array().unwrap() {
        let function = &f["function"];
        if function["kind"] != "js" {
            continue;
        }
        let key = (
            function["name"].as_str().unwrap().to_owned(),
            function["file"].as_str().unwrap().to_owned(),
            function["line"].as_i64().unwrap_or(0),
            function["column"].as_i64().unwrap_or(0),
        );
        let mut lines: BTreeMap<i64, (i64, i64)> = f["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| (l["line"].as_i64().unwrap(), (l["self"].as_i64().unwrap(), l["total"].as_i64().unwrap_or(0))))
            .collect();
        lines.insert(0, (f["unlined_samples"].as_i64().unwrap(), 0));
        lines.retain(|_, v| *v != (0, 0));
        let amounts = (function["self_samples"].as_i64().unwrap(), function["total_samples"].as_i64().unwrap());
        ours.insert(key, (amounts, lines));
    }
    ours
}

#[test]
fn tick_log_lines_match_the_oracle_with_and_without_unrolling() {
    let mut logs = vec!["fixtures/lines/hot-lines.log".to_owned(), "fixtures/lines/inlined.log.gz".to_owned()];
    logs.extend(files("fixtures/ticklog", &[".log"]));
    let mut failures = Vec::new();
    let mut lined = 0;
    for log in &logs {
        for unroll in [false, true] {
            let (ours, theirs) = (our_ticks(log, unroll), oracle_ticks(log, unroll));
            lined += theirs.values().map(|(_, lines)| lines.keys().filter(|l| **l > 0).count()).sum::<usize>();
            for key in ours.keys().chain(theirs.keys()).collect::<std::collections::BTreeSet<_>>() {
                if ours.get(key) != theirs.get(key) {
                    failures.push(format!(
                        "{log} unroll={unroll} {key:?}:\n  ours   {:?}\n  oracle {:?}",
                        ours.get(key),
                        theirs.get(key)
                    ));
                }
            }
        }
    }
    assert!(lined > 20, "lines compared: {lined}");
    assert!(failures.is_empty(), "{} functions differ from the oracle:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn inlined_functions_get_their_own_time_under_their_caller_as_with_inlining_off() {
    // The same workload recorded with inlining off (.cpuprofile): priceOrder's share of the
    // program's JavaScript self time, within 5 points of the tick log's unrolled one.
    let share = |json: &Value| {
        let rows = json["rows"].as_array().unwrap();
        let js: i64 = rows.iter().filter(|r| r["kind"] == "js").map(|r| r["self_samples"].as_i64().unwrap()).sum();
        let price = rows.iter().find(|r| r["name"] == "priceOrder").map_or(0, |r| r["self_samples"].as_i64().unwrap());
        100.0 * price as f64 / js as f64
    };
    let top = |args: &[&str]| -> Value {
        let out = run(&[&["top", "--all", "--format", "json", "--weight", "samples"][..], args].concat());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let off = share(&top(&["fixtures/lines/inlined.noinline.cpuprofile"]));
    let unrolled = share(&top(&["fixtures/lines/inlined.log.gz"]));
    let v8_view = share(&top(&["fixtures/lines/inlined.log.gz", "--no-unroll-inlined"]));
    assert!(off > 50.0, "priceOrder holds most of the work: {off:.1}%");
    assert!((unrolled - off).abs() <= 5.0, "unrolled {unrolled:.1}% against {off:.1}% with inlining off");
    assert!(v8_view < 5.0, "V8's view keeps its time in processBatch: {v8_view:.1}%");
    // Under its caller, at the call's line.
    let callers = run(&["callers", "priceOrder", "fixtures/lines/inlined.log.gz", "--format", "json"]);
    let callers: Value = serde_json::from_slice(&callers.stdout).unwrap();
    assert_eq!(callers["callers"][0]["name"], "processBatch", "{callers}");
}

/// The planned hot lines of fixtures/lines/hot-lines.js (its header): (function, line, share of
/// the function's self, %), the hottest first.
const PLANNED: &[(&str, i64, f64)] = &[("mixRows", 29, 70.0), ("mixRows", 30, 25.0), ("scoreKeys", 41, 93.0)];

#[test]
fn both_recordings_put_the_planned_lines_on_top_within_10_points() {
    for recording in ["fixtures/lines/hot-lines.cpuprofile", "fixtures/lines/hot-lines.log"] {
        for function in ["mixRows", "scoreKeys"] {
            let out = run(&["annotate", function, recording, "--format", "json"]);
            assert!(out.status.success(), "{recording}: {}", String::from_utf8_lossy(&out.stderr));
            let json: Value = serde_json::from_slice(&out.stdout).unwrap();
            let mut lines: Vec<(i64, f64)> = json["lines"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| (l["line"].as_i64().unwrap(), l["function_pct"].as_f64().unwrap()))
                .collect();
            lines.sort_by(|a, b| b.1.total_cmp(&a.1));
            let planned: Vec<&(&str, i64, f64)> = PLANNED.iter().filter(|p| p.0 == function).collect();
            for (rank, (_, line, share)) in planned.iter().enumerate() {
                let (got_line, got_share) = lines[rank];
                assert_eq!(got_line, *line, "{recording} {function}: line {line} is hottest #{}: {lines:?}", rank + 1);
                assert!(
                    (got_share - share).abs() <= 10.0,
                    "{recording} {function} line {line}: {got_share:.1}% against {share}%"
                );
            }
        }
    }
}

#[test]
fn a_tick_logs_script_source_is_shown_when_the_script_is_not_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let away = format!("{RECORDED_AT}={}", dir.path().display());
    let out = run(&["annotate", "mixRows", "fixtures/lines/hot-lines.log", "--source-root", &away, "--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["script"]["origin"], "script-source", "{json}");
    assert_eq!(json["call_sites"], true, "a tick log's frames carry their lines");
    let script = std::fs::read_to_string(root().join("fixtures/lines/hot-lines.js")).unwrap();
    for line in json["lines"].as_array().unwrap() {
        let n = line["line"].as_u64().unwrap() as usize;
        assert_eq!(line["text"].as_str(), script.lines().nth(n - 1), "line {n}");
    }
}

#[test]
fn a_file_on_disk_that_is_not_the_script_a_tick_log_recorded_is_not_shown() {
    // One line inserted above the hot loop: every line below it would be one off.
    let dir = tempfile::tempdir().unwrap();
    let source = std::fs::read_to_string(root().join("fixtures/lines/hot-lines.js")).unwrap();
    let mut lines: Vec<&str> = source.lines().collect();
    lines.insert(26, "  // a comment added since");
    std::fs::write(dir.path().join("hot-lines.js"), lines.join("\n") + "\n").unwrap();
    let rule = format!("{RECORDED_AT}/fixtures/lines={}", dir.path().display());
    let out = run(&["annotate", "mixRows", "fixtures/lines/hot-lines.log", "--source-root", &rule, "--format", "json"]);
    assert!(out.status.success());
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["script"]["origin"], "script-source", "{json}");
    assert!(json["warnings"].to_string().contains("not the script the profile recorded"), "{json}");
    let hottest = json["lines"].as_array().unwrap().iter().max_by_key(|l| l["self"].as_i64().unwrap()).unwrap();
    assert!(hottest["text"].as_str().unwrap().contains("LINE-A"), "{hottest}");
}

#[test]
fn lines_as_far_apart_as_a_profile_may_say_are_listed_at_once() {
    // A .cpuprofile whose positionTicks name line 4294967295 (and 1), its script missing.
    let dir = tempfile::tempdir().unwrap();
    let profile = serde_json::json!({
        "nodes": [
            {"id": 1, "callFrame": {"functionName": "(root)", "scriptId": "0", "url": "", "lineNumber": -1, "columnNumber": -1}, "children": [2]},
            {"id": 2, "callFrame": {"functionName": "far", "scriptId": "1", "url": "file:///nowhere/far.js", "lineNumber": 0, "columnNumber": 0},
             "positionTicks": [{"line": 1, "ticks": 1}, {"line": u32::MAX, "ticks": 1}]}
        ],
        "startTime": 0, "endTime": 3000, "samples": [2, 2], "timeDeltas": [1000, 1000]
    });
    let path = dir.path().join("far.cpuprofile");
    std::fs::write(&path, profile.to_string()).unwrap();
    for extra in [&[][..], &["--full"][..], &["--context", "18446744073709551615"][..]] {
        let out = std::process::Command::new("timeout")
            .arg("20")
            .arg(env!("CARGO_BIN_EXE_cpuprof"))
            .args(["annotate", "far", path.to_str().unwrap(), "--format", "json"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{extra:?}: {:?} {}", out.status, String::from_utf8_lossy(&out.stderr));
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        let lines: Vec<i64> = json["lines"].as_array().unwrap().iter().map(|l| l["line"].as_i64().unwrap()).collect();
        assert_eq!(lines, vec![1, 4_294_967_295], "{extra:?}");
    }
}

#[test]
fn diff_explains_inlining_on_tick_logs_only_in_v8s_view() {
    // fixtures/inline's program as tick logs: TurboFan inlines priceOrder in NEW only.
    let (base, new) = ("fixtures/inline/base.1.log.gz", "fixtures/inline/new.1.log.gz");
    let diff = |extra: &[&str]| {
        let out =
            cpuprof().args(["diff", base, new, "--explain", "3"]).args(extra).env_remove("COLUMNS").output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    // V8's view: priceOrder's time moved into processBatch, and diff says why.
    let v8 = diff(&["--no-unroll-inlined"]);
    assert!(v8.contains("time moved from priceOrder into processBatch (priceOrder likely inlined in NEW)"), "{v8}");
    // Unrolled: priceOrder keeps its own time in NEW; no move to explain.
    let unrolled = diff(&[]);
    assert!(!unrolled.contains("likely inlined"), "{unrolled}");
}
