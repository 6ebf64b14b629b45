//! Stacks: each tick's addresses resolved against the code map (V8 code, then the
//! libraries and their ELF symbols) into frames, the frames into a stack and the stack into a
//! sample row.
//!
//! Two caches keep this off the code map. A tick's frames (return addresses: call sites,
//! which repeat) are looked up as a whole, so that the callers' stack is built once per
//! distinct sequence under a code map. Its pc and top of stack, which move inside a
//! function's code from tick to tick, are resolved through [`Leaves`]: the code object or
//! symbol that covered a recent one covers most of the next. So throughput and memory do not
//! depend on how many raw stacks are distinct, only on the callers and the code.

use std::sync::Arc;

use cpuprof_model::{Frame, FrameId, Func, FuncKind, Library, ProfileBuilder, StackId, StrId, Tier, VmState};
use cpuprof_symbols::SymbolFile;

use super::codemap::{self, Code, Name};
use super::lines::Tick;
use super::names::split_js_name;
use super::{Decoder, CACHE_WORDS};

/// How many changes of the code map are kept to check cached callers against.
pub(super) const RECENT_CHANGES: usize = 32;

/// A callers cache entry: the raw frames live in `Decoder::keys`.
pub(super) struct Cached {
    pub(super) hash: u64,
    pub(super) generation: u32,
    pub(super) key_start: u32,
    pub(super) key_len: u32,
    pub(super) callers: Callers,
}

/// The stack of a tick's frames (root to the frame under the top of stack), and its leaf.
#[derive(Clone, Copy)]
pub(super) struct Callers {
    stack: Option<StackId>,
    leaf: Option<FrameId>,
}

/// What decides a tick's row once its callers are known. A pc that is a bytecode handler is
/// in `pc` too (with `handler`): it names the stack when nothing else does.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct RowKey {
    callers: Option<StackId>,
    tos: Option<FrameId>,
    pc: Option<FrameId>,
    /// The pc's chain of inlined frames (`u32::MAX`: none; `pc` is its innermost).
    chain: u32,
    handler: bool,
    state: VmState,
    /// The tier the leaf is named with ([`super::TierNames::Leaf`]; else `None`).
    tier: Option<Tier>,
}

impl RowKey {
    const SLOTS_LOG2: u32 = 12;
    /// Rows of recent ticks kept, by slot.
    pub(super) const SLOTS: usize = 1 << Self::SLOTS_LOG2;

    fn slot(&self) -> usize {
        let word = |id: Option<usize>| id.map_or(u64::MAX, |i| i as u64);
        let tier = self.tier.map_or(0, |t| t as u64 + 1);
        let flags = (u64::from(self.chain) << 16) | (tier << 12) | (self.state as u64) << 1 | u64::from(self.handler);
        let h = [word(self.tos.map(FrameId::index)), word(self.pc.map(FrameId::index)), flags]
            .iter()
            .fold(word(self.callers.map(StackId::index)), |h, w| {
                (h.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
            });
        (h >> (64 - Self::SLOTS_LOG2)) as usize
    }
}

/// Leaf addresses (pcs, top-of-stack values) resolved lately, each kept as the range of
/// the code object or symbol that covers it. Direct-mapped and fixed in size; forgotten all
/// at once (a new epoch) when code that was in the map goes or is shadowed.
pub(super) struct Leaves {
    slots: Box<[Leaf]>,
    epoch: u32,
}

#[derive(Clone, Copy)]
struct Leaf {
    start: u64,
    end: u64,
    epoch: u32,
    resolved: Resolved,
    /// The code's source positions ([`NO_INFO`]: none): a leaf in it is placed on its line.
    info: u32,
    /// The tier of the JavaScript code covering it, where [`super::TierNames::Leaf`] wants it.
    tier: Option<Tier>,
}

/// No source positions.
const NO_INFO: u32 = u32::MAX;

impl Leaves {
    const SLOTS_LOG2: u32 = 12;
    /// Addresses in one 256-byte piece of code share a slot.
    const GRAIN_LOG2: u32 = 8;

    pub(super) fn new() -> Self {
        let empty = Leaf { start: 0, end: 0, epoch: 0, resolved: Resolved::Miss, info: NO_INFO, tier: None };
        Leaves { slots: vec![empty; 1 << Self::SLOTS_LOG2].into_boxed_slice(), epoch: 1 }
    }

