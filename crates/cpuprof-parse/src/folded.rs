//! Folded stacks: one `root;…;leaf count` line per stack, as inferno's `collapse-*`,
//! FlameGraph's `stackcollapse-*` scripts, austin and `cpuprof collapse` write them.
//!
//! - Frames are separated by `;`, the outermost caller first. The count is the last
//!   whitespace-separated token: a whole number; a decimal fraction is rounded half up, and one
//!   warning counts the lines that had one (inferno truncates them, FlameGraph keeps them; the
//!   model holds whole numbers). A line ending in two numbers is differential
//!   (`stack before after`) and refused. The same stack on several lines adds up.
//! - As tolerant as inferno: empty lines are skipped; comment lines (`#…`, `//…`: austin's
//!   header; see `is_comment`) and malformed lines (no count, a negative count, a count with no stack) are
//!   skipped and counted in one warning that names the first malformed line; an input with no
//!   stack line but malformed ones is refused with the first one's position. `\r\n` line ends
//!   and a byte-order mark are fine (UTF-16 input is decoded before it gets here).
//! - Labels are read back the way `cpuprof collapse` writes them (`cpuprof_folded`, which
//!   holds the syntax for both sides):
//!   `；` (U+FF1B) is `;`, `\n` and `\r` are line breaks, and a no-break space before a
//!   trailing number is a space. A label ending in ` FILE`, ` FILE:LINE` or
//!   ` FILE:LINE:COLUMN`, where FILE looks like a path or url (starts with `/`, `\\`, a drive
//!   letter, `node:`, `file:` or `scheme://`; or, with no spaces and only path characters,
//!   contains `/` or `\`), is a JavaScript function (`FuncKind::Js`) of that file. `(anonymous)`
//!   is read as the empty name, as V8 writes it.
//! - Labels without a file are `FuncKind::Native` (that is what `collapse` writes without a
//!   file: builtins, C++ callbacks, regular expressions), except V8's meta frames `(root)`,
//!   `(program)`, `(idle)` and `(garbage collector)`, which get their meta kinds. (A user
//!   function with one of those names has a file, so it stays JavaScript.)
//! - The profile has one value: the sample count (`ValueType::SAMPLES`), so analyses weigh by
//!   counts; or, when the caller says the numbers are times ([`crate::FoldedWeight`]), CPU
//!   nanoseconds, and then there are no sample counts.

use std::io::{BufRead, Read};

use cpuprof_folded::{split_stack, unescape_frame};
use cpuprof_model::{Frame, FrameId, Func, FuncKind, Profile, ProfileBuilder, SourceFormat, StackId, StrId, ValueType};
use rustc_hash::FxHashMap;

use crate::error::{Origin, ParseError, ParseErrorKind, Span};
use crate::{Limits, ParseOptions};

