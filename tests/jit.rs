//! `cpuprof jit` on real tick logs of planned JIT events (fixtures/jit: a call site turned
//! polymorphic, a Smi overflow, a function too large to inline, a hot loop), against V8's own
//! accounts of the same runs: `node --prof-process --preprocess` (its `code[].deopt`),
//! `--trace-deopt` (the bailouts) and `--trace-turbo-inlining`.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

use crate::common;

const POLY: &str = "fixtures/jit/jit.log.gz";
const MONO: &str = "fixtures/jit/jit-mono.log.gz";

/// `jit` of every JavaScript function with self time, as JSON.
fn all_functions(log: &str) -> Value {
    common::library_json(&["jit", log, "-n", "100000"]).unwrap()
}

/// A function's key as V8's tools name it: `name file:line:column`.
fn key(f: &Value) -> String {
    format!("{} {}:{}:{}", f["name"].as_str().unwrap(), f["file"].as_str().unwrap(), f["line"], f["column"])
}

fn gunzip_json(path: &str) -> Value {
    let out = Command::new("gzip").arg("-dc").arg(common::root().join(path)).output().expect("gzip");
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each function's deopts as (reason, kind, `<position> inlined at <…>` as V8 prints it), counted.
type Deopts = BTreeMap<String, BTreeMap<(String, String, String), u64>>;

fn our_deopts(json: &Value) -> Deopts {
    let mut out = Deopts::new();
    for f in json["functions"].as_array().unwrap() {
        for d in f["deopts"].as_array().unwrap() {
            let mut text = format!("<{}>", d["position"].as_str().unwrap());
            for at in d["inlined_at"].as_array().unwrap() {
                text.push_str(&format!(" inlined at <{}>", at.as_str().unwrap()));
            }
            let group = (d["reason"].as_str().unwrap().to_owned(), d["kind"].as_str().unwrap().to_owned(), text);
            *out.entry(key(f)).or_default().entry(group).or_default() += d["count"].as_u64().unwrap();
        }
    }
    out
}

#[test]
fn every_deopt_is_the_one_node_prof_process_preprocess_reads() {
    for (log, preprocessed) in
        [(POLY, "fixtures/jit/jit.preprocess.json.gz"), (MONO, "fixtures/jit/jit-mono.preprocess.json.gz")]
    {
        let theirs_json = gunzip_json(preprocessed);
        let mut theirs = Deopts::new();
        for code in theirs_json["code"].as_array().unwrap() {
            let Some(d) = code.get("deopt") else { continue };
            let kind = d["bailoutType"].as_str().unwrap().trim_start_matches("deopt-").to_owned();
            let group = (d["reason"].as_str().unwrap().to_owned(), kind, d["posText"].as_str().unwrap().to_owned());
            let name = code["name"].as_str().unwrap().to_owned();
            *theirs.entry(name).or_default().entry(group).or_default() += 1;
        }
        assert!(!theirs.is_empty(), "{preprocessed}: no deopt");
        let ours = our_deopts(&all_functions(log));
        assert_eq!(ours, theirs, "{log}");
    }
}

#[test]
fn every_deopt_is_a_bailout_trace_deopt_printed() {
    for (log, trace) in [(POLY, "fixtures/jit/jit.trace-deopt.txt"), (MONO, "fixtures/jit/jit-mono.trace-deopt.txt")] {
        // `[bailout (kind: deopt-eager, reason: wrong map): begin. deoptimizing … <JSFunction area (sfi = …)>`
        let text = std::fs::read_to_string(common::root().join(trace)).unwrap();
        let mut theirs: BTreeMap<(String, String, String), u64> = BTreeMap::new();
        for line in text.lines().filter(|l| l.starts_with("[bailout")) {
            let kind = line.split("kind: deopt-").nth(1).unwrap().split(',').next().unwrap().to_owned();
            let reason = line.split("reason: ").nth(1).unwrap().split("):").next().unwrap().to_owned();
            let function = line.split("<JSFunction ").nth(1).unwrap().split(" (sfi").next().unwrap().to_owned();
            *theirs.entry((function, reason, kind)).or_default() += 1;
        }
        let mut ours: BTreeMap<(String, String, String), u64> = BTreeMap::new();
        for f in all_functions(log)["functions"].as_array().unwrap() {
            for d in f["deopts"].as_array().unwrap() {
                let group = (
                    f["name"].as_str().unwrap().to_owned(),
                    d["reason"].as_str().unwrap().to_owned(),
                    d["kind"].as_str().unwrap().to_owned(),
                );
                *ours.entry(group).or_default() += d["count"].as_u64().unwrap();
            }
        }
        assert_eq!(ours, theirs, "{log}");
    }
}

#[test]
fn the_planned_events_are_named() {
    let json = all_functions(POLY);
    let function = |name: &str| {
        json["functions"].as_array().unwrap().iter().find(|f| f["name"] == name).unwrap_or_else(|| panic!("{name}"))
    };
    // The polymorphic call site: `area` inlined into sumAreas deoptimized it on a wrong map.
    let sum_areas = function("sumAreas");
    assert!(sum_areas["inlined"].as_array().unwrap().iter().any(|c| c["name"] == "area"), "{sum_areas}");
    assert!(sum_areas["deopts"].as_array().unwrap().iter().any(|d| d["reason"] == "wrong map"), "{sum_areas}");
    // The overflow.
    let sum_to = function("sumTo");
    let reasons: Vec<&str> =
        sum_to["deopts"].as_array().unwrap().iter().map(|d| d["reason"].as_str().unwrap()).collect();
    assert!(reasons.contains(&"overflow") && reasons.contains(&"not a Smi"), "{reasons:?}");
    // The function too large to inline (--trace-turbo-inlining refused it, reason 5): its hot
    // caller's optimized code calls it, and the verdict says so.
    let inlining = std::fs::read_to_string(common::root().join("fixtures/jit/jit.trace-inlining.txt")).unwrap();
    assert!(inlining.contains("<SharedFunctionInfo bigMix>} for inlining (reason: 5)"));
    let call_big = function("callBig");
    assert_eq!(call_big["finding"], "not-inlined", "{call_big}");
    assert_eq!(call_big["not_inlined"][0]["name"], "bigMix");
    assert!(call_big["verdict"].as_str().unwrap().contains("bigMix"));
    // The hot loop reached TurboFan and stayed.
    let hot = function("hotLoop");
    assert!(hot["optimizations"].as_u64().unwrap() >= 1 && hot["deopt_count"] == 0, "{hot}");
    // Tiers add up to the function's self; times are ns, samples the ticks.
    for f in json["functions"].as_array().unwrap() {
        let tiers = &f["tier_samples"];
        let sum: i64 = ["interpreted", "sparkplug", "maglev", "turbofan", "unknown"]
            .iter()
            .map(|t| tiers[t].as_i64().unwrap())
            .sum();
        assert_eq!(sum, f["self_samples"].as_i64().unwrap(), "{}", f["name"]);
        assert_eq!(f["tiers"]["turbofan"].as_i64().unwrap(), tiers["turbofan"].as_i64().unwrap() * 1_000_000);
    }
    // Without the polymorphic call site, no wrong map.
    let mono = our_deopts(&all_functions(MONO));
    assert!(mono.values().flat_map(|d| d.keys()).all(|(reason, _, _)| reason != "wrong map"), "{mono:?}");
}

#[test]
fn a_cpuprofile_says_what_it_lacks_and_shows_deopt_reasons_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let mut profile: Value = serde_json::from_str(
        &std::fs::read_to_string(common::root().join("fixtures/lines/hot-lines.cpuprofile")).unwrap(),
    )
    .unwrap();
    let hostile = "Optimization disabled\u{1b}[31m <b>";
    let mut named = None;
    for node in profile["nodes"].as_array_mut().unwrap() {
        if node["callFrame"]["url"].as_str().unwrap_or("").ends_with("hot-lines.js")
            && !node["callFrame"]["functionName"].as_str().unwrap_or("").is_empty()
        {
            named = Some(node["callFrame"]["functionName"].as_str().unwrap().to_owned());
            node["deoptReason"] = Value::String(hostile.to_owned());
            break;
        }
    }
    let name = named.unwrap();
    let path = dir.path().join("x.cpuprofile");
    std::fs::write(&path, profile.to_string()).unwrap();
    let out =
        common::cpuprof().args(["jit", path.to_str().unwrap(), "-n", "100", "--format", "json"]).output().unwrap();
    assert!(out.status.success());
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["coverage"], serde_json::json!({"tiers": false, "code_objects": false, "deopts": false}));
    let f = json["functions"].as_array().unwrap().iter().find(|f| f["name"] == name.as_str()).unwrap();
    assert_eq!(f["not_optimized"], "Optimization disabled\\u{1b}[31m <b>");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("records no V8 tiers"), "{stderr}");
    assert!(json["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("records no V8 tiers")));
    let table = common::cpuprof().args(["jit", path.to_str().unwrap(), &name]).output().unwrap();
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.contains("V8 would not optimize it: Optimization disabled\\u{1b}[31m <b>"), "{text}");
    assert!(!text.contains('\u{1b}'));
}