    fn slot(address: u64) -> usize {
        ((address >> Self::GRAIN_LOG2).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - Self::SLOTS_LOG2)) as usize
    }

    /// What covers `address`, where that starts, its positions and its tier.
    fn get(&self, address: u64) -> Option<(Resolved, u64, u32, Option<Tier>)> {
        let leaf = &self.slots[Self::slot(address)];
        (leaf.epoch == self.epoch && leaf.start <= address && address < leaf.end).then_some((
            leaf.resolved,
            leaf.start,
            leaf.info,
            leaf.tier,
        ))
    }

    fn put(&mut self, address: u64, (start, end): codemap::Span, resolved: Resolved, info: u32, tier: Option<Tier>) {
        if !(start <= address && address < end) {
            return;
        }
        self.slots[Self::slot(address)] = Leaf { start, end, epoch: self.epoch, resolved, info, tier };
    }

    /// Forgets every leaf.
    pub(super) fn forget(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // After 2^32 epochs an old slot could pass for a new one.
            self.slots.iter_mut().for_each(|leaf| leaf.epoch = 0);
            self.epoch = 1;
        }
    }
}

/// A resolved stack (frames leaf first in `Decoder::known_frames`) and its id.
pub(super) struct Known {
    pub(super) hash: u64,
    pub(super) start: u32,
    pub(super) len: u32,
    pub(super) stack: StackId,
}

/// What an address turned out to be.
#[derive(Clone, Copy)]
pub(super) enum Resolved {
    Found(FrameId, Code),
    /// JavaScript code with functions inlined into it, unrolled: a chain of frames, innermost
    /// first (an index into `Decoder::chains`).
    Inlined(u32),
    Miss,
}

impl Decoder {
    pub(super) fn plain_func(&mut self, name: &str, kind: FuncKind) -> cpuprof_model::FuncId {
        plain_func(&mut self.builder, name, kind)
    }

    /// The frame and kind of the code covering `address`, naming it if no tick did before,
    /// and the code's span.
    pub(super) fn code_at(&mut self, address: u64) -> Option<(FrameId, Code, codemap::Span)> {
        let (start, entry) = self.code.find(address)?;
        let span = (start, start.saturating_add(entry.size));
        let frame = match &entry.name {
            Name::Frame(frame) => *frame,
            Name::Plain { text, kind } => {
                let func = plain_func(&mut self.builder, text, *kind);
                self.builder.frame(Frame { func, line: None, column: None })
            }
            Name::Js { text, tier } if self.quoted => {
                // Logs that quote their strings are old enough to name `fn script:line`.
                let js = super::names::split_old_js_name(text);
                let func = js_func_of(&mut self.builder, &js, *tier);
                self.builder.frame(Frame { func, line: None, column: None })
            }
            Name::Js { text, tier } => {
                let func = js_func(&mut self.builder, text, *tier);
                self.builder.frame(Frame { func, line: None, column: None })
            }
        };
        entry.name = Name::Frame(frame);
        Some((frame, entry.code, span))
    }

    /// The code at `span` (`None`: anywhere) changed. Cached stacks go stale only if one of
    /// them holds an address there: new code in fresh memory, the usual case, keeps them.
    pub(super) fn changed(&mut self, span: Option<codemap::Span>) {
        // Code in a library's mapping or among the builtins is also read through other
        // addresses (a second mapping of the binary, the builtins' remapped copy): rare enough
        // to forget everything.
        let through = |(start, end): codemap::Span| {
            self.libraries.overlap((start, end)) || self.code.blob().is_some_and(|(s, e)| start < e && s < end)
        };
        let span = span.filter(|s| !through(*s));
        let stale: Vec<u64> = if let Some((start, end)) = span {
            self.seen.range(start..end).copied().collect()
        } else {
            self.leaves.forget();
            std::mem::take(&mut self.seen).into_iter().collect()
        };
        if stale.is_empty() && span.is_some() {
            return;
        }
        for address in stale {
            self.seen.remove(&address);
            self.resolved.remove(&address);
        }
        self.recent_changes[self.generation as usize % RECENT_CHANGES] = span.unwrap_or((0, u64::MAX));
        self.generation = self.generation.wrapping_add(1);
    }

