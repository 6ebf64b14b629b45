//! Making untrusted names safe to show. Function names and urls come from other people's
//! code and may hold newlines, terminal escapes or bidi overrides that would reorder what a
//! reader sees.

pub use cpuprof_model::text::{escaped, is_unsafe_to_show};

/// `s` with dangerous characters written as visible escapes (`\n`, `\t`, `\u{202e}`), and
/// GitHub Actions' legacy command marker `##[` (read anywhere in a line of a job's log) as
/// `#\x23[`.
pub fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '#' if chars.peek() == Some(&'#') && chars.clone().nth(1) == Some('[') => {
                chars.next();
                out.push_str("#\\x23");
            }
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe_to_show(c) => out.push_str(&escaped(c)),
            c => out.push(c),
        }
    }
    out
}

/// How many terminal columns `s` takes (wide characters take two).
pub fn columns(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

fn char_columns(c: char) -> usize {
    unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)
}

/// The longest start of `s` that takes at most `max` columns.
fn head(s: &str, max: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        used += char_columns(c);
        if used > max {
            return &s[..i];
        }
    }
    s
}

/// The longest end of `s` that takes at most `max` columns.
fn tail(s: &str, max: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices().rev() {
        used += char_columns(c);
        if used > max {
            return &s[i + c.len_utf8()..];
        }
    }
    s
}

/// `s` cut to at most `max` columns, ending in `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if columns(s) <= max {
        return s.to_owned();
    }
    format!("{}…", head(s, max.saturating_sub(1)))
}

/// `s` cut to at most `max` columns by taking out its middle (`…` in its place), so that both
/// ends stay: a C++ name's namespace and its parameters, a path's root and its file.
pub fn truncate_middle(s: &str, max: usize) -> String {
    if columns(s) <= max {
        return s.to_owned();
    }
    let room = max.saturating_sub(1);
    let front = head(s, room.div_ceil(2));
    let back = tail(s, room - columns(front));
    format!("{front}…{back}")
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_actions_command_marker_is_made_visible() {
        assert_eq!(visible("a##[error]b ##[stop-commands]t"), "a#\\x23[error]b #\\x23[stop-commands]t");
        assert_eq!(visible("#[a] ## [b] #"), "#[a] ## [b] #");
        assert_eq!(visible(&visible("###[x")), "##\\x23[x");
    }

    use super::*;

    #[test]
    fn escapes_controls_and_bidi() {
        assert_eq!(visible("a\nb\tc\u{202e}d\u{1b}[31m"), "a\\nb\\tc\\u{202e}d\\u{1b}[31m");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        assert_eq!(truncate("日本語です", 5), "日本…");
        assert_eq!(truncate_middle("abcdefghij", 5), "ab…ij");
        assert_eq!(truncate_middle("abcdefghij", 6), "abc…ij");
        assert_eq!(truncate_middle("abc", 3), "abc");
        assert_eq!(truncate_middle("日本語です", 6), "日…す");
    }
}