#[test]
fn jit_offers_only_its_formats() {
    let out = common::cpuprof().args(["jit", POLY, "--format", "csv"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let md = common::cpuprof().args(["jit", POLY, "sumTo", "--format", "markdown"]).output().unwrap();
    let text = String::from_utf8(md.stdout).unwrap();
    assert!(text.contains("### sumTo") && text.contains("- 2 deopts"), "{text}");
}

/// Each function's JIT facts as the independent oracle counts them (`ticklog-jit.js`, SPEC §16)
/// from the same log, with cpuprof's leaf rule (node's: the libraries first) and inlined
/// functions unrolled (cpuprof's default): tiers of self ticks, code objects, deopts, inlined.
#[test]
fn tiers_code_objects_deopts_and_inlining_match_the_oracle() {
    for log in [POLY, MONO, "fixtures/lines/inlined.log.gz", "fixtures/inline/new.1.log.gz"] {
        let theirs = common::oracle_script(
            "fixtures/oracle/ticklog-jit.js",
            &[log, "--unroll-inlined", "--libraries-first", "--format", "json"],
        );
        let ours = common::library_json(&["jit", log, "-n", "100000", "--weight", "samples"]).unwrap();
        let ours: BTreeMap<String, &Value> =
            ours["functions"].as_array().unwrap().iter().map(|f| (key(f), f)).collect();
        let mut compared = 0;
        for f in theirs["functions"].as_array().unwrap() {
            if f["self"].as_i64().unwrap() == 0 {
                continue;
            }
            let k = key(f);
            let ours = ours.get(&k).unwrap_or_else(|| panic!("{log}: {k} missing"));
            assert_eq!(ours["self"], f["self"], "{log}: {k}");
            for tier in ["interpreted", "sparkplug", "maglev", "turbofan"] {
                assert_eq!(ours["tiers"][tier], f["tiers"][tier], "{log}: {k} {tier}");
            }
            assert_eq!(ours["code_objects"], f["code_objects"], "{log}: {k}");
            let deopts = |list: &Value, count: &str| -> BTreeMap<String, u64> {
                list.as_array()
                    .unwrap()
                    .iter()
                    .map(|d| {
                        (
                            format!("{} {} {} {}", d["reason"], d["kind"], d["position"], d["inlined_at"]),
                            d[count].as_u64().unwrap(),
                        )
                    })
                    .collect()
            };
            assert_eq!(deopts(&ours["deopts"], "count"), deopts(&f["deopts"], "count"), "{log}: {k}");
            let mut inlined: Vec<String> =
                ours["inlined"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_owned()).collect();
            inlined.sort();
            let mut expected: Vec<String> = f["inlined"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap().split(' ').next().unwrap().to_owned())
                .collect();
            expected.sort();
            assert_eq!(inlined, expected, "{log}: {k}");
            compared += 1;
        }
        assert!(compared >= 2, "{log}: {compared} functions compared");
    }
}

/// The oracle's account of a log's functions, by `name file:line:column`.
fn oracle_functions(log: &str) -> BTreeMap<String, Value> {
    let theirs = common::oracle_script(
        "fixtures/oracle/ticklog-jit.js",
        &[log, "--unroll-inlined", "--libraries-first", "--format", "json"],
    );
    theirs["functions"].as_array().unwrap().iter().map(|f| (key(f), f.clone())).collect()
}

/// The explained row's function in the oracle's account (same name and file, nearest line).
fn oracle_of<'a>(functions: &'a BTreeMap<String, Value>, row: &Value) -> Option<&'a Value> {
    functions
        .values()
        .filter(|f| f["name"] == row["name"] && f["file"] == row["file"])
        .min_by_key(|f| f["line"].as_i64().unwrap_or(0).abs_diff(row["line"].as_i64().unwrap_or(0)))
}

