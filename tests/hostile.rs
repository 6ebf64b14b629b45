//! Hostile shapes (issue 7): names built to break outputs, 100,000-deep stacks, cycles and
//! ids at the integer limits, made here and run through every command and output format
//! (table, JSON, CSV, Markdown, folded, SVG, differential SVG, pprof, .cpuprofile). Each must
//! end in a clean error (exit 1, `cpuprof: error: …`) or a correct result that carries the
//! names exactly where the format is data (JSON, CSV, pprof, .cpuprofile, folded read back)
//! and inertly where people read it: no character that a terminal, a Markdown renderer or an
//! SVG viewer would act on, and one cell, one line, one frame per name.
//!
//! What is expected is computed here from what was written, not from cpuprof's output.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use quick_xml::events::Event;
use serde_json::{json, Value};

/// Function names from other people's code, one each; name `i` gets `i + 1` samples.
const NAMES: &[&str] = &[
    "<script>alert(1)</script>",
    "semi;colon",
    "pipe|name",
    "back`tick`",
    "new\nline",
    "cr\rname",
    "tab\tname",
    "\u{1b}[31mred\u{1b}[0m\u{1b}]0;title\u{7}",
    "bidi\u{202e}gnp.exe",
    "\u{2066}isolate\u{2069}",
    "nul\u{0}byte",
    "quote\"and'apos",
    "amp&amp;lt;",
    "]]>cdata<!--",
    "back\\slash\\n",
    "trailing 12",
    "=cmd|' /C calc'!A0",
    "emoji 🔥 中文 café",
    "\u{feff}bom\u{200b}zero",
    "del\u{7f}c1\u{85}",
    "line\u{2028}sep",
    "\u{fffe}\u{ffff}",
    "*star* _u_ [l](u) ~~s~~ #h",
    "{{template}} ${x}",
    "(program)",
];

/// The url of every hostile function.
const URL: &str = "file:///app/h\u{202e};|<b>`x\u{1b}.js";

/// Characters no human-facing output may carry raw (decided here, not by cpuprof): controls
/// but the line feed that ends lines, bidi controls, line/paragraph separators, zero-width
/// space, BOM and the noncharacters.
fn acts_on_reader(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{061c}' | '\u{200b}' | '\u{200e}' | '\u{200f}' | '\u{2028}'..='\u{202e}')
        || matches!(c, '\u{2066}'..='\u{2069}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}')
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

/// `cpuprof ARGS` in `dir`, which must end within two minutes, with exit 0, or 1 and a clean error.
fn run(dir: &Path, args: &[&str]) -> Run {
    let out = common::cpuprof()
        .current_dir(dir)
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap_or_else(|e| panic!("cpuprof {args:?}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out.status.code().unwrap_or_else(|| panic!("cpuprof {args:?} was killed (timeout?): {stderr}"));
    assert!(!stderr.contains("panicked"), "cpuprof {args:?} panicked: {stderr}");
    assert!(
        code == 0 || (code == 1 && stderr.contains("cpuprof: error: ")),
        "cpuprof {args:?} exited {code}: {stderr}"
    );
    assert_inert(&format!("stderr of {args:?}"), &stderr);
    Run { code, stdout: out.stdout, stderr }
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

/// A .cpuprofile with `(root) → main → each of NAMES`, name `i` sampled `scale × (i + 1)` times, 1 ms apart.
fn hostile_cpuprofile(scale: usize) -> Value {
    let frame = |name: &str, url: &str, line: usize| json!({"functionName": name, "scriptId": "1", "url": url, "lineNumber": line, "columnNumber": 0});
    let mut nodes = vec![
        json!({"id": 1, "callFrame": {"functionName": "(root)", "scriptId": "0", "url": "", "lineNumber": -1, "columnNumber": -1}, "children": [2]}),
        json!({"id": 2, "callFrame": frame("main", "file:///app/<main>;|.js", 0), "children": (3..3 + NAMES.len()).collect::<Vec<_>>()}),
    ];
    let mut samples = Vec::new();
    for (i, name) in NAMES.iter().enumerate() {
        nodes.push(json!({"id": 3 + i, "callFrame": frame(name, URL, i)}));
        samples.extend(std::iter::repeat_n(3 + i, scale * (i + 1)));
    }
    let deltas = vec![1000; samples.len()];
    json!({"nodes": nodes, "startTime": 0, "endTime": 1000 * samples.len(), "samples": samples, "timeDeltas": deltas})
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

/// Markdown table rows: one line each, every `|` of the text escaped, nothing that renders as HTML or code.
fn assert_markdown_rows(what: &str, markdown: &str, rows: usize, columns: usize) {
    assert_inert(what, markdown);
    let table: Vec<&str> = markdown.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(table.len(), rows + 2, "{what}: header, rule and one line per row:\n{markdown}");
    for line in &table {
        let unescaped = |c: char| {
            line.char_indices()
                .filter(|&(i, x)| x == c && line[..i].chars().rev().take_while(|&b| b == '\\').count() % 2 == 0)
                .count()
        };
        assert_eq!(unescaped('|'), columns + 1, "{what}: {line}");
        assert_eq!(unescaped('`'), 0, "{what}: {line}");
        assert!(!line.contains('<'), "{what}: {line}");
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
        Some((URL.to_owned(), i as i64 + 1, i as i64 + 1))
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
        assert_eq!(record.len(), 11, "{record:?}");
        if let Some((file, samples, _)) = expected(&record[0]) {
            assert_eq!((&record[1], record[6].parse::<i64>().unwrap()), (file.as_str(), samples), "{record:?}");
            seen += 1;
        }
    }
    assert_eq!(seen, NAMES.len(), "CSV has a row per name:\n{csv}");

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
    assert_eq!(
        table.lines().filter(|l| l.contains("/app/h\\u{202e};|<b>`x\\u{1b}.js")).count(),
        NAMES.len(),
        "{table}"
    );
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
    assert_markdown_rows("diff markdown", &markdown, NAMES.len() + 1, 6);
    let run = run(d, &["diff", "h.cpuprofile", "h2.cpuprofile", "--flamegraph", "d.svg"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let titles = svg_titles("differential flamegraph", &std::fs::read(d.join("d.svg")).unwrap());
    assert!(titles.iter().any(|t| t.starts_with("<script>alert(1)</script> ")), "{titles:#?}");
}
