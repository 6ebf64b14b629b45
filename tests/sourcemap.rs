//! `--source-maps` and `--source-map-dir` on the fixtures of fixtures/sourcemap/: a TypeScript
//! app (with the npm package fast-deep-equal) bundled by esbuild plain, minified and minified
//! with an inline map, profiled with node. Expected names and lines come from the hand-checked
//! table of fixtures/sourcemap/README.md, and every mapped function is checked against
//! fixtures/sourcemap/map-frames.js, which maps them with Mozilla's `source-map` decoder.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{cpuprof, root};
use serde_json::Value;

const DIST: &str = "fixtures/sourcemap/dist";
const PLAIN: &str = "fixtures/sourcemap/app.cpuprofile";
const MINIFIED: &str = "fixtures/sourcemap/app.min.cpuprofile";
const INLINE: &str = "fixtures/sourcemap/app.inline.min.cpuprofile";
const TICK_LOG: &str = "fixtures/sourcemap/app.min.ticklog.log";
/// Where the profiles were recorded: their urls name this folder.
const RECORDED_DIST: &str = "/work/main/fixtures/sourcemap/dist/";

/// fixtures/sourcemap/README.md, "Hand-checked table": the original name, its source under
/// fixtures/sourcemap/, and the 1-based line and column of the name in that source. Also the
/// name of each in dist/app.min.js.
const HOT: [(&str, &str, u64, u64, &str); 5] = [
    ("computeInvoiceTotal", "app/src/pricing.ts", 23, 3, "computeInvoiceTotal"),
    ("slugifyTitle", "app/src/text.ts", 7, 14, "A"),
    ("fnv1aHash", "app/src/hash.ts", 8, 17, "v"),
    ("equal", "node_modules/fast-deep-equal/index.js", 7, 27, "n"),
    ("main", "app/src/main.ts", 37, 10, "w"),
];

fn top_json(args: &[&str]) -> (Value, String) {
    let out = cpuprof().args(["top", "--format", "json", "--all"]).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "cpuprof top {args:?} failed: {stderr}");
    (serde_json::from_slice(&out.stdout).unwrap(), stderr)
}

fn rows(report: &Value) -> &Vec<Value> {
    report["rows"].as_array().unwrap()
}

fn row<'a>(report: &'a Value, name: &str) -> Option<&'a Value> {
    rows(report).iter().find(|r| r["name"] == name)
}

/// (name, file, line, column) of a top row.
fn key(row: &Value) -> (String, String, Option<u64>, Option<u64>) {
    (
        row["name"].as_str().unwrap().to_owned(),
        row["file"].as_str().unwrap_or_default().to_owned(),
        row["line"].as_u64(),
        row["column"].as_u64(),
    )
}

#[test]
fn minified_bundles_list_the_names_and_lines_of_the_typescript() {
    let mut hot_sets = Vec::new();
    for profile in [PLAIN, MINIFIED, INLINE] {
        let (report, stderr) = top_json(&["--source-map-dir", DIST, profile]);
        for (name, source, line, column, minified) in HOT {
            let row = row(&report, name).unwrap_or_else(|| panic!("{profile}: no row for {name}"));
            let file = row["file"].as_str().unwrap();
            assert!(
                file.starts_with('/') && file.ends_with(&format!("/fixtures/sourcemap/{source}")),
                "{profile}: {name} is in {file}, expected …/fixtures/sourcemap/{source}"
            );
            assert_eq!((row["line"].as_u64(), row["column"].as_u64()), (Some(line), Some(column)), "{profile}: {name}");
            if minified != name {
                assert!(
                    !rows(&report).iter().any(|r| r["name"] == minified && r["kind"] == "js"),
                    "{profile}: the minified name {minified} is still listed"
                );
            }
        }
        // The ranking is stable across recordings (README): the four hot functions first.
        let js: Vec<&str> =
            rows(&report).iter().filter(|r| r["kind"] == "js").take(4).map(|r| r["name"].as_str().unwrap()).collect();
        assert_eq!(js, ["computeInvoiceTotal", "slugifyTitle", "fnv1aHash", "equal"], "{profile}");
        // Only the bundle's top-level code (1:1, which no mapping covers) stays in dist/.
        let in_bundle: Vec<_> = rows(&report)
            .iter()
            .filter(|r| r["file"].as_str().is_some_and(|f| f.contains("/dist/")))
            .map(key)
            .collect();
        assert!(in_bundle.iter().all(|k| k.2 == Some(1) && k.3 == Some(1)), "{profile}: unmapped {in_bundle:?}");
        assert!(stderr.contains("source maps: mapped "), "{profile}: {stderr}");
        assert_eq!(report["warnings"].as_array().unwrap().len(), 1, "{profile}: {}", report["warnings"]);
        let hot: std::collections::BTreeSet<_> = rows(&report)
            .iter()
            .filter(|r| r["kind"] == "js" && r["self_pct"].as_f64().unwrap() >= 1.0)
            .map(key)
            .collect();
        hot_sets.push(hot);
    }
    assert_eq!(hot_sets[0], hot_sets[1], "the plain and the minified bundle list the same functions");
    assert_eq!(hot_sets[0], hot_sets[2], "the plain bundle and the one with an inline map list the same functions");
}

