//! GitHub Actions workflow commands for a diff: one annotation per significant change, placed
//! on its source line when the file is below its checkout.
//!
//! A workflow command is a line of stdout that the runner reads as an instruction, so every
//! field is escaped the way GitHub's own toolkit does (`%`, CR and LF in the message; also `:`
//! and `,` in the properties) after control characters are made visible: a function's name
//! cannot end the command early or start another one.

use std::fmt::Write as _;

use cpuprof_analysis::{DiffRow, Verdict};

use super::markdown::checkout_path;
use super::words::{diff_summary, regression_text};
use super::DiffDocument;
use crate::text::visible;

/// The annotations of `doc`'s significant rows in its order, then a `::notice` with the summary.
pub(crate) fn annotations(doc: &DiffDocument<'_>) -> String {
    let mut out = String::new();
    for row in doc.rows.iter().filter(|r| r.significant && r.verdict != Verdict::Unchanged) {
        let level = match row.verdict {
            Verdict::Hotter | Verdict::New => "warning",
            _ => "notice",
        };
        let mut properties = vec![("title", format!("cpuprof: {} {}", row.verdict.as_str(), row.name))];
        if let Some(path) = checkout_path(doc, row) {
            properties.push(("file", path));
            if let Some(line) = row.line {
                properties.push(("line", line.to_string()));
            }
        }
        let _ = writeln!(out, "{}", command(level, &properties, &message(doc, row)));
    }
    let _ = writeln!(out, "{}", command("notice", &[("title", "cpuprof diff".to_owned())], &diff_summary(doc)));
    out
}

/// What a row's annotation says: the change in the report's metric per run.
fn message(doc: &DiffDocument<'_>, row: &DiffRow) -> String {
    regression_text(row, doc.report.metric, doc.report.unit)
}

/// `::level key=value,…::message`, escaped.
fn command(level: &str, properties: &[(&str, String)], message: &str) -> String {
    let properties: Vec<String> = properties.iter().map(|(k, v)| format!("{k}={}", escape_property(v))).collect();
    let sep = if properties.is_empty() { "" } else { " " };
    format!("::{level}{sep}{}::{}", properties.join(","), escape_data(message))
}

/// A message: `%`, CR and LF encoded (GitHub's `escapeData`), controls made visible first.
fn escape_data(text: &str) -> String {
    visible(text).replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A property value: as a message, and `:` and `,` encoded too (GitHub's `escapeProperty`).
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_field_can_end_or_start_a_command() {
        let hostile = "a::warning::b\r\n::error file=x,line=1::pwned%0A,c:d";
        let line = command("warning", &[("title", hostile.to_owned()), ("file", "src/a,b:c.js".to_owned())], hostile);
        assert_eq!(line.lines().count(), 1);
        // After the level, the only `::` is the one that starts the message.
        let rest = line.strip_prefix("::warning ").unwrap();
        let (properties, message) = rest.split_once("::").unwrap();
        assert!(!properties.contains(':') && properties.matches(',').count() == 1, "{properties}");
        assert!(properties.contains("file=src/a%2Cb%3Ac.js"));
        assert!(message.contains("%250A"), "a literal %0A stays literal: {message}");
        assert!(!message.contains('\n') && !message.contains('\r'));
    }
}
