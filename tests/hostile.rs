//! Hostile shapes (issue 7): names built to break outputs, 100,000-deep stacks, cycles and
//! ids at the integer limits, made here and run through every command and output format
//! (table, JSON, CSV, Markdown, folded, SVG, differential SVG, pprof, .cpuprofile). Each must
//! end in a clean error (exit 1, `cpuprof: error: …`) or a correct result that carries the
//! names exactly where the format is data (JSON, CSV, pprof, .cpuprofile, folded read back)
//! and inertly where people read it: no character that a terminal, a Markdown renderer or an
//! SVG viewer would act on, and one cell, one line, one frame per name.
//!
//! What is expected is computed here from what was written, not from cpuprof's output.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use common::hostile::{hostile_cpuprofile, url_of, NAMES, NO_URL};
use pprof::protos::{Function, Line, Location, Message, Profile as Proto, Sample, ValueType};
use quick_xml::events::Event;
use serde_json::{json, Value};

/// Characters no human-facing output may carry raw (decided here, not by cpuprof): controls
/// but the line feed that ends lines, bidi controls, line/paragraph separators, zero-width
/// space, BOM and the noncharacters.
fn acts_on_reader(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{ad}' | '\u{061c}' | '\u{180e}' | '\u{200b}' | '\u{200e}' | '\u{200f}')
        || matches!(c, '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}')
        || matches!(c, '\u{feff}' | '\u{fffe}' | '\u{ffff}' | '\u{e0000}'..='\u{e007f}')
}

fn assert_inert(what: &str, text: &str) {
    if let Some((at, c)) = text.char_indices().find(|&(_, c)| acts_on_reader(c)) {
        let from = text[..at].char_indices().rev().nth(40).map_or(0, |(i, _)| i);
        panic!("{what}: raw {c:?} at byte {at}, after {:?}", &text[from..at]);
    }
}

struct Run {
    code: i32,
    stdout: Vec<u8>,
    stderr: String,
}

/// Stderr as a CI log reads it: nothing raw that acts on a reader, and every line a message
/// of cpuprof's, so that none starts with `::` (a GitHub Actions workflow command).
fn assert_stderr_inert(what: &str, stderr: &str) {
    assert_inert(what, stderr);
    for line in stderr.lines() {
        assert!(!line.starts_with("::"), "{what}: a line starts with `::`: {line:?}");
        assert!(line.starts_with("cpuprof: "), "{what}: a line that is not one message: {line:?}\n{stderr}");
    }
}