    pub(super) fn tick(&mut self, tick: &Tick, frames: &[u64]) {
        self.ticks += 1;
        self.old_form += u64::from(tick.old);
        let t = if tick.timed {
            tick.time_us
        } else {
            // No time: the ticks are one interval apart (a millisecond, in logs of that age).
            self.untimed += 1;
            i64::try_from(self.untimed - 1).unwrap_or(i64::MAX).saturating_mul(1000)
        };
        self.time_range = Some(self.time_range.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
        let callers = self.callers(tick.hash, frames);
        let row = self.row_for(tick, callers);
        self.row_ticks[row as usize] += 1;
        if let Some(timeline) = &mut self.timeline {
            timeline.push((row, t));
        }
    }

    /// The stack of a tick's frames, from the cache while the code map has not changed under
    /// them.
    fn callers(&mut self, hash: u64, frames: &[u64]) -> Callers {
        let keys = &self.keys;
        let same =
            |c: &Cached| c.hash == hash && keys[c.key_start as usize..(c.key_start + c.key_len) as usize] == *frames;
        let generation = self.generation;
        match self.cache.find(hash, same) {
            Some(c) if c.generation == generation => c.callers,
            Some(c) if self.unchanged_since(c.generation, frames) => {
                let callers = c.callers;
                let keys = &self.keys;
                if let Some(c) = self.cache.find_mut(hash, |c| {
                    c.hash == hash && keys[c.key_start as usize..(c.key_start + c.key_len) as usize] == *frames
                }) {
                    c.generation = generation;
                }
                callers
            }
            Some(_) => {
                let callers = self.callers_anew(frames);
                let keys = &self.keys;
                if let Some(c) = self.cache.find_mut(hash, |c| {
                    c.hash == hash && keys[c.key_start as usize..(c.key_start + c.key_len) as usize] == *frames
                }) {
                    c.generation = generation;
                    c.callers = callers;
                }
                callers
            }
            None => {
                // Emptied before the new stack is resolved: its frames must be in `seen`, or a
                // change under them would leave it stale.
                if self.keys.len() + frames.len() > CACHE_WORDS {
                    self.keys.clear();
                    self.cache.clear();
                    self.seen.clear();
                    self.resolved.clear();
                }
                let callers = self.callers_anew(frames);
                let key_start = self.keys.len() as u32;
                self.keys.extend_from_slice(frames);
                let cached = Cached { hash, generation, key_start, key_len: frames.len() as u32, callers };
                self.cache.insert_unique(hash, cached, |c| c.hash);
                callers
            }
        }
    }

    /// Whether no change of the code map since `generation` touched `frames` (known for the
    /// last few changes only).
    fn unchanged_since(&self, generation: u32, frames: &[u64]) -> bool {
        let behind = self.generation.wrapping_sub(generation);
        behind as usize <= RECENT_CHANGES
            && (0..behind).all(|k| {
                let (start, end) = self.recent_changes[generation.wrapping_add(k) as usize % RECENT_CHANGES];
                frames.iter().all(|a| *a < start || *a >= end)
            })
    }

    pub(super) fn row_of(&mut self, stack: StackId, leaf: FrameId, state: VmState, tier: Option<Tier>) -> u32 {
        *self.row_index.entry((stack, state, tier)).or_insert_with(|| {
            self.rows.push((stack, state));
            self.row_tier.push(tier);
            self.row_leaf.push(leaf);
            self.row_ticks.push(0);
            (self.rows.len() - 1) as u32
        })
    }

    /// The sample row of a tick: its stack, leaf first as V8 writes it (frame 0 is the pc or
    /// the external callback, then the top of stack if it is a JavaScript function, then the
    /// frames: `callers`), and its VM state.
    pub(super) fn row_for(&mut self, tick: &Tick, callers: Callers) -> u32 {
        let state = self.vm_state(tick.state);
        let leaf = if tick.external { tick.tos } else { tick.pc };
        let mut handler = None;
        let mut chain = u32::MAX;
        let mut pc_tier = None;
        let pc_frame = if leaf == 0 && !tick.external {
            // No pc at all: time in the VM outside any code (V8 logs these, mostly in state
            // OTHER), not code that nothing covers. Named by the state, as `(program)` is in a
            // .cpuprofile.
            Some(self.no_pc_frame(state))
        } else {
            let (resolved, tier) = self.resolve_leaf(leaf);
            pc_tier = tier;
            match resolved {
                Resolved::Found(frame, Code::BytecodeHandler) => {
                    handler = Some(frame);
                    None
                }
                Resolved::Found(frame, _) => Some(frame),
                Resolved::Inlined(c) => {
                    chain = c;
                    Some(self.chains[c as usize][0])
                }
                Resolved::Miss => Some(self.unaccounted()),
            }
        };
        // An external tick's tos is its callback, the leaf above; 0 is no tos.
        let (tos, tos_tier) =
            if tick.external || tick.tos == 0 { (Resolved::Miss, None) } else { self.resolve_leaf(tick.tos) };
        let tos_frame = match tos {
            Resolved::Found(frame, Code::Js) => Some(frame),
            Resolved::Inlined(c) => Some(self.chains[c as usize][0]),
            _ => None,
        };
        // With leaf tiers, the row keeps the tier of the sample's leaf code (the pc's, else the
        // top of stack's).
        let tier = match (self.tier_names == super::TierNames::Leaf, pc_frame.is_some()) {
            (false, _) => None,
            (true, true) => pc_tier,
            (true, false) => tos_frame.and(tos_tier),
        };
        let key = RowKey {
            callers: callers.stack,
            tos: tos_frame,
            pc: pc_frame.or(handler),
            chain,
            handler: handler.is_some(),
            state,
            tier,
        };
        let slot = key.slot();
        if let Some((known, row)) = &self.recent_rows[slot] {
            if *known == key {
                return *row;
            }
        }
        let mut stack = callers.stack;
        let mut leaf = callers.leaf;
        // The pc's inlined callers (outermost first) come before it.
        let inlined = self.chains.get(chain as usize).map_or(&[][..], |c| &c[1..]);
        for frame in tos_frame.into_iter().chain(inlined.iter().rev().copied()).chain(pc_frame) {
            stack = Some(self.builder.stack(stack, frame));
            leaf = Some(frame);
        }
        let (stack, leaf) = if let (Some(stack), Some(leaf)) = (stack, leaf) {
            (stack, leaf)
        } else {
            // Only a bytecode handler: better named than nothing.
            let frame = handler.unwrap_or_else(|| self.unaccounted());
            (self.builder.stack(None, frame), frame)
        };
        let row = self.row_of(stack, leaf, state, tier);
        self.recent_rows[slot] = Some((key, row));
        row
    }

    /// The stack of a tick's frames, resolved one by one. A frame that nothing covers, or a
    /// bytecode handler, is left out.
    fn callers_anew(&mut self, frames: &[u64]) -> Callers {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        for address in frames {
            match self.resolve(*address) {
                Resolved::Found(_, Code::BytecodeHandler) | Resolved::Miss => {}
                Resolved::Found(frame, _) => scratch.push(frame),
                Resolved::Inlined(c) => scratch.extend_from_slice(&self.chains[c as usize]),
            }
        }
        let Some(&leaf) = scratch.first() else {
            self.scratch = scratch;
            return Callers { stack: None, leaf: None };
        };
        // Raw frames that differ only in return addresses within the same functions are
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
            return Callers { stack: Some(stack), leaf: Some(leaf) };
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
        Callers { stack: Some(stack), leaf: Some(leaf) }
    }

    /// The VM state of a tick's numeric tag, in the numbering of the log's V8.
    pub(super) fn vm_state(&self, tag: u8) -> VmState {
        if self.old_states || (self.quoted && self.version.is_none()) {
            match tag {
                0 => VmState::Js,
                1 => VmState::Gc,
                2 => VmState::Compiler,
                3 => VmState::Other,
                4 => VmState::External,
                5 => VmState::Idle,
                _ => VmState::Unknown,
            }
        } else {
            VmState::from_tag(i64::from(tag))
        }
    }

    /// The pseudo-frame of ticks without a pc in `state`: `(OTHER)`, `(GC)`, … (V8's names).
    pub(super) fn no_pc_frame(&mut self, state: VmState) -> FrameId {
        if let Some(frame) = self.no_pc.get(&state) {
            return *frame;
        }
        let (name, kind) = super::names::no_pc_func(state);
        let func = self.plain_func(&name, kind);
        let frame = self.builder.frame(Frame { func, line: None, column: None });
        self.no_pc.insert(state, frame);
        frame
    }

    pub(super) fn unaccounted(&mut self) -> FrameId {
        if let Some(frame) = self.unaccounted {
            return frame;
        }
        let func = self.plain_func("(unaccounted)", FuncKind::Unknown);
        let frame = self.builder.frame(Frame { func, line: None, column: None });
        self.unaccounted = Some(frame);
        frame
    }

    /// What is at a frame's `address`, remembered address by address (return addresses are
    /// call sites: they repeat), and forgotten when the code there changes.
    pub(super) fn resolve(&mut self, address: u64) -> Resolved {
        if let Some(resolved) = self.resolved.get(&address) {
            return *resolved;
        }
        let (mut resolved, _) = self.resolve_anew(address);
        let placing = self.placing.any();
        if let (true, Resolved::Found(frame, Code::Js), Some((start, info, bytecode))) =
            (placing, resolved, self.source_of(address))
        {
            // A return address is the instruction after the call (in machine code: the call
            // is the one before it); a bytecode frame's is the bytecode being run.
            let offset = (address - start).saturating_sub(u64::from(!bytecode));
            resolved = self.place(frame, info, offset);
        }
        self.seen.insert(address);
        self.resolved.insert(address, resolved);
        resolved
    }

    /// What is at a pc or top-of-stack `address` (0: nothing), through [`Leaves`], and the
    /// tier of its JavaScript code where [`super::TierNames::Leaf`] wants it.
    pub(super) fn resolve_leaf(&mut self, address: u64) -> (Resolved, Option<Tier>) {
        let (resolved, start, info, tier) = if let Some(known) = self.leaves.get(address) {
            known
        } else {
            let (resolved, span) = self.resolve_anew(address);
            let (source, tier) = match resolved {
                Resolved::Found(_, Code::Js) => (self.source_of(address), self.leaf_tier(address)),
                _ => (None, None),
            };
            let info = source.map_or(NO_INFO, |(_, info, _)| info);
            if let Some(span) = span {
                self.leaves.put(address, span, resolved, info, tier);
            }
            (resolved, source.map_or(0, |(start, _, _)| start), info, tier)
        };
        let resolved = match resolved {
            Resolved::Found(frame, Code::Js) if info != NO_INFO && self.placing.any() => {
                self.place(frame, info, address - start)
            }
            _ => resolved,
        };
        (resolved, tier)
    }

    /// The tier V8 compiled the JavaScript code at `address` for, when only leaves are named
    /// with their tier ([`super::TierNames::Leaf`]).
    fn leaf_tier(&mut self, address: u64) -> Option<Tier> {
        if self.tier_names != super::TierNames::Leaf {
            return None;
        }
        let (_, entry) = self.code.find(address)?;
        let code = entry.jit?;
        self.jit.as_ref()?.code.get(code as usize).map(super::jit::Code::tier)
    }

    /// Where the code at `address` starts, its positions and whether it is bytecode, when the
    /// log gave its positions.
    fn source_of(&mut self, address: u64) -> Option<(u64, u32, bool)> {
        let (start, entry) = self.code.find(address)?;
        Some((start, entry.info?, entry.bytecode))
    }

    /// What a frame at code offset `offset` of the code of `base` (with positions `info`) was
    /// running: its function at a line, or the chain of functions inlined there.
    fn place(&mut self, base: FrameId, info: u32, offset: u64) -> Resolved {
        let entry = self.positions.infos[info as usize].entry(offset);
        let key = (info, entry.unwrap_or(u32::MAX));
        if let Some(placed) = self.placed.get(&key) {
            return *placed;
        }
        let placed = self.place_anew(base, info, entry);
        self.placed.insert(key, placed);
        placed
    }

    fn place_anew(&mut self, base: FrameId, info: u32, entry: Option<u32>) -> Resolved {
        let own = self.builder.frame_of(base).func;
        let mut own_func = self.builder.func_of_frame(base);
        if !self.placing.lines {
            // Functions only: every line is no line.
            own_func.line = None;
        }
        let source = &self.positions.infos[info as usize];
        let script = source.script;
        // Without a position (code V8 logged none for: Sparkplug's; a broken chain), the
        // function's own line, as V8's CPU profiler does.
        let Some(elements) = entry.and_then(|e| source.elements(e, self.placing.unroll)) else {
            return Resolved::Found(
                self.builder.frame(Frame { func: own, line: own_func.line, column: None }),
                Code::Js,
            );
        };
        let mut frames: Vec<FrameId> = Vec::with_capacity(elements.len());
        for (sfi, offset) in elements {
            let (func, line) = match sfi {
                None => {
                    let line = if offset < 0 { own_func.line } else { self.positions.line(script, offset) };
                    (own, line)
                }
                Some(index) => {
                    // Named when the record was read (`elements` keeps only those).
                    let named = self.positions.infos[info as usize].named.get(index as usize).cloned().flatten();
                    let Some(function) = named else { continue };
                    let Some(name) = function.name else { continue };
                    let func = js_func(&mut self.builder, &name, own_func.tier);
                    let line = match function.script {
                        _ if offset < 0 => split_js_name(&name).line,
                        Some(s) => self.positions.line(s, offset),
                        None => None,
                    };
                    (func, line)
                }
            };
            let line = line.filter(|_| self.placing.lines);
            frames.push(self.builder.frame(Frame { func, line, column: None }));
        }
        if let [one] = frames.as_slice() {
            return Resolved::Found(*one, Code::Js);
        }
        self.chains.push(frames.into_boxed_slice());
        Resolved::Inlined(u32::try_from(self.chains.len() - 1).unwrap_or(u32::MAX))
    }

    /// What is at `address`: V8's code first, then the libraries (C++ by ELF symbol, else the
    /// library itself), then V8's remapped copy of the builtins. With the addresses around it
    /// that resolve the same way as long as the code map does not change there, where they
    /// are known.
    pub(super) fn resolve_anew(&mut self, address: u64) -> (Resolved, Option<codemap::Span>) {
        if let Some((frame, code, span)) = self.code_at(address) {
            if let Some(hit) = self.libraries.find(address).filter(|_| is_blob(code)) {
                let around = self.libraries.around(address);
                let frame = self.in_library(frame, hit, span.0);
                return (Resolved::Found(frame, Code::Other), Some((span.0.max(around.0), span.1.min(around.1))));
            }
            return (Resolved::Found(frame, code), Some(span));
        }
        // Below code, the addresses that resolve as `address` does are also those no code
        // covers and that fall in the same library mapping (or between the same two).
        let (gap, around) = (self.code.gap(address), self.libraries.around(address));
        let shadowed = |(start, end): codemap::Span| (start.max(gap.0).max(around.0), end.min(gap.1).min(around.1));
        if let Some(hit) = self.libraries.find(address) {
            let library = hit.library;
            let primary = self.libraries.primary_start(library);
            let clip = |(start, end): codemap::Span, offset: u64| {
                shadowed((start.wrapping_add(offset), end.wrapping_add(offset)))
            };
            if hit.mapping_start != primary {
                // A second mapping of the binary: V8's remapped builtins, logged (in worker
                // isolates) under the binary's name. Look them up where they were created.
                let offset = hit.mapping_start.wrapping_sub(primary);
                if let Some((frame, code, span)) = self.code_at(address.wrapping_sub(offset)) {
                    let (frame, code) = if is_blob(code) {
                        (self.in_library(frame, hit, span.0.wrapping_add(offset)), Code::Other)
                    } else {
                        (frame, code)
                    };
                    return (Resolved::Found(frame, code), Some(clip(span, offset)));
                }
            }
            let symbols = self.libraries.all[library].symbols();
            if let Some(file) = &symbols {
                let bias = file.bias(hit.mapping_start);
                if let Some((frame, span)) = self.cpp_frame(library, file, address.wrapping_sub(bias)) {
                    return (Resolved::Found(frame, Code::Other), Some(clip(span, bias)));
                }
            }
            return (Resolved::Found(self.library_frame(library), Code::Other), None);
        }
        if let Some(copy) = self.remapped_builtin(address) {
            if let Some((frame, code, (start, end))) = self.code_at(copy) {
                let offset = address.wrapping_sub(copy);
                let (start, end) = shadowed((start.wrapping_add(offset), end.wrapping_add(offset)));
                // And within the copy.
                let (copy_start, _, size) = self.remapped_copy().unwrap_or((address, address, 1));
                let span = (start.max(copy_start), end.min(copy_start.saturating_add(size)));
                return (Resolved::Found(frame, code), Some(span));
            }
        }
        (Resolved::Miss, None)
    }

    /// The frame of a builtin or bytecode handler that V8 logged inside a library's mapping
    /// (node 14's embedded blob, in the binary's own text): node's tick processor looks an
    /// address up in the libraries before V8's code, so this is the library's code, C++
    /// where an ELF symbol covers its `start`, else the library's. Named as V8 names it, and
    /// never skipped as a handler (its time is not the interpreted function's, for node).
    fn in_library(&mut self, frame: FrameId, hit: codemap::Hit, start: u64) -> FrameId {
        let named = self.libraries.all[hit.library]
            .symbols()
            .is_some_and(|file| file.lookup(start.wrapping_sub(file.bias(hit.mapping_start))).is_some());
        let kind = if named { FuncKind::Cpp } else { FuncKind::SharedLib };
        if let Some(frame) = self.in_library.get(&(frame, hit.library, kind)) {
            return *frame;
        }
        let name = self.builder.func_of_frame(frame).name;
        let func = self.native_func(hit.library, name, kind);
        let library_frame = self.builder.frame(Frame { func, line: None, column: None });
        self.in_library.insert((frame, hit.library, kind), library_frame);
        library_frame
    }

    /// The frame of the C++ symbol at `file_address`, and the file addresses around it that
    /// are that symbol.
    pub(super) fn cpp_frame(
        &mut self,
        library: usize,
        file: &Arc<SymbolFile>,
        file_address: u64,
    ) -> Option<(FrameId, codemap::Span)> {
        let (symbol, span) = file.lookup_range(file_address)?;
        if let Some(frame) = self.libraries.all[library].frames.get(&symbol) {
            return Some((*frame, span));
        }
        let name = self.builder.intern(&file.name(symbol));
        let func = self.native_func(library, name, FuncKind::Cpp);
        let frame = self.builder.frame(Frame { func, line: None, column: None });
        self.libraries.all[library].frames.insert(symbol, frame);
        Some((frame, span))
    }

    pub(super) fn library_frame(&mut self, library: usize) -> FrameId {
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
    pub(super) fn native_func(&mut self, library: usize, name: StrId, kind: FuncKind) -> cpuprof_model::FuncId {
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
    pub(super) fn remapped_builtin(&self, address: u64) -> Option<u64> {
        let (copy, blob_start, size) = self.remapped_copy()?;
        if address < copy || address - copy >= size {
            return None;
        }
        Some(blob_start + (address - copy))
    }

    /// Whether `span` overlaps the builtins' remapped copy.
    pub(super) fn remapped_builtin_overlap(&self, (start, end): codemap::Span) -> bool {
        self.remapped_copy().is_some_and(|(copy, _, size)| start < copy.saturating_add(size) && copy < end)
    }

    /// Where the copy starts, where the blob starts, and its size.
    fn remapped_copy(&self) -> Option<(u64, u64, u64)> {
        const CODE_RANGE: u64 = 512 << 20;
        const GRANULE: u64 = 256 << 10;
        let (blob_start, blob_end) = self.code.blob()?;
        let size = blob_end - blob_start;
        let copy = self.code_range?.checked_add(CODE_RANGE)?.checked_sub(size.checked_next_multiple_of(GRANULE)?)?;
        Some((copy, blob_start, size))
    }
}

/// Code of V8's embedded blob: builtins and bytecode handlers.
fn is_blob(code: Code) -> bool {
    matches!(code, Code::Builtin | Code::BytecodeHandler)
}

pub(super) fn plain_func(builder: &mut ProfileBuilder, name: &str, kind: FuncKind) -> cpuprof_model::FuncId {
    let name = builder.intern(name);
    builder.func(Func { name, file: StrId::EMPTY, line: None, column: None, kind, tier: None, library: None })
}

pub(super) fn js_func(builder: &mut ProfileBuilder, text: &str, tier: Option<Tier>) -> cpuprof_model::FuncId {
    js_func_of(builder, &split_js_name(text), tier)
}

pub(super) fn js_func_of(
    builder: &mut ProfileBuilder,
    js: &super::names::JsName,
    tier: Option<Tier>,
) -> cpuprof_model::FuncId {
    let name = builder.intern(&js.name);
    let file = builder.intern(&js.script);
    builder.func(Func { name, file, line: js.line, column: js.column, kind: FuncKind::Js, tier, library: None })
}
