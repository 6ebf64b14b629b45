use cpuprof_analysis::Weight;

use crate::table::{header, location};
use crate::text::{display_file, escaped, is_unsafe_to_show, truncate};
use crate::time::format_ns;
use crate::TopDocument;

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
    let amount = |v: i64| match doc.report.unit {
        Weight::Samples => v.to_string(),
        _ => format_ns(v),
    };
    for r in doc.rows() {
        let loc = if doc.by_group() { String::new() } else { location(r) };
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
