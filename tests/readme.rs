//! Every example in README.md and docs/*.md that shows a command (`$ cpuprof …`) and what it
//! prints is what the binary prints: each is run (through `sh`, so globs expand) from a directory that holds
//! the repository's `fixtures/` (a link), and its stdout (after its stderr, where the block
//! starts with a `cpuprof:` message) compared with the block, as a terminal 100 columns wide
//! shows it (`COLUMNS=100`: tables fit it). Not from the checkout itself: tables shorten paths
//! under the current directory, and the fixtures' paths were recorded at one checkout's.
//! `CPUPROF_BLESS=1` rewrites the blocks that differ (review the diff).
//!
//! And every relative link of those files reaches a file of the repository (and a heading of it,
//! where it names one): the README and the reference in `docs/` point at each other, and never
//! outside the repository.

use crate::common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::root;

/// The terminal width the README's examples are shown at.
const README_COLUMNS: &str = "100";

/// The documentation: README.md, then docs/*.md by name (paths relative to the root).
fn documents() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .map(|path| path.strip_prefix(root()).unwrap().to_path_buf())
        .collect();
    docs.sort();
    docs.insert(0, PathBuf::from("README.md"));
    docs
}

/// `(command, expected stdout)` of every `$ cpuprof` example of `doc`: the lines after the
/// command, up to the end of its fenced block.
fn examples(doc: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(root().join(doc)).unwrap();
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        // Blocks inside a list item are indented: their lines lose that indentation.
        let indent = line.len() - line.trim_start().len();
        let Some(command) = line.trim_start().strip_prefix("$ cpuprof ") else { continue };
        let mut expected = String::new();
        for line in lines.by_ref() {
            if line.trim_start().starts_with("```") {
                break;
            }
            expected.push_str(line.get(indent..).unwrap_or(""));
            expected.push('\n');
        }
        out.push((command.to_owned(), expected));
    }
    out
}

/// True when /usr/bin/node is the binary that recorded the tick-log fixtures (C++ names are
/// read from its symbols).
fn same_node() -> bool {
    let recorded = std::fs::read_to_string(root().join("fixtures/ticklog/node.build-id")).unwrap();
    let out = Command::new("readelf").args(["-n", "/usr/bin/node"]).output();
    let text = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    text.lines().any(|l| l.trim().strip_prefix("Build ID: ") == Some(recorded.trim()))
}

