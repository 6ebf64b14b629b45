//! A streaming scanner for the top level of big JSON documents.
//!
//! `serde_json` builds every number through its generic visitor machinery; the
//! `samples`/`timeDeltas` arrays of a `.cpuprofile` are almost all of its bytes, so they are
//! read here by a tight integer loop over a refilled buffer instead, and the (small) rest
//! is either captured for a typed `serde_json` parse or skipped. Memory stays at one buffer
//! plus what the caller keeps.

use std::io::Read;

use crate::error::{Origin, ParseError, ParseErrorKind, Span};
use crate::json_grammar as grammar;
use crate::Limits;

const CHUNK: usize = 16 << 20;
/// How much of a number array the fast path takes at once.
const BLOCK: usize = 8 << 20;
/// When the fast path gets less than this far, the next `GENERAL_STREAK` elements take the
/// general path.
const GENERAL_STREAK_BELOW: usize = 4096;
const GENERAL_STREAK: usize = 4096;
/// Room kept before a chunk read ahead, for the unread rest of the current one.
const RESERVE: usize = 4096;
/// Blocks smaller than this are not worth a second thread.
const PARALLEL_MIN: usize = 256 << 10;
/// Longest number token the fast path handles without refilling first.
const MAX_NUMBER_LEN: usize = 64;
/// How deep a value read by [`Scanner::value`] may nest (serde_json, which parses the captured
/// ones, stops at 128).
pub(crate) const MAX_DEPTH: usize = 1024;

/// Why [`Scanner::value`] stopped at a byte.
enum Invalid {
    /// Something else was expected there.
    Expected(&'static str),
    /// A control character inside a string.
    Control,
    /// Nested deeper than [`MAX_DEPTH`].
    Deep,
}

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
    /// The next chunk, read while the current one is parsed (see `number_array`).
    ahead: Vec<u8>,
    limits: Limits,
}

impl<'o, R: Read + Send> Scanner<'o, R> {
    pub(crate) fn new(reader: R, origin: &'o Origin, limits: Limits) -> Self {
        Self::with_buffer(reader, origin, limits, CHUNK)
    }

    /// A scanner whose buffer starts at `size` bytes (it grows as a value needs).
    fn with_buffer(reader: R, origin: &'o Origin, limits: Limits, size: usize) -> Self {
        Self {
            reader,
            origin,
            buf: vec![0; size],
            pos: 0,
            end: 0,
            eof: false,
            base: 0,
            line: 1,
            line_start: 0,
            item_start: 0,
            ahead: Vec::new(),
            limits,
        }
    }

    /// Skips a UTF-8 byte order mark at the very start.
    pub(crate) fn skip_bom(&mut self) -> Result<(), ParseError> {
        while self.end < 3 && self.refill()? {}
        if self.base == 0 && self.pos == 0 && self.buf.get(..3) == Some(b"\xef\xbb\xbf".as_slice()) {
            self.pos = 3;
        }
        Ok(())
    }

