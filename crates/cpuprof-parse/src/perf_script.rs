//! Linux `perf script` text: what `perf record -g node --perf-basic-prof app.js; perf script`
//! writes, one event line per sample and its stack below it, innermost frame first:
//!
//! ```text
//! node 22755   392.639308:    1001001 cpu-clock:ppp:
//!         7f92a8005c1d JS:*fib /tmp/w.js:1:13+0x9d (/tmp/perf-22755.map)
//!               871ec4 node::Start+0x154 (/usr/bin/node)
//!     ffffffff8158e7b1 filemap_map_pages+0x1d1 ([kernel.kallsyms])
//! ```
//!
//! - The stacks are folded by inferno's own `collapse::perf` (the reference implementation of
//!   `stackcollapse-perf`), with its defaults: symbol offsets and argument lists dropped, no
//!   addresses, the process name (`comm`) as the root frame, and only the samples of the first
//!   event type (`cpu-clock`, `cycles`, …), as it does; one warning counts those of other types.
//!   Each sample counts once: the period perf may print before the event name is not a
//!   weight here (it is in cycles for `cycles`), so the profile holds sample counts.
//! - Frames are told apart by inferno's annotations: kernel frames are `FuncKind::Native`;
//!   frames from a perf map (`/tmp/perf-PID.map`, `jitted-*.so`) are V8's code names as
//!   `--perf-basic-prof` writes them (`JS:*name file:line:column` in node 20, `LazyCompile:` and
//!   `Function:` before V8 10.x): JavaScript functions with their file, line and column, and
//!   their tier (`~` interpreted, `^` Sparkplug, `+` Maglev, `*` TurboFan) when
//!   [`ParseOptions::split_tiers`] is set (else the tiers of a function are one function);
//!   `Builtin:`, `BytecodeHandler:` and `Stub:` are builtins, `RegExp:` regular expressions.
//!   `Builtins_X` (V8's builtins embedded in the node binary, named by its symbol table) is
//!   builtin `X`. Other named frames are native code (`FuncKind::Native`); a frame perf could not name is
//!   `[unknown]`, or `[LIBRARY]` (the file perf found it in), a `FuncKind::SharedLib` frame.
//! - `#` comment lines (the `--header` block) are skipped; lines perf script writes for other
//!   record types are skipped by inferno as it skips them.

use std::collections::BTreeMap;
use std::io::{self, BufRead, Read};

use cpuprof_model::{
    Frame, FrameId, Func, FuncKind, Library, Profile, ProfileBuilder, SampleSource, SampleTimeline, SourceFormat,
    StackId, StrId, Tier, TimedSample, ValueType,
};
use inferno::collapse::perf::{Folder, Options};
use inferno::collapse::Collapse;
use rustc_hash::FxHashMap;

use crate::error::{Origin, ParseError, ParseErrorKind, Span};
use crate::folded::Stacks;
use crate::ParseOptions;

/// Whether `text` (the start of an input) is `perf script` output: after `#` comments and
/// blank lines, an event line and then a stack line (or an event line holding its one frame).
pub(crate) fn sniff(text: &[u8]) -> bool {
    let text = String::from_utf8_lossy(text).replace('\t', " ");
    let mut lines = text.lines().map(str::trim_end).filter(|l| !l.trim_start().starts_with('#'));
    let Some(first) = lines.find(|l| !l.trim().is_empty()) else { return false };
    let Some(event) = event_line(first) else { return false };
    if event.event.is_none() {
        return false;
    }
    if event.single {
        return true;
    }
    match lines.next() {
        Some(next) => next.starts_with(' ') && stack_line(next),
        None => false,
    }
}

/// `  7f92a8005c1d JS:*fib /tmp/w.js:1:13+0x9d (/tmp/perf-22755.map)`: an address, a name,
/// and the module in parentheses.
fn stack_line(line: &str) -> bool {
    let line = line.trim();
    let Some((pc, rest)) = line.split_once(' ') else { return false };
    pc.bytes().all(|b| b.is_ascii_hexdigit()) && rest.ends_with(')') && rest.contains('(')
}

/// The parts of an event line, as inferno's `perf` folder reads them: the command name, then
/// the first all-digit word (the pid or `pid/tid`), then `…: [PERIOD] EVENT:`.
struct EventLine<'a> {
    /// Where the command name ends (trimmed), as inferno takes it.
    comm_end: usize,
    /// The sample's time in ns (`392.639308:` is in seconds), if the line has one.
    time_ns: Option<i64>,
    /// The event name (`cpu-clock:ppp` is `cpu-clock`), if the line has one.
    event: Option<&'a str>,
    /// Byte range of the period before the event name, if there is one.
    period: Option<(usize, usize)>,
    /// The line holds the sample's one frame after the event name (no stack lines follow).
    single: bool,
}

fn event_line(line: &str) -> Option<EventLine<'_>> {
    // The first word is the command (which may hold digits and spaces), so a number counts
    // only after a space; `pid/tid` is one number.
    let mut all_digits = false;
    let mut last_was_space = false;
    let mut end = None;
    let mut word_start = 0;
    for (i, c) in line.char_indices() {
        if c == ' ' {
            if all_digits && !last_was_space {
                end = Some(i + 1);
                break;
            }
            all_digits = true;
            word_start = i + 1;
        } else if !(c.is_ascii_digit() || c == '/') {
            all_digits = false;
        }
        last_was_space = c == ' ';
    }
    let end = end?;
    let comm_end = line[..word_start.saturating_sub(1)].trim_end().len();
    let rest = &line[end..];
    // `TIME: PERIOD EVENT:` (the text between the first two colons after the pid).
    let Some(first) = rest.find(':') else {
        return Some(EventLine { comm_end, time_ns: None, event: None, period: None, single: false });
    };
    // `[002] 6544038.708352`: the time is the last word before the colon.
    let time_ns = rest[..first].split_whitespace().last().and_then(seconds_to_ns);
    let segment_start = end + first + 1;
    let segment = &line[segment_start..];
    let after = segment.find(':').map(|i| &segment[i + 1..]);
    let segment = &segment[..segment.find(':').unwrap_or(segment.len())];
    // `cycles:u:  ffffffff9aa3c8de [unknown] ([unknown])`: past the event's modifiers, a frame.
    let single = after.is_some_and(|after| {
        let start = after.find([':', ' ']).map_or(0, |i| i + 1);
        !after[start..].trim().is_empty()
    });
    let (before, event) = match segment.rfind(' ') {
        Some(i) => (&segment[..i], &segment[i + 1..]),
        None => ("", segment),
    };
    let period_start = before.rfind(' ').map_or(0, |i| i + 1);
    let period = &before[period_start..];
    let is_period = !period.is_empty() && period.parse::<u64>().is_ok();
    let period = is_period.then(|| (segment_start + period_start, segment_start + period_start + period.len()));
    Some(EventLine { comm_end, time_ns, event: Some(event), period, single })
}

