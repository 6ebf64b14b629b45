//! Markdown tables (a pull-request comment): `top` and `diff`.

use std::fmt::Write as _;

use super::words::{delta_text, diff_location, diff_summary, header, pcts, top_amount, top_location, verdict_text};
use super::{DiffDocument, TopDocument};
use crate::text::{display_file, escaped, is_unsafe_to_show, truncate};

/// Text safe inside a GFM table cell: ASCII punctuation backslash-escaped (so `|`, `*`,
/// `` ` ``, `<`, `[` … are literal), controls and bidi characters shown as escapes.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\\\n"),
            c if is_unsafe_to_show(c) => {
                out.push('\\');
                out.push_str(&escaped(c));
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c if c.is_ascii_punctuation() => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

pub(crate) fn top(doc: &TopDocument<'_>) -> String {
    let mut out = String::new();
    for line in header(doc).lines() {
        out.push_str(&format!("**{}**\n\n", escape(line)));
    }
    if doc.report.rows.is_empty() {
        out.push_str("No samples to report.\n");
        return out;
    }
    let what = if doc.by_group() { "name" } else { "function" };
    out.push_str(&format!("| self | self% | total | total% | {what} | location |\n|---:|---:|---:|---:|---|---|\n"));
    let amount = |v: i64| top_amount(doc, v);
    for r in doc.rows() {
        let loc = if doc.by_group() { String::new() } else { top_location(r) };
        out.push_str(&format!(
            "| {} | {:.1}% | {} | {:.1}% | {} | {} |\n",
            amount(r.self_weight),
            doc.pct(r.self_weight),
            amount(r.total_weight),
            doc.pct(r.total_weight),
            escape(&truncate(&r.name, 120)),
            escape(display_file(&loc)),
        ));
    }
    out
}

pub(crate) fn diff(doc: &DiffDocument<'_>) -> String {
    // The summary and the numbers are cpuprof's own text; names and files are escaped.
    let mut out = format!("**cpuprof diff**: {}\n\n", diff_summary(doc));
    for warning in &doc.report.warnings {
        let _ = writeln!(out, "> **Warning:** {}\n", escape(warning));
    }
    if doc.rows.is_empty() {
        out.push_str("No functions to compare.\n");
        return out;
    }
    out.push_str("| function | location | base % | new % | Δ | verdict |\n|---|---|---:|---:|---:|---|\n");
    for row in doc.rows {
        let (b, n) = pcts(doc, row);
        let _ = writeln!(
            out,
            "| {} | {} | {b:.2}% | {n:.2}% | {} | {} |",
            escape(&truncate(&row.name, 120)),
            escape(&diff_location(row)),
            delta_text(doc, row),
            verdict_text(row),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn hostile_names_are_inert() {
        assert_eq!(escape("a|b"), "a\\|b");
        assert_eq!(escape("<script>"), "&lt;script&gt;");
        assert_eq!(escape("`x`*y*"), "\\`x\\`\\*y\\*");
        assert_eq!(escape("a\nb"), "a\\\\nb");
        assert_eq!(escape("\u{202e}"), "\\\\u{202e}");
    }
}