/// Parses folded stacks from `reader`.
pub(crate) fn parse(
    mut reader: impl BufRead + Send,
    origin: &Origin,
    options: &ParseOptions,
) -> Result<Profile, ParseError> {
    let limits = options.limits();
    let value_type = match options.folded_weight {
        crate::FoldedWeight::Samples => ValueType::SAMPLES,
        crate::FoldedWeight::Nanoseconds => ValueType::CPU_NS,
    };
    let mut b = ProfileBuilder::new(SourceFormat::Folded, vec![value_type]);
    let mut stacks = Stacks::new(limits);
    let mut skipped = Skipped::default();
    let mut fractions = Fractions::default();
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        line.clear();
        // One byte past the limit tells a line that is too long from one that is just long enough.
        let read = (&mut reader)
            .take(limits.value as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| ParseErrorKind::Io(e).at(origin, Span::LineCol { line: number + 1, column: 1 }))?;
        if read == 0 {
            break;
        }
        number += 1;
        if line.len() > limits.value {
            let at = Span::LineCol { line: number, column: 1 };
            return Err(ParseErrorKind::too_large_bytes("a line", limits.value as u64).at(origin, at));
        }
        if number == 1 && line.starts_with(b"\xef\xbb\xbf") {
            line.drain(..3);
        }
        let at = |column: usize, kind: ParseErrorKind| {
            kind.at(origin, Span::LineCol { line: number, column: column as u64 + 1 })
        };
        // `from_utf8` checks ASCII a word at a time; the lossy decoder goes byte by byte, so it
        // is kept for the rare line that is not valid UTF-8.
        let text = match std::str::from_utf8(&line) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(&line),
        };
        let text = text.strip_suffix('\n').unwrap_or(&text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let body = text.trim_end();
        let start = body.trim_start();
        if start.is_empty() {
            continue;
        }
        if is_comment(start.as_bytes()) {
            skipped.comments += 1;
            continue;
        }
        let split = body.rfind([' ', '\t']);
        let (stack, token, token_at) = match split {
            Some(i) => (body[..i].trim_end(), &body[i + 1..], i + 1),
            None => (body, body, 0),
        };
        let count = match count_of(token) {
            Ok(count) if split.is_some() => count,
            Ok(_) => {
                skipped.malformed(number, 0, "a count with no stack before it");
                continue;
            }
            Err(CountError::Malformed(what)) => {
                skipped.malformed(number, token_at, what);
                continue;
            }
            Err(CountError::OutOfRange) => {
                return Err(at(token_at, ParseErrorKind::OutOfRange { what: "count", value: token.to_owned() }));
            }
        };
        if let Some(i) = stack.rfind([' ', '\t']) {
            if count_of(&stack[i + 1..]).is_ok() {
                return Err(at(
                    i + 1,
                    ParseErrorKind::Unsupported(
                        "two counts at the end of the line: this is a differential folded file \
                         (`stack before after`), which cpuprof does not read",
                    ),
                ));
            }
        }
        let stack = stack.trim_start();
        if stack.is_empty() {
            skipped.malformed(number, 0, "a count with no stack before it");
            continue;
        }
        if count.fraction.is_some() {
            fractions.add(number, token, &count);
        }
        stacks.add(&mut b, split_stack(stack), count.rounded, add_frame).map_err(|(what, kind)| {
            let column = if what == Culprit::Count { token_at } else { 0 };
            at(column, kind)
        })?;
    }
    if stacks.is_empty() {
        if let Some((line, column, what)) = skipped.first_malformed {
            let message = format!("{what}; no line of the input is a folded stack (`a;b;c 42`)");
            let at = Span::LineCol { line, column: column as u64 + 1 };
            return Err(ParseErrorKind::Invalid(message.into()).at(origin, at));
        }
    }
    if let Some(warning) = skipped.warning() {
        b.warn(warning);
    }
    if let Some(warning) = fractions.warning() {
        b.warn(warning);
    }
    stacks.finish(b).map_err(|e| ParseErrorKind::Model(e).at(origin, Span::None))
}

/// Which part of a line an error of [`Stacks::add`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Culprit {
    /// The stack (too many frames or stacks).
    Stack,
    /// The count (the sum overflows).
    Count,
}

/// The stacks read so far, their frames and summed counts: what a folded reader builds,
/// shared with the reader of `perf script` text (which folds it into such lines first).
pub(crate) struct Stacks {
    limits: Limits,
    frames: FxHashMap<String, FrameId>,
    /// Count per stack, indexed by stack id.
    counts: Vec<i64>,
    lines: u64,
}

impl Stacks {
    pub(crate) fn new(limits: Limits) -> Self {
        Stacks { limits, frames: FxHashMap::default(), counts: Vec::new(), lines: 0 }
    }

    /// No stack was added.
    pub(crate) fn is_empty(&self) -> bool {
        self.lines == 0
    }

    /// Adds `count` to the stack of `labels` (root first), making each new label a frame
    /// with `frame_of`; the stack, unless `labels` is empty.
    pub(crate) fn add<'a>(
        &mut self,
        b: &mut ProfileBuilder,
        labels: impl Iterator<Item = &'a str>,
        count: i64,
        mut frame_of: impl FnMut(&mut ProfileBuilder, &str) -> FrameId,
    ) -> Result<Option<StackId>, (Culprit, ParseErrorKind)> {
        let limits = self.limits;
        let mut parent: Option<StackId> = None;
        for label in labels {
            let frame = if let Some(frame) = self.frames.get(label) {
                *frame
            } else {
                if self.frames.len() == limits.frames {
                    let kind = ParseErrorKind::too_many("the profile", limits.frames, "distinct frames");
                    return Err((Culprit::Stack, kind));
                }
                let frame = frame_of(b, label);
                self.frames.insert(label.to_owned(), frame);
                frame
            };
            let stack = b.stack(parent, frame);
            // Stacks are numbered from 0 as they are added.
            if stack.index() >= limits.stacks {
                let kind = ParseErrorKind::too_many("the profile", limits.stacks, "distinct stacks");
                return Err((Culprit::Stack, kind));
            }
            parent = Some(stack);
        }
        self.lines += 1;
        if let Some(stack) = parent {
            let index = stack.index();
            if self.counts.len() <= index {
                self.counts.resize(index + 1, 0);
            }
            let sum = self.counts[index];
            self.counts[index] = sum.checked_add(count).ok_or_else(|| {
                let value = format!("{sum} + {count}");
                (Culprit::Count, ParseErrorKind::OutOfRange { what: "this stack's count", value })
            })?;
        }
        Ok(parent)
    }

    /// Adds one sample row per stack with a count and builds the profile.
    pub(crate) fn finish(self, mut b: ProfileBuilder) -> Result<Profile, cpuprof_model::ModelError> {
        let stacks: Vec<StackId> = b.stack_ids().collect();
        for (stack, count) in stacks.into_iter().zip(self.counts) {
            if count > 0 {
                b.sample(stack, None, &[count]);
            }
        }
        b.finish()
    }
}