/// `1755.885379` (seconds, with up to nine decimals) in ns, exactly.
fn seconds_to_ns(text: &str) -> Option<i64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !(fraction.is_empty() || digits(fraction)) || fraction.len() > 9 {
        return None;
    }
    let scale = 10i64.pow(9 - fraction.len() as u32);
    let fraction = if fraction.is_empty() { 0 } else { fraction.parse::<i64>().ok()? * scale };
    let ns = whole.parse::<i64>().ok()?.checked_mul(1_000_000_000)?.checked_add(fraction)?;
    // Times since boot: far below 2^59 ns (18 years), which keeps spans and sums of them in range.
    (ns < cpuprof_model::defaults::TIME_LIMIT_NS / 8).then_some(ns)
}

/// Feeds inferno the input with the periods blanked out (so that each sample counts once),
/// each distinct stack once (its command name marked with the stack's id, so that the folded
/// line inferno writes for it names it), counting the samples of each event type and the
/// lines that are not events, and keeping each sample's stack id, time and period.
///
/// Each line is read raw (at most `limit` bytes, as folded lines are), made ASCII
/// ([`to_ascii`]) when it is not, and only then read as an event line: the period is blanked
/// in the very buffer it was found in, whatever bytes the command name holds. An event's lines
/// are gathered up to the blank line that ends it; its command, event name and stack lines
/// tell its stack apart (the pid, time and period do not change what inferno folds). An event
/// is held whole (inferno folds it as one line), so it is bounded as a folded line is: at most
/// `limit` bytes, and at most `max_frames` frames.
///
/// Inferno keeps what it folded until its input ends, so it is served chunks of about
/// [`CHUNK`] bytes (ended at an event's end), each folded into the profile before the next:
/// the limits on stacks and frames stop a bomb of distinct events as it is read. The stacks told
/// apart are kept for up to `limit` bytes; past those, a new stack is served each time it comes
/// (the profile's stacks still merge them), so memory stays bounded whatever the input.
struct Events<R> {
    inner: R,
    /// Bytes a line, or an event's lines, may hold (newlines included), as
    /// [`Limits::value`](crate::Limits).
    limit: usize,
    /// Frames an event may hold, [`Limits::event_frames`](crate::Limits).
    max_frames: usize,
    /// Samples the profile may hold, [`Limits::samples`](crate::Limits).
    max_samples: usize,
    /// The current line (transformed).
    line: Vec<u8>,
    /// What inferno is served, from `pos`.
    out: Vec<u8>,
    pos: usize,
    /// 1-based number of the current line.
    number: u64,
    /// The number of a line longer than `limit` (reading stopped there).
    too_long: Option<u64>,
    /// The number of the first line of an event past `limit` or `max_frames`, and which
    /// (reading stopped there).
    too_big: Option<(u64, EventLimit)>,
    /// Inside an event's stack (until a blank line), as inferno tracks it.
    in_event: bool,
    /// Samples per event name (as inferno sees it: ASCII, see [`to_ascii`]).
    samples: BTreeMap<String, u64>,
    /// Event lines that are none (inferno skips them and their stacks).
    weird: u64,
    /// The first event line's event name and line number.
    first: Option<(String, u64)>,
    /// The event being gathered: its event line, where its command name ends, whether it is of
    /// the first event type, and what tells its stack apart (its command and event name, then
    /// its stack lines from `key_stack`, which are all of it inferno is served but its event
    /// line: its comment lines inferno would skip).
    head: Vec<u8>,
    block_comm_end: usize,
    block_kept: bool,
    key: Vec<u8>,
    key_stack: usize,
    /// The number of the event's first line, its bytes and frames so far.
    block_line: u64,
    block_bytes: usize,
    block_frames: usize,
    /// The time and period of the event being gathered.
    block_time: Option<i64>,
    block_period: Option<i64>,
    /// The id of each distinct stack (by its key), numbered from 0, while their keys take at
    /// most `limit` bytes; `next_id` is the next id (a stack served again gets a new one).
    ids: FxHashMap<Vec<u8>, u32>,
    key_bytes: usize,
    next_id: u32,
    /// Bytes served in this chunk, whether it is full (inferno is told the input ends), and
    /// the bytes that fill one ([`CHUNK`]).
    chunk: usize,
    chunk_limit: usize,
    pause: bool,
    /// The samples of the first event type, in input order.
    kept: Vec<Kept>,
}

/// A sample of the first event type: its stack's id (see [`Events::ids`]), time and period.
#[derive(Clone, Copy)]
struct Kept {
    id: u32,
    time_ns: Option<i64>,
    period: Option<i64>,
}

/// Bytes of distinct events served to inferno before what it folded is read into the profile.
const CHUNK: usize = 16 << 20;

/// Marks the end of a command name and the start of its stack's id in what inferno is served.
const ID_MARK: u8 = 0x03;

/// Which bound of one event a `perf script` event crossed (or the samples, at that event).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EventLimit {
    Bytes,
    Frames,
    Samples,
}

impl<R: BufRead> Events<R> {
    fn new(inner: R, limit: usize, max_frames: usize, max_samples: usize) -> Self {
        Events {
            inner,
            limit,
            max_frames,
            // Ids are u32.
            max_samples: max_samples.min(u32::MAX as usize),
            line: Vec::new(),
            out: Vec::new(),
            pos: 0,
            number: 0,
            too_long: None,
            too_big: None,
            in_event: false,
            samples: BTreeMap::new(),
            weird: 0,
            first: None,
            head: Vec::new(),
            block_comm_end: 0,
            block_kept: false,
            key: Vec::new(),
            key_stack: 0,
            block_line: 0,
            block_bytes: 0,
            block_frames: 0,
            block_time: None,
            block_period: None,
            ids: FxHashMap::default(),
            key_bytes: 0,
            next_id: 0,
            chunk: 0,
            chunk_limit: CHUNK,
            pause: false,
            kept: Vec::new(),
        }
    }