/// The functions of `profile` as fixtures/sourcemap/map-frames.js maps them.
fn map_frames(profile: &str) -> Vec<Value> {
    common::npm_ci("fixtures/sourcemap");
    let out = std::process::Command::new("node")
        .args(["fixtures/sourcemap/map-frames.js", profile, DIST])
        .current_dir(root())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "map-frames.js failed (it needs `npm ci` in fixtures/sourcemap): {stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Mozilla's decoder (map-frames.js) maps each function of the profile; the mapped report of
/// cpuprof must be the unmapped one regrouped by that mapping, to the nanosecond and sample.
#[test]
fn every_function_is_mapped_as_mozillas_decoder_maps_it() {
    for profile in [PLAIN, MINIFIED, INLINE] {
        let oracle = map_frames(profile);
        let mapping: BTreeMap<_, _> = oracle
            .iter()
            .map(|e| {
                let name = if e["name"] == "" { "(anonymous)" } else { e["name"].as_str().unwrap() };
                let generated =
                    (name.to_owned(), e["url"].as_str().unwrap().to_owned(), e["line"].as_u64(), e["column"].as_u64());
                (generated, e["mapped"].clone())
            })
            .collect();
        let mapped_count = mapping.values().filter(|m| !m.is_null()).count();
        assert!(mapped_count >= 5, "{profile}: the oracle mapped only {mapped_count} functions");

        let (plain, _) = top_json(&[profile]);
        let mut expected: BTreeMap<_, [u64; 2]> = BTreeMap::new();
        for row in rows(&plain) {
            let mut k = key(row);
            if let Some(m) = mapping.get(&k).filter(|m| !m.is_null()) {
                k = (
                    m["name"].as_str().unwrap().to_owned(),
                    m["source"].as_str().unwrap().to_owned(),
                    m["line"].as_u64(),
                    m["column"].as_u64(),
                );
            }
            let sum = expected.entry(k).or_default();
            sum[0] += row["self"].as_u64().unwrap();
            sum[1] += row["self_samples"].as_u64().unwrap();
        }
        expected.retain(|_, v| *v != [0, 0]);
        let (mapped, stderr) = top_json(&["--source-map-dir", DIST, profile]);
        let ours: BTreeMap<_, [u64; 2]> = rows(&mapped)
            .iter()
            .filter(|r| r["self_samples"].as_u64() != Some(0) || r["self"].as_u64() != Some(0))
            .map(|r| (key(r), [r["self"].as_u64().unwrap(), r["self_samples"].as_u64().unwrap()]))
            .collect();
        assert_eq!(ours, expected, "{profile}: cpuprof's mapping differs from Mozilla's");
        let functions = mapping.len();
        assert!(
            stderr.contains(&format!("mapped {mapped_count} of {functions} JavaScript functions")),
            "{profile}: {stderr}"
        );
    }
}

/// `--by line`: V8's line hits follow the mapping, line by line, as map-frames.js maps them
/// (in the plain bundle each generated line is one TypeScript line; in the minified one there is
/// only line 1, so the hits fall on the function's own line).
#[test]
fn line_hits_are_mapped_as_mozillas_decoder_maps_them() {
    for profile in [PLAIN, MINIFIED] {
        let oracle = map_frames(profile);
        // Line rows have no column: find a function by name and url (unique in these bundles).
        let mut functions: BTreeMap<(String, String), &Value> = BTreeMap::new();
        for entry in &oracle {
            let name = if entry["name"] == "" { "(anonymous)" } else { entry["name"].as_str().unwrap() };
            let previous = functions.insert((name.to_owned(), entry["url"].as_str().unwrap().to_owned()), entry);
            assert!(previous.is_none(), "{profile}: two functions {name}");
        }
        let (plain, _) = top_json(&["--by", "line", profile]);
        let mut expected: BTreeMap<(String, String, Option<u64>), [u64; 2]> = BTreeMap::new();
        let mut moved = 0;
        for row in rows(&plain) {
            let (name, file, line, _) = key(row);
            let mut k = (name.clone(), file.clone(), line);
            if let Some(entry) = functions.get(&(name, file)).filter(|e| !e["mapped"].is_null()) {
                let mapped = &entry["mapped"];
                let original = entry["lines"][line.unwrap().to_string()].as_u64().or(mapped["line"].as_u64());
                moved += usize::from(original != mapped["line"].as_u64());
                k = (
                    mapped["name"].as_str().unwrap().to_owned(),
                    mapped["source"].as_str().unwrap().to_owned(),
                    original,
                );
            }
            let sum = expected.entry(k).or_default();
            sum[0] += row["self"].as_u64().unwrap();
            sum[1] += row["self_samples"].as_u64().unwrap();
        }
        if profile == PLAIN {
            assert!(moved >= 10, "{profile}: only {moved} line rows are mapped to a line of their own");
        }
        let (mapped, _) = top_json(&["--by", "line", "--source-map-dir", DIST, profile]);
        let ours: BTreeMap<_, [u64; 2]> = rows(&mapped)
            .iter()
            .map(|r| {
                let (name, file, line, _) = key(r);
                ((name, file, line), [r["self"].as_u64().unwrap(), r["self_samples"].as_u64().unwrap()])
            })
            .collect();
        expected.retain(|_, v| *v != [0, 0]);
        assert_eq!(ours, expected, "{profile}: cpuprof's line mapping differs from Mozilla's");
    }
}

#[test]
fn tick_logs_are_mapped_with_their_tiers() {
    let (plain, _) = top_json(&["--weight", "samples", TICK_LOG]);
    let (mapped, _) = top_json(&["--weight", "samples", "--source-map-dir", DIST, TICK_LOG]);
    for (name, source, line, column, minified) in HOT {
        let row = row(&mapped, name).unwrap_or_else(|| panic!("no row for {name}"));
        let file = row["file"].as_str().unwrap();
        // Tick logs name scripts by path, and so do the mapped sources.
        assert!(file.starts_with('/') && file.ends_with(&format!("/fixtures/sourcemap/{source}")), "{name}: {file}");
        assert_eq!((row["line"].as_u64(), row["column"].as_u64()), (Some(line), Some(column)), "{name}");
        let before = self::row(&plain, minified).unwrap_or_else(|| panic!("no row for {minified} unmapped"));
        for field in ["self_samples", "total_samples"] {
            assert_eq!(row[field], before[field], "{name}: {field} changed by the mapping");
        }
    }
    let (tiers, _) = top_json(&["--split-tiers", "--source-map-dir", DIST, TICK_LOG]);
    for name in ["computeInvoiceTotal", "slugifyTitle", "fnv1aHash", "equal"] {
        let turbofan = tiers["rows"].as_array().unwrap().iter().any(|r| r["name"] == name && r["tier"] == "turbofan");
        assert!(turbofan, "no row for *{name} with --split-tiers");
    }
}

#[test]
fn files_and_packages_follow_the_mapping() {
    let (functions, _) = top_json(&["--source-map-dir", DIST, MINIFIED]);
    let (packages, _) = top_json(&["--by", "package", "--source-map-dir", DIST, MINIFIED]);
    let equal = row(&functions, "equal").unwrap();
    let package = row(&packages, "fast-deep-equal").expect("a fast-deep-equal row");
    assert_eq!(package["self"], equal["self"]);
    let (unmapped, _) = top_json(&["--by", "package", MINIFIED]);
    assert!(row(&unmapped, "fast-deep-equal").is_none(), "without maps the package is part of the bundle");

    let (files, _) = top_json(&["--by", "file", "--source-map-dir", DIST, MINIFIED]);
    for (name, source, ..) in HOT {
        let file = rows(&files)
            .iter()
            .find(|r| r["name"].as_str().is_some_and(|f| f.ends_with(&format!("/fixtures/sourcemap/{source}"))))
            .unwrap_or_else(|| panic!("no row for {source}"));
        assert!(file["self"].as_u64() >= row(&functions, name).unwrap()["self"].as_u64(), "{source}");
    }
}

#[test]
fn diff_matches_functions_renamed_by_the_minifier() {
    let out = cpuprof().args(["diff", "--format", "json", "--source-map-dir", DIST, PLAIN, MINIFIED]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    for (name, source, line, ..) in HOT {
        let row = rows(&report).iter().find(|r| r["name"] == name).unwrap_or_else(|| panic!("no row for {name}"));
        assert!(row["file"].as_str().unwrap().ends_with(source), "{name}: {}", row["file"]);
        assert_eq!(row["line"].as_u64(), Some(line), "{name}");
        assert!(
            row["base_self_samples"].as_u64() > Some(0) && row["new_self_samples"].as_u64() > Some(0),
            "{name}: {row}"
        );
        assert!(!["new", "gone"].contains(&row["verdict"].as_str().unwrap()), "{name}: {}", row["verdict"]);
    }
    // Without maps the same comparison is all new and gone: the check above can fail.
    let out = cpuprof().args(["diff", "--format", "json", PLAIN, MINIFIED]).output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows(&report).iter().find(|r| r["name"] == "A").unwrap()["verdict"], "new");
}

#[test]
fn flamegraphs_folded_stacks_and_conversions_carry_the_original_names() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("app.svg");
    cpuprof().args(["flamegraph", "--source-map-dir", DIST, MINIFIED, "-o"]).arg(&svg).assert().success();
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(
        svg.contains("<title>slugifyTitle /work/main/fixtures/sourcemap/app/src/text.ts:7 ("),
        "slugifyTitle frame"
    );
    assert!(svg.contains("<title>equal /work/main/fixtures/sourcemap/node_modules/fast-deep-equal/index.js:7 ("));
    assert!(!svg.contains("<title>A "), "a minified name is left");

    let out = cpuprof().args(["collapse", "--source-map-dir", DIST, MINIFIED]).output().unwrap();
    let folded = String::from_utf8(out.stdout).unwrap();
    assert!(folded.lines().any(|l| l.contains(";main /work/main/fixtures/sourcemap/app/src/main.ts:37;slugifyTitle ")));
    assert!(!folded.contains("app.min.js:1:1967") && !folded.contains(";A "), "{folded}");

    for to in ["pprof", "cpuprofile"] {
        let converted = dir.path().join(format!("app.{to}"));
        cpuprof()
            .args(["convert", "--output-format", to, "--source-map-dir", DIST, MINIFIED, "-o"])
            .arg(&converted)
            .assert()
            .success();
        let (report, _) = top_json(&[converted.to_str().unwrap()]);
        let row = row(&report, "slugifyTitle").unwrap_or_else(|| panic!("{to}: no slugifyTitle"));
        assert!(row["file"].as_str().unwrap().ends_with("/app/src/text.ts"), "{to}: {row}");
        assert_eq!(row["line"].as_u64(), Some(7), "{to}");
    }
}

