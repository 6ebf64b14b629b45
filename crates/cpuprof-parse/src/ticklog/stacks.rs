//! Stacks: each tick's addresses resolved against the code map (V8 code, then the
//! libraries and their ELF symbols) into frames, the frames into a stack and the stack into a
//! sample row, with caches so that the code map is consulted once per distinct raw stack.

use std::sync::Arc;

use cpuprof_model::{Frame, FrameId, Func, FuncKind, Library, ProfileBuilder, StackId, StrId, Tier, VmState};
use cpuprof_symbols::SymbolFile;

use super::codemap::{self, Code, Name};
use super::lines::Tick;
use super::names::split_js_name;
use super::{Decoder, CACHE_WORDS};

/// A stack cache entry: the raw key lives in `Decoder::keys`.
pub(super) struct Cached {
    pub(super) hash: u64,
    pub(super) generation: u32,
    pub(super) key_start: u32,
    pub(super) key_len: u32,
    pub(super) row: u32,
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
    Miss,
}

impl Decoder {
    pub(super) fn plain_func(&mut self, name: &str, kind: FuncKind) -> cpuprof_model::FuncId {
        plain_func(&mut self.builder, name, kind)
    }

    /// The frame and kind of the code covering `address`, naming it if no tick did before.
    pub(super) fn code_at(&mut self, address: u64) -> Option<(FrameId, Code)> {
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
    pub(super) fn changed(&mut self, span: Option<codemap::Span>) {
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

    pub(super) fn tick(&mut self, tick: &Tick, frames: &[u64]) {
        self.ticks += 1;
        let t = if tick.timed {
            tick.time_us
        } else {
            // No time: the ticks are one interval apart (a millisecond, in logs of that age).
            self.untimed += 1;
            i64::try_from(self.untimed - 1).unwrap_or(i64::MAX).saturating_mul(1000)
        };
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
                let row = self.row_of(stack, leaf, self.vm_state(tick.state));
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

    pub(super) fn row_of(&mut self, stack: StackId, leaf: FrameId, state: VmState) -> u32 {
        *self.row_index.entry((stack, state)).or_insert_with(|| {
            self.rows.push((stack, state));
            self.row_leaf.push(leaf);
            self.row_ticks.push(0);
            (self.rows.len() - 1) as u32
        })
    }

    /// The stack of a tick, leaf first as V8 writes it: frame 0 is the pc (or the external
    /// callback), then the top of stack if it is a JavaScript function, then the frames.
    pub(super) fn stack_of(&mut self, tick: &Tick, frames: &[u64]) -> (StackId, FrameId) {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let leaf = if tick.external { tick.tos } else { tick.pc };
        let mut handler = None;
        if leaf == 0 && !tick.external {
            // No pc at all: time in the VM outside any code (V8 logs these, mostly in state
            // OTHER), not code that nothing covers. Named by the state, as `(program)` is in a
            // .cpuprofile.
            let frame = self.no_pc_frame(self.vm_state(tick.state));
            scratch.push(frame);
        } else {
            match self.resolve(leaf) {
                Resolved::Found(frame, Code::BytecodeHandler) => handler = Some(frame),
                Resolved::Found(frame, _) => scratch.push(frame),
                Resolved::Miss => scratch.push(self.unaccounted()),
            }
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

    /// What is at `address`: V8's code first, then the libraries (C++ by ELF symbol, else the
    /// library itself), then V8's remapped copy of the builtins.
    pub(super) fn resolve(&mut self, address: u64) -> Resolved {
        if let Some(resolved) = self.resolved.get(&address) {
            return *resolved;
        }
        let resolved = self.resolve_anew(address);
        self.seen.insert(address);
        self.resolved.insert(address, resolved);
        resolved
    }

    pub(super) fn resolve_anew(&mut self, address: u64) -> Resolved {
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

    pub(super) fn cpp_frame(&mut self, library: usize, file: &Arc<SymbolFile>, file_address: u64) -> Option<FrameId> {
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
}

pub(super) fn plain_func(builder: &mut ProfileBuilder, name: &str, kind: FuncKind) -> cpuprof_model::FuncId {
    let name = builder.intern(name);
    builder.func(Func { name, file: StrId::EMPTY, line: None, column: None, kind, tier: None, library: None })
}

pub(super) fn js_func(builder: &mut ProfileBuilder, text: &str, tier: Option<Tier>) -> cpuprof_model::FuncId {
    let js = split_js_name(text);
    let name = builder.intern(&js.name);
    let file = builder.intern(&js.script);
    builder.func(Func { name, file, line: js.line, column: js.column, kind: FuncKind::Js, tier, library: None })
}