/// Deopt groups as `reason kind position inlined_at` → count.
fn deopt_groups(list: &Value) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for d in list.as_array().unwrap() {
        let group = format!("{} {} {} {}", d["reason"], d["kind"], d["position"], d["inlined_at"]);
        *out.entry(group).or_default() += d["count"].as_u64().unwrap();
    }
    out
}

/// `diff --explain` on tick logs states what V8 did differently to each explained function,
/// and every fact agrees with the oracle's account of each log: the self samples by tier, the
/// deopt groups one side has and the other has not, the callees one side's code inlined and
/// the other's did not. The planned events are named: the polymorphic call site's deopts
/// (mono → poly), the tier shift of running with V8's optimizing tiers off (mono → sparkplug).
#[test]
fn diff_explain_states_the_jit_changes_the_logs_record() {
    const SPARKPLUG: &str = "fixtures/jit/jit-sparkplug.log.gz";
    let mut named = Vec::new();
    let oracle: BTreeMap<&str, BTreeMap<String, Value>> =
        [MONO, POLY, SPARKPLUG].into_iter().map(|log| (log, oracle_functions(log))).collect();
    for (base, new) in [(MONO, POLY), (POLY, MONO), (MONO, SPARKPLUG)] {
        let json = common::library_json(&["diff", base, new, "--explain", "6"]).unwrap();
        let (theirs_base, theirs_new) = (&oracle[base], &oracle[new]);
        let mut explained = 0;
        for row in json["rows"].as_array().unwrap().iter().filter(|r| !r["explain"].is_null()) {
            let name = row["name"].as_str().unwrap();
            let jit = &row["explain"]["jit"];
            assert!(jit.is_object(), "{base} → {new}: {name} has no JIT facts");
            if !jit["compared"].as_bool().unwrap() {
                // New or gone: nothing changed, whatever V8 did on the one side.
                assert!(jit["text"].as_array().unwrap().is_empty(), "{name}: {jit}");
                continue;
            }
            let (Some(b), Some(n)) = (oracle_of(theirs_base, row), oracle_of(theirs_new, row)) else {
                // Not a JavaScript function of the logs (a builtin, C++): nothing recorded.
                assert!(jit["new_deopts"].as_array().unwrap().is_empty(), "{name}: {jit}");
                continue;
            };
            for (side, theirs) in [("base", b), ("new", n)] {
                for tier in ["interpreted", "sparkplug", "maglev", "turbofan"] {
                    assert_eq!(
                        jit[side]["tier_samples"][tier], theirs["tiers"][tier],
                        "{base} → {new}: {name} {side} {tier}"
                    );
                }
                assert_eq!(jit[side]["code_objects"], theirs["code_objects"], "{base} → {new}: {name} {side}");
            }
            let only = |a: &Value, b: &Value| -> BTreeMap<String, u64> {
                let other = deopt_groups(b);
                deopt_groups(a).into_iter().filter(|(k, _)| !other.contains_key(k)).collect()
            };
            assert!(jit["deopts_compared"].as_bool().unwrap());
            assert_eq!(deopt_groups(&jit["new_deopts"]), only(&n["deopts"], &b["deopts"]), "{base} → {new}: {name}");
            assert_eq!(deopt_groups(&jit["gone_deopts"]), only(&b["deopts"], &n["deopts"]), "{base} → {new}: {name}");
            let inlined = |f: &Value| -> Vec<String> {
                f["inlined"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.as_str().unwrap().split(' ').next().unwrap().to_owned())
                    .collect()
            };
            let callee_names = |list: &Value| -> Vec<String> {
                list.as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_owned()).collect()
            };
            for (ours, from, to) in [("no_longer_inlined", b, n), ("newly_inlined", n, b)] {
                let expected: Vec<String> = inlined(from).into_iter().filter(|c| !inlined(to).contains(c)).collect();
                let optimized = to["tiers"]["turbofan"].as_i64().unwrap() + to["tiers"]["maglev"].as_i64().unwrap() > 0;
                let ours = callee_names(&jit[ours]);
                assert!(ours.iter().all(|c| expected.contains(c)), "{base} → {new}: {name}: {ours:?} ⊄ {expected:?}");
                if optimized {
                    assert_eq!(ours, expected, "{base} → {new}: {name}");
                }
            }
            if let Some(shift) = jit["tier_shift"].as_object() {
                let share = |f: &Value| {
                    let t = &f["tiers"];
                    let opt = t["maglev"].as_f64().unwrap() + t["turbofan"].as_f64().unwrap();
                    opt / (opt + t["interpreted"].as_f64().unwrap() + t["sparkplug"].as_f64().unwrap())
                };
                assert!((shift["base_optimized"].as_f64().unwrap() - share(b)).abs() < 1e-9, "{name}");
                assert!((shift["new_optimized"].as_f64().unwrap() - share(n)).abs() < 1e-9, "{name}");
                assert!((share(b) - share(n)).abs() >= 0.1, "{name}: a shift under 10 points was named");
            }
            for text in jit["text"].as_array().unwrap() {
                named.push(format!("{base} → {new}: {name}: {}", text.as_str().unwrap()));
            }
            explained += 1;
        }
        assert!(explained > 0, "{base} → {new}: nothing explained");
    }
    let said = |needle: &str| named.iter().any(|t| t.contains(needle));
    let (mono_poly, poly_mono, mono_sp) = (
        format!("{MONO} → {POLY}: sumAreas"),
        format!("{POLY} → {MONO}: sumAreas"),
        format!("{MONO} → {SPARKPLUG}: sumTo"),
    );
    assert!(said(&format!("{mono_poly}: V8: deopts in NEW, none in BASE: 2× wrong map (eager)")), "{named:#?}");
    assert!(said(&format!("{poly_mono}: V8: deopts in BASE, none in NEW: 2× wrong map (eager)")), "{named:#?}");
    assert!(said(&format!("{mono_sp}: V8: optimized code ran 100% of its self time in BASE, 0% in NEW")), "{named:#?}");
    // The table says the same lines.
    let out =
        common::cpuprof().args(["diff", MONO, POLY, "--explain", "6"]).current_dir(common::root()).output().unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("  V8: deopts in NEW, none in BASE: 2× wrong map (eager) at "), "{table}");
}