/// A copy of `profile` whose scripts are in `dir` (the urls rewritten), with `dist`'s files.
fn relocated(profile: &str, dir: &Path, files: &[&str]) -> std::path::PathBuf {
    let scripts = dir.join("dist");
    std::fs::create_dir_all(&scripts).unwrap();
    for file in files {
        std::fs::copy(root().join(DIST).join(file), scripts.join(file)).unwrap();
    }
    let text = std::fs::read_to_string(root().join(profile)).unwrap();
    assert!(text.contains(RECORDED_DIST));
    let copy = dir.join(Path::new(profile).file_name().unwrap());
    std::fs::write(&copy, text.replace(RECORDED_DIST, &format!("{}/", scripts.display()))).unwrap();
    copy
}

fn mapped_name_of_a(profile: &Path) -> (Option<String>, String) {
    let out = cpuprof().args(["top", "--format", "json", "--all", "--source-maps"]).arg(profile).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let slug =
        rows(&report).iter().find(|r| r["self_pct"].as_f64().unwrap() > 20.0 && r["name"] != "computeInvoiceTotal");
    (slug.map(|r| r["name"].as_str().unwrap().to_owned()), stderr)
}

#[test]
fn maps_are_found_beside_the_scripts_or_reported_missing() {
    // The comment names the external map; the inline map; a sibling .map without a comment.
    let cases: [(&str, &[&str], Option<&str>); 3] = [
        (MINIFIED, &["app.min.js", "app.min.js.map"], None),
        (INLINE, &["app.inline.min.js"], None),
        (MINIFIED, &["app.min.js", "app.min.js.map"], Some("")),
    ];
    for (profile, files, comment) in cases {
        let dir = tempfile::tempdir().unwrap();
        let copy = relocated(profile, dir.path(), files);
        if let Some(comment) = comment {
            let script = dir.path().join("dist/app.min.js");
            let code = std::fs::read_to_string(&script).unwrap();
            let cut = code.trim_end().rfind('\n').unwrap();
            std::fs::write(&script, format!("{}\n{comment}", &code[..cut])).unwrap();
        }
        let (name, stderr) = mapped_name_of_a(&copy);
        assert_eq!(name.as_deref(), Some("slugifyTitle"), "{profile} {files:?} {comment:?}: {stderr}");
        assert!(
            stderr.contains("source maps: mapped 7 of 8") || stderr.contains("source maps: mapped 8 of 9"),
            "{stderr}"
        );
    }

    // No map at all, a comment naming a missing map, a device, and a map that is not one:
    // frames stay as they are, a warning says why, the run succeeds.
    let broken: [(&str, &str); 4] = [
        ("", "no source map for 1 script: /"),
        ("//# sourceMappingURL=missing.js.map", "its source map missing.js.map was not found"),
        ("//# sourceMappingURL=/dev/zero", "its source map /dev/zero is outside the script's folder"),
        ("//# sourceMappingURL=garbage.map", "garbage.map: not a usable source map"),
    ];
    for (comment, warning) in broken {
        let dir = tempfile::tempdir().unwrap();
        let copy = relocated(MINIFIED, dir.path(), &["app.min.js"]);
        let script = dir.path().join("dist/app.min.js");
        let code = std::fs::read_to_string(&script).unwrap();
        let cut = code.trim_end().rfind('\n').unwrap();
        std::fs::write(&script, format!("{}\n{comment}\n", &code[..cut])).unwrap();
        std::fs::write(dir.path().join("dist/garbage.map"), "{\"version\":3,\"mappings\":\"!!\"").unwrap();
        let (name, stderr) = mapped_name_of_a(&copy);
        assert_eq!(name.as_deref(), Some("A"), "{comment:?}: {stderr}");
        assert!(stderr.contains(warning), "{comment:?}: expected {warning:?} in {stderr}");
    }
}

