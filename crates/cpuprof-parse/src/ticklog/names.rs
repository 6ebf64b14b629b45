//! Names in code-creation lines: V8's escapes, the quoting of older logs and the
//! `fn script:line:col` layout.

use std::borrow::Cow;

/// Splits a line of an older log (V8 before 6.x wrote strings as `"…"`: `shared-library,"/x"`,
/// `profiler,"begin",1000`, names in `code-creation`) into fields, taking the quotes off.
/// A field is quoted when it starts with `"` and a `"` followed by a comma or the line end
/// closes it; inside, `""` and `\"` stand for a quote. Anything else is split at commas.
pub(super) fn split_quoted(line: &str) -> Vec<Cow<'_, str>> {
    let bytes = line.as_bytes();
    let mut fields = Vec::new();
    let mut at = 0;
    loop {
        if bytes.get(at) == Some(&b'"') {
            if let Some((text, next)) = quoted_field(line, at) {
                fields.push(text);
                let Some(after) = next else { return fields };
                at = after;
                continue;
            }
        }
        let Some(i) = memchr::memchr(b',', &bytes[at..]) else {
            fields.push(Cow::Borrowed(&line[at..]));
            return fields;
        };
        fields.push(Cow::Borrowed(&line[at..at + i]));
        at += i + 1;
    }
}

/// The quoted field starting at `start` (a `"`) and where the next field starts (`None` at
/// the line end); `None` when no closing quote ends a field.
fn quoted_field(line: &str, start: usize) -> Option<(Cow<'_, str>, Option<usize>)> {
    let bytes = line.as_bytes();
    let mut text: Option<String> = None;
    let mut i = start + 1;
    let mut copied = i;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (b'"', None | Some(b',')) => {
                let field = match text {
                    Some(mut owned) => {
                        owned.push_str(&line[copied..i]);
                        Cow::Owned(owned)
                    }
                    None => Cow::Borrowed(&line[start + 1..i]),
                };
                return Some((field, (i + 1 < bytes.len()).then_some(i + 2)));
            }
            (b'"' | b'\\', Some(b'"')) => {
                let owned = text.get_or_insert_with(String::new);
                owned.push_str(&line[copied..i]);
                owned.push('"');
                i += 2;
                copied = i;
            }
            _ => i += 1,
        }
    }
    None
}

/// Undoes V8's log escaping: `\\`, `\n`, `\xHH` (one UTF-16 unit ≤ 0xFF) and `\uHHHH`
/// (surrogate pairs joined). A backslash that starts none of these is literal: V8 writes
/// JavaScript function names raw, so `back\slash` reaches the log as it is.
pub(super) fn unescape(raw: &str) -> String {
    if !raw.contains('\\') {
        return raw.to_owned();
    }
    let bytes = raw.as_bytes();
    let mut units: Vec<u16> = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if bytes[i] == b'\\' {
            let hex = |from: usize, len: usize| {
                raw.get(from..from + len)
                    .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
                    .and_then(|h| u16::from_str_radix(h, 16).ok())
            };
            let escaped = match bytes.get(i + 1) {
                Some(b'\\') => Some((u16::from(b'\\'), 2)),
                Some(b'n') => Some((u16::from(b'\n'), 2)),
                Some(b'x') => hex(i + 2, 2).map(|u| (u, 4)),
                Some(b'u') => hex(i + 2, 4).map(|u| (u, 6)),
                _ => None,
            };
            if let Some((unit, len)) = escaped {
                units.push(unit);
                i += len;
                continue;
            }
        }
        // Copy one whole character.
        let c = raw[i..].chars().next().unwrap_or('\u{fffd}');
        let mut buf = [0u16; 2];
        units.extend_from_slice(c.encode_utf16(&mut buf));
        i += c.len_utf8();
    }
    String::from_utf16_lossy(&units)
}