#[test]
#[allow(clippy::print_stderr)] // the skip message
fn every_readme_example_is_what_the_binary_prints() {
    let examples: Vec<(PathBuf, String, String)> = documents()
        .into_iter()
        .flat_map(|doc| examples(&doc).into_iter().map(move |(command, expected)| (doc.clone(), command, expected)))
        .collect();
    let in_readme = examples.iter().filter(|(doc, ..)| doc == Path::new("README.md")).count();
    assert!(in_readme >= 4, "the README's examples were not found: {examples:?}");
    assert!(examples.len() >= 12, "the docs' examples were not found: {examples:?}");
    let binary = assert_cmd::cargo::cargo_bin("cpuprof");
    let place = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root().join("fixtures"), place.path().join("fixtures")).unwrap();
    let mut failures = Vec::new();
    for (doc, command, expected) in &examples {
        if command.contains(".log") && !same_node() {
            eprintln!("SKIPPED: `cpuprof {command}` names C++ from the symbols of the node that recorded it");
            continue;
        }
        let output = Command::new("sh")
            .arg("-c")
            .arg(format!("\"$0\" {command}"))
            .arg(&binary)
            .current_dir(place.path())
            .env("NO_COLOR", "1")
            .env("COLUMNS", README_COLUMNS)
            .output()
            .unwrap();
        // Examples that show warnings show stderr first, as a terminal does for these.
        let stdout = String::from_utf8_lossy(&output.stdout);
        let printed =
            if expected.starts_with("cpuprof: ") { String::from_utf8_lossy(&output.stderr) + stdout } else { stdout };
        if output.status.success() && printed != *expected && std::env::var_os("CPUPROF_BLESS").is_some() {
            bless(doc, command, expected, &printed);
            continue;
        }
        if !output.status.success() || printed != *expected {
            failures.push(format!(
                "`cpuprof {command}` (exit {:?}) printed:\n{printed}\n{} shows:\n{expected}",
                output.status.code(),
                doc.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Rewrites the example of `command` in `doc` with what the binary printed (`CPUPROF_BLESS=1`,
/// after a deliberate change to the output: review the diff before committing).
fn bless(doc: &Path, command: &str, old: &str, new: &str) {
    let path = root().join(doc);
    let readme = std::fs::read_to_string(&path).unwrap();
    let at = readme.find(&format!("$ cpuprof {command}\n")).expect("the example is still there");
    let indent: String = readme[..at].chars().rev().take_while(|c| *c == ' ').collect();
    let indented = |text: &str| -> String {
        text.lines().fold(String::new(), |mut out, line| {
            out.push_str(&indent);
            out.push_str(line);
            out.push('\n');
            out
        })
    };
    let block = format!("$ cpuprof {command}\n{}", indented(old));
    assert!(readme[at..].starts_with(&block), "example `{command}` not found again");
    let blessed = format!("$ cpuprof {command}\n{}", indented(new));
    let rewritten = format!("{}{}{}", &readme[..at], blessed, &readme[at + block.len()..]);
    std::fs::write(&path, rewritten).unwrap();
}

/// The text of `markdown` outside fenced blocks, with its code spans blanked (a code span may
/// hold `](` or `#` that are not Markdown), and the headings (lines starting with `#`).
fn prose(markdown: &str) -> (String, Vec<String>) {
    let mut text = String::new();
    let mut headings = Vec::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if line.starts_with('#') {
            headings.push(line.trim_start_matches('#').trim().to_owned());
        }
        text.push_str(line);
        text.push('\n');
    }
    (blank_code_spans(&text), headings)
}

/// `text` with each code span (a run of backticks up to the next run of as many, across lines,
/// as CommonMark reads them) replaced by spaces; a run that is never closed stays as it is.
fn blank_code_spans(text: &str) -> String {
    let ticks_at = |at: usize| text[at..].bytes().take_while(|b| *b == b'`').count();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(offset) = text[at..].find('`') {
        let open = at + offset;
        out.push_str(&text[at..open]);
        let width = ticks_at(open);
        let mut scan = open + width;
        let mut close = None;
        while let Some(next) = text[scan..].find('`') {
            let run = ticks_at(scan + next);
            if run == width {
                close = Some(scan + next);
                break;
            }
            scan += next + run;
        }
        if let Some(close) = close {
            out.push_str(&" ".repeat(close + width - open));
            at = close + width;
        } else {
            out.push_str(&text[open..open + width]);
            at = open + width;
        }
    }
    out.push_str(&text[at..]);
    out
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// The anchors of a Markdown file's headings, numbered as GitHub numbers repeated ones.
fn anchors(markdown: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    for heading in prose(markdown).1 {
        let base = slug(&heading);
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// The targets of the inline links and images (`[text](target)`, `![alt](target)`) of `markdown`.
fn link_targets(markdown: &str) -> Vec<String> {
    let text = prose(markdown).0;
    text.match_indices("](")
        .filter_map(|(at, _)| text[at + 2..].find(')').map(|end| text[at + 2..at + 2 + end].trim().to_owned()))
        .collect()
}

/// What is wrong with the link `target` of `doc` (relative to the root), if anything.
fn broken(doc: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") || target.starts_with("//") {
        return Some("points outside the repository".to_owned());
    }
    let (path, anchor) = target.split_once('#').map_or((target, None), |(p, a)| (p, Some(a)));
    let file = if path.is_empty() { root().join(doc) } else { root().join(doc).parent().unwrap().join(path) };
    let Ok(file) = file.canonicalize() else { return Some("no such file".to_owned()) };
    if !file.starts_with(root()) {
        return Some("points outside the repository".to_owned());
    }
    let anchor = anchor?;
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Some("an anchor in a file that is not text".to_owned());
    };
    (!anchors(&text).contains(anchor)).then(|| format!("no heading `{anchor}` in {}", file.display()))
}

#[test]
fn every_relative_link_of_the_docs_reaches_a_file_and_heading_that_exist() {
    let mut failures = Vec::new();
    let mut links = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(root().join(&doc)).unwrap();
        for target in link_targets(&text) {
            links += 1;
            if let Some(why) = broken(&doc, &target) {
                failures.push(format!("{}: ({target}): {why}", doc.display()));
            }
        }
    }
    assert!(links >= 40, "the docs' links were not found ({links})");
    assert!(failures.is_empty(), "broken links:\n{}", failures.join("\n"));
}

#[test]
fn the_table_of_contents_lists_every_page_of_the_reference() {
    let contents = std::fs::read_to_string(root().join("docs/README.md")).unwrap();
    let listed: HashSet<String> = link_targets(&contents).into_iter().collect();
    for doc in documents() {
        let name = doc.file_name().unwrap().to_str().unwrap();
        if doc.starts_with("docs") && name != "README.md" {
            assert!(listed.contains(name), "docs/README.md does not list {name}");
        }
    }
}

#[test]
fn the_link_checker_sees_broken_links_and_skips_code() {
    let doc = Path::new("docs/README.md");
    assert_eq!(broken(doc, "recording.md"), None);
    assert_eq!(broken(doc, "../README.md#install"), None);
    assert_eq!(broken(doc, "time.md#time-windows"), None);
    assert!(broken(doc, "no-such.md").is_some());
    assert!(broken(doc, "time.md#no-such-heading").is_some());
    assert!(broken(doc, "https://example.com/").is_some());
    assert!(broken(doc, "../../etc/passwd").is_some());
    assert_eq!(slug("`cpuprof tree`, `callers`, `callees`, `explain`"), "cpuprof-tree-callers-callees-explain");
    assert_eq!(
        slug("Time attribution (the convention, as Chrome DevTools' Performance panel)"),
        "time-attribution-the-convention-as-chrome-devtools-performance-panel"
    );
    let markdown = "# A\n\n[x](a.md) `[y](b.md)` ``[`z`](c.md)``\n```\n# not a heading [w](d.md)\n```\n# A\n";
    assert_eq!(link_targets(markdown), ["a.md"]);
    assert_eq!(anchors(markdown), HashSet::from(["a".to_owned(), "a-1".to_owned()]));
}