    /// The input being read.
    pub(crate) fn origin(&self) -> &'o Origin {
        self.origin
    }

    /// The bounds on what is read.
    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }

    /// How many bytes have been read (the offset of the next unread byte).
    pub(crate) fn offset(&self) -> u64 {
        self.base.wrapping_add(self.pos as u64)
    }

    /// The position of the next unread byte.
    pub(crate) fn span(&self) -> Span {
        let offset = self.base.wrapping_add(self.pos as u64);
        Span::LineCol { line: self.line, column: offset - self.line_start + 1 }
    }

    pub(crate) fn error(&self, kind: ParseErrorKind) -> ParseError {
        kind.at(self.origin, self.span())
    }

    /// An error about the number read last, pointing at its start.
    pub(crate) fn item_error(&self, kind: ParseErrorKind) -> ParseError {
        kind.at(self.origin, self.item_span())
    }

    /// Where the array element being read by `number_array` starts.
    fn item_span(&self) -> Span {
        let column = self.item_start.saturating_sub(self.line_start) + 1;
        Span::LineCol { line: self.line, column }
    }

    /// Reads more input, keeping the unread bytes. Returns false at end of input.
    fn refill(&mut self) -> Result<bool, ParseError> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.base = self.base.wrapping_add(self.pos as u64);
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

    /// Makes the chunk read ahead (`n` bytes after `RESERVE` in `ahead`) the current buffer,
    /// with the unread rest of the current one placed just before it.
    fn take_ahead(&mut self, n: usize) {
        let tail = self.end - self.pos;
        if n == 0 {
            self.eof = true;
            return;
        }
        if tail <= RESERVE {
            let start = RESERVE - tail;
            self.ahead[start..RESERVE].copy_from_slice(&self.buf[self.pos..self.end]);
            std::mem::swap(&mut self.buf, &mut self.ahead);
            // Input offset of the tail stays the same: base + pos == new base + start.
            self.base = self.base.wrapping_add(self.pos as u64).wrapping_sub(start as u64);
            self.pos = start;
            self.end = RESERVE + n;
        } else {
            // A long unread rest (rare: not in a plain number run): move it to the front and
            // append the chunk after it.
            self.buf.copy_within(self.pos..self.end, 0);
            self.base = self.base.wrapping_add(self.pos as u64);
            self.end = tail;
            self.pos = 0;
            self.buf.truncate(self.end);
            self.buf.extend_from_slice(&self.ahead[RESERVE..RESERVE + n]);
            self.end = self.buf.len();
        }
    }

    fn newline_at(&mut self, index: usize) {
        self.line += 1;
        self.line_start = self.base.wrapping_add(index as u64 + 1);
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

    /// Reads an object (`what` names it in errors) whose `{` is next: each key, with its
    /// position, goes to `field`, which reads the value that follows.
    pub(crate) fn object(
        &mut self,
        what: &'static str,
        mut field: impl FnMut(&mut Self, &str, Span) -> Result<(), ParseError>,
    ) -> Result<(), ParseError> {
        self.expect(b'{', what)?;
        if self.skip_ws()? == Some(b'}') {
            self.next_token(what)?;
            return Ok(());
        }
        loop {
            let key_span = self.span();
            let key = self.key()?;
            self.expect(b':', what)?;
            field(self, &key, key_span)?;
            match self.next_token(what)? {
                b',' => {}
                b'}' => return Ok(()),
                b => {
                    return Err(self.error(ParseErrorKind::Json(format!(
                        "expected `,` or `}}` after the value of `{key}`, found {}",
                        describe(b)
                    ))))
                }
            }
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
        // Escapes are checked by the grammar's table, as in values.
        let mut state = grammar::STRING;
        loop {
            if self.pos == self.end && !self.refill()? {
                return Err(self.error(ParseErrorKind::Truncated("a string")));
            }
            let chunk = &self.buf[self.pos..self.end];
            let mut consumed = chunk.len();
            let mut done = false;
            for (i, &b) in chunk.iter().enumerate() {
                match grammar::TABLE[state as usize][b as usize] {
                    next if next < grammar::ACTIONS => state = next,
                    grammar::STRING_BODY => state = grammar::STRING,
                    grammar::END_VALUE => {
                        consumed = i + 1;
                        done = true;
                        break;
                    }
                    next => {
                        let message = if next == grammar::CONTROL {
                            "control character inside a string".to_owned()
                        } else {
                            format!("expected {} in a string, found {}", grammar::expected(state), describe(b))
                        };
                        self.pos += i;
                        return Err(self.error(ParseErrorKind::Json(message)));
                    }
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

    /// Consumes one complete JSON value, copying its bytes into `capture` when given (at most
    /// [`Limits::value`] of them). The value is checked to be well-formed JSON as it goes, by a
    /// state machine that builds nothing ([`grammar`]; string bodies are jumped over, checked
    /// only for line breaks): a skipped value is held to the same grammar as a parsed one.
    /// Nesting is tracked on an explicit stack of at most [`MAX_DEPTH`] levels, never by
    /// recursion.
    pub(crate) fn value(&mut self, what: &'static str, mut capture: Option<&mut Vec<u8>>) -> Result<(), ParseError> {
        if self.skip_ws()?.is_none() {
            return Err(self.error(ParseErrorKind::Truncated(what)));
        }
        let start = self.span();
        let mut state = grammar::VALUE;
        let mut stack = Vec::new();
        loop {
            if self.pos == self.end && !self.refill()? {
                // A number at the very end of the input is complete.
                return if stack.is_empty() && grammar::ends_at_end_of_input(state) {
                    Ok(())
                } else {
                    Err(self.error(ParseErrorKind::Truncated(what)))
                };
            }
            let from = self.pos;
            let outcome = self.validate(&mut state, &mut stack);
            if let Some(out) = capture.as_deref_mut() {
                out.extend_from_slice(&self.buf[from..self.pos]);
                if out.len() > self.limits.value {
                    return Err(ParseErrorKind::too_large_bytes(what, self.limits.value as u64).at(self.origin, start));
                }
            }
            match outcome {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(Invalid::Expected(expected)) => {
                    let found = describe(self.buf[self.pos]);
                    return Err(
                        self.error(ParseErrorKind::Json(format!("in {what}: expected {expected}, found {found}")))
                    );
                }
                Err(Invalid::Control) => {
                    return Err(
                        self.error(ParseErrorKind::Json(format!("in {what}: control character inside a string")))
                    )
                }
                Err(Invalid::Deep) => {
                    return Err(
                        self.error(ParseErrorKind::Json(format!("in {what}: nested deeper than {MAX_DEPTH} levels")))
                    )
                }
            }
        }
    }

    /// Runs the JSON grammar ([`grammar::TABLE`]) over the buffered bytes from `pos`: true
    /// when the value is complete (`pos` just after it), false when every buffered byte was
    /// taken, an error with `pos` at the offending byte. `stack` holds the open containers
    /// (true: an object).
    fn validate(&mut self, state: &mut u8, stack: &mut Vec<bool>) -> Result<bool, Invalid> {
        let end = self.end;
        let mut i = self.pos;
        let mut st = *state;
        // The state after a complete value; `None`: the value is done (at depth 0).
        let after_value = |stack: &Vec<bool>| match stack.last() {
            None => None,
            Some(true) => Some(grammar::NEXT_IN_OBJECT),
            Some(false) => Some(grammar::NEXT_IN_ARRAY),
        };
        // A string body left by the previous buffer goes on here.
        let mut jump = st == grammar::STRING || st == grammar::KEY_STRING;
        let outcome = loop {
            if jump {
                // Names and urls are most of the bytes: jump to the next quote, backslash or
                // line break, which the table then reads (a line break is a control character,
                // not allowed in a string).
                jump = false;
                let rest = &self.buf[i..end];
                i += memchr::memchr3(b'"', b'\\', b'\n', rest).unwrap_or(rest.len());
            }
            if i >= end {
                break Ok(false);
            }
            let next = grammar::TABLE[st as usize][self.buf[i] as usize];
            if next < grammar::ACTIONS {
                st = next;
                i += 1;
                continue;
            }
            match next {
                grammar::NEWLINE => {
                    self.newline_at(i);
                    i += 1;
                }
                grammar::STRING_BODY | grammar::KEY_BODY => {
                    st = if next == grammar::KEY_BODY { grammar::KEY_STRING } else { grammar::STRING };
                    jump = true;
                    i += 1;
                }
                grammar::OPEN_OBJECT | grammar::OPEN_ARRAY => {
                    if stack.len() >= MAX_DEPTH {
                        break Err(Invalid::Deep);
                    }
                    let object = next == grammar::OPEN_OBJECT;
                    stack.push(object);
                    st = if object { grammar::FIRST_KEY } else { grammar::FIRST_ITEM };
                    i += 1;
                }
                grammar::CLOSE | grammar::END_VALUE | grammar::END_NUMBER => {
                    if next == grammar::CLOSE {
                        stack.pop();
                    }
                    // The byte after a number is not part of it.
                    if next != grammar::END_NUMBER {
                        i += 1;
                    }
                    match after_value(stack) {
                        Some(after) => st = after,
                        None => break Ok(true),
                    }
                }
                grammar::CONTROL => break Err(Invalid::Control),
                _ => break Err(Invalid::Expected(grammar::expected(st))),
            }
        };
        *state = st;
        self.pos = i;
        outcome
    }

    /// Reads a JSON array of numbers (the opening `[` must be next) into `out`.
    ///
    /// What V8 writes (`123,456,…`) takes a fast path: a block at a time, split in two at a
    /// comma, both halves parsed and converted by `fast` on two threads. An element `fast`
    /// declines (returns `None` for), and anything else (whitespace, fractions, very long
    /// numbers, the last element) goes to `slow(index, number, span, out)` one at a time, `span`
    /// its position, where an error it returns is reported.
    pub(crate) fn number_array<T: Send>(
        &mut self,
        what: &'static str,
        out: &mut Vec<T>,
        fast: impl Fn(i64) -> Option<T> + Sync,
        mut slow: impl FnMut(usize, Number, Span, &mut Vec<T>) -> Result<(), ParseErrorKind>,
    ) -> Result<usize, ParseError> {
        self.skip_ws()?;
        let array_start = self.span();
        let limit = self.limits.samples;
        let too_long = || ParseErrorKind::too_many(what, limit, "entries").at(self.origin, array_start);
        self.expect(b'[', what)?;
        if self.skip_ws()? == Some(b']') {
            self.pos += 1;
            return Ok(0);
        }
        let first_index = out.len();
        let mut second_half = Vec::new();
        // Elements left to take on the general path before the fast path is tried again. When
        // the fast path stops almost at once (whitespace between elements, fractions), trying
        // it for every element would cost a thread hand-off each time.
        let mut general_streak = 0usize;
        loop {
            if general_streak == 0 {
                if !self.eof && self.end - self.pos < BLOCK {
                    self.refill()?;
                }
                let safe_end = if self.eof { self.end } else { self.end.saturating_sub(MAX_NUMBER_LEN) };
                let region = self.buf.get(self.pos..safe_end.max(self.pos)).unwrap_or(&[]);
                let region = match region.iter().rposition(|b| *b == b',') {
                    Some(last_comma) => &region[..=last_comma],
                    None => &[][..],
                };
                // Reading is a copy the CPU does too: do the next chunk's while this one is parsed.
                let read_ahead = !self.eof && region.len() >= PARALLEL_MIN;
                let (consumed, read) = if read_ahead {
                    if self.ahead.len() < RESERVE + CHUNK {
                        self.ahead.resize(RESERVE + CHUNK, 0);
                    }
                    let (ahead, reader) = (&mut self.ahead[RESERVE..], &mut self.reader);
                    rayon::join(
                        || parse_plain_block(region, out, &mut second_half, &fast),
                        || read_fully(reader, ahead),
                    )
                } else {
                    (parse_plain_block(region, out, &mut second_half, &fast), Ok(0))
                };
                if out.len() - first_index > limit {
                    return Err(too_long());
                }
                let whole = consumed == region.len() && !region.is_empty();
                if !whole && consumed < GENERAL_STREAK_BELOW {
                    general_streak = GENERAL_STREAK;
                }
                self.pos += consumed;
                if read_ahead {
                    let n = read.map_err(|e| self.error(ParseErrorKind::Io(e)))?;
                    self.take_ahead(n);
                }
                if whole && !self.eof {
                    continue;
                }
            }
            general_streak = general_streak.saturating_sub(1);
            // The general path: one element, then `,` or `]`.
            if self.end - self.pos < MAX_NUMBER_LEN {
                self.refill()?;
            }
            let number = self.number(what)?;
            slow(out.len() - first_index, number, self.item_span(), out).map_err(|kind| self.item_error(kind))?;
            if out.len() - first_index > limit {
                return Err(too_long());
            }
            match self.next_token(what)? {
                b',' => {}
                b']' => return Ok(out.len() - first_index),
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
        self.item_start = self.base.wrapping_add(self.pos as u64);
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
            Ok(_) => Err(self.error(ParseErrorKind::OutOfRange { what, value: token })),
            Err(_) => Err(self.error(ParseErrorKind::Json(format!("invalid number `{token}` in {what}")))),
        }
    }

    /// True when only whitespace is left.
    pub(crate) fn at_end(&mut self) -> Result<bool, ParseError> {
        Ok(self.skip_ws()?.is_none())
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_fully(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Parses a block of plain integers each followed by a comma (`12,-3,456,`), converting
/// each with `fast` and appending to `out`. Big blocks are split at a comma and the halves
/// done in parallel (`spare` holds the second half meanwhile). Stops before the first element
/// that is not a plain integer of at most 18 digits or that `fast` declines; returns the bytes
/// consumed.
fn parse_plain_block<T: Send>(
    block: &[u8],
    out: &mut Vec<T>,
    spare: &mut Vec<T>,
    fast: &(impl Fn(i64) -> Option<T> + Sync),
) -> usize {
    if block.len() < PARALLEL_MIN {
        return plain_ints(block, out, fast);
    }
    let middle = block.len() / 2;
    let split = block[middle..].iter().position(|b| *b == b',').map_or(block.len(), |p| middle + p + 1);
    let (first, second) = block.split_at(split);
    spare.clear();
    let (done_first, done_second) = rayon::join(|| plain_ints(first, out, fast), || plain_ints(second, spare, fast));
    if done_first < first.len() {
        return done_first;
    }
    out.append(spare);
    split + done_second
}

/// Parses `12,-3,456,` into `out` (through `fast`); returns the bytes consumed.
fn plain_ints<T>(bytes: &[u8], out: &mut Vec<T>, fast: &(impl Fn(i64) -> Option<T> + Sync)) -> usize {
    // Work on a Vec whose header sits on this thread's stack: `out` lives in the caller's
    // frame, next to what the other thread writes, and sharing that cache line halves the speed.
    let mut values = std::mem::take(out);
    let consumed = plain_ints_into(bytes, &mut values, fast);
    *out = values;
    consumed
}

#[inline(never)]
fn plain_ints_into<T>(bytes: &[u8], out: &mut Vec<T>, fast: &impl Fn(i64) -> Option<T>) -> usize {
    out.reserve(bytes.len() / 4);
    // Where each element ends comes from a bitmask of the commas in 64-byte blocks, so one
    // element's parse never waits for the previous one's: the CPU works on several at once.
    let mut start = 0;
    let mut block = 0;
    while block < bytes.len() {
        let mut commas = comma_mask(bytes, block);
        while commas != 0 {
            let end = block + commas.trailing_zeros() as usize;
            commas &= commas - 1;
            let Some(converted) = plain_int(bytes, start, end).and_then(fast) else { return start };
            out.push(converted);
            start = end + 1;
        }
        block += 64;
    }
    start
}

const ONES: u64 = 0x0101_0101_0101_0101;

/// Bit k set when `bytes[at + k]` is a comma, for the 64 bytes from `at` (fewer at the end).
#[inline]
fn comma_mask(bytes: &[u8], at: usize) -> u64 {
    match bytes.get(at..at + 64) {
        Some(block) => block.chunks_exact(8).enumerate().fold(0, |mask, (i, word)| {
            mask | comma_bits(u64::from_le_bytes(word.try_into().unwrap_or_default())) << (8 * i)
        }),
        None => bytes[at..].iter().enumerate().fold(0, |mask, (i, b)| mask | u64::from(*b == b',') << i),
    }
}

/// Bit k set when byte k of the 8 in `word` (little-endian) is a comma. Exact: a byte is
/// zero after the xor exactly when adding 0x7f to its low bits carries nothing into bit 7
/// and bit 7 itself is clear; the eight flags are then gathered into one byte.
#[inline]
fn comma_bits(word: u64) -> u64 {
    const LOW7: u64 = 0x7f * ONES;
    let x = word ^ (u64::from(b',') * ONES);
    let zero = !(((x & LOW7) + LOW7) | x | LOW7);
    ((zero >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

/// The plain integer `-?[0-9]{1,18}` that is exactly `bytes[start..end]`.
#[inline]
fn plain_int(bytes: &[u8], start: usize, end: usize) -> Option<i64> {
    let negative = *bytes.get(start)? == b'-';
    let digits_start = start + usize::from(negative);
    let len = end.checked_sub(digits_start).filter(|len| (1..=18).contains(len))?;
    let value = match load8(bytes, digits_start) {
        Some(word) if len <= 8 => swar_digits(word, len)?,
        _ => scalar_digits(&bytes[digits_start..end])?,
    } as i64;
    Some(if negative { -value } else { value })
}

/// The 8 bytes at `at` as a little-endian word, if there are 8.
#[inline]
fn load8(bytes: &[u8], at: usize) -> Option<u64> {
    let eight: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(eight))
}

/// The value of the first `len` (1 to 8) bytes of `word` (little-endian), if all are ASCII
/// digits. Branch-free SWAR: shift the digits to the top, then combine pairs, quads and
/// octets with three multiplications.
#[inline]
fn swar_digits(word: u64, len: usize) -> Option<u64> {
    let x = word.wrapping_sub(0x30 * ONES);
    // A byte is a digit when, after subtracting '0', it is below 10. Borrows from a
    // non-digit byte only disturb the bytes above it, so the first non-digit is found exactly.
    let non_digit = (x | x.wrapping_add(0x76 * ONES)) & (0x80 * ONES);
    if (non_digit.trailing_zeros() / 8) < len as u32 {
        return None;
    }
    let mut v = x << (8 * (8 - len)); // digits in the top bytes, zeros below
    v = (v.wrapping_mul(10) + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_ffff_0000_ffff;
    v = (v.wrapping_mul(10_000) + (v >> 32)) & 0x0000_0000_ffff_ffff;
    Some(v)
}

/// The value of `digits` (at most 19), if all are ASCII digits.
fn scalar_digits(digits: &[u8]) -> Option<u64> {
    digits.iter().try_fold(0u64, |value, b| {
        let d = b.wrapping_sub(b'0');
        (d <= 9).then(|| value * 10 + u64::from(d))
    })
}

/// A byte as an error message shows it.
pub(crate) fn describe(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("`{}`", char::from(b))
    } else {
        format!("byte 0x{b:02x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: split on commas and parse each element with the standard library.
    fn naive(block: &[u8]) -> (Vec<i64>, usize) {
        let text = std::str::from_utf8(block).unwrap();
        let mut values = Vec::new();
        let mut consumed = 0;
        for part in text.split_inclusive(',') {
            let Some(number) = part.strip_suffix(',') else { break };
            let digits = number.strip_prefix('-').unwrap_or(number);
            if digits.is_empty() || digits.len() > 18 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                break;
            }
            values.push(number.parse().unwrap());
            consumed += part.len();
        }
        (values, consumed)
    }

    /// Whether `value()` takes `text` as exactly one JSON value.
    fn accepted(text: &[u8]) -> bool {
        let origin = Origin("t".into());
        // A small buffer: zeroing 16 MiB per case would take most of the test's time.
        let mut scanner = Scanner::with_buffer(text, &origin, crate::ParseOptions::default().limits(), 64);
        scanner.value("v", None).is_ok() && scanner.at_end().unwrap_or(false)
    }

    #[test]
    fn skipping_accepts_what_serde_json_accepts() {
        // Token soup, and valid documents with one byte changed. serde_json is the oracle; the
        // alphabet leaves out what the scanner knowingly does not check (control characters
        // other than the line break inside strings, non-ASCII bytes).
        let tokens: [&[u8]; 26] = [
            b"{", b"}", b"[", b"]", b",", b":", b"\"a\"", b"\"", b"\\", b"1", b"-", b"0", b".", b"e", b"+", b"true",
            b"tru", b"null", b"false", b" ", b"\n", b"\\u00e9", b"\\uZ", b"x", b"12.5E-3", b"\"k\":",
        ];
        let documents: [&[u8]; 4] = [
            br#"{"a":[1,-2.5e+3,true,false,null,"\u00e9\n"],"b":{}}"#,
            b"[ 0 , -0.0 , 1E9 , [ ] , { } ]",
            br#"{"x":{"y":[[["z"]]]},"w":"\"\\\/\b\f\n\r\t"}"#,
            b"-12345678901234567890.5e-7",
        ];
        let mut next = crate::xorshift(0x243f_6a88_85a3_08d3);
        let (mut agreed, mut valid) = (0, 0);
        for round in 0..40_000 {
            let text: Vec<u8> = if round % 2 == 0 {
                (0..=next() % 12).flat_map(|_| tokens[(next() % tokens.len() as u64) as usize].to_vec()).collect()
            } else {
                let mut text = documents[(next() % 4) as usize].to_vec();
                let at = (next() % text.len() as u64) as usize;
                let replacement: &[u8] = b"{}[],:\"\\0-.e+tx \n";
                let inserted: &[u8] = b"{}[],:\"1 ";
                match next() % 3 {
                    0 => text[at] = replacement[(next() % replacement.len() as u64) as usize],
                    1 => {
                        text.remove(at);
                    }
                    _ => text.insert(at, inserted[(next() % inserted.len() as u64) as usize]),
                }
                text
            };
            let oracle = serde_json::from_slice::<serde::de::IgnoredAny>(&text).is_ok();
            assert_eq!(accepted(&text), oracle, "{}", String::from_utf8_lossy(&text));
            agreed += 1;
            valid += usize::from(oracle);
        }
        // Both kinds of answer were tried often.
        assert!(valid > 4_000 && agreed - valid > 4_000, "{valid} of {agreed} valid");
    }

    #[test]
    fn plain_ints_agree_with_the_standard_library() {
        let mut next = crate::xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..2000 {
            let mut block = Vec::new();
            for _ in 0..(next() % 40) {
                let digits = 1 + (next() % 20) as usize;
                if next() % 7 == 0 {
                    block.push(b'-');
                }
                for _ in 0..digits {
                    block.push(b'0' + (next() % 10) as u8);
                }
                if next() % 50 == 0 {
                    block.extend_from_slice(b".5"); // not plain: parsing must stop here
                }
                block.push(b',');
            }
            let mut out = Vec::new();
            let consumed = plain_ints(&block, &mut out, &Some);
            assert_eq!((out, consumed), naive(&block), "{}", String::from_utf8_lossy(&block));
        }
    }

    #[test]
    fn parallel_blocks_agree_and_stop_where_conversion_declines() {
        let mut block = Vec::new();
        for i in 0..200_000i64 {
            block.extend_from_slice(format!("{},", i * 7 - 3).as_bytes());
        }
        assert!(block.len() > PARALLEL_MIN);
        let (mut out, mut spare) = (Vec::new(), Vec::new());
        let consumed = parse_plain_block(&block, &mut out, &mut spare, &Some);
        assert_eq!((out, consumed), naive(&block));
        // Declining one value in either half stops right before it.
        for stop in [1_000i64, 150_000] {
            let (mut out, mut spare) = (Vec::new(), Vec::new());
            let fast = |v: i64| (v != stop * 7 - 3).then_some(v);
            let consumed = parse_plain_block(&block, &mut out, &mut spare, &fast);
            assert_eq!(out.len() as i64, stop);
            assert_eq!(&block[consumed..consumed + 4], format!("{},", stop * 7 - 3).as_bytes()[..4].as_ref());
        }
    }

    #[test]
    fn swar_matches_scalar_for_every_length() {
        for len in 1..=8 {
            let mut bytes = *b"98765432";
            if len < 8 {
                bytes[len] = b',';
            }
            let expected = scalar_digits(&bytes[..len]);
            assert_eq!(swar_digits(u64::from_le_bytes(bytes), len), expected, "{len}");
            assert_eq!(expected, Some(98_765_432 / 10u64.pow(8 - len as u32)));
            // A non-digit anywhere in the first `len` bytes is refused.
            for bad in 0..len {
                for b in [b'/', b':', b' ', b'-', 0, 0xff] {
                    let mut broken = bytes;
                    broken[bad] = b;
                    assert_eq!(swar_digits(u64::from_le_bytes(broken), len), None, "{len} {bad} {b}");
                }
            }
        }
    }

    #[test]
    fn comma_mask_is_exact() {
        let mut seed: u64 = 0x1234_5678_9abc_def1;
        for _ in 0..2000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 90) as usize;
            // Bytes near the comma (0x2c) and with the top bit set are the tricky ones.
            let bytes: Vec<u8> =
                (0..len).map(|i| [b',', b'+', b'-', 0xac, 0x2d, 0x00, b'1'][(seed >> (i % 60)) as usize % 7]).collect();
            for at in [0, 7, 26] {
                if at > len {
                    continue;
                }
                let expected =
                    bytes[at..].iter().take(64).enumerate().fold(0u64, |m, (i, b)| m | u64::from(*b == b',') << i);
                assert_eq!(comma_mask(&bytes, at), expected);
            }
        }
    }
}
