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
    /// The script as on disk: a byte order mark counts as a column, as it does for V8.
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

    /// The UTF-16 column of the first character of 0-based `line` that is not white space.
    pub(crate) fn indentation(&self, line: u32) -> u32 {
        let Some(line) = self.lines.get(line as usize) else { return 0 };
        let text = &self.text[line.start..line.end];
        text.chars().take_while(|c| c.is_whitespace()).map(|c| c.len_utf16() as u32).sum()
    }

    /// The text of 0-based `line` from UTF-16 `column` on, if a character starts there.
    fn from(&self, line: u32, column: u32) -> Option<(&str, &str)> {
        let l = self.lines.get(line as usize)?;
        let text = &self.text[l.start..l.end];
        let at = l.byte_offset(text, column)?;
        Some(text.split_at(at))
    }

    /// True when the identifier `name` at 0-based `line` and UTF-16 `column` reads as a
    /// function's declaration: `function name(`, `class name`, `get name(`, `name(…){` (a
    /// method), or `name=` / `name:` followed by a function (`function`, `async`, `class`, an
    /// arrow).
    pub(crate) fn declares(&self, line: u32, column: u32, name: &str) -> bool {
        let Some((before, rest)) = self.from(line, column) else { return false };
        if identifier(rest) != Some(name) {
            return false;
        }
        let after = rest[name.len()..].trim_start();
        let before = before.trim_end();
        let keyword = ["function", "function*", "class", "get", "set", "async", "static"]
            .iter()
            .any(|k| before.strip_suffix(k).is_some_and(|rest| !rest.ends_with(is_identifier_char)));
        if keyword {
            return true;
        }
        if let Some(params) = after.strip_prefix('(') {
            // A method `name(…){`, not a call `name(…)`.
            return closing_paren(params).is_some_and(|end| params[end + 1..].trim_start().starts_with('{'));
        }
        let assigned = match after.strip_prefix(':') {
            Some(value) => Some(value),
            None => after.strip_prefix('=').filter(|v| !v.starts_with(['=', '>'])),
        };
        assigned.is_some_and(|value| is_function_value(value.trim_start()))
    }

    /// True when the text on 0-based `line` between UTF-16 columns `from` and `to` is what may
    /// stand between a function's name and where V8 places the function: white space, `=`,
    /// `:`, `*` and keywords (`A=n=>`, `v(`, `f=function*(`, `g=async(`), no bracket, comma or
    /// string that would mean the name belongs to something around the function.
    pub(crate) fn joins_name_and_function(&self, line: u32, from: u32, to: u32) -> bool {
        let (Some((_, start)), Some((_, end))) = (self.from(line, from), self.from(line, to)) else { return false };
        let Some(gap) = start.len().checked_sub(end.len()).and_then(|len| start.get(..len)) else { return false };
        gap.len() <= 64
            && gap.chars().all(|c| c.is_whitespace() || matches!(c, '=' | ':' | '*') || is_identifier_char(c))
    }

    /// True when the identifier `name` occurs on 0-based `line` in the 4 KiB before UTF-16
    /// `column`.
    pub(crate) fn has_identifier_before(&self, line: u32, column: u32, name: &str) -> bool {
        let Some((before, _)) = self.from(line, column) else { return false };
        let mut start = before.len().saturating_sub(4096);
        while !before.is_char_boundary(start) {
            start += 1;
        }
        let before = &before[start..];
        before.match_indices(name).any(|(at, _)| {
            !before[..at].ends_with(is_identifier_char) && !before[at + name.len()..].starts_with(is_identifier_char)
        })
    }

    /// The identifier (or keyword) that starts at 0-based `line` and UTF-16 `column`, if any.
    pub(crate) fn identifier_at(&self, line: u32, column: u32) -> Option<&str> {
        identifier(self.from(line, column)?.1)
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

/// The identifier (or keyword) `code` starts with.
fn identifier(code: &str) -> Option<&str> {
    let len: usize = code.chars().take_while(|c| is_identifier_char(*c)).map(char::len_utf8).sum();
    (len > 0).then(|| &code[..len])
}

/// Where the `)` that closes a `(` just before `code` is, looking a little way (parameter lists).
fn closing_paren(code: &str) -> Option<usize> {
    let mut depth = 0u32;
    for (at, c) in code.char_indices().take(512) {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return Some(at),
            ')' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// True when `code` starts with a function value: `function`, `async`, `class`, an arrow
/// (`n=>`, `(a,b)=>`).
fn is_function_value(code: &str) -> bool {
    if identifier(code).is_some_and(|word| matches!(word, "function" | "async" | "class")) {
        return true;
    }
    // Arrow parameters: `(…)` (looking a little way for the `)`) or one identifier, then `=>`.
    let params = if let Some(rest) = code.strip_prefix('(') {
        closing_paren(rest).map(|end| &rest[end + 1..])
    } else {
        identifier(code).map(|word| &code[word.len()..])
    };
    params.is_some_and(|rest| rest.trim_start().starts_with("=>"))
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
    fn declarations_and_indentation() {
        let script = ScriptText::new(
            "\u{feff}var A=n=>1,B==2;function v(t){}\n  x:function(){},get g(){return A(1)}\nlet n=0,m=(a,b)=>a,k=(a+b)"
                .to_owned(),
        );
        assert!(!script.declares(2, 4, "n"), "n=0 is no function");
        assert!(script.declares(2, 8, "m"), "m=(a,b)=>");
        assert!(!script.declares(2, 19, "k"), "k=(a+b) is no function");
        assert!(script.declares(0, 5, "A"), "A= (a byte order mark counts as a column, as for V8)");
        assert!(script.joins_name_and_function(0, 6, 8), "A=n");
        assert!(!script.joins_name_and_function(1, 3, 21), "x:function(){{}},get g");
        assert!(!script.declares(0, 12, "B"), "B== compares");
        assert!(script.declares(0, 26, "v"), "function v(");
        assert!(!script.declares(0, 26, "w"), "another name");
        assert!(script.declares(1, 2, "x"), "x:");
        assert!(script.declares(1, 21, "g"), "get g(");
        assert!(!script.declares(1, 32, "A"), "A( is a call");
        assert_eq!(script.identifier_at(1, 32), Some("A"));
        assert!(script.has_identifier_before(0, 7, "A") && !script.has_identifier_before(0, 5, "A"));
        assert!(!script.has_identifier_before(0, 31, "va"), "whole identifiers only");
        assert!(!script.has_identifier_before(7, 0, "A"), "no such line");
        let methods = ScriptText::new("o={render(){},run(a){return render(b)},x:asyncPool(1)}".to_owned());
        assert!(methods.declares(0, 3, "render"), "render(){{ is a method");
        assert!(!methods.declares(0, 28, "render"), "render(b) is a call");
        assert!(!methods.declares(0, 38, "x"), "asyncPool is no async function");
        assert_eq!(script.indentation(1), 2);
        assert_eq!(script.indentation(0), 0);
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
