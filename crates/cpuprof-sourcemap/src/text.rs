//! The generated code of a script: lines as JavaScript counts them, columns in UTF-16 code
//! units (what V8 and source maps count), and the identifier at a position.

/// Every this many UTF-16 units of a non-ASCII line, where that unit starts in bytes.
const CHECKPOINT: u32 = 1024;

/// One line of the script.
struct Line {
    start: usize,
    end: usize,
    /// `(utf16 column, byte offset)` every [`CHECKPOINT`] units; empty for ASCII lines, whose
    /// columns are byte offsets.
    checkpoints: Vec<(u32, usize)>,
}

/// The text of a generated (bundled, minified) script.
pub(crate) struct ScriptText {
    text: String,
    lines: Vec<Line>,
}

impl ScriptText {
    pub(crate) fn new(text: String) -> Self {
        let mut lines = Vec::new();
        let mut start = 0;
        let mut ascii = true;
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            // JavaScript's line terminators, as V8 numbers lines.
            let after = match c {
                '\n' | '\u{2028}' | '\u{2029}' => at + c.len_utf8(),
                '\r' if chars.peek().is_some_and(|(_, next)| *next == '\n') => {
                    chars.next();
                    at + 2
                }
                '\r' => at + 1,
                _ => {
                    ascii &= c.is_ascii();
                    continue;
                }
            };
            lines.push(Line::new(&text, start, at, ascii));
            start = after;
            ascii = true;
        }
        lines.push(Line::new(&text, start, text.len(), ascii));
        Self { text, lines }
    }

    /// The whole text.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// The identifier (or keyword) that starts at 0-based `line` and UTF-16 `column`, if any.
    pub(crate) fn identifier_at(&self, line: u32, column: u32) -> Option<&str> {
        let line = self.lines.get(line as usize)?;
        let text = &self.text[line.start..line.end];
        let at = line.byte_offset(text, column)?;
        let rest = &text[at..];
        let len: usize = rest.chars().take_while(|c| is_identifier_char(*c)).map(char::len_utf8).sum();
        (len > 0).then(|| &rest[..len])
    }
}

impl Line {
    fn new(text: &str, start: usize, end: usize, ascii: bool) -> Line {
        let mut checkpoints = Vec::new();
        if !ascii {
            let mut units = 0u32;
            for (at, c) in text[start..end].char_indices() {
                if units >= CHECKPOINT * checkpoints.len() as u32 {
                    checkpoints.push((units, at));
                }
                units = units.saturating_add(c.len_utf16() as u32);
            }
        }
        Line { start, end, checkpoints }
    }

    /// The byte offset in `text` (this line) of UTF-16 `column`, if a character starts there.
    fn byte_offset(&self, text: &str, column: u32) -> Option<usize> {
        if self.checkpoints.is_empty() {
            return text.is_char_boundary(column as usize).then_some(column as usize);
        }
        let (mut units, mut at) = self.checkpoints[self.checkpoints.partition_point(|(u, _)| *u <= column) - 1];
        for c in text[at..].chars() {
            if units >= column {
                break;
            }
            units += c.len_utf16() as u32;
            at += c.len_utf8();
        }
        (units == column && at < text.len()).then_some(at)
    }
}

/// Characters that can continue a JavaScript identifier (ASCII exactly, the rest approximately:
/// names that V8 reports are compared with the text, so a wider set only costs a mismatch).
pub(crate) fn is_identifier_char(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || c == '_'
        || c == '$'
        || (!c.is_ascii() && c.is_alphanumeric())
        || c == '\u{200c}'
        || c == '\u{200d}'
}

/// The url of the last `//# sourceMappingURL=` comment of a script (or the older `//@` form),
/// looking only at the comments that end the file, as browsers and node do.
pub(crate) fn source_mapping_url(text: &str) -> Option<&str> {
    for line in text.lines().rev() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let comment = line.strip_prefix("//")?;
        if let Some(url) =
            comment.strip_prefix("# sourceMappingURL=").or_else(|| comment.strip_prefix("@ sourceMappingURL="))
        {
            let url = url.trim();
            return (!url.is_empty()).then_some(url);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_at_utf16_columns() {
        let script = ScriptText::new("var a=1;\r\nconst é=\"𝒳\",fn$=x=>x;\u{2028}b\rc".to_owned());
        assert_eq!(script.identifier_at(0, 4), Some("a"));
        assert_eq!(script.identifier_at(1, 6), Some("é"));
        // 𝒳 takes two UTF-16 units.
        assert_eq!(script.identifier_at(1, 13), Some("fn$"));
        assert_eq!(script.identifier_at(1, 17), Some("x"));
        assert_eq!(script.identifier_at(1, 18), None, "`=>` is no identifier");
        assert_eq!(script.identifier_at(2, 0), Some("b"));
        assert_eq!(script.identifier_at(3, 0), Some("c"));
        assert_eq!(script.identifier_at(1, 10), None, "inside a surrogate pair");
        assert_eq!(script.identifier_at(1, 500), None);
        assert_eq!(script.identifier_at(9, 0), None);
    }

    #[test]
    fn long_non_ascii_lines_use_checkpoints() {
        let line = "é".repeat(5000) + " name";
        let script = ScriptText::new(line);
        assert_eq!(script.identifier_at(0, 5001), Some("name"));
        assert_eq!(script.identifier_at(0, 4999).map(str::len), Some(2));
    }

    #[test]
    fn only_the_trailing_comment_counts() {
        assert_eq!(source_mapping_url("x\n//# sourceMappingURL=a.map\n"), Some("a.map"));
        assert_eq!(source_mapping_url("//# sourceMappingURL=a.map\nx\n//# sourceMappingURL=b.map\n\n"), Some("b.map"));
        assert_eq!(source_mapping_url("//# sourceMappingURL=a.map\ncode();\n"), None);
        assert_eq!(source_mapping_url("x\n//@ sourceMappingURL=old.map\n// license\n"), Some("old.map"));
        assert_eq!(source_mapping_url("x\n//# sourceMappingURL=\n"), None);
    }
}
