//! V8 tick logs (`node --prof`, `isolate-*-v8.log`) → the unified model.
//!
//! The log is read in chunks of whole lines. Each chunk's tick lines are parsed in parallel
//! (stage one, [`lines`]) while the previous chunk is replayed in order (stage two, here):
//! code events update the code map, and each tick's addresses become a stack. A tick whose
//! addresses, flags and VM state were already seen under the same code map reuses that
//! stack, so the map is consulted once per distinct raw stack, not once per frame.
//!
//! Attribution follows `node --prof-process` (V8's tick processor) where it is right:
//! one sample per tick; frame 0 is the pc, or the external callback when V8 was in one; the
//! top-of-stack value counts only when it is a JavaScript function; bytecode-handler frames
//! are skipped so that interpreted time lands on the function; a frame 0 that nothing covers
//! is "unaccounted", other unknown frames are dropped. Where it is wrong, it is not copied:
//! C++ symbols come from the ELF files themselves (not from truncated `nm` output placed
//! 4 MiB too low), builtins are found inside the binary and in V8's remapped copy of them,
//! empty and CRLF-ended lines do not stop or spoil the replay, and names with raw commas or
//! line breaks are put back together.

mod codemap;
mod lines;
mod names;

use std::collections::BTreeSet;
use std::io::{BufRead, Read};
use std::sync::Arc;

use cpuprof_model::{
    Frame, FrameId, Func, FuncKind, Library, Profile, ProfileBuilder, SourceFormat, StackId, StrId, Tier, ValueType,
    VmState,
};
use cpuprof_symbols::SymbolFile;
use hashbrown::HashTable;
use rustc_hash::FxHashMap;

use self::codemap::{Code, DynamicCode, Entry, Libraries, Name, NoSymbols};
use self::lines::{Batch, Item, Tick};
use self::names::{split_js_name, unescape};
use crate::{Origin, ParseError, ParseErrorKind, ParseOptions, Span};

/// Bytes read per chunk (small in tests, so that they cross chunk boundaries).
const CHUNK: usize = if cfg!(test) { 1 << 16 } else { 8 << 20 };
/// A line longer than this is not a tick log line.
const MAX_LINE: usize = if cfg!(test) { 1 << 20 } else { 64 << 20 };
/// V8's sampling interval when the log does not say (`--prof-sampling-interval` default).
const DEFAULT_INTERVAL_US: i64 = 1000;
/// Raw stack keys kept for reuse before the cache starts over (in 8-byte words).
const CACHE_WORDS: usize = 16 << 20;

/// The line tags that start a tick log, for sniffing.
pub(crate) const TAGS: [&str; 8] =
    ["v8-version,", "v8-platform,", "shared-library,", "code-creation,", "tick,", "profiler,", "heap-", "new,"];

pub(crate) fn parse(
    reader: impl BufRead + Send,
    origin: &Origin,
    options: &ParseOptions,
) -> Result<Profile, ParseError> {
    let mut decoder = Decoder::new(options);
    let mut input = Input { reader, carry: Vec::new(), read: 0, skipping: false, long_lines: 0, damaged: None };
    let mut next = input.chunk(origin)?;
    while let Some((chunk, batches)) = next.take() {
        let ((), read) = rayon::join(|| decoder.replay(&chunk, &batches), || input.chunk(origin));
        next = read?;
    }
    decoder.finish(&input, origin)
}

/// The bytes of whole lines, and their lines parsed.
type Chunk = (Vec<u8>, Vec<Batch>);

/// Stands in for a line too long to keep: an unknown record, so the replay ignores it but
/// still counts the line.
const LONG_LINE: &[u8] = b"\x01long line\n";

/// The input, cut into chunks of whole lines.
struct Input<R> {
    reader: R,
    /// The start of a line the last chunk did not finish.
    carry: Vec<u8>,
    read: u64,
    /// Inside a line longer than [`MAX_LINE`], dropping it.
    skipping: bool,
    long_lines: u64,
    /// Why reading stopped early (a damaged or cut-off gzip stream), after `read` bytes.
    damaged: Option<String>,
}