#[test]
fn bad_source_map_options() {
    cpuprof().args(["top", "--source-map-dir", "fixtures/sourcemap/README.md", MINIFIED]).assert().code(2);
    // Formats without positions: nothing to map, said once.
    let dir = tempfile::tempdir().unwrap();
    let folded = dir.path().join("a.folded");
    std::fs::write(&folded, "main;work 3\n").unwrap();
    let out = cpuprof().args(["top", "--source-maps"]).arg(&folded).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("source maps: mapped 0 of 0 JavaScript functions"));
}

const SHAPES: &str = "fixtures/sourcemap/shapes";

/// fixtures/sourcemap/shapes/README.md: every kind of function V8 names, and where it is declared
/// (the anonymous callback is left out: its column differs between the builds).
const SHAPES_TABLE: [(&str, &str, u64, u64); 8] = [
    ("burn", "src/shape.ts", 6, 17),
    ("runAll", "src/main.ts", 33, 10),
    ("area", "src/main.ts", 8, 3),
    ("get perimeter", "src/main.ts", 11, 7),
    ("spinHelper", "src/main.ts", 17, 3),
    ("squareOf", "src/main.ts", 22, 14),
    ("generateNumbers", "src/main.ts", 24, 11),
    ("registry.doubleIt", "src/main.ts", 29, 10),
];