/// Reading with JIT records keeps each sample's tier beside its row, not in its frames: hiding,
/// collapsing recursion and `--between` see the functions `top` sees, and adding `--explain` to
/// a diff changes nothing of its table. Formats whose tiers only come apart (perf script) still
/// give them.
#[test]
fn filters_and_windows_see_functions_not_tiers() {
    let deep = "fixtures/ticklog/deep-recursion.log";
    let jit = common::library_json(&["jit", deep, "-n", "100", "--collapse-recursion"]).unwrap();
    let mut compared = 0;
    for f in jit["functions"].as_array().unwrap() {
        let pattern = format!("{}@{}:{}", f["name"].as_str().unwrap(), f["file"].as_str().unwrap(), f["line"]);
        let callees = common::library_json(&["callees", &pattern, deep, "--collapse-recursion"]).unwrap();
        assert_eq!(callees["function"]["total"], f["total"], "{pattern}");
        compared += 1;
    }
    assert!(compared >= 2);

    let top = common::library_json(&["top", POLY, "--between", "polyPhase", "sumTo"]).unwrap();
    let jit = common::library_json(&["jit", POLY, "--between", "polyPhase", "sumTo"]).unwrap();
    assert_eq!(top["summary"]["samples"], jit["samples"]);

    let rows = |explain: bool| {
        let mut args = vec!["diff", MONO, POLY, "--hide", "^area$", "--format", "json"];
        if explain {
            args.extend(["--explain", "3"]);
        }
        let out = common::cpuprof().args(&args).current_dir(common::root()).output().unwrap();
        let mut json: Value = serde_json::from_slice(&out.stdout).unwrap();
        for row in json["rows"].as_array_mut().unwrap() {
            row.as_object_mut().unwrap().remove("explain");
        }
        json["rows"].clone()
    };
    let plain = rows(false);
    assert!(plain.as_array().unwrap().iter().all(|r| r["name"] != "area"));
    assert_eq!(plain, rows(true));

    let perf = common::library_json(&["jit", "fixtures/perf/fib.perf-script.txt", "-n", "3"]).unwrap();
    assert_eq!(perf["coverage"]["tiers"], true);
}