/// `cpuprof ARGS` in `dir`, which must end within two minutes, not panic, and leave stderr inert.
fn run_any(dir: &Path, args: &[&str]) -> Run {
    let out = common::cpuprof()
        .current_dir(dir)
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap_or_else(|e| panic!("cpuprof {args:?}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out.status.code().unwrap_or_else(|| panic!("cpuprof {args:?} was killed (timeout?): {stderr}"));
    assert!(!stderr.contains("panicked"), "cpuprof {args:?} panicked: {stderr}");
    assert_stderr_inert(&format!("stderr of {args:?}"), &stderr);
    Run { code, stdout: out.stdout, stderr }
}

/// `cpuprof ARGS` in `dir`, as [`run_any`], with exit 0, or 1 and a clean error.
fn run(dir: &Path, args: &[&str]) -> Run {
    let run = run_any(dir, args);
    assert!(
        run.code == 0 || (run.code == 1 && run.stderr.contains("cpuprof: error: ")),
        "cpuprof {args:?} exited {}: {}",
        run.code,
        run.stderr
    );
    run
}

/// `cpuprof ARGS` in `dir`, which must succeed; its stdout.
fn ok(dir: &Path, args: &[&str]) -> String {
    let r = run(dir, args);
    assert_eq!(r.code, 0, "cpuprof {args:?}: {}", r.stderr);
    String::from_utf8(r.stdout).unwrap_or_else(|e| panic!("cpuprof {args:?} wrote invalid UTF-8: {e}"))
}

/// `cpuprof top --format json` rows: name → (file, self samples, total samples).
fn json_rows(dir: &Path, input: &str, extra: &[&str]) -> BTreeMap<String, (String, i64, i64)> {
    let mut args = vec!["top", input, "--all", "--format", "json", "--weight", "samples"];
    args.extend_from_slice(extra);
    let report: Value = serde_json::from_str(&ok(dir, &args)).expect("JSON output parses");
    report["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            let file = r["file"].as_str().unwrap_or_default().to_owned();
            let name = r["name"].as_str().expect("name").to_owned();
            (name, (file, r["self_samples"].as_i64().unwrap(), r["total_samples"].as_i64().unwrap()))
        })
        .collect()
}

/// `collapse` of the hostile profile gives [`NO_URL`]'s stack its own count, and reading it
/// back gives the name with its space.
fn folded_line_of_no_url_name_keeps_its_count(dir: &Path) -> bool {
    let samples = NAMES.iter().position(|n| *n == NO_URL).unwrap() + 1;
    let folded = ok(dir, &["collapse", "h.cpuprofile", "--weight", "samples"]);
    folded.lines().any(|l| l == format!("main /app/<main>\u{ff1b}|.js:1;trailing\u{a0}12 {samples}"))
}

/// Checks an SVG: well-formed XML, inferno's one script and no other, no text that acts on a
/// reader; returns the text of its `<title>`s (the tooltips, one per frame).
fn svg_titles(what: &str, svg: &[u8]) -> Vec<String> {
    let svg = std::str::from_utf8(svg).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_inert(what, svg);
    let mut reader = quick_xml::Reader::from_reader(svg.as_bytes());
    let (mut scripts, mut titles, mut in_title) = (0, Vec::new(), false);
    let mut buf = Vec::new();
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .unwrap_or_else(|e| panic!("{what}: not well-formed XML at byte {}: {e}", reader.buffer_position()));
        match event {
            Event::Start(e) | Event::Empty(e) => {
                let name = e.name().as_ref().to_vec();
                scripts += usize::from(name == b"script");
                if name == b"title" {
                    in_title = true;
                    titles.push(String::new());
                }
            }
            Event::End(e) if e.name().as_ref() == b"title" => in_title = false,
            Event::Text(t) if in_title => titles.last_mut().unwrap().push_str(&t.decode().unwrap()),
            Event::GeneralRef(r) if in_title => {
                let c = match r.resolve_char_ref().unwrap() {
                    Some(c) => c,
                    None => match &*r.decode().unwrap() {
                        "lt" => '<',
                        "gt" => '>',
                        "amp" => '&',
                        "quot" => '"',
                        "apos" => '\'',
                        other => panic!("{what}: unknown entity &{other};"),
                    },
                };
                titles.last_mut().unwrap().push(c);
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    assert_eq!(scripts, 1, "{what}: inferno's script is the only one");
    titles
}

/// Markdown table rows: one line each, every `|` of the text escaped (GFM splits cells first,
/// code spans included), code spans closed (a run of backticks ends only at a run as long), and
/// outside them nothing that renders as HTML.
fn assert_markdown_rows(what: &str, markdown: &str, rows: usize, columns: usize) {
    assert_inert(what, markdown);
    let table: Vec<&str> = markdown.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(table.len(), rows + 2, "{what}: header, rule and one line per row:\n{markdown}");
    for line in &table {
        let chars: Vec<char> = line.chars().collect();
        let (mut pipes, mut fence, mut i) = (0, 0usize, 0);
        while i < chars.len() {
            let c = chars[i];
            if c == '\\' && fence == 0 {
                i += 2;
                continue;
            }
            if c == '`' {
                let run = chars[i..].iter().take_while(|&&b| b == '`').count();
                if fence == 0 {
                    fence = run;
                } else if run == fence {
                    fence = 0;
                }
                i += run;
                continue;
            }
            let escaped = i > 0 && chars[i - 1] == '\\';
            pipes += usize::from(c == '|' && !escaped);
            assert!(fence > 0 || c != '<', "{what}: HTML outside code: {line}");
            i += 1;
        }
        assert_eq!(fence, 0, "{what}: a code span left open: {line}");
        assert_eq!(pipes, columns + 1, "{what}: {line}");
    }
}

#[test]
fn hostile_names_are_exact_in_data_and_inert_on_screen() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("h.cpuprofile"), hostile_cpuprofile(1).to_string()).unwrap();
    std::fs::write(d.join("h2.cpuprofile"), hostile_cpuprofile(2).to_string()).unwrap();
    let expected = |name: &str| {
        let i = NAMES.iter().position(|n| *n == name)?;
        // Scripts on disk are named by path, a `file://` url's (no percent-escapes here) in all.
        let path = url_of(name).strip_prefix("file://").unwrap_or(url_of(name));
        Some((path.to_owned(), i as i64 + 1, i as i64 + 1))
    };

    // Data formats carry every name and url exactly. `(program)` with a url stays a function.
    let check_json = |input: &str| {
        let rows = json_rows(d, input, &[]);
        for name in NAMES {
            assert_eq!(rows.get(*name), expected(name).as_ref(), "{input}: {name:?} in {rows:?}");
        }
        assert_eq!(rows.len(), NAMES.len() + 1, "{input}: the names and main");
    };
    check_json("h.cpuprofile");

    let csv = ok(d, &["top", "h.cpuprofile", "--all", "--format", "csv", "--weight", "samples"]);
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let mut seen = 0;
    for record in reader.records() {
        let record = record.expect("CSV parses");
        assert_eq!(record.len(), 12, "{record:?}");
        if let Some((file, samples, _)) = expected(&record[0]) {
            assert_eq!((&record[1], record[6].parse::<i64>().unwrap()), (file.as_str(), samples), "{record:?}");
            seen += 1;
        }
    }
    assert_eq!(seen, NAMES.len(), "CSV has a row per name:\n{csv}");
    assert!(folded_line_of_no_url_name_keeps_its_count(d), "the trailing number is not read as a count");

    // Folded stacks: one line per stack, two frames (main, the name) each, nothing raw;
    // read back, the same names and counts.
    let folded = ok(d, &["collapse", "h.cpuprofile", "--weight", "samples"]);
    assert_inert("collapse", &folded);
    assert_eq!(folded.lines().count(), NAMES.len(), "{folded}");
    for line in folded.lines() {
        assert_eq!(line.matches(';').count(), 1, "one frame per name: {line}");
    }
    std::fs::write(d.join("h.folded"), &folded).unwrap();
    let back = json_rows(d, "h.folded", &[]);
    for (i, name) in NAMES.iter().enumerate() {
        let row = back.get(*name).unwrap_or_else(|| panic!("{name:?} read back from folded: {back:?}"));
        assert_eq!((row.1, row.2), (i as i64 + 1, i as i64 + 1), "{name:?}");
    }

    // Written as pprof and as .cpuprofile, read back: the same names, files and counts.
    for out in ["h.pb.gz", "h.out.cpuprofile"] {
        ok(d, &["convert", "h.cpuprofile", "-o", out]);
        check_json(out);
    }

    // Human-facing formats: nothing raw, every name on its own row.
    let table = ok(d, &["top", "h.cpuprofile", "-n", "100"]);
    assert_inert("table", &table);
    for shown in
        ["<script>alert(1)</script>", "new\\nline", "bidi\\u{202e}gnp.exe", "\\u{1b}[31mred", "line\\u{2028}sep"]
    {
        assert!(table.contains(shown), "table shows {shown:?}:\n{table}");
    }
    let with_url = table.lines().filter(|l| l.contains("/app/h\\u{202e};|<b>`x\\u{1b}.js")).count();
    assert_eq!(with_url, NAMES.len() - 1, "a row per name:\n{table}");
    let markdown = ok(d, &["top", "h.cpuprofile", "--all", "--format", "markdown"]);
    assert_markdown_rows("top markdown", &markdown, NAMES.len() + 1, 6);

    // The flame graph: one tooltip per frame, naming it (escaped where it must be).
    let out = ok(d, &["flamegraph", "h.cpuprofile", "-o", "h.svg"]);
    assert!(out.is_empty());
    let titles = svg_titles("flamegraph", &std::fs::read(d.join("h.svg")).unwrap());
    assert_eq!(titles.len(), NAMES.len() + 2, "all, main and the names: {titles:#?}");
    for shown in
        ["<script>alert(1)</script> ", "semi\u{ff1b}colon ", "pipe|name ", "quote\"and'apos ", "bidi\\u{202e}gnp.exe "]
    {
        assert!(titles.iter().any(|t| t.starts_with(shown)), "a tooltip for {shown:?}: {titles:#?}");
    }

    // diff: the new side doubles every name; JSON exact, table and Markdown inert, one row each.
    let diff = ok(d, &["diff", "h.cpuprofile", "h2.cpuprofile", "--all", "--format", "json"]);
    let diff: Value = serde_json::from_str(&diff).expect("diff JSON parses");
    let names: Vec<&str> = diff["rows"].as_array().unwrap().iter().filter_map(|r| r["name"].as_str()).collect();
    for name in NAMES {
        assert!(names.contains(name), "diff JSON names {name:?}: {names:?}");
    }
    let table = ok(d, &["diff", "h.cpuprofile", "h2.cpuprofile", "--all"]);
    assert_inert("diff table", &table);
    let markdown = ok(d, &["diff", "h.cpuprofile", "h2.cpuprofile", "--all", "--format", "markdown"]);
    assert_markdown_rows("diff markdown", &markdown, NAMES.len() + 1, 8);
    // GitHub workflow commands: one line per significant row and the summary, nothing a name
    // holds starts a line of its own (the Markdown follows without a job summary file).
    let github = ok(d, &["diff", "h.cpuprofile", "h2.cpuprofile", "--all", "--format", "github"]);
    let significant = diff["rows"].as_array().unwrap().iter().filter(|r| r["significant"] == true).count();
    let commands = github.lines().take_while(|l| l.starts_with("::")).count();
    assert_eq!(commands, significant + 1, "{github}");
    assert!(github.lines().skip(commands).all(|l| !l.trim_start().starts_with("::")), "{github}");
    assert!(github.lines().take(commands).all(|l| l.starts_with("::warning ") || l.starts_with("::notice ")));
    let run = run(d, &["diff", "h.cpuprofile", "h2.cpuprofile", "--flamegraph", "d.svg"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let titles = svg_titles("differential flamegraph", &std::fs::read(d.join("d.svg")).unwrap());
    assert!(titles.iter().any(|t| t.starts_with("<script>alert(1)</script> ")), "{titles:#?}");
}

const DEPTH: usize = 100_000;

/// Two 100,000-frame stacks as `(id, parent, name)` nodes under `(root)` (id 1): `f0 → … →
/// f99999`, sampled 5 times at its leaf, and `a → b → a → …`, ending in `b`, sampled 3 times.
/// Returns the nodes and the sample ids.
fn deep_tree() -> (Vec<(usize, usize, String)>, Vec<usize>) {
    let mut nodes = Vec::with_capacity(2 * DEPTH);
    for i in 0..DEPTH {
        nodes.push((2 + i, if i == 0 { 1 } else { 1 + i }, format!("f{i}")));
    }
    let base = 2 + DEPTH;
    for i in 0..DEPTH {
        nodes.push((base + i, if i == 0 { 1 } else { base + i - 1 }, (if i % 2 == 0 { "a" } else { "b" }).to_owned()));
    }
    let (chain_leaf, recursion_leaf) = (1 + DEPTH, base + DEPTH - 1);
    (
        nodes,
        vec![
            chain_leaf,
            recursion_leaf,
            chain_leaf,
            recursion_leaf,
            chain_leaf,
            recursion_leaf,
            chain_leaf,
            chain_leaf,
        ],
    )
}

/// The deep tree as a .cpuprofile (children lists), a trace (parent ids) and folded stacks.
/// Written as text: 200,000 `json!` nodes take seconds in a debug build.
fn write_deep_inputs(dir: &Path) {
    use std::fmt::Write as _;
    let (nodes, samples) = deep_tree();
    let mut children: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (id, parent, _) in &nodes {
        children.entry(*parent).or_default().push(*id);
    }
    let frame = |name: &str| {
        format!(r#"{{"functionName":"{name}","scriptId":"1","url":"file:///deep.js","lineNumber":0,"columnNumber":0}}"#)
    };
    let root = r#"{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1}"#;
    let list = |ids: &[usize]| ids.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    let samples_list = list(&samples);
    let deltas = vec!["1000"; samples.len()].join(",");

    let mut text = format!(r#"{{"nodes":[{{"id":1,"callFrame":{root},"children":[{}]}}"#, list(&children[&1]));
    for (id, _, name) in &nodes {
        let kids = children.get(id).map_or(String::new(), |c| list(c));
        let _ = write!(text, r#",{{"id":{id},"callFrame":{},"children":[{kids}]}}"#, frame(name));
    }
    let _ = write!(text, r#"],"startTime":0,"endTime":8000,"samples":[{samples_list}],"timeDeltas":[{deltas}]}}"#);
    std::fs::write(dir.join("deep.cpuprofile"), text).unwrap();

    let event = r#"{"pid":1,"tid":1,"ph":"P","cat":"disabled-by-default-v8.cpu_profiler","id":"0x1""#;
    let mut text = format!(r#"[{event},"ts":1,"name":"Profile","args":{{"data":{{"startTime":0}}}}}},"#);
    let _ = write!(
        text,
        r#"{event},"ts":2,"name":"ProfileChunk","args":{{"data":{{"cpuProfile":{{"nodes":[{{"id":1,"callFrame":{root}}}"#
    );
    for (id, parent, name) in &nodes {
        let _ = write!(text, r#",{{"id":{id},"parent":{parent},"callFrame":{}}}"#, frame(name));
    }
    let _ = write!(text, r#"],"samples":[{samples_list}]}},"timeDeltas":[{deltas}]}}}}}}]"#);
    std::fs::write(dir.join("deep.trace.json"), text).unwrap();

    let chain: Vec<String> = (0..DEPTH).map(|i| format!("f{i}")).collect();
    let recursion: Vec<&str> = (0..DEPTH).map(|i| if i % 2 == 0 { "a" } else { "b" }).collect();
    std::fs::write(dir.join("deep.folded"), format!("{} 5\n{} 3\n", chain.join(";"), recursion.join(";"))).unwrap();
}

/// The report on the deep tree is right: every `f` has all 5 chain samples, `a` and `b` the 3
/// recursion samples once each however often they recur, the leaves their own.
fn assert_deep_report(dir: &Path, input: &str) {
    let rows = json_rows(dir, input, &[]);
    assert_eq!(rows.len(), DEPTH + 2, "{input}: the f's, a and b");
    let counts = |name: &str| rows.get(name).map(|r| (r.1, r.2));
    assert_eq!(counts("f0"), Some((0, 5)), "{input}");
    assert_eq!(counts("f50000"), Some((0, 5)), "{input}");
    assert_eq!(counts(&format!("f{}", DEPTH - 1)), Some((5, 5)), "{input}");
    assert_eq!(counts("a"), Some((0, 3)), "{input}");
    assert_eq!(counts("b"), Some((3, 3)), "{input}");
}

#[test]
fn deep_stacks_work_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_deep_inputs(d);
    // The .cpuprofile and trace readers build the tree; the rest runs on the folded stacks
    // (the same stacks, written here), which read fastest.
    for input in ["deep.cpuprofile", "deep.trace.json", "deep.folded"] {
        assert_deep_report(d, input);
    }

    let folded = ok(d, &["collapse", "deep.folded"]);
    let lines: Vec<(usize, &str)> =
        folded.lines().map(|l| (l.matches(';').count() + 1, l.rsplit(' ').next().unwrap())).collect();
    assert_eq!(lines, vec![(DEPTH, "3"), (DEPTH, "5")], "two stacks of {DEPTH} frames");
    for out in ["deep.pb.gz", "deep.out.cpuprofile"] {
        ok(d, &["convert", "deep.folded", "-o", out]);
        assert_deep_report(d, out);
    }

    for format in ["table", "csv", "markdown"] {
        let text = ok(d, &["top", "deep.folded", "--sort", "total", "--format", format]);
        assert!(text.contains("f0"), "{format}: {text}");
    }

    // Flame graphs: one frame per call, however deep, both ways up.
    for (svg, extra) in [("deep.svg", None), ("reverse.svg", Some("--reverse"))] {
        let mut args = vec!["flamegraph", "deep.folded", "-o", svg];
        args.extend(extra);
        ok(d, &args);
        let titles = svg_titles(svg, &std::fs::read(d.join(svg)).unwrap());
        assert_eq!(titles.len(), 1 + 2 * DEPTH, "{svg}: `all` and every frame");
    }
    let diff: Value =
        serde_json::from_str(&ok(d, &["diff", "deep.folded", "deep.folded", "--format", "json"])).unwrap();
    assert_eq!(diff["rows"].as_array().map(Vec::len), Some(20), "{diff}");
    // The new side doubles the chain: every caller on it says its callees grew.
    let doubled = std::fs::read_to_string(d.join("deep.folded")).unwrap().replacen(" 5\n", " 10\n", 1);
    std::fs::write(d.join("doubled.folded"), doubled).unwrap();
    ok(d, &["diff", "deep.folded", "doubled.folded", "--flamegraph", "diff.svg"]);
    let titles = svg_titles("diff.svg", &std::fs::read(d.join("diff.svg")).unwrap());
    assert_eq!(titles.len(), 1 + 2 * DEPTH, "diff.svg: `all` and every frame");
    let grew = titles.iter().filter(|t| t.starts_with('f') && t.contains("[total +")).count();
    assert_eq!(grew, DEPTH - 1, "every f but the leaf is a caller whose callees grew");
}

/// What a hostile file must give: a report with this many samples, a clean error, or either.
#[derive(Debug)]
enum Outcome {
    Samples(i64),
    Error,
    Either,
}

/// Runs `top` on each `(file, bytes, outcome)` and checks it; errors name the file.
fn check_outcomes(cases: Vec<(String, Vec<u8>, Outcome)>) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (file, bytes, outcome) in cases {
        std::fs::write(d.join(&file), bytes).unwrap();
        let r = run(d, &["top", &file, "--all", "--format", "json", "--weight", "samples"]);
        match (&outcome, r.code) {
            (Outcome::Samples(_) | Outcome::Either, 0) => {
                // Whatever the count, the report agrees with itself.
                let report: Value = serde_json::from_slice(&r.stdout).expect("JSON output parses");
                let samples = report["samples"].as_i64().expect("samples");
                if let Outcome::Samples(n) = outcome {
                    assert_eq!(samples, n, "{file}");
                }
                let rows = report["rows"].as_array().unwrap();
                let self_sum = rows.iter().map(|r| r["self_samples"].as_i64().unwrap()).fold(0i64, i64::saturating_add);
                assert_eq!(self_sum, samples, "{file}: the rows' self samples add up");
                assert!(rows.iter().all(|r| r["total_samples"].as_i64() <= Some(samples)), "{file}: {report}");
            }
            (Outcome::Error | Outcome::Either, 1) => {
                assert!(r.stderr.contains(&file), "{file}: the error names the file: {}", r.stderr);
            }
            _ => panic!("{file}: expected {outcome:?}, got exit {}: {}", r.code, r.stderr),
        }
    }
}

fn node(id: &str, children: &[&str]) -> String {
    let name = if id == "1" { "(root)" } else { "f" };
    format!(
        r#"{{"id":{id},"callFrame":{{"functionName":"{name}","scriptId":"1","url":"file:///c.js","lineNumber":0,"columnNumber":0}},"children":[{}]}}"#,
        children.join(",")
    )
}

fn cpuprofile(nodes: &[String], samples: &[&str]) -> Vec<u8> {
    let deltas = vec!["1"; samples.len()].join(",");
    format!(
        r#"{{"nodes":[{}],"startTime":0,"endTime":{},"samples":[{}],"timeDeltas":[{deltas}]}}"#,
        nodes.join(","),
        samples.len(),
        samples.join(",")
    )
    .into_bytes()
}

#[test]
fn cycles_and_ids_at_the_integer_limits_end_cleanly() {
    let mut cases = Vec::new();
    let mut add = |file: &str, bytes: Vec<u8>, outcome| cases.push((file.to_owned(), bytes, outcome));

    // .cpuprofile trees: cycles are errors, whether through the root, long, or apart from it.
    add(
        "cycle.cpuprofile",
        cpuprofile(&[node("1", &["2"]), node("2", &["3"]), node("3", &["2"])], &["3"]),
        Outcome::Error,
    );
    add("self.cpuprofile", cpuprofile(&[node("1", &["2"]), node("2", &["2"])], &["2"]), Outcome::Error);
    add("ring.cpuprofile", cpuprofile(&[node("1", &["2"]), node("2", &["1"])], &["2"]), Outcome::Error);
    let ids: Vec<String> = (1..=DEPTH).map(|i| i.to_string()).collect();
    let long = |back: &str| -> Vec<String> {
        (0..DEPTH).map(|i| node(&ids[i], &[if i + 1 < DEPTH { &ids[i + 1] } else { back }])).collect()
    };
    add("long-cycle.cpuprofile", cpuprofile(&long("2"), &["7"]), Outcome::Error);
    add("long-ring.cpuprofile", cpuprofile(&long("1"), &["7"]), Outcome::Error);
    let apart = [node("1", &["2"]), node("2", &[]), node("3", &["4"]), node("4", &["3"])];
    add("apart.cpuprofile", cpuprofile(&apart, &["2", "2"]), Outcome::Error);

    // Ids: any JSON integer up to 2^63 - 1 is an id; beyond it, or negative, or fractional, is an error.
    let (max, max53) = (i64::MAX.to_string(), (1u64 << 53).to_string());
    let limits = [node("1", &[&max]), node(&max, &[&max53]), node(&max53, &[])];
    add("u64-ids.cpuprofile", cpuprofile(&limits, &[&max, &max53, &max53]), Outcome::Samples(3));
    let over = [("over-i64.cpuprofile", "9223372036854775808"), ("over-u64.cpuprofile", "18446744073709551616")];
    for (file, id) in over.into_iter().chain([("negative.cpuprofile", "-1"), ("fraction.cpuprofile", "2.5")]) {
        add(file, cpuprofile(&[node("1", &[id]), node(id, &[])], &[id]), Outcome::Error);
    }
    add(
        "unknown-sample.cpuprofile",
        cpuprofile(&[node("1", &["2"]), node("2", &[])], &[&(i64::MAX - 1).to_string()]),
        Outcome::Error,
    );
    let positions = r#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"children":[2]},
        {"id":2,"callFrame":{"functionName":"f","scriptId":"99999999999999999999","url":"file:///p.js","lineNumber":9223372036854775807,"columnNumber":4294967296},
         "positionTicks":[{"line":4294967295,"ticks":1},{"line":1,"ticks":9223372036854775807}]}],
        "startTime":0,"endTime":2,"samples":[2,2],"timeDeltas":[1,1]}"#;
    add("positions.cpuprofile", positions.as_bytes().to_vec(), Outcome::Samples(2));
    let far = positions
        .replace(r#""startTime":0,"endTime":2"#, r#""startTime":-9007199254740991,"endTime":9007199254740991"#);
    add("far-clock.cpuprofile", far.into_bytes(), Outcome::Either);
    let far = positions.replace(r#""timeDeltas":[1,1]"#, r#""timeDeltas":[9007199254740991,9007199254740991]"#);
    add("far-deltas.cpuprofile", far.into_bytes(), Outcome::Either);

    // Trace parent links: cycles never loop.
    let trace = |nodes: &str| {
        let event = r#"{"pid":1,"tid":1,"ph":"P","cat":"disabled-by-default-v8.cpu_profiler","id":"0x1""#;
        format!(
            r#"[{event},"ts":1,"name":"Profile","args":{{"data":{{"startTime":0}}}}}},{event},"ts":2,"name":"ProfileChunk","args":{{"data":{{"cpuProfile":{{"nodes":[{{"id":1,"callFrame":{{"functionName":"(root)","scriptId":0}}}},{nodes}],"samples":[2]}},"timeDeltas":[1]}}}}}}]"#
        )
        .into_bytes()
    };
    let linked = |id: usize, parent: usize| {
        format!(r#"{{"id":{id},"parent":{parent},"callFrame":{{"functionName":"f{id}","scriptId":1}}}}"#)
    };
    add("cycle.trace.json", trace(&[linked(2, 3), linked(3, 2)].join(",")), Outcome::Error);
    add("self.trace.json", trace(&linked(2, 2)), Outcome::Error);
    let ring: Vec<String> = (2..DEPTH + 2).map(|i| linked(i, if i == 2 { DEPTH + 1 } else { i - 1 })).collect();
    add("long-cycle.trace.json", trace(&ring.join(",")), Outcome::Error);

    // pprof: ids at u64::MAX, lines at the i64 limits, values that overflow when summed.
    let pprof = |location_ids: Vec<u64>, values: Vec<i64>, line: i64, name: i64| {
        let string_table = ["", "samples", "count", "f", "/p.js"].map(str::to_owned).to_vec();
        Proto {
            sample_type: vec![ValueType { ty: 1, unit: 2 }],
            sample: values
                .iter()
                .map(|&v| Sample { location_id: location_ids.clone(), value: vec![v], label: vec![] })
                .collect(),
            location: vec![Location {
                id: u64::MAX,
                line: vec![Line { function_id: u64::MAX, line }],
                ..Default::default()
            }],
            function: vec![Function { id: u64::MAX, name, system_name: name, filename: 4, start_line: line }],
            string_table,
            ..Default::default()
        }
        .encode_to_vec()
    };
    add("max-ids.pb", pprof(vec![u64::MAX; 3], vec![2, 5], i64::MAX, 3), Outcome::Samples(7));
    add("min-line.pb", pprof(vec![u64::MAX], vec![1], i64::MIN, 3), Outcome::Samples(1));
    add("deep.pb", pprof(vec![u64::MAX; DEPTH], vec![4], 1, 3), Outcome::Samples(4));
    add("overflow.pb", pprof(vec![u64::MAX], vec![i64::MAX, i64::MAX], 1, 3), Outcome::Either);
    add("negative.pb", pprof(vec![u64::MAX], vec![-5], 1, 3), Outcome::Either);
    add("no-location.pb", pprof(vec![u64::MAX - 1], vec![1], 1, 3), Outcome::Error);
    add("bad-string.pb", pprof(vec![u64::MAX], vec![1], 1, 1 << 40), Outcome::Error);
    check_outcomes(cases);
}

/// Names that try to write a line of their own into a CI log (`::error …` is a GitHub Actions
/// workflow command) or act on a terminal, for the test of stderr below.
const LOUD: &[&str] = &[
    "x\n::error file=a::pwned",
    "cr\r::warning::cr",
    "\u{1b}]0;title\u{7}\u{1b}[31mred",
    "bidi\u{202e}gnp.exe",
    "zero\u{200b}width\u{feff}",
    "nel\u{85}::notice::n",
    "ls\u{2028}::error::ls",
];

/// A url (and file name) as loud as the names.
const LOUD_URL: &str = "file:///app/x\n::error file=u::url\u{1b}[31m\u{202e}.js";

/// A .cpuprofile of `main → each of LOUD`, name `i` sampled `counts[i]` times, 1 ms apart.
fn loud_cpuprofile(counts: &[usize]) -> String {
    let frame = |name: &str, url: &str| json!({"functionName": name, "scriptId": "1", "url": url, "lineNumber": 0, "columnNumber": 0});
    let mut nodes = vec![
        json!({"id": 1, "callFrame": {"functionName": "(root)", "scriptId": "0", "url": "", "lineNumber": -1, "columnNumber": -1}, "children": [2]}),
        json!({"id": 2, "callFrame": frame("main", "file:///app/main.js"), "children": (3..3 + LOUD.len()).collect::<Vec<_>>()}),
    ];
    let mut samples = Vec::new();
    for (i, (name, count)) in LOUD.iter().zip(counts).enumerate() {
        nodes.push(json!({"id": 3 + i, "callFrame": frame(name, LOUD_URL)}));
        samples.extend(std::iter::repeat_n(3 + i, *count));
    }
    let deltas = vec![1000; samples.len()];
    json!({"nodes": nodes, "startTime": 0, "endTime": 1000 * samples.len(), "samples": samples, "timeDeltas": deltas})
        .to_string()
}

/// V8's log escaping of a name (`\\`, `\x2C` for commas, `\n`, `\uHHHH` for the rest that is
/// not printable ASCII), as `node --prof` writes it.
fn v8_escaped(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            ',' => out.push_str("\\x2C"),
            '\n' => out.push_str("\\n"),
            ' '..='~' => out.push(c),
            _ => {
                for unit in c.encode_utf16(&mut [0; 2]) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out
}

/// A library path for the tick log, which has no file, so a warning names it.
const LOUD_LIBRARY: &str = "/nonexistent/lib\n::error file=l::library\u{1b}[31m\u{202e}.so";

/// A tick log: a JavaScript function per LOUD name (ticked `i + 1` times) and a library
/// without a file (ticked twice).
fn loud_ticklog() -> String {
    let mut log = String::from("v8-version,11,3,244,8,-node.38,0\n");
    log.push_str(&format!("shared-library,{},0x7f0000000000,0x7f0000100000,0\n", v8_escaped(LOUD_LIBRARY)));
    log.push_str("shared-library-end\nprofiler,begin,1000\n");
    let script = v8_escaped(LOUD_URL);
    for (i, name) in LOUD.iter().enumerate() {
        let start = 0x1000 + 0x100 * i;
        log.push_str(&format!("code-creation,JS,10,100,{start:#x},256,{} {script}:1:1,0x1,~\n", v8_escaped(name)));
    }
    let mut ts = 1000;
    for (i, _) in LOUD.iter().enumerate() {
        for _ in 0..=i {
            ts += 1000;
            log.push_str(&format!("tick,{:#x},{ts},0,0x0,6\n", 0x1010 + 0x100 * i));
        }
    }
    for _ in 0..2 {
        ts += 1000;
        log.push_str(&format!("tick,0x7f0000000100,{ts},0,0x0,6\n"));
    }
    log
}

/// A Chrome trace with two CPU profiles, whose ids are loud, of LOUD functions.
fn loud_trace() -> String {
    let mut events = Vec::new();
    for (tid, id) in [(1, "0x1\n::error file=t::trace"), (2, "0x2\u{1b}[31m\u{202e}")] {
        let event = |ts: i64, name: &str, args: Value| json!({"pid": 1, "tid": tid, "ph": "P", "cat": "disabled-by-default-v8.cpu_profiler", "id": id, "ts": ts, "name": name, "args": args});
        events.push(event(1, "Profile", json!({"data": {"startTime": 0}})));
        let mut nodes = vec![json!({"id": 1, "callFrame": {"functionName": "(root)", "scriptId": 0}})];
        let mut samples = Vec::new();
        for (i, name) in LOUD.iter().enumerate() {
            nodes.push(
                json!({"id": 2 + i, "parent": 1, "callFrame": {"functionName": name, "url": LOUD_URL, "scriptId": 1}}),
            );
            samples.extend(std::iter::repeat_n(2 + i, i + tid));
        }
        let deltas = vec![1000; samples.len()];
        let data = json!({"data": {"cpuProfile": {"nodes": nodes, "samples": samples}, "timeDeltas": deltas}});
        events.push(event(2, "ProfileChunk", data));
    }
    Value::Array(events).to_string()
}

/// A pprof profile of LOUD functions whose one sample type is neither a time nor a count and
/// whose `drop_frames` is not a regular expression: the parser warns, quoting both.
fn loud_pprof() -> Vec<u8> {
    let mut string_table: Vec<String> =
        ["", "x\n::error file=p::type", "bogus\u{1b}[31m\u{202e}", "(\n::error file=d::drop"]
            .map(str::to_owned)
            .to_vec();
    let names = string_table.len() as i64;
    string_table.extend(LOUD.iter().map(|n| (*n).to_owned()));
    string_table.push(LOUD_URL.to_owned());
    let url = string_table.len() as i64 - 1;
    let ids = 1..=LOUD.len() as u64;
    Proto {
        sample_type: vec![ValueType { ty: 1, unit: 2 }],
        drop_frames: 3,
        sample: ids.clone().map(|id| Sample { location_id: vec![id], value: vec![id as i64], label: vec![] }).collect(),
        location: ids
            .clone()
            .map(|id| Location { id, line: vec![Line { function_id: id, line: 1 }], ..Default::default() })
            .collect(),
        function: ids
            .map(|id| {
                let name = names + id as i64 - 1;
                Function { id, name, system_name: name, filename: url, start_line: 1 }
            })
            .collect(),
        string_table,
        ..Default::default()
    }
    .encode_to_vec()
}

/// Every command, on every input format, with names, urls, library paths, trace profile ids,
/// pprof sample types and `drop_frames`, source map urls and file names built to write a line
/// of their own into a CI log or act on a terminal: stderr carries them escaped, on lines that
/// are each one of cpuprof's messages, and so do the JSON `warnings` (issue 16, item 9).
#[test]
fn loud_names_never_reach_stderr_raw() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let base: Vec<usize> = vec![20; LOUD.len()];
    let mut grown = base.clone();
    grown[0] = 400; // `x\n::error file=a::pwned` grows past any threshold: the gate names it.
    std::fs::write(d.join("base.cpuprofile"), loud_cpuprofile(&base)).unwrap();
    std::fs::write(d.join("new.cpuprofile"), loud_cpuprofile(&grown)).unwrap();
    std::fs::write(d.join("loud.log"), loud_ticklog()).unwrap();
    std::fs::write(d.join("loud.trace.json"), loud_trace()).unwrap();
    std::fs::write(d.join("loud.pb"), loud_pprof()).unwrap();
    // Folded stacks: with C0 controls (read as folded when told so: sniffing takes control
    // bytes for binary), and without (recognised, and merged with the other formats).
    let folded = |keep: fn(char) -> bool| -> String {
        let mut text = String::new();
        for (i, name) in LOUD.iter().enumerate() {
            let name: String = name.replace('\n', "\u{1b}").chars().filter(|c| keep(*c)).collect();
            text.push_str(&format!("main;{name} {}\n", i + 1));
        }
        text
    };
    std::fs::write(d.join("loud.folded"), folded(|_| true)).unwrap();
    std::fs::write(d.join("plain.folded"), folded(|c| !c.is_ascii_control())).unwrap();

    // Source maps: a script whose map is missing, by a loud name, and a script with a loud
    // file name that is not there.
    let script_name = "app\u{1b}[31m\u{202e}.js";
    std::fs::write(d.join(script_name), "function f() {}\n//# sourceMappingURL=missing\u{1b}[31m\u{202e}.map\n")
        .unwrap();
    let here = |name: &str| format!("file://{}/{name}", d.display());
    let mut profile: Value = serde_json::from_str(&loud_cpuprofile(&base)).unwrap();
    for (i, node) in profile["nodes"].as_array_mut().unwrap().iter_mut().enumerate().skip(2) {
        let url = if i % 2 == 0 { here(script_name) } else { here("gone\n::error file=s::script.js") };
        node["callFrame"]["url"] = Value::String(url);
    }
    std::fs::write(d.join("mapped.cpuprofile"), profile.to_string()).unwrap();

    let expect_warning =
        |run: &Run, what: &str| assert!(run.stderr.contains(what), "expected {what:?} in {}", run.stderr);
    let inputs = ["base.cpuprofile", "loud.log", "loud.trace.json", "loud.pb", "loud.folded", "plain.folded"];
    for input in inputs {
        let with = |args: &[&'static str]| -> Vec<&'static str> {
            let mut args = args.to_vec();
            if input == "loud.folded" {
                args.extend(["--input-format", "folded"]);
            }
            args
        };
        let table = run(d, &with(&["top", input]));
        assert_eq!(table.code, 0, "{input}: {}", table.stderr);
        let json = ok(d, &with(&["top", input, "--format", "json"]));
        let report: Value = serde_json::from_str(&json).unwrap();
        for warning in report["warnings"].as_array().unwrap() {
            let warning = warning.as_str().unwrap();
            assert_inert(&format!("{input}: JSON warning"), warning);
            assert!(!warning.contains('\n') && !warning.starts_with("::"), "{input}: JSON warning {warning:?}");
        }
        for out in ["loud.svg", "loud.folded.out", "loud.pb.gz", "loud.out.cpuprofile"] {
            let command = match out {
                "loud.svg" => "flamegraph",
                "loud.folded.out" => "collapse",
                _ => "convert",
            };
            let args = with(&[command, input, "-o", out]);
            let r = run(d, &args);
            assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        }
    }
    // The warnings that quote the input are there, escaped.
    expect_warning(&run(d, &["top", "loud.log"]), "no symbols for /nonexistent/lib\\n::error file=l::library\\u{1b}");
    expect_warning(&run(d, &["top", "loud.trace.json"]), "1:0x1\\n::error file=t::trace");
    let pprof = run(d, &["top", "loud.pb"]);
    expect_warning(&pprof, "x\\n::error file=p::type/bogus\\u{1b}[31m\\u{202e}");
    expect_warning(&pprof, "`(\\n::error file=d::drop`");
    let missing = run(d, &["top", "loud.trace.json", "--profile", "9:9"]);
    assert_eq!(missing.code, 1, "{}", missing.stderr);
    expect_warning(&missing, "1:0x1\\n::error file=t::trace");
    let maps = run(d, &["top", "mapped.cpuprofile", "--source-maps"]);
    expect_warning(&maps, "missing\\u{1b}[31m\\u{202e}.map");
    expect_warning(&maps, "gone\\n::error file=s::script.js");
    let gone = run(d, &["top", "gone\n::error file=f::input.cpuprofile"]);
    assert_eq!(gone.code, 1, "{}", gone.stderr);

    let merged =
        run(d, &["merge", "base.cpuprofile", "loud.log", "loud.trace.json", "loud.pb", "plain.folded", "-o", "all.pb"]);
    assert_eq!(merged.code, 0, "{}", merged.stderr);
    for (base, new) in
        [("base.cpuprofile", "loud.pb"), ("loud.log", "loud.trace.json"), ("plain.folded", "plain.folded")]
    {
        let r = run(d, &["diff", base, new, "--flamegraph", "diff.svg"]);
        assert_eq!(r.code, 0, "{base} {new}: {}", r.stderr);
    }
    // The gate: the line that names the regression is one line, the name escaped.
    let gate = run_any(d, &["diff", "base.cpuprofile", "new.cpuprofile", "--fail-on", "self:+1pp"]);
    assert_eq!(gate.code, 3, "{}", gate.stderr);
    expect_warning(&gate, "x\\n::error file=a::pwned");
}
