//! Every example in README.md that shows a command (`$ cpuprof …`) and what it prints is what
//! the binary prints: each is run (through `sh`, so globs expand) from a directory that holds
//! the repository's `fixtures/` (a link), and its stdout (after its stderr, where the block
//! starts with a `cpuprof:` message) compared with the block, as a terminal 100 columns wide
//! shows it (`COLUMNS=100`: tables fit it). Not from the checkout itself: tables shorten paths
//! under the current directory, and the fixtures' paths were recorded at one checkout's.
//! `CPUPROF_BLESS=1` rewrites the blocks that differ (review the diff).

mod common;

use std::process::Command;

use common::root;

/// The terminal width the README's examples are shown at.
const README_COLUMNS: &str = "100";

/// `(command, expected stdout)` of every `$ cpuprof` example: the lines after the command, up
/// to the end of its fenced block.
fn examples() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut out = Vec::new();
    let mut lines = readme.lines();
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
    let examples = examples();
    assert!(examples.len() >= 6, "the README's examples were not found: {examples:?}");
    let binary = assert_cmd::cargo::cargo_bin("cpuprof");
    let place = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root().join("fixtures"), place.path().join("fixtures")).unwrap();
    let mut failures = Vec::new();
    for (command, expected) in &examples {
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
            bless(command, expected, &printed);
            continue;
        }
        if !output.status.success() || printed != *expected {
            failures.push(format!(
                "`cpuprof {command}` (exit {:?}) printed:\n{printed}\nthe README shows:\n{expected}",
                output.status.code()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Rewrites the example of `command` in README.md with what the binary printed (`CPUPROF_BLESS=1`,
/// after a deliberate change to the output: review the diff before committing).
fn bless(command: &str, old: &str, new: &str) {
    let path = root().join("README.md");
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
