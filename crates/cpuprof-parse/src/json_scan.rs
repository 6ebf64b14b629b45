//! A streaming scanner for the top level of big JSON documents.
//!
//! `serde_json` builds every number through its generic visitor machinery; the
//! `samples`/`timeDeltas` arrays of a `.cpuprofile` are almost all of its bytes, so they are
//! read here by a tight integer loop over a refilled buffer instead, and the (small) rest
//! is either captured for a typed `serde_json` parse or skipped. Memory stays at one buffer
//! plus what the caller keeps.

use std::io::Read;

use crate::error::{Origin, ParseError, ParseErrorKind, Span};

const CHUNK: usize = 1 << 20;
/// Longest number token the fast path handles without refilling first.
const MAX_NUMBER_LEN: usize = 64;

/// A JSON number as written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Number {
    Int(i64),
    Float(f64),
}

pub(crate) struct Scanner<'o, R> {
    reader: R,
    origin: &'o Origin,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    /// Input offset of `buf[0]`.
    base: u64,
    /// 1-based line at `line_start`.
    line: u64,
    /// Input offset where the current line starts.
    line_start: u64,
    /// Input offset of the array element being read by `number_array`.
    item_start: u64,
}

impl<'o, R: Read> Scanner<'o, R> {
    pub(crate) fn new(reader: R, origin: &'o Origin) -> Self {
        Self { reader, origin, buf: vec![0; CHUNK], pos: 0, end: 0, eof: false, base: 0, line: 1, line_start: 0, item_start: 0 }
    }