    /// Reads the next line, made ASCII for inferno ([`to_ascii`]), into the event being
    /// gathered or what inferno is served; false at the end.
    fn next_line(&mut self) -> io::Result<bool> {
        self.line.clear();
        if self.too_long.is_some() || self.too_big.is_some() {
            return Err(io::Error::other("a line or an event is too large"));
        }
        // One byte past the limit tells a line that is too long from one that is just long enough.
        if self.inner.by_ref().take(self.limit as u64 + 1).read_until(b'\n', &mut self.line)? == 0 {
            if self.in_event {
                self.in_event = false;
                self.end_event()?;
                return Ok(true);
            }
            return Ok(false);
        }
        self.number += 1;
        if self.line.len() > self.limit {
            self.line = Vec::new();
            self.too_long = Some(self.number);
            return Err(io::Error::other("a line is too large"));
        }
        if !self.line.is_ascii()
            || self.line.contains(&ESCAPE)
            || self.line.contains(&ESCAPE_END)
            || self.line.contains(&ID_MARK)
        {
            self.line = to_ascii(&self.line);
        }
        if self.line.starts_with(b"#") {
            if self.in_event {
                // Counted in the event's bytes, not served: inferno skips it.
                self.check_event()?;
                self.block_bytes += self.line.len();
            } else {
                self.out.extend_from_slice(&self.line);
            }
            return Ok(true);
        }
        // Some writers (Android's simpleperf, perf with some `-F` fields) separate fields with
        // tabs, which inferno does not read as separators; a space is one byte too.
        for b in &mut self.line {
            if *b == b'\t' {
                *b = b' ';
            }
        }
        // ASCII now: one byte is one character, and the text is the buffer inferno reads.
        let text = std::str::from_utf8(&self.line).unwrap_or_default().trim_end();
        if text.is_empty() {
            if self.in_event {
                self.in_event = false;
                self.end_event()?;
            } else {
                self.out.extend_from_slice(&self.line);
            }
            return Ok(true);
        }
        if self.in_event {
            self.block_frames += 1;
            self.check_event()?;
            self.block_bytes += self.line.len();
            self.key.extend_from_slice(&self.line);
            return Ok(true);
        }
        self.in_event = true;
        let Some(event) = event_line(text) else {
            self.weird += 1;
            // Inferno reads the next line as an event line again.
            self.in_event = false;
            self.out.extend_from_slice(&self.line);
            return Ok(true);
        };
        let name = event.event.unwrap_or_default().to_owned();
        let (period, comm_end, time_ns, single) = (event.period, event.comm_end, event.time_ns, event.single);
        let first = &self.first.get_or_insert_with(|| (name.clone(), self.number)).0;
        self.block_kept = *first == name;
        self.block_line = self.number;
        self.block_frames = 0;
        self.block_time = time_ns;
        self.block_period = None;
        self.block_comm_end = comm_end;
        self.key.clear();
        self.key.extend_from_slice(&self.line[..comm_end]);
        self.key.push(0);
        self.key.extend_from_slice(name.as_bytes());
        self.key.push(0);
        if single {
            // The frame is on this line, after the event: one such sample is its own stack.
            self.key.extend_from_slice(&self.number.to_le_bytes());
        }
        self.key_stack = self.key.len();
        *self.samples.entry(name).or_default() += 1;
        if let Some((start, end)) = period {
            let digits = self.line.get_mut(start..end).unwrap_or_default();
            self.block_period = std::str::from_utf8(digits).ok().and_then(|d| d.parse().ok());
            for b in digits {
                *b = b' ';
            }
        }
        self.head.clear();
        self.head.extend_from_slice(&self.line);
        self.block_bytes = self.line.len();
        // An event line holding its one frame has no stack lines after it.
        if single {
            self.in_event = false;
            self.end_event()?;
        }
        Ok(true)
    }

    /// Stops reading when the event being gathered, with the current line, is past its bounds.
    fn check_event(&mut self) -> io::Result<()> {
        let over = if self.block_frames > self.max_frames {
            EventLimit::Frames
        } else if self.block_bytes + self.line.len() > self.limit {
            EventLimit::Bytes
        } else {
            return Ok(());
        };
        // What the event held is let go: the error is all that is left to say.
        (self.key, self.line, self.out) = (Vec::new(), Vec::new(), Vec::new());
        self.too_big = Some((self.block_line, over));
        Err(io::Error::other("an event is too large"))
    }

    /// Ends the event gathered: a sample of the first event type is kept, and its stack served
    /// to inferno unless it was told apart before (events of other types inferno would skip).
    fn end_event(&mut self) -> io::Result<()> {
        if !self.block_kept {
            return Ok(());
        }
        if self.kept.len() >= self.max_samples {
            (self.key, self.line, self.out) = (Vec::new(), Vec::new(), Vec::new());
            self.too_big = Some((self.block_line, EventLimit::Samples));
            return Err(io::Error::other("too many samples"));
        }
        let id = if let Some(id) = self.ids.get(&self.key) {
            *id
        } else {
            let id = self.next_id;
            self.next_id += 1;
            let start = self.out.len();
            let (comm, rest) = self.head.split_at(self.block_comm_end.min(self.head.len()));
            self.out.extend_from_slice(comm);
            self.out.push(ID_MARK);
            self.out.extend_from_slice(id.to_string().as_bytes());
            self.out.extend_from_slice(rest);
            self.out.extend_from_slice(&self.key[self.key_stack..]);
            // The event ends in a blank line, whatever ended it in the input (another blank
            // line ends no event in inferno).
            if !self.out.ends_with(b"\n") {
                self.out.push(b'\n');
            }
            self.out.push(b'\n');
            self.chunk += self.out.len() - start;
            self.pause = self.chunk >= self.chunk_limit;
            if self.key_bytes + self.key.len() <= self.limit {
                self.key_bytes += self.key.len();
                self.ids.insert(std::mem::take(&mut self.key), id);
            }
            id
        };
        self.kept.push(Kept { id, time_ns: self.block_time, period: self.block_period });
        Ok(())
    }

    /// Reads up to the first event line, which names the event type to keep (or the first line
    /// that should have been one).
    fn first_event(&mut self) -> io::Result<Option<String>> {
        while self.first.is_none() && self.weird == 0 {
            if !self.next_line()? {
                break;
            }
        }
        Ok(self.first.as_ref().map(|(name, _)| name.clone()))
    }
}

impl<R: BufRead> io::Read for Events<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Events<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.pos == self.out.len() {
            self.out.clear();
            self.pos = 0;
            // A full chunk ends inferno's input at an event's end, its state as at the start.
            if self.pause || !self.next_line()? {
                break;
            }
        }
        Ok(self.out.get(self.pos..).unwrap_or_default())
    }

    fn consume(&mut self, amount: usize) {
        self.pos = (self.pos + amount).min(self.out.len());
    }
}