#[test]
fn every_kind_of_function_keeps_its_name_through_the_minifier() {
    for build in ["plain", "min"] {
        let profile = format!("{SHAPES}/shapes.{build}.cpuprofile");
        let (report, stderr) = top_json(&["--source-map-dir", &format!("{SHAPES}/{build}"), &profile]);
        for (name, source, line, column) in SHAPES_TABLE {
            let row = row(&report, name).unwrap_or_else(|| panic!("{build}: no row for {name}: {stderr}"));
            assert!(row["file"].as_str().unwrap().ends_with(&format!("/shapes/{source}")), "{build}: {row}");
            assert_eq!((row["line"].as_u64(), row["column"].as_u64()), (Some(line), Some(column)), "{build}: {name}");
        }
        let callback = rows(&report).iter().find(|r| r["name"] == "(anonymous)" && r["line"] == 43);
        assert!(callback.is_some_and(|r| r["file"].as_str().unwrap().ends_with("/shapes/src/main.ts")), "{build}");
        assert!(!stderr.contains("not named in the script"), "{build}: {stderr}");
    }
}

/// Two builds recorded at the same path: each side needs its own maps, and reading the base
/// through the new build's map is noticed.
#[test]
fn diff_of_two_builds_at_one_path_maps_each_side_with_its_own_maps() {
    let (base, new) = (format!("{SHAPES}/shapes.plain.cpuprofile"), format!("{SHAPES}/shapes.min.cpuprofile"));
    let out = cpuprof()
        .args(["diff", "--format", "json", "--all"])
        .args(["--base-source-map-dir", &format!("{SHAPES}/plain"), "--new-source-map-dir", &format!("{SHAPES}/min")])
        .args([&base, &new])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    for (name, source, line, _) in SHAPES_TABLE {
        let row = rows(&report).iter().find(|r| r["name"] == name).unwrap_or_else(|| panic!("no row for {name}"));
        assert!(row["file"].as_str().unwrap().ends_with(source), "{name}: {row}");
        assert_eq!(row["line"].as_u64(), Some(line), "{name}");
        assert!(
            row["base_total_samples"].as_u64() > Some(0) && row["new_total_samples"].as_u64() > Some(0),
            "{name}: {row}"
        );
        assert!(!["new", "gone"].contains(&row["verdict"].as_str().unwrap()), "{name}: {}", row["verdict"]);
    }
    assert!(!stderr.contains("not named in the script"), "{stderr}");

    // One folder for both sides: the base is read through the minified build's map.
    let out = cpuprof()
        .args(["diff", "--format", "json", "--source-map-dir", &format!("{SHAPES}/min"), &base, &new])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("shapes.plain.cpuprofile: source maps:") && l.contains("not named in the script")),
        "{stderr}"
    );
    cpuprof().args(["diff", "--base-source-map-dir", "fixtures/nothing-here", &base, &new]).assert().code(2);
}