impl<R: Read> Input<R> {
    /// About [`CHUNK`] bytes of whole lines, their ticks parsed; `None` at the end.
    fn chunk(&mut self, origin: &Origin) -> Result<Option<Chunk>, ParseError> {
        let mut chunk = std::mem::take(&mut self.carry);
        chunk.reserve(CHUNK);
        let mut searched = 0;
        loop {
            let before = chunk.len();
            let eof = self.damaged.is_some() || self.fill(&mut chunk, origin)? == 0;
            if self.skipping {
                if let Some(nl) = memchr::memchr(b'\n', &chunk) {
                    chunk.drain(..=nl);
                    chunk.splice(0..0, LONG_LINE.iter().copied());
                    self.skipping = false;
                    searched = 0;
                } else {
                    chunk.clear();
                    if eof {
                        return Ok(None);
                    }
                    continue;
                }
            }
            if let Some(last_nl) = memchr::memrchr(b'\n', &chunk[searched..]).map(|i| searched + i) {
                if chunk.len() >= CHUNK || eof {
                    self.carry = chunk.split_off(last_nl + 1);
                    let batches = lines::parse_chunk(&chunk);
                    return Ok(Some((chunk, batches)));
                }
            } else if chunk.len() > MAX_LINE {
                // A line no tick log needs (a huge `script-source`): skip it, not the log.
                self.long_lines += 1;
                self.skipping = true;
                chunk.clear();
                searched = 0;
                continue;
            } else {
                searched = before.min(chunk.len());
            }
            if eof {
                self.carry = chunk;
                return Ok(None);
            }
        }
    }

    /// Reads up to [`CHUNK`] more bytes; 0 at the end. A stream that turns out damaged after
    /// some good bytes (a gzip file cut short) ends there, with a warning.
    fn fill(&mut self, chunk: &mut Vec<u8>, origin: &Origin) -> Result<usize, ParseError> {
        let before = chunk.len();
        match (&mut self.reader).take(CHUNK as u64).read_to_end(chunk) {
            Ok(n) => {
                self.read += n as u64;
                Ok(n)
            }
            Err(e) if self.read + (chunk.len() - before) as u64 > 0 => {
                let n = chunk.len() - before;
                self.read += n as u64;
                self.damaged = Some(e.to_string());
                Ok(n)
            }
            Err(e) => Err(ParseErrorKind::Io(e).at(origin, Span::None)),
        }
    }
}

/// Why a line was skipped, with the first line it happened on.
#[derive(Default)]
struct Skipped {
    count: u64,
    first: Option<(u64, String)>,
}

impl Skipped {
    fn note(&mut self, line: u64, why: impl FnOnce() -> String) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some((line, why()));
        }
    }
}

/// A JavaScript code-creation line without its function's address and tier: its name held a
/// raw line break, so the rest follows on the next physical line(s).
struct Pending {
    line: u64,
    text: String,
    parts: u32,
}

/// A function name with more raw line breaks than this is not put back together.
const MAX_NAME_LINES: u32 = 8;

/// How [`Decoder::code_creation`] treats a JavaScript line without function address and tier.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Incomplete {
    /// Hold it back: the next line may be the rest of its name.
    HoldBack,
    /// It was put together from several lines: fail, to try one more.
    Fail,
    /// Nothing more is coming: code without a function, as V8's tick processor keeps it.
    Keep,
}

/// The record tags of node 20's logs: a line starting with one is not the rest of a name.
const RECORD_TAGS: [&str; 22] = [
    "v8-version",
    "v8-platform",
    "shared-library",
    "shared-library-end",
    "profiler",
    "heap-capacity",
    "heap-available",
    "new",
    "delete",
    "code-creation",
    "code-move",
    "code-delete",
    "sfi-move",
    "code-source-info",
    "script-source",
    "script-details",
    "code-deopt",
    "timer-event-start",
    "timer-event-end",
    "current-time",
    "tick",
    "code-disable-optimization",
];

/// A stack cache entry: the raw key lives in `Decoder::keys`.
struct Cached {
    hash: u64,
    generation: u32,
    key_start: u32,
    key_len: u32,
    row: u32,
}

/// A resolved stack (frames leaf first in `Decoder::known_frames`) and its id.
struct Known {
    hash: u64,
    start: u32,
    len: u32,
    stack: StackId,
}

/// What an address turned out to be.
#[derive(Clone, Copy)]
enum Resolved {
    Found(FrameId, Code),
    Miss,
}