/// Lines that are not stacks: counted for one warning.
#[derive(Default)]
struct Skipped {
    comments: u64,
    malformed: u64,
    /// Line, 0-based column and what was wrong, of the first malformed line.
    first_malformed: Option<(u64, usize, &'static str)>,
}

impl Skipped {
    fn malformed(&mut self, line: u64, column: usize, what: &'static str) {
        self.malformed += 1;
        self.first_malformed.get_or_insert((line, column, what));
    }

    fn warning(&self) -> Option<String> {
        let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let comments = (self.comments > 0).then(|| plural(self.comments, "comment line", "comment lines"));
        let malformed = self.first_malformed.map(|(line, column, what)| {
            let lines = plural(self.malformed, "malformed line", "malformed lines");
            format!("{lines} (the first, line {line} column {}: {what})", column + 1)
        });
        let parts: Vec<String> = comments.into_iter().chain(malformed).collect();
        (!parts.is_empty()).then(|| format!("skipped {}", parts.join(" and ")))
    }
}

/// Counts with a fraction: rounded, and said so in one warning.
#[derive(Default)]
struct Fractions {
    lines: u64,
    /// Line and count as written, of the first.
    first: Option<(u64, String)>,
    /// The counts of those lines as written, summed (for the message only).
    written: f64,
    /// The same counts rounded, summed.
    rounded: i64,
    /// The most digits after the point.
    digits: usize,
}

impl Fractions {
    fn add(&mut self, line: u64, token: &str, count: &Count) {
        self.lines += 1;
        self.first.get_or_insert_with(|| (line, token.to_owned()));
        self.written += token.parse::<f64>().unwrap_or(0.0);
        self.rounded = self.rounded.saturating_add(count.rounded);
        self.digits = self.digits.max(count.fraction.unwrap_or(0));
    }

    fn warning(&self) -> Option<String> {
        let (line, token) = self.first.as_ref()?;
        let lines = if self.lines == 1 { "line has a count" } else { "lines have counts" };
        Some(format!(
            "{} {lines} with a fraction (the first, line {line}: {token}); profiles hold whole numbers, so \
             they are rounded half up: together {:.*} read as {}",
            self.lines,
            self.digits.min(9),
            self.written,
            self.rounded
        ))
    }
}

/// A count as read: rounded half up to a whole number, and how many digits it had after a
/// decimal point, if it had one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Count {
    rounded: i64,
    fraction: Option<usize>,
}

/// Why a token is no count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CountError {
    /// Not a number at all: the line is skipped.
    Malformed(&'static str),
    /// A number too large for the model: an error.
    OutOfRange,
}