/// Starts a character that [`to_ascii`] wrote as its hexadecimal code point.
const ESCAPE: u8 = 0x01;
/// Ends it.
const ESCAPE_END: u8 = 0x02;

/// `line` with every character that is not ASCII (and the escape bytes themselves) written as
/// `\x01HEX\x02`. inferno 0.12 slices names at byte offsets counted from their end (its Rust
/// demangling fix-up), which panics inside a multi-byte character: a JavaScript function or
/// path with an `ä` near its end. Bytes that are not UTF-8 become U+FFFD.
fn to_ascii(line: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(line);
    let mut out = Vec::with_capacity(line.len() + 16);
    for c in text.chars() {
        if c.is_ascii() && c != char::from(ESCAPE) && c != char::from(ESCAPE_END) {
            out.push(c as u8);
        } else {
            out.push(ESCAPE);
            out.extend_from_slice(format!("{:x}", u32::from(c)).as_bytes());
            out.push(ESCAPE_END);
        }
    }
    out
}

/// Undoes [`to_ascii`] in inferno's output.
fn from_ascii(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(char::from(ESCAPE)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(char::from(ESCAPE)) {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let end = after.find(char::from(ESCAPE_END)).unwrap_or(after.len());
        let c = u32::from_str_radix(&after[..end], 16).ok().and_then(char::from_u32);
        out.push(c.unwrap_or(char::REPLACEMENT_CHARACTER));
        rest = after.get(end + 1..).unwrap_or_default();
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// Parses `perf script` text from `reader`.
pub(crate) fn parse(
    reader: impl BufRead + Send,
    origin: &Origin,
    options: &ParseOptions,
) -> Result<Profile, ParseError> {
    parse_in_chunks(reader, origin, options, CHUNK)
}

/// [`parse`], serving inferno `chunk` bytes at a time.
fn parse_in_chunks(
    reader: impl BufRead + Send,
    origin: &Origin,
    options: &ParseOptions,
    chunk: usize,
) -> Result<Profile, ParseError> {
    let limits = options.limits();
    // JIT records need each sample's tier, which this format gives only with tiers apart.
    let split_tiers = options.split_tiers || options.jit;
    let mut events = Events::new(reader, limits.value, limits.event_frames, limits.samples);
    events.chunk_limit = chunk;
    let too_long = |line: u64| {
        ParseErrorKind::too_large_bytes("a line", limits.value as u64).at(origin, Span::LineCol { line, column: 1 })
    };
    let too_big = |(line, over): (u64, EventLimit)| {
        let kind = match over {
            EventLimit::Bytes => ParseErrorKind::too_large_bytes("an event", limits.value as u64),
            EventLimit::Frames => ParseErrorKind::too_many("an event", limits.event_frames, "frames"),
            EventLimit::Samples => {
                return ParseErrorKind::too_many("the profile", limits.samples, "samples").at(origin, Span::None);
            }
        };
        kind.at(origin, Span::LineCol { line, column: 1 })
    };
    let io_error = |e: io::Error, line: u64| ParseErrorKind::Io(e).at(origin, Span::LineCol { line, column: 1 });
    let first = match events.first_event() {
        Ok(first) => first,
        Err(_) if events.too_long.is_some() => return Err(too_long(events.number)),
        Err(e) => return Err(io_error(e, events.number.max(1))),
    };
    let Some(event) = first else {
        if events.weird > 0 {
            let at = Span::LineCol { line: events.number, column: 1 };
            let what = "expected a perf script event line (`COMMAND PID TIME: [PERIOD] EVENT:`)";
            return Err(ParseErrorKind::Malformed(what).at(origin, at));
        }
        return Err(ParseErrorKind::Invalid("no samples: the perf script output holds no event line".into())
            .at(origin, Span::None));
    };
    let mut inferno = Options::default();
    inferno.annotate_jit = true;
    inferno.annotate_kernel = true;
    inferno.nthreads = 1;
    // Set here, inferno takes the event type as given instead of asserting it found one.
    inferno.event_filter = Some(event.clone());
    let value_types = vec![ValueType::SAMPLES, ValueType::CPU_NS];
    let mut b = ProfileBuilder::new(SourceFormat::PerfScript, value_types);
    let mut stacks = Stacks::new(limits);
    let mut label = String::new();
    // The model stack of each stack id (see `Events::ids`).
    let mut stack_of: Vec<Option<StackId>> = Vec::new();
    let mut folder = Folder::from(inferno);
    let mut chunk_folded = Vec::new();
    loop {
        // inferno is not ours to audit: should it panic on some input all the same, that is an
        // error about the input, not the end of the program.
        let collapsed =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| folder.collapse(&mut events, &mut chunk_folded)));
        if let Some(line) = events.too_long {
            return Err(too_long(line));
        }
        if let Some(event) = events.too_big {
            return Err(too_big(event));
        }
        let Ok(result) = collapsed else {
            let at = Span::LineCol { line: events.number, column: 1 };
            let what = "inferno's perf script folder failed on this line";
            return Err(ParseErrorKind::Malformed(what).at(origin, at));
        };
        result.map_err(|e| io_error(e, events.number))?;
        stack_of.resize(events.next_id as usize, None);
        for line in chunk_folded.split(|b| *b == b'\n') {
            let line = String::from_utf8_lossy(line);
            let line = from_ascii(&line);
            let Some((stack, count)) = line.rsplit_once(' ') else { continue };
            let Ok(count) = count.parse::<i64>() else { continue };
            let mut frames = stack.split(';');
            let (comm, id) = frames.next().unwrap_or_default().rsplit_once(char::from(ID_MARK)).unwrap_or_default();
            let Some(slot) = id.parse::<usize>().ok().and_then(|id| stack_of.get_mut(id)) else { continue };
            // The process name: marked so that it never shares a frame with a function's name.
            label.clear();
            label.push('\0');
            label.push_str(comm);
            let labels = std::iter::once(label.as_str()).chain(frames);
            // inferno sums each stack: only the limits on stacks and frames can fail here.
            let added = stacks.add(&mut b, labels, count, |b, label| add_frame(b, label, split_tiers));
            *slot = added.map_err(|(_, kind)| kind.at(origin, Span::None))?;
        }
        chunk_folded.clear();
        if !events.pause {
            break;
        }
        (events.pause, events.chunk) = (false, 0);
    }

    // Every sample has a time (perf script prints one unless `-F` leaves it out): a timeline.
    let kept = std::mem::take(&mut events.kept);
    let timed = !kept.is_empty() && kept.iter().all(|k| k.time_ns.is_some());
    if !timed {
        b.set_value_types(vec![ValueType::SAMPLES]);
    }
    let untimed = kept.iter().filter(|k| k.time_ns.is_none()).count();
    if untimed > 0 && untimed < kept.len() {
        b.warn(format!(
            "{untimed} of {} samples have no time (or one past 18 years): the samples make no timeline",
            kept.len()
        ));
    }
    let weights = sample_weights(&kept, &event, timed);
    // One row per stack, its samples and time summed (as the tick-log reader's), and each
    // sample on the timeline by its row.
    let mut row_of: Vec<u32> = Vec::new();
    let mut rows: Vec<(StackId, [i64; 2])> = Vec::new();
    let mut timed_samples: Vec<TimedSample> = Vec::with_capacity(if timed { kept.len() } else { 0 });
    for (sample, weight) in kept.iter().zip(&weights) {
        let Some(stack) = stack_of.get(sample.id as usize).copied().flatten() else { continue };
        if row_of.len() <= stack.index() {
            row_of.resize(stack.index() + 1, u32::MAX);
        }
        if row_of[stack.index()] == u32::MAX {
            row_of[stack.index()] = rows.len() as u32;
            rows.push((stack, [0, 0]));
        }
        let row = row_of[stack.index()];
        let sums = &mut rows[row as usize].1;
        sums[0] += 1;
        sums[1] = sums[1].saturating_add(*weight);
        if let Some(time_ns) = sample.time_ns.filter(|_| timed) {
            timed_samples.push(TimedSample { row, time_ns, weight_ns: *weight });
        }
    }
    for (stack, [count, ns]) in rows {
        if timed {
            b.sample(stack, None, &[count, ns]);
        } else {
            b.sample(stack, None, &[count]);
        }
    }
    if timed {
        // perf writes each CPU's samples in turn: in time order, ties in input order.
        timed_samples.sort_by_key(|s| s.time_ns);
        b.timeline(SampleTimeline::new(PerfSamples(timed_samples)));
    }
    if timed {
        let first = kept.iter().filter_map(|k| k.time_ns).min().unwrap_or(0);
        let (last, last_weight) =
            kept.iter().zip(&weights).map(|(k, w)| (k.time_ns.unwrap_or(0), *w)).max().unwrap_or((0, 0));
        // Saturating: times come from the text, any number at all.
        let mean = weights.iter().fold(0i64, |a, w| a.saturating_add(*w)) / weights.len().max(1) as i64;
        b.timing(Some(first), Some(last.saturating_sub(first).saturating_add(last_weight)), (mean > 0).then_some(mean));
    }
    // The event names as inferno saw them, ASCII: told in the input's own characters.
    let others: Vec<String> = events
        .samples
        .iter()
        .filter(|(name, _)| **name != event)
        .map(|(name, n)| format!("{n} `{}`", from_ascii(name)))
        .collect();
    if !others.is_empty() {
        let event = from_ascii(&event);
        b.warn(format!(
            "read only the samples of the first event type, `{event}`, as inferno does: skipped {} samples",
            others.join(", ")
        ));
    }
    if events.weird > 0 {
        b.warn(format!(
            "skipped {} lines where an event line was expected (`COMMAND PID TIME: [PERIOD] EVENT:`), with their stacks",
            events.weird
        ));
    }
    drop(stacks);
    b.finish().map_err(|e| ParseErrorKind::Model(e).at(origin, Span::None))
}

/// A perf script's timeline: each sample's row, time and weight, in time order.
struct PerfSamples(Vec<TimedSample>);

impl SampleSource for PerfSamples {
    fn walk(&self, visit: &mut dyn FnMut(&[TimedSample])) {
        for chunk in self.0.chunks(2048) {
            visit(chunk);
        }
    }
}

/// The time each sample stands for, as a tick log's: the CPU time perf measured since the
/// thread's sample before (the period of `cpu-clock` and `task-clock`, in ns, when every sample
/// has one of at most 10 s), else one sampling interval, the mean interval between the
/// recording's samples. None without times.
fn sample_weights(kept: &[Kept], event: &str, timed: bool) -> Vec<i64> {
    if !timed {
        return vec![0; kept.len()];
    }
    // Periods of up to 10 s: `perf record -F 1` takes one sample a second; a longer one is not
    // perf's (and one missing leaves no measure for that sample).
    let clock = matches!(event, "cpu-clock" | "task-clock")
        && kept.iter().all(|k| k.period.is_some_and(|p| (1..=10_000_000_000).contains(&p)));
    let stamps = kept.iter().filter_map(|k| k.time_ns);
    let (first, last) = (stamps.clone().min().unwrap_or(0), stamps.max().unwrap_or(0));
    let mean = if kept.len() > 1 { last.saturating_sub(first) / (kept.len() as i64 - 1) } else { 0 };
    kept.iter().map(|k| k.period.filter(|_| clock).unwrap_or(mean)).collect()
}

/// The frame of one folded label (the process name is marked with a leading NUL). V8's tiers
/// are kept apart only with `split_tiers`, as tick logs do.
fn add_frame(b: &mut ProfileBuilder, label: &str, split_tiers: bool) -> FrameId {
    let (name, file, line, column, kind, tier) = frame_parts(label);
    let tier = tier.filter(|_| split_tiers);
    let library = (kind == FuncKind::SharedLib).then(|| {
        let path = b.intern(name.trim_start_matches('[').trim_end_matches(']'));
        b.library(Library { path, range: None })
    });
    let name = if name.is_empty() { StrId::EMPTY } else { b.intern(name) };
    let file = if file.is_empty() { StrId::EMPTY } else { b.intern(file) };
    let func = b.func(Func { name, file, line, column, kind, tier, library });
    b.frame(Frame { func, line: None, column: None })
}

type Parts<'a> = (&'a str, &'a str, Option<u32>, Option<u32>, FuncKind, Option<Tier>);

/// Name, file, line, column, kind and tier of a label.
fn frame_parts(label: &str) -> Parts<'_> {
    let plain = |name, kind| (name, "", None, None, kind, None);
    if let Some(comm) = label.strip_prefix('\0') {
        return plain(comm, FuncKind::Other);
    }
    if let Some(name) = label.strip_suffix("_[k]") {
        return plain(name, FuncKind::Native);
    }
    if let Some(name) = label.strip_suffix("_[j]") {
        return v8_code(name);
    }
    // Java's inlined frames (inferno marks them when one perf frame holds `a->b`).
    let label = label.strip_suffix("_[i]").unwrap_or(label);
    if label == "[unknown]" {
        return plain(label, FuncKind::Unknown);
    }
    if label.starts_with('[') && label.ends_with(']') && !label.contains(' ') {
        return plain(label, FuncKind::SharedLib);
    }
    // V8's builtins embedded in the node binary, named by its symbol table (`Builtins_CEntry…`).
    if let Some(name) = label.strip_prefix("Builtins_").filter(|name| !name.is_empty()) {
        return plain(name, FuncKind::Builtin);
    }
    plain(label, FuncKind::Native)
}