/// Stage two: the replay, in file order.
struct Decoder {
    builder: ProfileBuilder,
    split_tiers: bool,
    line: u64,
    code: DynamicCode,
    libraries: Libraries,
    code_range: Option<u64>,
    /// Bumped on every change of the code map: cached stacks of older generations are stale.
    generation: u32,
    /// Every address resolved so far, ordered to find those a code event changes.
    seen: BTreeSet<u64>,
    /// What each address in `seen` resolved to.
    resolved: FxHashMap<u64, Resolved>,
    cache: HashTable<Cached>,
    keys: Vec<u64>,
    /// `(stack, state)` of each sample row, and its ticks.
    rows: Vec<(StackId, VmState)>,
    row_index: FxHashMap<(StackId, VmState), u32>,
    row_ticks: Vec<i64>,
    /// Per tick (with `timeline`): row and time.
    timeline: Option<Vec<(u32, i64)>>,
    scratch: Vec<FrameId>,
    /// Every stack built, by its frames.
    known: HashTable<Known>,
    known_frames: Vec<FrameId>,
    /// The last stack built, root first.
    last_path: Vec<(FrameId, StackId)>,
    unaccounted: Option<FrameId>,
    interval_us: Option<i64>,
    ticks: u64,
    time_range: Option<(i64, i64)>,
    version: Option<(u64, String)>,
    /// A code-creation line cut short by a raw line break in its name, waiting for its rest.
    pending: Option<Pending>,
    crlf: u64,
    /// The first empty line and how many there were.
    empty: Option<(u64, u64)>,
    malformed: Skipped,
    unknown_moves: Skipped,
    /// The leaf frame of each row, to count ticks per library.
    row_leaf: Vec<FrameId>,
}

impl Decoder {
    fn new(options: &ParseOptions) -> Self {
        Decoder {
            builder: ProfileBuilder::new(SourceFormat::TickLog, vec![ValueType::SAMPLES, ValueType::WALL_NS]),
            split_tiers: options.split_tiers,
            line: 0,
            code: DynamicCode::default(),
            libraries: Libraries::new(options.symbols_root.clone()),
            code_range: None,
            generation: 0,
            seen: BTreeSet::new(),
            resolved: FxHashMap::default(),
            cache: HashTable::new(),
            keys: Vec::new(),
            rows: Vec::new(),
            row_index: FxHashMap::default(),
            row_ticks: Vec::new(),
            timeline: options.timeline.then(Vec::new),
            scratch: Vec::new(),
            last_path: Vec::new(),
            known: HashTable::new(),
            known_frames: Vec::new(),
            unaccounted: None,
            interval_us: None,
            ticks: 0,
            time_range: None,
            version: None,
            pending: None,
            crlf: 0,
            empty: None,
            malformed: Skipped::default(),
            unknown_moves: Skipped::default(),
            row_leaf: Vec::new(),
        }
    }

    fn replay(&mut self, chunk: &[u8], batches: &[Batch]) {
        for batch in batches {
            self.crlf += batch.crlf;
            for item in &batch.items {
                self.line += 1;
                match item {
                    Item::Tick(tick) => {
                        self.settle_pending();
                        self.tick(tick, batch.frames(tick));
                    }
                    Item::Other(start, end) => self.other(&chunk[*start as usize..*end as usize]),
                }
            }
        }
    }

    /// No rest is coming for a held-back line: keep its code without a function.
    fn settle_pending(&mut self) {
        if let Some(pending) = self.pending.take() {
            let fields: Vec<&str> = pending.text.split(',').collect();
            if !self.code_creation(&fields, Incomplete::Keep) {
                self.malformed.note(pending.line, || "a code-creation line with missing or malformed fields".into());
            }
        }
    }

