//! The folded-stack text format: one `root;…;leaf count` line per stack, as inferno's
//! `collapse-*`, FlameGraph's `stackcollapse-*` scripts and `cpuprof collapse` write it.
//!
//! This crate is the one place that knows the syntax: how a frame label is escaped so that it
//! stays one frame on one line ([`escape_frame`]) and read back ([`unescape_frame`]), how frames
//! are joined into a stack and split again ([`join_stack`], [`split_stack`]), and how counts
//! follow the stack on a line ([`push_line`], [`write_sorted`]). The folded reader
//! (`cpuprof-parse`) and the writers (`cpuprof-analysis` labels, `cpuprof-render` text and
//! flame graphs) all use it. It sits beside them, depending only on `cpuprof-model` (for the
//! rule of which characters no output shows raw), so that neither side depends on the other.
//!
//! ```
//! use cpuprof_folded::{escape_frame, join_stack, split_stack, unescape_frame};
//!
//! let frames = ["main app.js:1", "a;b"].map(escape_frame);
//! let stack = join_stack(&frames);
//! assert_eq!(stack, "main app.js:1;a\u{ff1b}b");
//! let back: Vec<String> = split_stack(&stack).map(unescape_frame).collect();
//! assert_eq!(back, ["main app.js:1", "a;b"]);
//! ```
#![deny(missing_docs)]

use std::fmt::{Display, Write as _};

use cpuprof_model::text::{escaped, is_unsafe_to_show};

/// What separates the frames of a stack.
pub const FRAME_SEPARATOR: char = ';';

/// One frame stays one frame, on one line, inert on a terminal: `;` becomes `；` (U+FF1B),
/// line breaks become `\n` / `\r`, a backslash that would read as one of these escapes
/// becomes `\\`, other characters no output shows raw (controls, bidi
/// overrides: [`is_unsafe_to_show`]) become `\u{1b}`-style escapes, and a label ending in
/// ` <digits>` keeps that space as U+00A0, since flame-graph tools read a line's trailing
/// numbers as its counts (two of them as a differential graph). [`unescape_frame`] undoes all
/// of it.
pub fn escape_frame(label: &str) -> String {
    let trailing_number = label
        .rfind(' ')
        .filter(|at| at + 1 < label.len() && label[at + 1..].bytes().all(|b| b.is_ascii_digit() || b == b'.'));
    if trailing_number.is_none() && !label.chars().any(|c| c == ';' || c == '\\' || is_unsafe_to_show(c)) {
        return label.to_owned();
    }
    let mut out = String::with_capacity(label.len() + 4);
    for (i, c) in label.char_indices() {
        match c {
            ';' => out.push('\u{ff1b}'),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\\' if backslash_reads_as_escape(&label[i + 1..]) => {
                out.push_str("\\\\");
            }
            c if is_unsafe_to_show(c) => out.push_str(&escaped(c)),
            ' ' if Some(i) == trailing_number => out.push('\u{a0}'),
            c => out.push(c),
        }
    }
    out
}

/// Whether a backslash before `rest` would read as the start of an escape: before `n`, `r`,
/// `\\`, `u{`, or a character that is itself escaped.
fn backslash_reads_as_escape(rest: &str) -> bool {
    rest.starts_with("u{") || rest.chars().next().is_some_and(|c| matches!(c, 'n' | 'r' | '\\') || is_unsafe_to_show(c))
}

/// Undoes [`escape_frame`]. A `\u{…}` escape is undone only for a character `escape_frame`
/// escapes, so other text that looks like one stays.
pub fn unescape_frame(label: &str) -> String {
    // A no-break space before a trailing number stands for a space.
    let trailing = label.rfind('\u{a0}').filter(|at| {
        let rest = &label[at + '\u{a0}'.len_utf8()..];
        !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit() || b == b'.')
    });
    if trailing.is_none() && !label.contains(['\u{ff1b}', '\\']) {
        return label.to_owned();
    }
    let mut out = String::with_capacity(label.len());
    let mut rest = label;
    while let Some(c) = rest.chars().next() {
        let at = label.len() - rest.len();
        rest = &rest[c.len_utf8()..];
        match c {
            '\u{ff1b}' => out.push(';'),
            '\\' if rest.starts_with('\\') => {
                rest = &rest[1..];
                out.push('\\');
            }
            '\\' if rest.starts_with('n') => {
                rest = &rest[1..];
                out.push('\n');
            }
            '\\' if rest.starts_with('r') => {
                rest = &rest[1..];
                out.push('\r');
            }
            '\\' => match escaped_char(rest) {
                Some((c, len)) => {
                    rest = &rest[len..];
                    out.push(c);
                }
                None => out.push('\\'),
            },
            '\u{a0}' if Some(at) == trailing => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `u{1b}…` after a backslash → (the character, the escape's length), for characters that
/// [`escape_frame`] writes so.
fn escaped_char(text: &str) -> Option<(char, usize)> {
    let hex = text.strip_prefix("u{")?;
    let end =
        hex.find('}').filter(|&end| (1..=6).contains(&end) && hex[..end].bytes().all(|b| b.is_ascii_hexdigit()))?;
    let c = u32::from_str_radix(&hex[..end], 16).ok().and_then(char::from_u32)?;
    (is_unsafe_to_show(c) && !matches!(c, '\n' | '\r')).then_some((c, end + 3))
}

/// The frames of `stack` (the text before a line's counts), outermost caller first, still
/// escaped.
pub fn split_stack(stack: &str) -> std::str::Split<'_, char> {
    stack.split(FRAME_SEPARATOR)
}

/// Escaped frame labels, outermost caller first, joined into a stack.
pub fn join_stack<S: AsRef<str>>(frames: impl IntoIterator<Item = S>) -> String {
    let mut out = String::new();
    push_stack(&mut out, frames);
    out
}

/// Appends the stack of `frames` (escaped labels, outermost caller first) to `out`.
pub fn push_stack<S: AsRef<str>>(out: &mut String, frames: impl IntoIterator<Item = S>) {
    for (i, frame) in frames.into_iter().enumerate() {
        if i > 0 {
            out.push(FRAME_SEPARATOR);
        }
        out.push_str(frame.as_ref());
    }
}

/// Appends one line, without its line break: the stack, then each count after a space
/// (one count, or two for a differential graph: before and after).
pub fn push_line<C: Display>(out: &mut String, stack: &str, counts: impl IntoIterator<Item = C>) {
    out.push_str(stack);
    for count in counts {
        let _ = write!(out, " {count}");
    }
}

/// Folded text as `cpuprof collapse` writes it: one `stack count` line per stack, sorted by
/// the stack's bytes (not the line's: a count must not order `f` after `f 1x;g`).
pub fn write_sorted(mut stacks: Vec<(String, i64)>) -> String {
    stacks.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut out = String::with_capacity(stacks.iter().map(|(s, _)| s.len() + 12).sum());
    for (stack, count) in &stacks {
        push_line(&mut out, stack, [count]);
        out.push('\n');
    }
    out
}