/// pprof has no columns: a function is found by its declaration on its line (`A=`, `function v(`)
/// or, in unminified code, by the one original line its line holds.
#[test]
fn pprof_functions_map_by_line_and_name() {
    let dir = tempfile::tempdir().unwrap();
    for (profile, expected) in [(PLAIN, &HOT[..]), (MINIFIED, &HOT[1..])] {
        let pprof = dir.path().join("app.pb.gz");
        cpuprof().args(["convert", profile, "-o"]).arg(&pprof).assert().success();
        let (report, stderr) = top_json(&["--source-map-dir", DIST, pprof.to_str().unwrap()]);
        for (name, source, line, ..) in expected {
            let row = row(&report, name).unwrap_or_else(|| panic!("{profile} as pprof: no row for {name}: {stderr}"));
            assert!(row["file"].as_str().unwrap().ends_with(source), "{profile} as pprof: {row}");
            assert_eq!(row["line"].as_u64(), Some(*line), "{profile} as pprof: {name}");
        }
    }
}

/// Nested folders in --source-map-dir; a map alone there (no script to bind names with: V8's
/// names stay).
#[test]
fn nested_folders_and_lone_maps() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("deploy/fixtures/sourcemap/dist");
    std::fs::create_dir_all(&nested).unwrap();
    let code = std::fs::read_to_string(root().join(DIST).join("app.min.js")).unwrap();
    std::fs::write(nested.join("app.min.js"), code).unwrap();
    std::fs::copy(root().join(DIST).join("app.min.js.map"), nested.join("app.min.js.map")).unwrap();
    // A decoy with the same name higher up: the longer path wins.
    std::fs::write(dir.path().join("deploy/app.min.js"), "function A(){}\n//# sourceMappingURL=nowhere.map\n").unwrap();
    let (report, stderr) = top_json(&["--source-map-dir", dir.path().join("deploy").to_str().unwrap(), MINIFIED]);
    assert!(row(&report, "slugifyTitle").is_some(), "{stderr}");
    assert!(!stderr.contains("not named"), "{stderr}");

    let lone = dir.path().join("lone");
    std::fs::create_dir(&lone).unwrap();
    std::fs::copy(root().join(DIST).join("app.min.js.map"), lone.join("app.min.js.map")).unwrap();
    let (report, stderr) = top_json(&["--source-map-dir", lone.to_str().unwrap(), MINIFIED]);
    let a = row(&report, "A").unwrap_or_else(|| panic!("A keeps its name without the script: {stderr}"));
    assert!(a["file"].as_str().unwrap().ends_with("/app/src/text.ts") && a["line"] == 7, "{a}");
    assert!(row(&report, "title").is_none(), "the parameter's name was taken");
}