/// Undoes the escaping of text V8 logs byte by byte rather than by UTF-16 unit — a deopt's
/// source positions, whose script names arrive as UTF-8 with each byte above 0x7F written as
/// `\xHH` (`d\xc3\xa9` is `dé`): `\xHH` is a byte, `\\` and `\n` as [`unescape`]'s, bytes
/// that are not UTF-8 become U+FFFD.
pub(super) fn unescape_utf8(raw: &str) -> String {
    if !raw.contains('\\') {
        return raw.to_owned();
    }
    let bytes = raw.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            let hex = raw.get(i + 2..i + 4).filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
            let escaped = match bytes.get(i + 1) {
                Some(b'\\') => Some((b'\\', 2)),
                Some(b'n') => Some((b'\n', 2)),
                Some(b'x') => hex.and_then(|h| u8::from_str_radix(h, 16).ok()).map(|b| (b, 4)),
                _ => None,
            };
            if let Some((byte, len)) = escaped {
                out.push(byte);
                i += len;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A JavaScript function as a code-creation name describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct JsName {
    pub(super) name: String,
    pub(super) script: String,
    pub(super) line: Option<u32>,
    pub(super) column: Option<u32>,
}

/// Url starts that tell where the script part of `fn script:line:col` begins when the
/// function name itself contains spaces (`get value`, computed names).
const URL_STARTS: [&str; 9] = ["file:", "node:", "/", "http:", "https:", "webpack:", "data:", "evalmachine.", "<"];

/// Splits `fn script:line:col` (V8's `DebugName` and script name, already unescaped).
/// Anonymous functions have an empty name (` script:1:2`), eval code an empty script
/// (`fn :1:21`). Without a `:line:col` ending, the whole text is the name.
pub(super) fn split_js_name(text: &str) -> JsName {
    split_js(text, false)
}

/// As [`split_js_name`], and also `fn script:line`: V8 wrote no column before 2013.
pub(super) fn split_old_js_name(text: &str) -> JsName {
    split_js(text, true)
}

fn split_js(text: &str, line_only: bool) -> JsName {
    let whole = || JsName { name: text.to_owned(), script: String::new(), line: None, column: None };
    let with_column = split_number(text)
        .and_then(|(rest, column)| split_number(rest).map(|(location, line)| (location, line, column)));
    let (location, line, column) = match with_column {
        Some((location, line, column)) => (location, line, Some(column)),
        None if line_only => match split_number(text) {
            Some((location, line)) => (location, line, None),
            None => return whole(),
        },
        None => return whole(),
    };
    // The script starts after a space: the first space followed by something that looks like
    // a url, else the last space (function names have spaces more often than paths do).
    let spaces: Vec<usize> = location.match_indices(' ').map(|(i, _)| i).collect();
    let Some(&last) = spaces.last() else {
        return JsName { name: String::new(), script: location.to_owned(), line: Some(line), column };
    };
    let at = spaces
        .iter()
        .copied()
        .find(|i| {
            let script = &location[i + 1..];
            URL_STARTS.iter().any(|s| script.starts_with(s))
        })
        .unwrap_or(last);
    JsName { name: location[..at].to_owned(), script: location[at + 1..].to_owned(), line: Some(line), column }
}

/// `text:123` → (`text`, 123).
fn split_number(text: &str) -> Option<(&str, u32)> {
    let colon = text.rfind(':')?;
    let digits = &text[colon + 1..];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((&text[..colon], digits.parse().ok()?))
}

/// The pseudo-function of ticks without a pc in `state` (V8 outside any code), named by the
/// state as V8 names it, `(OTHER)`, `(GC)`, …, as `(program)` is in a `.cpuprofile`: its name
/// and kind. Shared by the tick-log and `--preprocess` JSON readers.
pub(super) fn no_pc_func(state: cpuprof_model::VmState) -> (String, cpuprof_model::FuncKind) {
    use cpuprof_model::{FuncKind, VmState};
    let kind = match state {
        VmState::Gc => FuncKind::Gc,
        VmState::Idle => FuncKind::Idle,
        _ => FuncKind::Program,
    };
    (format!("({})", state.as_str()), kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields() {
        let split = |line| split_quoted(line).into_iter().map(Cow::into_owned).collect::<Vec<_>>();
        assert_eq!(split(r#"profiler,"begin",1000"#), ["profiler", "begin", "1000"]);
        assert_eq!(split(r#"shared-library,"/usr/local/bin/node",0x1,0x2,0"#)[1], "/usr/local/bin/node");
        assert_eq!(
            split(r#"code-creation,LazyCompile,5,1,0x10,166,"d /a,b.js:20:11",0x45,*"#),
            ["code-creation", "LazyCompile", "5", "1", "0x10", "166", "d /a,b.js:20:11", "0x45", "*"]
        );
        assert_eq!(split(r#"a,"say ""hi"" \"now\"","",x"#), ["a", r#"say "hi" "now""#, "", "x"]);
        assert_eq!(split(r#"a,"x""#), ["a", "x"]);
        assert_eq!(split("a,,b,"), ["a", "", "b", ""]);
        // No closing quote: the field is split at commas as it is.
        assert_eq!(split(r#"a,"open,b"#), ["a", "\"open", "b"]);
    }

    #[test]
    fn escapes() {
        assert_eq!(unescape(r"w\xf6rk\x2C dir/\xfcn\xef \u540d\x2Cx.js"), "wörk, dir/ünï 名,x.js");
        assert_eq!(unescape(r"(\\d+)\x2C\\s*"), r"(\d+),\s*");
        assert_eq!(unescape(r"a\nb"), "a\nb");
        assert_eq!(unescape(r"\uD83D\uDE80"), "🚀");
        assert_eq!(unescape(r"back\slash"), r"back\slash");
        assert_eq!(unescape(r"tail\x4"), r"tail\x4");
        assert_eq!(unescape("café 計算"), "café 計算");
        // A deopt position as node 20 logs one under /tmp/dé名 (bytes, not UTF-16 units).
        assert_eq!(unescape_utf8(r"</tmp/d\xc3\xa9\xe5\x90\x8d/t.js:3:39>"), "</tmp/dé名/t.js:3:39>");
        assert_eq!(unescape_utf8(r"a\x2Cb\\c\nd"), "a,b\\c\nd");
        assert_eq!(unescape_utf8(r"bad\xff\x4"), "bad\u{fffd}\\x4");
        assert_eq!(unescape_utf8("café"), "café");
    }

    fn js(name: &str, script: &str, line: u32, column: u32) -> JsName {
        JsName { name: name.into(), script: script.into(), line: Some(line), column: Some(column) }
    }

    #[test]
    fn js_names() {
        assert_eq!(split_js_name("work file:///a.js:3:10"), js("work", "file:///a.js", 3, 10));
        assert_eq!(
            split_js_name(" node:internal/main/run_main_module:1:1"),
            js("", "node:internal/main/run_main_module", 1, 1)
        );
        assert_eq!(split_js_name("evalWorker :1:21"), js("evalWorker", "", 1, 21));
        assert_eq!(split_js_name(" :1:20"), js("", "", 1, 20));
        assert_eq!(split_js_name("get value /srv/app.js:9:4"), js("get value", "/srv/app.js", 9, 4));
        assert_eq!(split_js_name("f /home/J Smith/app.js:1:2"), js("f", "/home/J Smith/app.js", 1, 2));
        assert_eq!(split_js_name("line\nbreak /x.js:23:16"), js("line\nbreak", "/x.js", 23, 16));
        assert_eq!(split_js_name("with,comma /x.js:2:3"), js("with,comma", "/x.js", 2, 3));
        assert_eq!(split_js_name("noLocation").script, "");
        assert_eq!(split_js_name("a:b").name, "a:b");
    }
}
