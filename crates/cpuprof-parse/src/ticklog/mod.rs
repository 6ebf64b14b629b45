//! V8 tick logs (`node --prof`, `isolate-*-v8.log`) → the unified model.
//!
//! The log is read in chunks of whole lines ([`input`]). Each chunk's tick lines are parsed in
//! parallel (stage one, [`lines`]) while the previous chunk is replayed in order (stage two,
//! the [`Decoder`] here): code events update the code map ([`records`], [`codemap`]), and each
//! tick's addresses become a stack ([`stacks`]). A tick whose frames were already seen under
//! the same code map reuses their stack, and its pc and top of stack are found through the
//! code objects recent ticks landed in, so the map is consulted once per distinct sequence of
//! callers and once per code object, not once per frame or per raw stack.
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
mod input;
mod jit;
mod lines;
mod names;
mod positions;
pub(crate) mod preprocess;
mod records;
mod stacks;

use std::collections::BTreeSet;
use std::io::BufRead;

use cpuprof_model::{
    FrameId, FuncKind, Profile, ProfileBuilder, SampleSource, SampleTimeline, SourceFormat, StackId, Tier, TimedSample,
    ValueType, VmState,
};
use hashbrown::HashTable;
use rustc_hash::FxHashMap;

use self::codemap::{DynamicCode, Libraries, NoSymbols};
use self::input::Input;
use self::lines::{Batch, Item};
use self::records::{Pending, Skipped};
use self::stacks::{Cached, Known, Leaves, Resolved, RowKey, RECENT_CHANGES};
use crate::{Origin, ParseError, ParseErrorKind, ParseOptions, Span};

/// Bytes read per chunk (small in tests, so that they cross chunk boundaries).
const CHUNK: usize = if cfg!(test) { 1 << 16 } else { 8 << 20 };
/// A line longer than this is not a tick log line.
const MAX_LINE: usize = if cfg!(test) { 1 << 20 } else { 64 << 20 };
/// V8's sampling interval when the log does not say (`--prof-sampling-interval` default).
const DEFAULT_INTERVAL_US: i64 = cpuprof_model::defaults::V8_SAMPLING_INTERVAL_NS / 1000;
/// Frame sequences kept for reuse before the cache starts over (in 8-byte words).
const CACHE_WORDS: usize = 4 << 20;

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

/// Which frames a read names with their code's tier (`~f`, `^f`, `+f`, `*f`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum TierNames {
    /// None: a function's tiers are one function.
    None,
    /// Every frame: tiers kept apart.
    Every,
    /// None, but each sample row keeps its leaf code's tier ([`cpuprof_model::Samples::tiers`];
    /// JIT records kept, tiers not apart): each sample's tier, with the stacks of a read
    /// without tiers.
    Leaf,
}

/// Stage two: the replay, in file order.
struct Decoder {
    builder: ProfileBuilder,
    /// Which frames are named with their code's tier.
    tier_names: TierNames,
    line: u64,
    code: DynamicCode,
    libraries: Libraries,
    code_range: Option<u64>,
    /// Bumped on every change of the code map under an address resolved before: cached
    /// callers of older generations are stale if one of their frames is in one of the spans
    /// changed since (`recent_changes`, by generation), or if that is no longer known.
    generation: u32,
    recent_changes: [(u64, u64); RECENT_CHANGES],
    /// The rows of recent ticks, by what decides them.
    recent_rows: Box<[Option<(RowKey, u32)>]>,
    /// Every frame address resolved so far, ordered to find those a code event changes.
    seen: BTreeSet<u64>,
    /// What each address in `seen` resolved to.
    resolved: FxHashMap<u64, Resolved>,
    /// Pcs and top-of-stack values, by the code they landed in.
    leaves: Leaves,
    /// The callers' stack of each frame sequence (the sequences in `keys`).
    cache: HashTable<Cached>,
    keys: Vec<u64>,
    /// `(stack, state)` of each sample row, and its ticks.
    rows: Vec<(StackId, VmState)>,
    /// Each row's leaf tier ([`TierNames::Leaf`]; else `None`): rows differ by it.
    row_tier: Vec<Option<Tier>>,
    row_index: FxHashMap<(StackId, VmState, Option<Tier>), u32>,
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
    /// An older log that quotes its strings (`shared-library,"/x"`, `profiler,"begin"`).
    quoted: bool,
    /// The v8-version line names a V8 older than 6.3: VM states have the older numbering.
    old_states: bool,
    /// Ticks in the 2011 form (a stack pointer and no time).
    untimed: u64,
    /// Ticks in a pre-2013 form (with a stack pointer, with or without a time).
    old_form: u64,
    /// The pseudo-frame of ticks without a pc, by VM state.
    no_pc: FxHashMap<VmState, FrameId>,
    /// Builtins' frames as code of the library they were logged in, by frame, library and kind.
    in_library: FxHashMap<(FrameId, usize, FuncKind), FrameId>,
    /// Scripts' text and code objects' source positions.
    positions: positions::Positions,
    /// How frames are placed on their code's source positions.
    placing: Placing,
    /// What each (code object's positions, table entry) was placed as (`u32::MAX`: no entry).
    placed: FxHashMap<(u32, u32), Resolved>,
    /// Frames of inlined chains, innermost first ([`Resolved::Inlined`] indexes them).
    chains: Vec<Box<[FrameId]>>,
    /// What V8's compilers did, when kept.
    jit: Option<jit::JitLog>,
}

