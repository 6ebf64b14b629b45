//! Making untrusted names safe to show. Function names and urls come from other people's
//! code and may hold newlines, terminal escapes or bidi overrides that would reorder what a
//! reader sees.

pub use cpuprof_model::text::{escaped, is_unsafe_to_show};

/// `s` with dangerous characters written as visible escapes (`\n`, `\t`, `\u{202e}`).
pub fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe_to_show(c) => out.push_str(&escaped(c)),
            c => out.push(c),
        }
    }
    out
}

/// `s` cut to at most `max` characters, ending in `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A url shortened for display: `file:///srv/app.js` → `/srv/app.js`.
pub fn display_file(url: &str) -> &str {
    url.strip_prefix("file://").unwrap_or(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_and_bidi() {
        assert_eq!(visible("a\nb\tc\u{202e}d\u{1b}[31m"), "a\\nb\\tc\\u{202e}d\\u{1b}[31m");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }
}