    /// The input being read.
    pub(crate) fn origin(&self) -> &'o Origin {
        self.origin
    }

    /// The position of the next unread byte.
    pub(crate) fn span(&self) -> Span {
        let offset = self.base + self.pos as u64;
        Span::LineCol { line: self.line, column: offset - self.line_start + 1 }
    }

    pub(crate) fn error(&self, kind: ParseErrorKind) -> ParseError {
        kind.at(self.origin, self.span())
    }

    /// An error about the number read last, pointing at its start.
    pub(crate) fn item_error(&self, kind: ParseErrorKind) -> ParseError {
        let column = self.item_start.saturating_sub(self.line_start) + 1;
        kind.at(self.origin, Span::LineCol { line: self.line, column })
    }

    /// Reads more input, keeping the unread bytes. Returns false at end of input.
    fn refill(&mut self) -> Result<bool, ParseError> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.base += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.end == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        loop {
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.error(ParseErrorKind::Io(e))),
            }
        }
    }

    fn newline_at(&mut self, index: usize) {
        self.line += 1;
        self.line_start = self.base + index as u64 + 1;
    }

    /// Skips whitespace; returns the next byte (not consumed), or `None` at end of input.
    pub(crate) fn skip_ws(&mut self) -> Result<Option<u8>, ParseError> {
        loop {
            while self.pos < self.end {
                match self.buf[self.pos] {
                    b' ' | b'\t' | b'\r' => self.pos += 1,
                    b'\n' => {
                        self.newline_at(self.pos);
                        self.pos += 1;
                    }
                    b => return Ok(Some(b)),
                }
            }
            if !self.refill()? {
                return Ok(None);
            }
        }
    }

    /// Skips whitespace and returns the next byte, consuming it. `inside` names what is
    /// being read, for the truncation error.
    pub(crate) fn next_token(&mut self, inside: &'static str) -> Result<u8, ParseError> {
        match self.skip_ws()? {
            Some(b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.error(ParseErrorKind::Truncated(inside))),
        }
    }

    /// Consumes `expected` after optional whitespace.
    pub(crate) fn expect(&mut self, expected: u8, inside: &'static str) -> Result<(), ParseError> {
        match self.skip_ws()? {
            Some(b) if b == expected => {
                self.pos += 1;
                Ok(())
            }
            Some(b) => Err(self.error(ParseErrorKind::Json(format!(
                "expected `{}` in {inside}, found {}",
                char::from(expected),
                describe(b)
            )))),
            None => Err(self.error(ParseErrorKind::Truncated(inside))),
        }
    }

    /// Reads an object key (a JSON string, the opening quote not yet consumed). Keys longer
    /// than 256 bytes are cut (no key we look for is that long).
    pub(crate) fn key(&mut self) -> Result<String, ParseError> {
        self.expect(b'"', "an object key")?;
        let mut key = Vec::new();
        self.string_body(Some(&mut key))?;
        Ok(String::from_utf8_lossy(&key).into_owned())
    }

    /// Consumes a string body after its opening quote, up to and including the closing one.
    /// Escapes are kept as written (callers only compare keys made of plain ASCII).
    fn string_body(&mut self, mut out: Option<&mut Vec<u8>>) -> Result<(), ParseError> {
        let mut escaped = false;
        loop {
            if self.pos == self.end && !self.refill()? {
                return Err(self.error(ParseErrorKind::Truncated("a string")));
            }
            let chunk = &self.buf[self.pos..self.end];
            let mut consumed = chunk.len();
            let mut done = false;
            for (i, &b) in chunk.iter().enumerate() {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    consumed = i + 1;
                    done = true;
                    break;
                } else if b < 0x20 {
                    self.pos += i;
                    return Err(self.error(ParseErrorKind::Json("control character inside a string".to_owned())));
                }
            }
            if let Some(out) = out.as_deref_mut() {
                let keep = if done { consumed - 1 } else { consumed };
                let room = 256usize.saturating_sub(out.len());
                out.extend_from_slice(&chunk[..keep.min(room)]);
            }
            self.pos += consumed;
            if done {
                return Ok(());
            }
        }
    }

    /// Consumes one complete JSON value, copying its bytes into `capture` when given.
    /// Nesting is tracked with a counter, never by recursion, so depth cannot overflow the
    /// stack. Only the structure is checked here; a captured value is parsed afterwards.
    pub(crate) fn value(&mut self, what: &'static str, mut capture: Option<&mut Vec<u8>>) -> Result<(), ParseError> {
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escaped = false;
        if self.skip_ws()?.is_none() {
            return Err(self.error(ParseErrorKind::Truncated(what)));
        }
        loop {
            if self.pos == self.end && !self.refill()? {
                return Err(self.error(ParseErrorKind::Truncated(what)));
            }
            let start = self.pos;
            let mut finished = false;
            let mut i = start;
            while i < self.end {
                let b = self.buf[i];
                i += 1;
                if in_string {
                    if escaped {
                        escaped = false;
                    } else if b == b'\\' {
                        escaped = true;
                    } else if b == b'"' {
                        in_string = false;
                        if depth == 0 {
                            finished = true;
                            break;
                        }
                    }
                    continue;
                }
                match b {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        if depth == 0 {
                            // The end of the enclosing container: the value ended before it.
                            i -= 1;
                            finished = true;
                            break;
                        }
                        depth -= 1;
                        if depth == 0 {
                            finished = true;
                            break;
                        }
                    }
                    b',' if depth == 0 => {
                        i -= 1;
                        finished = true;
                        break;
                    }
                    b'\n' => self.newline_at(i - 1),
                    _ => {}
                }
            }
            if let Some(out) = capture.as_deref_mut() {
                out.extend_from_slice(&self.buf[start..i]);
            }
            self.pos = i;
            if finished {
                return Ok(());
            }
            // A scalar at the very end of the input is complete too.
            if self.pos == self.end && !self.refill()? && depth == 0 && !in_string {
                return Ok(());
            }
        }
    }

    /// Reads a JSON array of numbers, calling `each(index, number, span)` for every element.
    /// The opening `[` must be next (after whitespace).
    pub(crate) fn number_array(
        &mut self,
        what: &'static str,
        mut each: impl FnMut(usize, Number, &Self) -> Result<(), ParseError>,
    ) -> Result<usize, ParseError> {
        self.expect(b'[', what)?;
        if self.skip_ws()? == Some(b']') {
            self.pos += 1;
            return Ok(0);
        }
        let mut index = 0usize;
        loop {
            if self.end - self.pos < MAX_NUMBER_LEN {
                self.refill()?;
            }
            let number = self.number(what)?;
            each(index, number, self)?;
            index += 1;
            // The common case, `,` right after the number, without the general whitespace path.
            match self.buf.get(self.pos) {
                Some(b',') if self.pos < self.end => {
                    self.pos += 1;
                    continue;
                }
                _ => {}
            }
            match self.next_token(what)? {
                b',' => {}
                b']' => return Ok(index),
                b => {
                    self.pos -= 1;
                    return Err(self
                        .error(ParseErrorKind::Json(format!("expected `,` or `]` in {what}, found {}", describe(b)))));
                }
            }
        }
    }

    /// Reads one number. The caller has made sure up to `MAX_NUMBER_LEN` bytes are buffered
    /// when the input has them.
    pub(crate) fn number(&mut self, what: &'static str) -> Result<Number, ParseError> {
        match self.skip_ws()? {
            None => return Err(self.error(ParseErrorKind::Truncated(what))),
            Some(_) if self.end - self.pos < MAX_NUMBER_LEN => {
                self.refill()?;
            }
            Some(_) => {}
        }
        self.item_start = self.base + self.pos as u64;
        let bytes = &self.buf[self.pos..self.end];
        let negative = bytes.first() == Some(&b'-');
        let mut i = usize::from(negative);
        let mut value: i64 = 0;
        let mut overflow = false;
        while let Some(&b) = bytes.get(i) {
            if !b.is_ascii_digit() {
                break;
            }
            let digit = i64::from(b - b'0');
            match value.checked_mul(10).and_then(|v| v.checked_add(digit)) {
                Some(v) => value = v,
                None => overflow = true,
            }
            i += 1;
        }
        let digits = i - usize::from(negative);
        if digits == 0 {
            return Err(match bytes.first() {
                Some(&b) => {
                    self.error(ParseErrorKind::Json(format!("expected a number in {what}, found {}", describe(b))))
                }
                None => self.error(ParseErrorKind::Truncated(what)),
            });
        }
        let fractional = matches!(bytes.get(i), Some(b'.' | b'e' | b'E'));
        if !fractional && !overflow {
            self.pos += i;
            return Ok(Number::Int(if negative { -value } else { value }));
        }
        // Rare: a fraction, an exponent or a huge integer. Take the whole token.
        while let Some(&b) = bytes.get(i) {
            if !(b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')) {
                break;
            }
            i += 1;
        }
        let token = String::from_utf8_lossy(&bytes[..i]).into_owned();
        match token.parse::<f64>() {
            Ok(f) if f.is_finite() => {
                self.pos += i;
                Ok(Number::Float(f))
            }
            _ => Err(self.error(ParseErrorKind::OutOfRange { what, value: token })),
        }
    }

    /// True when only whitespace is left.
    pub(crate) fn at_end(&mut self) -> Result<bool, ParseError> {
        Ok(self.skip_ws()?.is_none())
    }
}

/// A byte as an error message shows it.
pub(crate) fn describe(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("`{}`", char::from(b))
    } else {
        format!("byte 0x{b:02x}")
    }
}