/// A profile kept beside a copy of its build, recorded at a path that does not exist here: the
/// scripts are found next to the profile, with plain --source-maps (the issue's own command).
#[test]
fn scripts_are_found_beside_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("dist")).unwrap();
    for file in ["app.min.js", "app.min.js.map"] {
        std::fs::copy(root().join(DIST).join(file), dir.path().join("dist").join(file)).unwrap();
    }
    let text = std::fs::read_to_string(root().join(MINIFIED)).unwrap();
    let copy = dir.path().join("app.min.cpuprofile");
    std::fs::write(&copy, text.replace(RECORDED_DIST, "/nonexistent-cpuprof-checkout/fixtures/sourcemap/dist/"))
        .unwrap();
    let (report, stderr) = top_json(&["--source-maps", copy.to_str().unwrap()]);
    let row = row(&report, "slugifyTitle").unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(row["file"], "/nonexistent-cpuprof-checkout/fixtures/sourcemap/app/src/text.ts");
    assert_eq!(row["line"], 7);
    // From the folder itself, with a bare file name.
    let out = cpuprof()
        .current_dir(dir.path())
        .args(["top", "--format", "json", "--source-maps", "app.min.cpuprofile"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(self::row(&report, "fnv1aHash").is_some(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A hand-made script `T/app/a.js` (`f` on line 1, `g` on line 2, then `comment`) and a
/// profile of it at `T/prof/p.cpuprofile`: one sample in `f`, two in `g`.
fn hand_made(top: &Path, comment: &str) -> std::path::PathBuf {
    for folder in ["app/sub", "prof", "secret", "maps"] {
        std::fs::create_dir_all(top.join(folder)).unwrap();
    }
    let script = top.join("app/a.js");
    std::fs::write(&script, format!("function f(){{return 1}}\nfunction g(){{return 2}}\n{comment}\n")).unwrap();
    let url = format!("file://{}", script.display());
    let node = |id: u32, name: &str, line: i32, column: i32| {
        let url = if line < 0 { "" } else { url.as_str() };
        format!(
            r#"{{"id":{id},"callFrame":{{"functionName":"{name}","scriptId":"1","url":"{url}","lineNumber":{line},"columnNumber":{column}}},"hitCount":0{}}}"#,
            if id == 1 { r#","children":[2,3]"# } else { "" }
        )
    };
    let profile = format!(
        r#"{{"nodes":[{},{},{}],"startTime":0,"endTime":3000,"samples":[2,3,3],"timeDeltas":[1000,1000,1000]}}"#,
        node(1, "(root)", -1, -1),
        node(2, "f", 0, 10),
        node(3, "g", 1, 10)
    );
    let path = top.join("prof/p.cpuprofile");
    std::fs::write(&path, profile).unwrap();
    path
}

/// A map of a.js: line 1 to `source` line 1, line 2 to `second` (VLQ of the line change).
fn hand_map(source: &str, second: &str) -> String {
    format!(r#"{{"version":3,"sources":["{source}"],"names":[],"mappings":"AAAA;{second}"}}"#)
}

/// `top --source-maps` of `profile` (and `args`): (name → (file, line)), stderr.
fn mapped_rows(profile: &Path, args: &[&str]) -> (BTreeMap<String, (String, Option<u64>)>, String) {
    let (report, stderr) = top_json(&[&["--source-maps", profile.to_str().unwrap()], args].concat());
    let rows = rows(&report)
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                (r["file"].as_str().unwrap_or_default().to_owned(), r["line"].as_u64()),
            )
        })
        .collect();
    (rows, stderr)
}

#[test]
fn a_mapping_before_line_1_is_left_out_and_counted() {
    // `AAbA`: generated line 2 goes 13 lines up from original line 1, to line -12. The decoder
    // wraps that to 4294967284; such a mapping places nothing.
    let dir = tempfile::tempdir().unwrap();
    let profile = hand_made(dir.path(), "//# sourceMappingURL=a.js.map");
    std::fs::write(dir.path().join("app/a.js.map"), hand_map("src/a.ts", "AAbA")).unwrap();
    let (rows, stderr) = mapped_rows(&profile, &[]);
    let ts = dir.path().join("app/src/a.ts").display().to_string();
    assert_eq!(rows["f"], (ts.clone(), Some(1)), "{stderr}");
    assert_eq!(rows["g"], (dir.path().join("app/a.js").display().to_string(), Some(2)), "{stderr}");
    assert!(!stderr.contains("4294967"), "{stderr}");
    assert!(
        stderr.contains("its source map places 1 mapping(s) before line 1 or column 1; they were left out"),
        "{stderr}"
    );
    // The same map with line 2 one line down maps both (the check is not too eager).
    std::fs::write(dir.path().join("app/a.js.map"), hand_map("src/a.ts", "AACA")).unwrap();
    let (rows, stderr) = mapped_rows(&profile, &[]);
    assert_eq!(rows["g"], (ts.clone(), Some(2)), "{stderr}");
    assert!(!stderr.contains("left out"), "{stderr}");
}

#[test]
fn a_source_mapping_url_reads_only_beside_the_script_the_map_folder_or_the_profiles_folder() {
    // T/secret/x.map maps a.js to SECRET-SOURCE.ts: a comment must not get it read.
    const SECRET: &str = "SECRET-SOURCE";
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path();
    let outside = top.join("secret/x.map");
    let maps = top.join("maps").display().to_string();
    // (the comment's url, where a good map is (if anywhere), with --source-map-dir T/maps,
    // the source f is then mapped to (None: refused))
    let cases: [(String, Option<&str>, bool, Option<&str>); 7] = [
        ("../secret/x.map".to_owned(), None, false, None),
        (outside.display().to_string(), None, false, None),
        // A remote url is looked for by its file name in the map folder: `..%2F…` is no name.
        ("https://cdn.invalid/..%2Fsecret%2Fx.map".to_owned(), None, true, None),
        // A link beside the script to the map outside.
        ("link.map".to_owned(), None, false, None),
        ("sub/x.map".to_owned(), Some("app/sub/x.map"), false, Some("/app/sub/src/a.ts")),
        ("../prof/x.map".to_owned(), Some("prof/x.map"), false, Some("/prof/src/a.ts")),
        // Found by its name in the map folder; sources resolve against the url the script gave.
        ("/nowhere/x.map".to_owned(), Some("maps/x.map"), true, Some("/nowhere/src/a.ts")),
    ];
    for (reference, good_map, with_dir, mapped_to) in cases {
        let profile = hand_made(top, &format!("//# sourceMappingURL={reference}"));
        std::fs::write(&outside, hand_map(&format!("{SECRET}.ts"), "AACA")).unwrap();
        let link = top.join("app/link.map");
        if !link.exists() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(&outside, &link).unwrap();
        }
        for place in ["app/sub/x.map", "prof/x.map", "maps/x.map"] {
            let _ = std::fs::remove_file(top.join(place));
        }
        if let Some(place) = good_map {
            std::fs::write(top.join(place), hand_map("src/a.ts", "AACA")).unwrap();
        }
        let args: &[&str] = if with_dir { &["--source-map-dir", &maps] } else { &[] };
        let (rows, stderr) = mapped_rows(&profile, args);
        let everything = format!("{rows:?}{stderr}");
        assert!(!everything.contains(SECRET), "{reference}: read the map outside: {everything}");
        let file = &rows["f"].0;
        if let Some(source) = mapped_to {
            assert!(file.ends_with(source), "{reference}: f is in {file}: {stderr}");
        } else {
            assert!(file.ends_with("/app/a.js"), "{reference}: f is in {file}: {stderr}");
            let script = top.join("app/a.js").display().to_string();
            let why = if with_dir { "was not found" } else { "is outside the script's folder" };
            assert!(stderr.contains(&script) && stderr.contains(why), "{reference}: {stderr}");
        }
    }
}

#[test]
fn messages_about_a_map_never_quote_it() {
    // A map whose `sources` is a string: the JSON decoder's own message quotes the value.
    let dir = tempfile::tempdir().unwrap();
    let profile = hand_made(dir.path(), "//# sourceMappingURL=a.js.map");
    std::fs::write(dir.path().join("app/a.js.map"), r#"{"version":3,"sources":"TOKEN-1234","mappings":""}"#).unwrap();
    let (rows, stderr) = mapped_rows(&profile, &[]);
    assert!(!stderr.contains("TOKEN-1234"), "{stderr}");
    assert!(
        stderr.contains("a.js.map: not a usable source map: JSON that is not a source map's (line 1, column"),
        "{stderr}"
    );
    assert!(rows["f"].0.ends_with("/app/a.js"));
    // Nor an inline one's media type or content.
    let profile = hand_made(dir.path(), "//# sourceMappingURL=data:text/TOKEN-5678,{}");
    let (_, stderr) = mapped_rows(&profile, &[]);
    assert!(!stderr.contains("TOKEN-5678") && stderr.contains("its media type is not JSON"), "{stderr}");
}