/// A name from V8's perf map (`--perf-basic-prof`): `KIND:[TIER]NAME[ FILE:LINE[:COLUMN]]`.
fn v8_code(code: &str) -> Parts<'_> {
    let plain = |name, kind| (name, "", None, None, kind, None);
    let Some((kind, rest)) = code.split_once(':') else { return plain(code, FuncKind::Native) };
    match kind {
        // node 20's `JS:`, and older V8's names for the same.
        "JS" | "LazyCompile" | "Function" | "Script" | "Eval" | "InterpretedFunction" => {
            let tier = rest.bytes().next().and_then(Tier::from_marker);
            let rest = if tier.is_some() { &rest[1..] } else { rest };
            if let Some((name, file, line, column)) = crate::folded::split_location(rest) {
                return (name, file, line, column, FuncKind::Js, tier);
            }
            let (name, location) = rest.rsplit_once(' ').unwrap_or((rest, ""));
            let (file, line, column) = crate::folded::strip_position(location);
            (name, file, line, column, FuncKind::Js, tier)
        }
        "Builtin" | "BytecodeHandler" | "Stub" | "Handler" | "BuiltinContinuation" => {
            plain(if kind == "Builtin" { rest } else { code }, FuncKind::Builtin)
        }
        "RegExp" => plain(code, FuncKind::Regexp),
        _ => plain(code, FuncKind::Native),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Profile, ParseError> {
        parse(text.as_bytes(), &Origin("t.perf".into()), &ParseOptions::default())
    }

    #[test]
    fn samples_keep_their_times_and_stacks_in_order() {
        assert_eq!(seconds_to_ns("1755.885379"), Some(1_755_885_379_000));
        assert_eq!(seconds_to_ns("2.000000001"), Some(2_000_000_001));
        assert_eq!(seconds_to_ns("x.5"), None);
        // b twice (one stack served to inferno once), a `cycles` sample between, then a.
        let text = "node 1 10.000000: 1000000 cpu-clock:ppp:\n\t1 b (/x)\n\t2 main (/x)\n\n\
                    node 1 10.001000: 3000000 cpu-clock:ppp:\n\t1 b (/x)\n\t2 main (/x)\n\n\
                    node 1 10.002000: 77 cycles:\n\t1 c (/x)\n\n\
                    node 1 10.004000: 1000000 cpu-clock:ppp:\n\t3 a (/x)\n\t2 main (/x)\n";
        let p = parse_str(text).unwrap();
        assert_eq!(p.value_types, vec![ValueType::SAMPLES, ValueType::CPU_NS]);
        let timeline = p.samples.timeline().expect("a timeline");
        let mut seen = Vec::new();
        timeline.for_each(|s| {
            let name = p.strings.get(p.funcs[p.func_of(p.samples.stacks()[s.row as usize])].name).to_owned();
            seen.push((s.time_ns, s.weight_ns, name));
        });
        let ns = |ms: i64| 10_000_000_000 + ms * 1_000_000;
        let expected = [(ns(0), 1_000_000, "b"), (ns(1), 3_000_000, "b"), (ns(4), 1_000_000, "a")];
        assert_eq!(seen, expected.map(|(t, w, n)| (t, w, n.to_owned())));
        assert_eq!((p.meta.start_ns, p.meta.duration_ns), (Some(ns(0)), Some(5_000_000)));
    }

    #[test]
    fn event_lines_as_inferno_reads_them() {
        let cases: &[(&str, Option<&str>, Option<&str>)] = &[
            ("node 22755   392.639308:    1001001 cpu-clock:ppp: ", Some("cpu-clock"), Some("1001001")),
            ("java  3244 cpu-clock: ", Some(""), None),
            ("perf   977/977   [000] 7628263.042515: cycles: ", Some("cycles"), None),
            ("V8 WorkerThread 24636/25607 [000] 94564.109216: 12 cycles:u: ", Some("cycles"), Some("12")),
            ("Gecko 25122 [007] 115539.936601:  1000000 task-clock:u:", Some("task-clock"), Some("1000000")),
            (
                "false 64414 20110.539270:      34467 cycles:u:  ffffffff9aa3c8de [unknown] ([unknown])",
                Some("cycles"),
                Some("34467"),
            ),
        ];
        for (line, event, period) in cases {
            let parsed = event_line(line);
            assert_eq!(parsed.as_ref().and_then(|e| e.event), *event, "{line}");
            assert_eq!(parsed.and_then(|e| e.period).map(|(s, e)| &line[s..e]), *period, "{line}");
        }
        assert!(event_line("nodigits here:").is_none());
    }

    #[test]
    fn v8_names_become_functions_with_tiers() {
        let cases: &[(&str, Parts<'_>)] = &[
            ("JS:*fib /tmp/w.js:1:13", ("fib", "/tmp/w.js", Some(1), Some(13), FuncKind::Js, Some(Tier::TurboFan))),
            (
                "JS:~ node:internal/main/run_main_module:1:1",
                ("", "node:internal/main/run_main_module", Some(1), Some(1), FuncKind::Js, Some(Tier::Interpreted)),
            ),
            (
                "LazyCompile:~work /a b/x.js:4",
                ("work", "/a b/x.js", Some(4), None, FuncKind::Js, Some(Tier::Interpreted)),
            ),
            ("Builtin:ArrayMap", ("ArrayMap", "", None, None, FuncKind::Builtin, None)),
            ("BytecodeHandler:Ldar", ("BytecodeHandler:Ldar", "", None, None, FuncKind::Builtin, None)),
            ("RegExp:^a+$", ("RegExp:^a+$", "", None, None, FuncKind::Regexp, None)),
        ];
        for (code, expected) in cases {
            assert_eq!(v8_code(code), *expected, "{code}");
        }
    }

    #[test]
    fn stacks_fold_through_inferno_one_count_per_sample() {
        let text = "# ========\n# cmdline : perf record -g\n#\n\
            node 7 1.000001:    1001001 cpu-clock:ppp: \n\
            \t    7f92a8005c1d JS:*fib /tmp/w.js:1:13+0x9d (/tmp/perf-7.map)\n\
            \t    7f92a8005c5e JS:^work /tmp/w.js:2:14+0xde (/tmp/perf-7.map)\n\
            \t          871ec4 node::Start+0x154 (/usr/bin/node)\n\n\
            node 7 1.000002:    1001001 cpu-clock:ppp: \n\
            \tffffffff8158e7b1 filemap_map_pages+0x1d1 ([kernel.kallsyms])\n\
            \t          871ec4 node::Start(int, char**)+0x154 (/usr/bin/node)\n\n\
            node 7 1.000003:    1001001 cpu-clock:ppp: \n\
            \t    7f92a8005c1d JS:*fib /tmp/w.js:1:13+0x9d (/tmp/perf-7.map)\n\
            \t    7f92a8005c5e JS:^work /tmp/w.js:2:14+0xde (/tmp/perf-7.map)\n\
            \t          871ec4 node::Start+0x154 (/usr/bin/node)\n\n\
            node 7 1.000004:          3 page-faults: \n\
            \t            3886 [unknown] (/usr/lib/libgcc_s.so.1)\n\n\
            node 7 1.000005:    1001001 cpu-clock:ppp: \n\
            \t            3886 [unknown] (/usr/lib/libgcc_s.so.1)\n\
            \t         1a0ac0 [unknown] ([unknown])\n";
        // Served whole, one event a chunk, and with room for only the first stack's key (the
        // others served each time they come).
        let origin = Origin("t.perf".into());
        let whole = parse_str(text).unwrap();
        let chunked = parse_in_chunks(text.as_bytes(), &origin, &ParseOptions::default(), 1).unwrap();
        let unkeyed = parse_in_chunks(text.as_bytes(), &origin, &with_value_limit(260), 1).unwrap();
        for p in [whole, chunked, unkeyed] {
            check_folded(&p);
        }
    }

    fn check_folded(p: &Profile) {
        assert_eq!(p.meta.format, SourceFormat::PerfScript);
        let mut stacks: Vec<(String, i64)> = (0..p.samples.len())
            .map(|i| {
                let mut frames: Vec<String> = p
                    .stacks
                    .walk(p.samples.stacks()[i])
                    .map(|frame| {
                        let f = p.funcs[p.frames[frame].func];
                        format!("{}:{}", p.strings.get(f.name), f.kind.as_str())
                    })
                    .collect();
                frames.reverse();
                (frames.join(";"), p.samples.values(0)[i])
            })
            .collect();
        stacks.sort();
        assert_eq!(
            stacks,
            vec![
                ("node:other;[unknown]:unknown;[libgcc_s.so.1]:shared-lib".to_owned(), 1),
                ("node:other;node::Start:native;filemap_map_pages:native".to_owned(), 1),
                ("node:other;node::Start:native;work:js;fib:js".to_owned(), 2),
            ]
        );
        let warnings: Vec<&str> = p.meta.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(
            warnings,
            vec!["read only the samples of the first event type, `cpu-clock`, as inferno does: skipped 1 `page-faults` samples"]
        );
    }

    #[test]
    fn names_that_are_not_ascii_survive_inferno() {
        // An `ä` 10 bytes from the end of a name made inferno 0.12 panic.
        let text = "node 7 1.5: cpu-clock: \n\t 7f00 JS:*grüße /tmp/ä/x.js:12:3+0x9d (/tmp/perf-7.map)\n\
                    \t 7f01 \u{1}weird\u{2}\u{fffd} (/usr/bin/node)\n\t 7f02 main_1234567890ab\u{e4} (/usr/bin/node)\n\t 7f03 JS:*ä1234567890abcdef+0x9d (/tmp/perf-7.map)\n";
        let p = parse_str(text).unwrap();
        let names: Vec<(&str, &str)> =
            p.funcs.as_slice().iter().map(|f| (p.strings.get(f.name), p.strings.get(f.file))).collect();
        assert_eq!(
            names,
            vec![
                ("node", ""),
                ("ä1234567890abcdef", ""),
                ("main_1234567890ab\u{e4}", ""),
                ("\u{1}weird\u{2}\u{fffd}", ""),
                ("grüße", "/tmp/ä/x.js")
            ]
        );
        assert_eq!(from_ascii("a\u{1}e4\u{2}b\u{1}zz\u{2}\u{1}41"), "aäb\u{fffd}A");
    }

    fn comm_bytes(comm: &[u8]) -> Vec<u8> {
        let mut text = Vec::new();
        for _ in 0..3 {
            text.extend_from_slice(comm);
            text.extend_from_slice(
                b" 4242 1.000001:    1001001 cpu-clock:ppp: \n\t    7f92a8005c1d fib (/usr/bin/node)\n\n",
            );
        }
        text
    }

    #[test]
    fn process_names_that_are_not_utf8_keep_their_samples() {
        // The kernel cuts `comm` at 15 bytes, often inside a character; `\xff` is no UTF-8 at all.
        let cut = "abcdefghijklmn\u{1f600}".as_bytes()[..15].to_vec();
        for comm in [cut, b"nod\xff".to_vec(), "n\u{e4}de".as_bytes().to_vec()] {
            let p = parse(&comm_bytes(&comm)[..], &Origin("t.perf".into()), &ParseOptions::default()).unwrap();
            assert_eq!(p.samples.len(), 1, "{comm:?}");
            assert_eq!(p.samples.values(0).iter().sum::<i64>(), 3, "{comm:?}");
            let names: Vec<&str> = p.funcs.as_slice().iter().map(|f| p.strings.get(f.name)).collect();
            let expected = String::from_utf8_lossy(&comm).into_owned();
            assert_eq!(names, vec![expected.as_str(), "fib"], "{comm:?}");
            assert!(p.meta.warnings.is_empty(), "{:?}", p.meta.warnings);
        }
    }

    fn with_value_limit(value: usize) -> ParseOptions {
        let mut limits = ParseOptions::default().limits();
        limits.value = value;
        ParseOptions { test_limits: Some(limits), ..ParseOptions::default() }
    }

    #[test]
    fn a_line_longer_than_the_limit_is_too_large() {
        let origin = Origin("t.perf".into());
        let line = format!("node 7 1.5: cpu-clock: \n\t 7f00 {} (/usr/bin/node)\n", "f".repeat(200));
        let error = parse(line.as_bytes(), &origin, &with_value_limit(100)).unwrap_err();
        assert!(matches!(error.kind, ParseErrorKind::TooLarge { .. }), "{error}");
        assert!(error.to_string().starts_with("t.perf:2:1: "), "{error}");
        // The same as a folded line over the limit.
        let folded =
            crate::folded::parse(format!("{} 1\n", "f".repeat(200)).as_bytes(), &origin, &with_value_limit(100));
        assert_eq!(error.to_string(), folded.unwrap_err().to_string().replace("t.perf:1:1", "t.perf:2:1"));
        // Before the first event line too, in the header, and in a character that is not ASCII.
        let header = format!("# {}\n{line}", "#".repeat(200));
        let error = parse(header.as_bytes(), &origin, &with_value_limit(100)).unwrap_err();
        assert!(error.to_string().starts_with("t.perf:1:1: "), "{error}");
        let euro = format!("node 7 1.5: cpu-clock: \n\t 7f00 {} (/usr/bin/node)\n", "\u{20ac}".repeat(40));
        let error = parse(euro.as_bytes(), &origin, &with_value_limit(100)).unwrap_err();
        assert!(matches!(error.kind, ParseErrorKind::TooLarge { .. }), "{error}");
        // A line of just the limit (224 bytes, its newline included) is read, and then its event
        // (its event line and it) is over the same limit; 248 bytes hold both.
        let error = parse(line.as_bytes(), &origin, &with_value_limit(224)).unwrap_err();
        assert_eq!(error.to_string(), "t.perf:1:1: an event exceeds the limit of 224 bytes");
        parse(line.as_bytes(), &origin, &with_value_limit(248)).unwrap();
    }

    #[test]
    fn an_event_is_bounded_in_frames_and_bytes() {
        let origin = Origin("t.perf".into());
        let limits = |value: usize, event_frames: usize| {
            let mut limits = ParseOptions::default().limits();
            (limits.value, limits.event_frames) = (value, event_frames);
            ParseOptions { test_limits: Some(limits), ..ParseOptions::default() }
        };
        // A first event of 2 frames, then one of `n` frames of 10 bytes each (`\t 7f00 f (/x)\n`
        // is 14), its event line on line 5.
        let text = |n: usize| {
            let mut text = "node 7 1.5: cpu-clock: \n\t 7f00 g (/x)\n\t 7f01 h (/x)\n\n".to_owned();
            text.push_str("node 7 1.6: cpu-clock: \n");
            text.push_str(&"\t 7f00 f (/x)\n".repeat(n));
            text
        };
        let p = parse(text(10).as_bytes(), &origin, &limits(1000, 10)).unwrap();
        assert_eq!(p.samples.len(), 2);
        let e = parse(text(11).as_bytes(), &origin, &limits(1000, 10)).unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::TooLarge { .. }), "{e}");
        assert_eq!(e.to_string(), "t.perf:5:1: an event exceeds the limit of 10 frames");
        // 24 bytes of event line and 14 per frame: 10 frames are 164 bytes.
        parse(text(10).as_bytes(), &origin, &limits(164, 100)).unwrap();
        let e = parse(text(10).as_bytes(), &origin, &limits(163, 100)).unwrap_err();
        assert_eq!(e.to_string(), "t.perf:5:1: an event exceeds the limit of 163 bytes");
        // Comment lines inside an event count as its bytes (not its frames).
        let commented = text(2).replace("\t 7f00 f", "# a comment line of a few bytes\n\t 7f00 f");
        parse(commented.as_bytes(), &origin, &limits(1000, 2)).unwrap();
        let e = parse(commented.as_bytes(), &origin, &limits(100, 2)).unwrap_err();
        assert_eq!(e.to_string(), "t.perf:5:1: an event exceeds the limit of 100 bytes");
    }

    #[test]
    fn stacks_are_told_apart_while_their_keys_fit_and_the_samples_are_bounded() {
        // Keys of 29 bytes (`node\0cpu-clock\0` and the stack line): 60 bytes hold two.
        let event = |f: &str| format!("node 7 1.5: cpu-clock: \n\t 7f00 {f} (/x)\n\n");
        let text = ["a", "b", "c", "c", "a"].map(event).concat();
        let ids = |limit: usize| {
            let mut events = Events::new(text.as_bytes(), limit, 10, 100);
            while events.fill_buf().unwrap() != b"" {
                events.consume(usize::MAX);
            }
            (events.next_id, events.kept.iter().map(|k| k.id).collect::<Vec<_>>())
        };
        assert_eq!(ids(1000), (3, vec![0, 1, 2, 2, 0]));
        assert_eq!(ids(60), (4, vec![0, 1, 2, 3, 0]));
        let p = parse_in_chunks(text.as_bytes(), &Origin("t.perf".into()), &with_value_limit(60), 1).unwrap();
        let mut counts = p.samples.values(0).to_vec();
        counts.sort_unstable();
        assert_eq!(counts, vec![1, 2, 2]);
        let mut limits = ParseOptions::default().limits();
        limits.samples = 4;
        let options = ParseOptions { test_limits: Some(limits), ..ParseOptions::default() };
        let e = parse(text.as_bytes(), &Origin("t.perf".into()), &options).unwrap_err();
        assert_eq!(e.to_string(), "t.perf: the profile exceeds the limit of 4 samples");
    }

    #[test]
    fn comment_lines_before_the_first_event_are_not_kept() {
        let mut text = "# a comment line of the header, repeated\n\n".repeat(10_000).into_bytes();
        text.extend_from_slice(&comm_bytes(b"node"));
        let mut events = Events::new(&text[..], 1000, 10, 100);
        assert_eq!(events.first_event().unwrap().as_deref(), Some("cpu-clock"));
        assert_eq!(events.line, b"node 4242 1.000001:            cpu-clock:ppp: \n");
        assert!(events.line.capacity() < 1000, "{}", events.line.capacity());
        let p = parse(&text[..], &Origin("t.perf".into()), &ParseOptions::default()).unwrap();
        assert_eq!(p.samples.values(0).iter().sum::<i64>(), 3);
    }

    #[test]
    fn what_is_not_perf_script_is_refused() {
        let error = parse_str("# only a header\n\n").unwrap_err().to_string();
        assert_eq!(error, "t.perf: no samples: the perf script output holds no event line");
        let error = parse_str("#\nhello world\n\tstack (x)\n").unwrap_err().to_string();
        assert_eq!(error, "t.perf:2:1: expected a perf script event line (`COMMAND PID TIME: [PERIOD] EVENT:`)");
        assert!(sniff(b"# ========\n#\nnode 7 1.5: 10 cpu-clock: \n\t  7f00 main (/usr/bin/node)\n"));
        assert!(sniff(b"java  3244 cpu-clock: \n\t    7f1e214c24d9 SpinPause (/x/libjvm.so)\n"));
        assert!(!sniff(b"a;b;c 42\n"));
        assert!(!sniff(b"# austin: 3.3.0\nP1;T1;f 12\n"));
        assert!(!sniff(b"node 7 1.5: 10 cpu-clock: \n"));
    }
}