impl Decoder {
    fn new(options: &ParseOptions) -> Self {
        Decoder {
            builder: ProfileBuilder::new(SourceFormat::TickLog, vec![ValueType::SAMPLES, ValueType::WALL_NS]),
            tier_names: match (options.split_tiers, options.jit) {
                (true, _) => TierNames::Every,
                (false, true) => TierNames::Leaf,
                (false, false) => TierNames::None,
            },
            line: 0,
            code: DynamicCode::default(),
            libraries: Libraries::new(options.symbols_root.clone()),
            code_range: None,
            generation: 0,
            recent_changes: [(0, 0); RECENT_CHANGES],
            recent_rows: vec![None; RowKey::SLOTS].into_boxed_slice(),
            seen: BTreeSet::new(),
            resolved: FxHashMap::default(),
            leaves: Leaves::new(),
            cache: HashTable::new(),
            keys: Vec::new(),
            rows: Vec::new(),
            row_tier: Vec::new(),
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
            quoted: false,
            old_states: false,
            untimed: 0,
            old_form: 0,
            no_pc: FxHashMap::default(),
            in_library: FxHashMap::default(),
            positions: positions::Positions::default(),
            placing: Placing { unroll: options.unroll_inlined, lines: options.frame_lines },
            placed: FxHashMap::default(),
            chains: Vec::new(),
            jit: options.jit.then(jit::JitLog::default),
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

    fn finish<R>(mut self, input: &Input<R>, origin: &Origin) -> Result<Profile, ParseError> {
        let carry = &input.carry[..];
        self.settle_pending();
        let cut_short_log = TAGS.iter().any(|tag| carry.starts_with(tag.as_bytes()));
        if self.ticks == 0 && self.version.is_none() && self.libraries.all.is_empty() && !cut_short_log {
            let message = "no v8-version, shared-library or tick line: this is not a V8 tick log".to_owned();
            return Err(ParseErrorKind::UnknownFormat(message).at(origin, Span::LineCol { line: 1, column: 1 }));
        }
        if self.untimed > 0 {
            self.builder.warn(format!(
                "{} tick(s) have no time (the pre-2012 form, with the stack pointer instead): \
                 placed one sampling interval apart",
                self.untimed
            ));
        }
        if self.old_form > 0 {
            // Logs of that age gave the interval in milliseconds (`profiler,"begin",1`).
            self.interval_us = self.interval_us.map(|ms| ms.saturating_mul(1000));
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
            // V8 before 5.x (which quoted its strings) wrote no v8-version line.
            None if self.quoted => {}
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
        // The scripts' text, for the sources of what ran (eval code's `<unknown>` names none).
        let mut scripts: Vec<(u32, positions::ScriptText)> =
            std::mem::take(&mut self.positions.scripts).into_iter().collect();
        scripts.sort_by_key(|(id, _)| *id);
        for (_, script) in scripts {
            if !script.name.is_empty() && script.name != "<unknown>" {
                self.builder.script(&script.name, cpuprof_model::ScriptOrigin::ScriptSource, script.text);
            }
        }
        let rows = std::mem::take(&mut self.rows);
        for ((stack, state), ticks) in rows.into_iter().zip(std::mem::take(&mut self.row_ticks)) {
            self.builder.sample_in_state(stack, None, &[ticks, ticks.saturating_mul(interval_ns)], state);
        }
        if self.tier_names == TierNames::Leaf {
            self.builder.row_tiers(std::mem::take(&mut self.row_tier));
        }
        if let Some(mut ticks) = self.timeline.take() {
            // A timeline is in time order; ticks at one time stay in log order.
            if !ticks.is_sorted_by_key(|t| t.1) {
                ticks.sort_by_key(|t| t.1);
            }
            self.builder.timeline(SampleTimeline::new(Ticks { ticks, interval_ns }));
        }
        let (start, duration) = match self.time_range {
            Some((first, last)) => (
                Some(first.saturating_mul(1000)),
                Some(last.saturating_sub(first).saturating_mul(1000).saturating_add(interval_ns)),
            ),
            None => (None, None),
        };
        self.builder.timing(start, duration, Some(interval_ns));
        if let Some(log) = self.jit.take() {
            if log.unknown_deopts > 0 {
                self.builder.warn(format!(
                    "{} code-deopt line(s) name code the log never created (code from before logging began): \
                     left out of the deoptimizations",
                    log.unknown_deopts
                ));
            }
            let quoted = self.quoted;
            log.finish(&mut self.builder, |b, text, tier| {
                if quoted {
                    stacks::js_func_of(b, &names::split_old_js_name(text), tier)
                } else {
                    stacks::js_func(b, text, tier)
                }
            });
        }
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
        let all_ticks: i64 = self.row_ticks.iter().sum();
        for library in &mut self.libraries.all {
            // Symbols still being read were never needed.
            let ticks = library.own_frame.and_then(|f| leaf_ticks.get(&f)).copied().unwrap_or(0);
            // Symbols read that miss a few ticks (a PLT stub, an internal function) are noise
            // beside a library whose time cannot be named: said from 1% of the ticks.
            if library.missing.is_none() && ticks.saturating_mul(100) < all_ticks {
                continue;
            }
            let build_id = library.build_id.as_deref().unwrap_or("none");
            let why = match &library.missing {
                _ if ticks == 0 => continue,
                Some(NoSymbols::Virtual) => continue,
                // Symbols never read (not asked for): nothing to say of them.
                None if !library.has_symbols() => continue,
                // Symbols were read, but none covers these addresses: a stripped file keeps
                // only its exported functions (libc's internal ones, for one).
                None => format!(
                    "its symbols cover none of the addresses ticked in it (a stripped file keeps only its \
                     exported symbols; build id {build_id})"
                ),
                Some(NoSymbols::Stripped) => format!("it has no symbols (build id {build_id})"),
                Some(NoSymbols::Unreadable(e)) => e.clone(),
                Some(NoSymbols::Different { build_id }) => format!(
                    "the file is not the one that was mapped when the log was written (its build id is {})",
                    build_id.as_deref().unwrap_or("unknown")
                ),
            };
            let message =
                format!("no symbols for {}: {why}; {ticks} tick(s) are labelled with the library's name", library.path);
            // Another copy of the library, under `symbols_root`, is the remedy.
            let wrong_copy = matches!(library.missing, Some(NoSymbols::Different { .. }));
            builder.warn(if wrong_copy {
                cpuprof_model::Warning::with_setting(message, cpuprof_model::Setting::SymbolsRoot)
            } else {
                cpuprof_model::Warning::new(message)
            });
        }
    }
}

/// How frames are placed on their code's source positions ([`ParseOptions::unroll_inlined`],
/// [`ParseOptions::frame_lines`]).
#[derive(Clone, Copy)]
struct Placing {
    /// Inlined functions get their own frames.
    unroll: bool,
    /// Frames get their lines.
    lines: bool,
}

impl Placing {
    /// Whether frames are placed at all (else each is its code's function, as V8 names it).
    fn any(self) -> bool {
        self.unroll || self.lines
    }
}

/// A tick log's timeline: each tick's row and time (µs), every tick one interval long.
struct Ticks {
    ticks: Vec<(u32, i64)>,
    interval_ns: i64,
}

impl SampleSource for Ticks {
    fn walk(&self, visit: &mut dyn FnMut(&[TimedSample])) {
        let mut batch = Vec::with_capacity(2048);
        for chunk in self.ticks.chunks(2048) {
            batch.clear();
            batch.extend(chunk.iter().map(|&(row, time_us)| TimedSample {
                row,
                time_ns: time_us.saturating_mul(1000),
                weight_ns: self.interval_ns,
            }));
            visit(&batch);
        }
    }
}

#[cfg(test)]
mod tests;