    fn other(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            self.empty.get_or_insert((self.line, 0)).1 += 1;
            return;
        }
        let mut text = String::from_utf8_lossy(bytes);
        if self.line == 1 {
            if let Some(rest) = text.strip_prefix('\u{feff}') {
                text = rest.to_owned().into();
            }
        }
        let tag = text.split(',').next().unwrap_or_default();
        if let Some(mut pending) = self.pending.take() {
            if RECORD_TAGS.contains(&tag) {
                self.pending = Some(pending);
                self.settle_pending();
            } else {
                // The rest of a code-creation line whose function name held a raw line break.
                pending.text.push('\n');
                pending.text.push_str(&text);
                pending.parts += 1;
                let fields: Vec<&str> = pending.text.split(',').collect();
                if self.code_creation(&fields, Incomplete::Fail) {
                    return;
                }
                if pending.parts < MAX_NAME_LINES {
                    self.pending = Some(pending);
                } else {
                    self.malformed.note(pending.line, || "a code-creation line whose name never ends".into());
                }
                return;
            }
        }
        let fields: Vec<&str> = text.split(',').collect();
        let line = self.line;
        let ok = match fields[0] {
            "v8-version" => {
                if self.version.is_none() {
                    self.version = Some((line, fields[1..].join(".")));
                }
                true
            }
            "shared-library" => {
                match (fields.get(1), fields.get(2).and_then(|f| address(f)), fields.get(3).and_then(|f| address(f))) {
                    (Some(path), Some(start), Some(end)) if start < end => {
                        self.libraries.add(&unescape(path), start, end);
                        self.changed(None);
                        true
                    }
                    _ => false,
                }
            }
            "profiler" => {
                if fields.get(1) == Some(&"begin") {
                    match fields.get(2).and_then(|f| f.parse::<i64>().ok()).filter(|i| *i > 0) {
                        Some(interval) => self.interval_us = Some(interval),
                        None => {
                            return self.malformed.note(line, || "a profiler,begin line without an interval".into())
                        }
                    }
                }
                true
            }
            "new" => {
                if fields.get(1) == Some(&"CodeRange") && self.code_range.is_none() {
                    self.code_range = fields.get(2).and_then(|f| address(f));
                    self.changed(None);
                }
                true
            }
            "code-creation" => self.code_creation(&fields, Incomplete::HoldBack),
            "code-move" => match (fields.get(1).and_then(|f| address(f)), fields.get(2).and_then(|f| address(f))) {
                (Some(from), Some(to)) => {
                    match self.code.move_code(from, to) {
                        Some([gone, arrived]) => {
                            self.changed(Some(gone));
                            self.changed(Some(arrived));
                        }
                        None => self.unknown_moves.note(line, || format!("{from:#x}")),
                    }
                    true
                }
                _ => false,
            },
            "code-delete" => match fields.get(1).and_then(|f| address(f)) {
                Some(start) => {
                    if let Some(gone) = self.code.delete(start) {
                        self.changed(Some(gone));
                    }
                    true
                }
                None => false,
            },
            "tick" => false,
            // Other records (heap events, script sources, deopts, timers, sfi-move: functions
            // are named by their code here, not by their shared info) do not matter to stacks.
            _ => true,
        };
        if !ok {
            let tag = fields[0].to_owned();
            self.malformed.note(line, || format!("a `{}` line with missing or malformed fields", visible(&tag)));
        }
    }

    /// `code-creation,type,kind,time,start,size,name[,sfi,state]`; `incomplete` says what to
    /// do with a JavaScript line without sfi and state. False when malformed.
    fn code_creation(&mut self, fields: &[&str], incomplete: Incomplete) -> bool {
        let n = fields.len();
        if n < 7 {
            return false;
        }
        let kind = fields[1];
        let (Some(start), Some(size)) = (address(fields[4]), fields[5].parse::<u64>().ok()) else { return false };
        let no_function = matches!(kind, "Builtin" | "BytecodeHandler" | "RegExp" | "Stub" | "Handler");
        let with_function = !no_function
            && n >= 9
            && address(fields[n - 2]).is_some()
            && matches!(fields[n - 1], "" | "~" | "^" | "+" | "*" | "-");
        let name = if with_function { fields[6..n - 2].join(",") } else { fields[6..].join(",") };
        if name.contains("code-creation,") || name.contains(",tick,") {
            // Two isolates writing one log (`--no-logfile-per-isolate`) tore lines into each
            // other: no name to recover.
            return false;
        }
        let js_kind = matches!(kind, "JS" | "Eval" | "Script" | "Function" | "LazyCompile" | "InterpretedFunction");
        if js_kind && !with_function {
            match incomplete {
                Incomplete::HoldBack => {
                    self.pending = Some(Pending { line: self.line, text: fields.join(","), parts: 1 });
                    return true;
                }
                Incomplete::Fail => return false,
                Incomplete::Keep => {}
            }
        }
        // Named when a tick first needs it (see `Entry`): until then only its text is kept.
        let plain = |text: String, kind| Name::Plain { text: text.into(), kind };
        let (name, code) = match kind {
            "Builtin" => (plain(name, FuncKind::Builtin), Code::Builtin),
            "BytecodeHandler" => (plain(format!("BytecodeHandler:{name}"), FuncKind::Builtin), Code::BytecodeHandler),
            "RegExp" => (plain(format!("/{}/", unescape(&name)), FuncKind::Regexp), Code::Other),
            _ if with_function => {
                let tier = match fields[n - 1].as_bytes() {
                    [marker] if self.split_tiers => Tier::from_marker(*marker),
                    _ => None,
                };
                (Name::Js { text: unescape(&name).into(), tier }, Code::Js)
            }
            // Code of a JavaScript kind without its function (never a top-of-stack function).
            _ if js_kind => (Name::Js { text: unescape(&name).into(), tier: None }, Code::Other),
            _ => (plain(format!("{kind}: {}", unescape(&name)), FuncKind::Other), Code::Other),
        };
        let span = self.code.add(start, Entry { size, code, name });
        // Builtins also decide what addresses in their remapped copies mean.
        self.changed(if matches!(code, Code::Builtin | Code::BytecodeHandler) { None } else { Some(span) });
        true
    }

    fn plain_func(&mut self, name: &str, kind: FuncKind) -> cpuprof_model::FuncId {
        plain_func(&mut self.builder, name, kind)
    }

    /// The frame and kind of the code covering `address`, naming it if no tick did before.
    fn code_at(&mut self, address: u64) -> Option<(FrameId, Code)> {
        let entry = self.code.find(address)?;
        let frame = match &entry.name {
            Name::Frame(frame) => *frame,
            Name::Plain { text, kind } => {
                let func = plain_func(&mut self.builder, text, *kind);
                self.builder.frame(Frame { func, line: None, column: None })
            }
            Name::Js { text, tier } => {
                let func = js_func(&mut self.builder, text, *tier);
                self.builder.frame(Frame { func, line: None, column: None })
            }
        };
        entry.name = Name::Frame(frame);
        Some((frame, entry.code))
    }

    /// The code at `span` (`None`: anywhere) changed. Cached stacks go stale only if one of
    /// them holds an address there: new code in fresh memory, the usual case, keeps them.
    fn changed(&mut self, span: Option<codemap::Span>) {
        let stale: Vec<u64> = match span {
            Some((start, end)) => self.seen.range(start..end).copied().collect(),
            None => std::mem::take(&mut self.seen).into_iter().collect(),
        };
        if stale.is_empty() && span.is_some() {
            return;
        }
        for address in stale {
            self.seen.remove(&address);
            self.resolved.remove(&address);
        }
        self.generation = self.generation.wrapping_add(1);
    }

    fn tick(&mut self, tick: &Tick, frames: &[u64]) {
        self.ticks += 1;
        let t = tick.time_us;
        self.time_range = Some(self.time_range.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
        let head = [tick.pc, tick.tos, u64::from(tick.state) << 1 | u64::from(tick.external)];
        let keys = &self.keys;
        let same = |c: &Cached| {
            c.hash == tick.hash && {
                let key = &keys[c.key_start as usize..(c.key_start + c.key_len) as usize];
                key.len() == head.len() + frames.len() && key[..3] == head && key[3..] == *frames
            }
        };
        let generation = self.generation;
        let row = match self.cache.find(tick.hash, same) {
            Some(c) if c.generation == generation => c.row,
            found => {
                let stale = found.is_some();
                let (stack, leaf) = self.stack_of(tick, frames);
                let row = self.row_of(stack, leaf, VmState::from_tag(i64::from(tick.state)));
                if stale {
                    if let Some(c) = self.cache.find_mut(tick.hash, |c| {
                        c.hash == tick.hash && {
                            let key = &self.keys[c.key_start as usize..(c.key_start + c.key_len) as usize];
                            key[..3] == head && key[3..] == *frames
                        }
                    }) {
                        c.generation = generation;
                        c.row = row;
                    }
                } else {
                    if self.keys.len() + head.len() + frames.len() > CACHE_WORDS {
                        self.keys.clear();
                        self.cache.clear();
                        self.seen.clear();
                        self.resolved.clear();
                    }
                    let key_start = self.keys.len() as u32;
                    self.keys.extend_from_slice(&head);
                    self.keys.extend_from_slice(frames);
                    let cached = Cached {
                        hash: tick.hash,
                        generation,
                        key_start,
                        key_len: (head.len() + frames.len()) as u32,
                        row,
                    };
                    self.cache.insert_unique(tick.hash, cached, |c| c.hash);
                }
                row
            }
        };
        self.row_ticks[row as usize] += 1;
        if let Some(timeline) = &mut self.timeline {
            timeline.push((row, t));
        }
    }

    fn row_of(&mut self, stack: StackId, leaf: FrameId, state: VmState) -> u32 {
        *self.row_index.entry((stack, state)).or_insert_with(|| {
            self.rows.push((stack, state));
            self.row_leaf.push(leaf);
            self.row_ticks.push(0);
            (self.rows.len() - 1) as u32
        })
    }

    /// The stack of a tick, leaf first as V8 writes it: frame 0 is the pc (or the external
    /// callback), then the top of stack if it is a JavaScript function, then the frames.
    fn stack_of(&mut self, tick: &Tick, frames: &[u64]) -> (StackId, FrameId) {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let leaf = if tick.external { tick.tos } else { tick.pc };
        let mut handler = None;
        match self.resolve(leaf) {
            Resolved::Found(frame, Code::BytecodeHandler) => handler = Some(frame),
            Resolved::Found(frame, _) => scratch.push(frame),
            Resolved::Miss => scratch.push(self.unaccounted()),
        }
        if !tick.external && tick.tos != 0 {
            if let Resolved::Found(frame, Code::Js) = self.resolve(tick.tos) {
                scratch.push(frame);
            }
        }
        for address in frames {
            match self.resolve(*address) {
                Resolved::Found(_, Code::BytecodeHandler) | Resolved::Miss => {}
                Resolved::Found(frame, _) => scratch.push(frame),
            }
        }
        if scratch.is_empty() {
            // Only a bytecode handler: better named than nothing.
            scratch.extend(handler);
        }
        if scratch.is_empty() {
            scratch.push(self.unaccounted());
        }
        let leaf = scratch[0];
        // Raw stacks that differ only in return addresses within the same functions are
        // one stack: look the frames up before building anything.
        let hash = scratch.iter().fold(0x9e37_79b9_7f4a_7c15_u64, |h, f| {
            (h.rotate_left(5) ^ f.index() as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
        });
        let known = &self.known_frames;
        if let Some(seq) = self
            .known
            .find(hash, |k| k.hash == hash && known[k.start as usize..(k.start + k.len) as usize] == scratch[..])
        {
            let stack = seq.stack;
            self.scratch = scratch;
            return (stack, leaf);
        }
        // Consecutive ticks mostly share their callers: reuse the previous stack's path from
        // the root for as long as the frames agree.
        let mut path = std::mem::take(&mut self.last_path);
        let shared = path.iter().zip(scratch.iter().rev()).take_while(|((a, _), b)| a == *b).count();
        path.truncate(shared);
        let mut parent = path.last().map(|(_, s)| *s);
        for frame in scratch.iter().rev().skip(shared) {
            let stack = self.builder.stack(parent, *frame);
            path.push((*frame, stack));
            parent = Some(stack);
        }
        let stack = path.last().map_or_else(|| self.builder.stack(None, leaf), |(_, s)| *s);
        self.last_path = path;
        let start = self.known_frames.len() as u32;
        self.known_frames.extend_from_slice(&scratch);
        let known = Known { hash, start, len: scratch.len() as u32, stack };
        self.known.insert_unique(hash, known, |k| k.hash);
        self.scratch = scratch;
        (stack, leaf)
    }

    fn unaccounted(&mut self) -> FrameId {
        if let Some(frame) = self.unaccounted {
            return frame;
        }
        let func = self.plain_func("(unaccounted)", FuncKind::Unknown);
        let frame = self.builder.frame(Frame { func, line: None, column: None });
        self.unaccounted = Some(frame);
        frame
    }

    /// What is at `address`: V8's code first, then the libraries (C++ by ELF symbol, else the
    /// library itself), then V8's remapped copy of the builtins.
    fn resolve(&mut self, address: u64) -> Resolved {
        if let Some(resolved) = self.resolved.get(&address) {
            return *resolved;
        }
        let resolved = self.resolve_anew(address);
        self.seen.insert(address);
        self.resolved.insert(address, resolved);
        resolved
    }

    fn resolve_anew(&mut self, address: u64) -> Resolved {
        if let Some((frame, code)) = self.code_at(address) {
            return Resolved::Found(frame, code);
        }
        if let Some(hit) = self.libraries.find(address) {
            let library = hit.library;
            let primary = self.libraries.primary_start(library);
            if hit.mapping_start != primary {
                // A second mapping of the binary: V8's remapped builtins, logged (in worker
                // isolates) under the binary's name. Look them up where they were created.
                if let Some((frame, code)) = self.code_at(address.wrapping_sub(hit.mapping_start).wrapping_add(primary))
                {
                    return Resolved::Found(frame, code);
                }
            }
            let symbols = self.libraries.all[library].symbols();
            if let Some(file) = &symbols {
                let file_address = address.wrapping_sub(file.bias(hit.mapping_start));
                if let Some(frame) = self.cpp_frame(library, file, file_address) {
                    return Resolved::Found(frame, Code::Other);
                }
            }
            return Resolved::Found(self.library_frame(library), Code::Other);
        }
        if let Some((frame, code)) = self.remapped_builtin(address).and_then(|a| self.code_at(a)) {
            return Resolved::Found(frame, code);
        }
        Resolved::Miss
    }

    fn cpp_frame(&mut self, library: usize, file: &Arc<SymbolFile>, file_address: u64) -> Option<FrameId> {
        let symbol = file.lookup(file_address)?;
        if let Some(frame) = self.libraries.all[library].frames.get(&symbol) {
            return Some(*frame);
        }
        let name = self.builder.intern(&file.name(symbol));
        let func = self.native_func(library, name, FuncKind::Cpp);
        let frame = self.builder.frame(Frame { func, line: None, column: None });
        self.libraries.all[library].frames.insert(symbol, frame);
        Some(frame)
    }

    fn library_frame(&mut self, library: usize) -> FrameId {
        if let Some(frame) = self.libraries.all[library].own_frame {
            return frame;
        }
        let path = self.libraries.all[library].path.clone();
        let base = path.rsplit('/').next().filter(|b| !b.is_empty()).unwrap_or(&path);
        let name = self.builder.intern(base);
        let func = self.native_func(library, name, FuncKind::SharedLib);
        let frame = self.builder.frame(Frame { func, line: None, column: None });
        self.libraries.all[library].own_frame = Some(frame);
        frame
    }

    /// A function `name` of `kind` in `library` (the model's library table holds its path).
    fn native_func(&mut self, library: usize, name: StrId, kind: FuncKind) -> cpuprof_model::FuncId {
        let path = self.builder.intern(&self.libraries.all[library].path);
        let range = Some(self.libraries.primary_range(library));
        let library = Some(self.builder.library(Library { path, range }));
        self.builder.func(Func { name, file: StrId::EMPTY, line: None, column: None, kind, tier: None, library })
    }

    /// With `--short-builtin-calls` (V8's default on x64) the main isolate runs a copy of
    /// the embedded builtins that no log line mentions. V8 11 places it at the code range's
    /// start + min(code range size, 2 GiB) − the blob size rounded up to the 256 KiB
    /// allocation granule, and node's code range is 512 MiB (no pointer compression).
    /// Returns where in the blob the copy's `address` is.
    fn remapped_builtin(&self, address: u64) -> Option<u64> {
        const CODE_RANGE: u64 = 512 << 20;
        const GRANULE: u64 = 256 << 10;
        let (blob_start, blob_end) = self.code.blob()?;
        let size = blob_end - blob_start;
        let copy = self.code_range?.checked_add(CODE_RANGE)?.checked_sub(size.next_multiple_of(GRANULE))?;
        if address < copy || address - copy >= size {
            return None;
        }
        Some(blob_start + (address - copy))
    }

    fn finish<R>(mut self, input: &Input<R>, origin: &Origin) -> Result<Profile, ParseError> {
        let carry = &input.carry[..];
        self.settle_pending();
        let cut_short_log = TAGS.iter().any(|tag| carry.starts_with(tag.as_bytes()));
        if self.ticks == 0 && self.version.is_none() && self.libraries.all.is_empty() && !cut_short_log {
            let message = "no v8-version, shared-library or tick line: this is not a V8 tick log".to_owned();
            return Err(ParseErrorKind::UnknownFormat(message).at(origin, Span::LineCol { line: 1, column: 1 }));
        }
        let interval_ns = self
            .interval_us
            .unwrap_or_else(|| {
                self.builder.warn(format!(
                    "no `profiler,begin` line: assumed V8's default sampling interval of {DEFAULT_INTERVAL_US} µs"
                ));
                DEFAULT_INTERVAL_US
            })
            .saturating_mul(1000);
        match &self.version {
            Some((1, _)) => {}
            Some((line, _)) => self.builder.warn(format!("the v8-version line is line {line}, not the first")),
            None => self.builder.warn("no v8-version line: not a complete V8 tick log, read anyway".to_owned()),
        }
        self.warnings(carry);
        if let Some(why) = &input.damaged {
            self.builder
                .warn(format!("the input is damaged after {} bytes ({why}); read what came before", input.read));
        }
        if input.long_lines > 0 {
            self.builder.warn(format!("skipped {} line(s) longer than {} MiB", input.long_lines, MAX_LINE >> 20));
        }
        let rows = std::mem::take(&mut self.rows);
        match self.timeline.take() {
            Some(ticks) => {
                for (row, time_us) in ticks {
                    let (stack, state) = rows[row as usize];
                    self.builder.sample_in_state(stack, Some(time_us.saturating_mul(1000)), &[1, interval_ns], state);
                }
            }
            None => {
                for ((stack, state), ticks) in rows.into_iter().zip(std::mem::take(&mut self.row_ticks)) {
                    self.builder.sample_in_state(stack, None, &[ticks, ticks.saturating_mul(interval_ns)], state);
                }
            }
        }
        let (start, duration) = match self.time_range {
            Some((first, last)) => (
                Some(first.saturating_mul(1000)),
                Some(last.saturating_sub(first).saturating_mul(1000).saturating_add(interval_ns)),
            ),
            None => (None, None),
        };
        self.builder.timing(start, duration, Some(interval_ns));
        self.builder.finish().map_err(|e| ParseErrorKind::Model(e).at(origin, Span::None))
    }

    fn warnings(&mut self, carry: &[u8]) {
        let builder = &mut self.builder;
        let mut warn = |w: String| builder.warn(w);
        if !carry.is_empty() {
            warn(format!(
                "the last line (line {}) has no line end: the log was cut short, and that line was ignored",
                self.line + 1
            ));
        }
        if self.crlf > 0 {
            warn(format!("{} lines end in CR LF; the CRs were ignored", self.crlf));
        }
        if let Some((first, count)) = self.empty {
            warn(format!(
                "skipped {count} empty line{} (the first is line {first}; node --prof-process stops reading there)",
                if count == 1 { "" } else { "s" }
            ));
        }
        if let Some((line, why)) = &self.malformed.first {
            warn(format!("skipped {} malformed line(s); the first, line {line}, is {why}", self.malformed.count));
        }
        if let Some((line, from)) = &self.unknown_moves.first {
            warn(format!(
                "{} code-move line(s) name code the log never created (the first, line {line}, moves {from})",
                self.unknown_moves.count
            ));
        }
        let mut leaf_ticks: FxHashMap<FrameId, i64> = FxHashMap::default();
        for (leaf, ticks) in self.row_leaf.iter().zip(&self.row_ticks) {
            *leaf_ticks.entry(*leaf).or_default() += ticks;
        }
        for library in &mut self.libraries.all {
            // Symbols still being read were never needed.
            let ticks = library.own_frame.and_then(|f| leaf_ticks.get(&f)).copied().unwrap_or(0);
            let why = match &library.missing {
                _ if ticks == 0 => continue,
                None | Some(NoSymbols::Virtual) => continue,
                Some(NoSymbols::Stripped) => "it has no symbols".to_owned(),
                Some(NoSymbols::Unreadable(e)) => e.clone(),
                Some(NoSymbols::Different { build_id }) => format!(
                    "the file is not the one that was mapped when the log was written (its build id is {}); \
                     use --symbols DIR to point at the right copy",
                    build_id.as_deref().unwrap_or("unknown")
                ),
            };
            warn(format!(
                "no symbols for {}: {why}; {ticks} tick(s) are labelled with the library's name",
                library.path
            ));
        }
    }
}

fn plain_func(builder: &mut ProfileBuilder, name: &str, kind: FuncKind) -> cpuprof_model::FuncId {
    let name = builder.intern(name);
    builder.func(Func { name, file: StrId::EMPTY, line: None, column: None, kind, tier: None, library: None })
}

fn js_func(builder: &mut ProfileBuilder, text: &str, tier: Option<Tier>) -> cpuprof_model::FuncId {
    let js = split_js_name(text);
    let name = builder.intern(&js.name);
    let file = builder.intern(&js.script);
    builder.func(Func { name, file, line: js.line, column: js.column, kind: FuncKind::Js, tier, library: None })
}

/// An address field: `0x…` hex (V8's only form), decimal tolerated.
fn address(field: &str) -> Option<u64> {
    match field.strip_prefix("0x") {
        Some(hex) if !hex.is_empty() && hex.len() <= 16 => u64::from_str_radix(hex, 16).ok(),
        Some(_) => None,
        None => field.parse().ok(),
    }
}

/// Text for a message: control characters escaped, at most 40 characters.
fn visible(s: &str) -> String {
    s.chars().take(40).flat_map(char::escape_debug).collect()
}

#[cfg(test)]
mod tests;