/// A count: a whole number, or a decimal fraction (rounded half up, and the caller warns).
fn count_of(token: &str) -> Result<Count, CountError> {
    if token.starts_with('-') && token.len() > 1 && count_of(&token[1..]).is_ok() {
        return Err(CountError::Malformed("a count cannot be negative"));
    }
    let (whole, fraction) = token.split_once('.').unwrap_or((token, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || (token.contains('.') && fraction.is_empty()) {
        return Err(CountError::Malformed("expected a count (a number) as the last word of the line, after the stack"));
    }
    let value: i64 = whole.parse().map_err(|_| CountError::OutOfRange)?;
    let round_up = fraction.as_bytes().first().is_some_and(|d| *d >= b'5');
    let rounded = value.checked_add(i64::from(round_up)).ok_or(CountError::OutOfRange)?;
    Ok(Count { rounded, fraction: token.contains('.').then_some(fraction.len()) })
}

/// The frame of one label (as written, still escaped).
fn add_frame(b: &mut ProfileBuilder, label: &str) -> FrameId {
    let label = unescape_frame(label);
    let (name, file, line, column, kind) = match label.as_str() {
        "(root)" => (label.as_str(), "", None, None, FuncKind::Root),
        "(program)" => (label.as_str(), "", None, None, FuncKind::Program),
        "(idle)" => (label.as_str(), "", None, None, FuncKind::Idle),
        "(garbage collector)" => (label.as_str(), "", None, None, FuncKind::Gc),
        _ => match split_location(&label) {
            Some((name, file, line, column)) => (name, file, line, column, FuncKind::Js),
            None => (label.as_str(), "", None, None, FuncKind::Native),
        },
    };
    let name = if name == "(anonymous)" { StrId::EMPTY } else { b.intern(name) };
    let file = if file.is_empty() { StrId::EMPTY } else { b.intern(file) };
    let func = b.func(Func { name, file, line, column, kind, tier: None, library: None });
    b.frame(Frame { func, line: None, column: None })
}

/// `name FILE[:LINE[:COLUMN]]` → (name, file, line, column), when FILE looks like a path or url.
/// Names can hold spaces and `/` (`GET /users`), and so can paths: the last space before
/// something that starts like a path wins, else the last one before a plain relative path.
pub(crate) fn split_location(label: &str) -> Option<(&str, &str, Option<u32>, Option<u32>)> {
    let mut weak = None;
    let mut strong = None;
    for (i, _) in label.match_indices(' ') {
        if i == 0 {
            continue;
        }
        let (path, line, column) = strip_position(&label[i + 1..]);
        if path.is_empty() {
            continue;
        }
        if starts_like_path(path) {
            strong = Some((i, path, line, column));
        } else if is_relative_path(path) {
            weak = Some((i, path, line, column));
        }
    }
    let (i, path, line, column) = strong.or(weak)?;
    Some((&label[..i], path, line, column))
}

/// `path:12:5` → (`path`, 12, 5); `path:12` → (`path`, 12); else unchanged.
pub(crate) fn strip_position(text: &str) -> (&str, Option<u32>, Option<u32>) {
    let number =
        |s: &str| (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse::<u32>().ok()).flatten();
    if let Some((rest, last)) = text.rsplit_once(':') {
        if let Some(last) = number(last) {
            if let Some((path, first)) = rest.rsplit_once(':') {
                if let Some(first) = number(first) {
                    return (path, Some(first), Some(last));
                }
            }
            return (rest, Some(last), None);
        }
    }
    (text, None, None)
}

fn starts_like_path(path: &str) -> bool {
    let bytes = path.as_bytes();
    let drive =
        bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && matches!(bytes[2], b'\\' | b'/');
    let url = path.split_once("://").is_some_and(|(scheme, _)| {
        scheme.len() > 1
            && scheme.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
            && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    });
    path.starts_with('/')
        || path.starts_with("\\\\")
        || path.starts_with("node:")
        || path.starts_with("file:")
        || drive
        || url
}

fn is_relative_path(path: &str) -> bool {
    path.contains(['/', '\\'])
        && path.bytes().all(|b| b.is_ascii_alphanumeric() || b >= 0x80 || b"._-~@+%/\\:,=#".contains(&b))
}

/// A comment line (its leading whitespace trimmed), as austin's header (`# interval: 100`) and
/// speedscope's examples write them: it starts with `#` or `//`, unless it is a stack of several
/// frames with a count (`#0 main;work 5`), which is read as one.
pub(crate) fn is_comment(line: &[u8]) -> bool {
    if !(line.starts_with(b"#") || line.starts_with(b"//")) {
        return false;
    }
    let line = line.trim_ascii_end();
    let counted = line.iter().rposition(|b| *b == b' ' || *b == b'\t').is_some_and(|i| {
        let count = &line[i + 1..];
        count.iter().any(u8::is_ascii_digit) && count.iter().all(|b| b.is_ascii_digit() || *b == b'.')
    });
    !(counted && memchr::memchr(b';', line).is_some())
}

#[cfg(test)]
mod tests {
    #[test]
    fn comments_are_lines_that_are_not_counted_stacks() {
        for comment in ["# austin: 3.3.0", "# interval: 100", "#", "// note 5", "# duration: 23873\r"] {
            assert!(super::is_comment(comment.as_bytes()), "{comment}");
        }
        for stack in ["#0 main;work 5", "// a;b 1.5", "main;work 5", "a # 3"] {
            assert!(!super::is_comment(stack.as_bytes()), "{stack}");
        }
    }

    use super::*;

    fn parse_str(text: &str) -> Result<Profile, ParseError> {
        parse(text.as_bytes(), &Origin("t.folded".into()), &ParseOptions::default())
    }

    /// (stack labels root first as name|file|line|kind, count), sorted.
    fn lines(p: &Profile) -> Vec<(String, i64)> {
        let mut out: Vec<(String, i64)> = (0..p.samples.len())
            .map(|i| {
                let mut frames: Vec<String> = p
                    .stacks
                    .walk(p.samples.stacks()[i])
                    .map(|frame| {
                        let f = p.funcs[p.frames[frame].func];
                        format!(
                            "{}|{}|{:?}|{:?}|{}",
                            p.strings.get(f.name),
                            p.strings.get(f.file),
                            f.line,
                            f.column,
                            f.kind.as_str()
                        )
                    })
                    .collect();
                frames.reverse();
                (frames.join(" ; "), p.samples.values(0)[i])
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn stacks_counts_and_labels() {
        let text =
            "main /app/a.js:1;work /app/a.js:5 3\r\n\r\n  \nmain /app/a.js:1 2\nmain /app/a.js:1;work /app/a.js:5\t4\n\
                    (program) 1.5\n(garbage collector) 0.49\n";
        let p = parse_str(text).unwrap();
        assert_eq!(p.meta.format, SourceFormat::Folded);
        assert_eq!(p.value_types, vec![ValueType::SAMPLES]);
        assert_eq!(
            lines(&p),
            vec![
                ("(program)||None|None|program".to_owned(), 2),
                ("main|/app/a.js|Some(1)|None|js".to_owned(), 2),
                ("main|/app/a.js|Some(1)|None|js ; work|/app/a.js|Some(5)|None|js".to_owned(), 7),
            ]
        );
    }

    #[test]
    fn labels_split_into_name_and_location() {
        type Location<'a> = Option<(&'a str, &'a str, Option<u32>, Option<u32>)>;
        let cases: &[(&str, Location<'_>)] = &[
            ("f /a/b.js:3", Some(("f", "/a/b.js", Some(3), None))),
            ("f /a/b.js:3:7", Some(("f", "/a/b.js", Some(3), Some(7)))),
            ("f file:///a/b.js", Some(("f", "file:///a/b.js", None, None))),
            ("get length node:internal/util:12", Some(("get length", "node:internal/util", Some(12), None))),
            ("GET /users /app/x.js:3", Some(("GET /users", "/app/x.js", Some(3), None))),
            ("f /we；ird dir/x.js:3", Some(("f", "/we；ird dir/x.js", Some(3), None))),
            ("HTTP/1.1 200 /w/c.js:5", Some(("HTTP/1.1 200", "/w/c.js", Some(5), None))),
            (
                "render virtual://templates/render.js:2",
                Some(("render", "virtual://templates/render.js", Some(2), None)),
            ),
            ("f generated/dynamic-module.js:4", Some(("f", "generated/dynamic-module.js", Some(4), None))),
            ("f C:\\app\\x.js:4", Some(("f", "C:\\app\\x.js", Some(4), None))),
            ("RegExp: ^\\/users\\/(?<id>[^/]+)$", None),
            ("RegExp: ^0+(?=\\d)", None),
            ("(garbage collector)", None),
            ("compileFunction", None),
            ("/app/x.js:3", None),
        ];
        for (label, expected) in cases {
            assert_eq!(split_location(label), *expected, "{label}");
        }
    }

    #[test]
    fn collapse_escapes_are_undone() {
        let text =
            "semi\u{ff1b}colon /h.js:3;new\\nline\\r /h.js:4 1\nRegExp: ^(a+)+\u{a0}200 2\nback\\slash /h.js:9 1\n\
             \\u{1b}[31m\\u{202e}\\u{41}\\u{+1b}\\u{1b /h.js:5 1\nC:\\temp\\\\new\\\\\\x\\\\u{1b}\\ 1\n";
        let p = parse_str(text).unwrap();
        let names: Vec<&str> = p.funcs.as_slice().iter().map(|f| p.strings.get(f.name)).collect();
        let controls = "\u{1b}[31m\u{202e}\\u{41}\\u{+1b}\\u{1b";
        let paths = r"C:\temp\new\\x\u{1b}\";
        assert_eq!(names, vec!["semi;colon", "new\nline\r", "RegExp: ^(a+)+ 200", "back\\slash", controls, paths]);
        assert_eq!(p.funcs.as_slice()[2].kind, FuncKind::Native);
    }

    #[test]
    fn meta_frames_and_anonymous_functions() {
        let p = parse_str("(root);(program) 1\n(idle) 1\n(program) /u.js:1 1\n(anonymous) /u.js:9 1\n").unwrap();
        let kinds: Vec<(&str, &str)> =
            p.funcs.as_slice().iter().map(|f| (p.strings.get(f.name), f.kind.as_str())).collect();
        assert_eq!(
            kinds,
            vec![
                ("(root)", FuncKind::Root.as_str()),
                ("(program)", "program"),
                ("(idle)", "idle"),
                ("(program)", "js"),
                ("", "js")
            ]
        );
    }

    #[test]
    fn bad_inputs_are_errors_with_their_position() {
        let cases = [
            ("a;b x3\nc 1.\n", "t.folded:1:5: expected a count (a number) as the last word of the line, after the stack; no line of the input is a folded stack (`a;b;c 42`)"),
            ("a;b\n", "t.folded:1:1: expected a count (a number) as the last word of the line, after the stack; no line of the input is a folded stack (`a;b;c 42`)"),
            ("# x\n\n\n   7\n", "t.folded:4:1: a count with no stack before it; no line of the input is a folded stack (`a;b;c 42`)"),
            ("a;b -3\n", "t.folded:1:5: a count cannot be negative; no line of the input is a folded stack (`a;b;c 42`)"),
            (
                "a;b 3 4\n",
                "t.folded:1:5: two counts at the end of the line: this is a differential folded file (`stack before after`), \
                 which cpuprof does not read",
            ),
            ("a 99999999999999999999\n", "t.folded:1:3: count 99999999999999999999 is out of range"),
            ("a 9223372036854775807\na 1\n", "t.folded:2:3: this stack's count 9223372036854775807 + 1 is out of range"),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_str(text).unwrap_err().to_string(), expected, "{text:?}");
        }
    }

    #[test]
    fn comments_and_malformed_lines_are_skipped_with_one_warning() {
        let text = "# austin: 3.3.0\n# interval: 100\n  // note 3\na;b 3\nBAD LINE\n\na;b -3\nx 1.\n  7\na;c 1\n";
        let p = parse_str(text).unwrap();
        let mut counts: Vec<(String, i64)> =
            lines(&p).into_iter().map(|(s, n)| (s.replace("||None|None|native", ""), n)).collect();
        counts.sort();
        assert_eq!(counts, vec![("a ; b".to_owned(), 3), ("a ; c".to_owned(), 1)]);
        let warnings: Vec<&str> = p.meta.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(
            warnings,
            vec![
                "skipped 3 comment lines and 4 malformed lines (the first, line 5 column 5: expected a count (a number) \
                 as the last word of the line, after the stack)"
            ]
        );
        let one = parse_str("// c\na 1\n").unwrap();
        assert_eq!(one.meta.warnings[0].message, "skipped 1 comment line");
        assert!(parse_str("a 1\n\n\nb 2\n").unwrap().meta.warnings.is_empty(), "blank lines are not worth a warning");
    }

    #[test]
    fn counts_round_half_up_and_fractions_are_warned_about() {
        let value = |t: &str| count_of(t).map(|c| (c.rounded, c.fraction));
        assert_eq!(
            ["0", "7", "2.5", "2.49", "0.5", "10.0"].map(value),
            [Ok((0, None)), Ok((7, None)), Ok((3, Some(1))), Ok((2, Some(2))), Ok((1, Some(1))), Ok((10, Some(1)))]
        );
        let p = parse_str("a 31.23\nb 2\nc 2.567\nc 19.0\n").unwrap();
        let counts: Vec<i64> = lines(&p).into_iter().map(|(_, n)| n).collect();
        assert_eq!(counts, vec![31, 2, 22]);
        assert_eq!(
            p.meta.warnings[0].message,
            "3 lines have counts with a fraction (the first, line 1: 31.23); profiles hold whole numbers, so they are \
             rounded half up: together 52.797 read as 53"
        );
        assert!(parse_str("a 3\n").unwrap().meta.warnings.is_empty());
    }

    #[test]
    fn empty_input_is_an_empty_profile() {
        let p = parse_str("\n\n").unwrap();
        assert_eq!(p.samples.len(), 0);
    }
}
