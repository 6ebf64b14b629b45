use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap};

use crate::tables::{LineHits, Meta, Samples, Script, ScriptOrigin, SourceFormat, StackTable, Table};
use crate::timeline::SampleList;
use crate::{
    CodeObject, Deopt, Frame, FrameId, Func, FuncId, LibId, Library, Profile, SampleTimeline, StackId, StrId,
    StringTable, TimedSample, ValueType, ValueUnit, VmState,
};

/// A broken invariant found by [`ProfileBuilder::finish`]. Parsers only produce these when
/// they have a bug, so the messages speak about the model, not about input files.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelError {
    /// A sample row has the wrong number of values.
    #[error("sample {index} has {found} values, expected {expected} (one per value type)")]
    ValueCount {
        /// Sample row.
        index: usize,
        /// Values given.
        found: usize,
        /// Value types declared.
        expected: usize,
    },
    /// Some samples have a timestamp and others do not.
    #[error("sample {index} has no timestamp although earlier samples have one")]
    MixedTimestamps {
        /// Sample row.
        index: usize,
    },
    /// Some samples have a VM state and others do not.
    #[error("sample {index} has no VM state although other samples have one")]
    MixedStates {
        /// Sample row.
        index: usize,
    },
    /// A sample value is negative.
    #[error("sample {index} has the negative value {value}")]
    NegativeValue {
        /// Sample row.
        index: usize,
        /// The value.
        value: i64,
    },
    /// An id refers past the end of its table.
    #[error("{what} {index} refers to a missing entry")]
    Dangling {
        /// Which column holds the bad id.
        what: &'static str,
        /// Row in that column.
        index: usize,
    },
}

/// The only way to make a [`Profile`]. It interns and deduplicates as it goes, and
/// [`finish`](Self::finish) validates every invariant the way pprof's `CheckValid()` does.
#[derive(Debug)]
pub struct ProfileBuilder {
    strings: StringTable,
    funcs: Table<FuncId, Func>,
    func_index: FxHashMap<Func, FuncId>,
    frames: Table<FrameId, Frame>,
    frame_index: FxHashMap<Frame, FrameId>,
    libraries: Table<LibId, Library>,
    library_index: FxHashMap<StrId, LibId>,
    /// The file each file string names (its path for a `file://` url, else itself): one
    /// decoding per distinct string, not one per function added (trees repeat them per node).
    file_paths: FxHashMap<StrId, StrId>,
    stacks: StackTable,
    /// The stacks by (parent, frame), holding only their ids: the pair is read from `stacks`
    /// (a map keyed by the pair held 17 bytes a slot, and with 16 million stacks, at the limit,
    /// its growth alone passed 800 MB).
    stack_index: HashTable<StackId>,
    samples: Samples,
    /// The samples added with times, one row each, in the order added.
    timed: Option<Vec<TimedSample>>,
    value_types: Vec<ValueType>,
    line_hits: LineHits,
    scripts: Vec<Script>,
    jit: crate::Jit,
    meta: Meta,
    first_error: Option<ModelError>,
}

impl ProfileBuilder {
    /// A builder for a profile read from `format` whose samples carry one value per entry of
    /// `value_types`.
    pub fn new(format: SourceFormat, value_types: Vec<ValueType>) -> Self {
        let samples = Samples {
            values: vec![Vec::new(); value_types.len()].into(),
            units: value_types.iter().map(|t| t.unit).collect(),
            ..Samples::default()
        };
        Self {
            strings: StringTable::default(),
            funcs: Table::default(),
            func_index: FxHashMap::default(),
            frames: Table::default(),
            frame_index: FxHashMap::default(),
            libraries: Table::default(),
            library_index: FxHashMap::default(),
            file_paths: FxHashMap::default(),
            stacks: StackTable::default(),
            stack_index: HashTable::new(),
            samples,
            timed: None,
            value_types,
            line_hits: LineHits::default(),
            scripts: Vec::new(),
            jit: crate::Jit::default(),
            meta: Meta {
                format,
                start_ns: None,
                duration_ns: None,
                interval_ns: None,
                window: None,
                warnings: Vec::new(),
            },
            first_error: None,
        }
    }

    /// Makes the samples carry one value per entry of `value_types` instead, before any sample
    /// is added: for readers that learn what their samples carry only at the end (perf
    /// script's times), having added their stacks as they read.
    pub fn set_value_types(&mut self, value_types: Vec<ValueType>) {
        debug_assert!(self.samples.is_empty(), "value types are set before the samples");
        self.samples.values = vec![Vec::new(); value_types.len()].into();
        self.samples.units = value_types.iter().map(|t| t.unit).collect();
        self.value_types = value_types;
    }

    /// Interns `s`.
    pub fn intern(&mut self, s: &str) -> StrId {
        self.strings.intern(s)
    }

    /// The id of `func`, adding it if it is new; its file, when a `file://` url, as its path
    /// (one spelling whatever the input: see [`crate::file_url`]).
    pub fn func(&mut self, mut func: Func) -> FuncId {
        func.file = if let Some(file) = self.file_paths.get(&func.file) {
            *file
        } else {
            let file = match crate::file_url::path_of_file_url(self.strings.get(func.file)) {
                Some(path) => self.intern(&path),
                None => func.file,
            };
            self.file_paths.insert(func.file, file);
            file
        };
        if let Some(id) = self.func_index.get(&func) {
            return *id;
        }
        let id = FuncId::from_index(self.funcs.push(func));
        self.func_index.insert(func, id);
        id
    }

    /// The id of the library at `library.path`, adding it if the path is new (a library
    /// mapped several times is one library: the first mapping's range is kept).
    pub fn library(&mut self, library: Library) -> LibId {
        if let Some(id) = self.library_index.get(&library.path) {
            return *id;
        }
        let id = LibId::from_index(self.libraries.push(library));
        self.library_index.insert(library.path, id);
        id
    }

    /// The id here of library `id` of `profile` (another profile's), adding it if it is new.
    pub fn copy_library(&mut self, profile: &Profile, id: LibId) -> LibId {
        let library = profile.libraries[id];
        let path = self.intern(profile.strings.get(library.path));
        self.library(Library { path, ..library })
    }

    /// The id of `frame`, adding it if it is new.
    pub fn frame(&mut self, frame: Frame) -> FrameId {
        if let Some(id) = self.frame_index.get(&frame) {
            return *id;
        }
        let id = FrameId::from_index(self.frames.push(frame));
        self.frame_index.insert(frame, id);
        id
    }

    /// The function of a frame added before.
    pub fn func_of_frame(&self, frame: FrameId) -> Func {
        self.funcs[self.frames[frame].func]
    }

    /// The frame `frame` stands for.
    pub fn frame_of(&self, frame: FrameId) -> Frame {
        self.frames[frame]
    }

    /// The stack `frame` called from `parent` (`None`: a root), adding it if it is new.
    /// Because `parent` must already exist, parents always come before children.
    pub fn stack(&mut self, parent: Option<StackId>, frame: FrameId) -> StackId {
        let stacks = &mut self.stacks;
        let hash = stack_hash(parent, frame);
        let same = |id: &StackId| stacks.frame[id.index()] == frame && stacks.parent[id.index()] == parent;
        if let Some(id) = self.stack_index.find(hash, same) {
            return *id;
        }
        let id = StackId::from_index(stacks.frame.len());
        stacks.parent.push(parent);
        stacks.frame.push(frame);
        let stacks = &*stacks;
        self.stack_index.insert_unique(hash, id, |id| stack_hash(stacks.parent[id.index()], stacks.frame[id.index()]));
        id
    }

    /// The ids of the stacks added so far, in order: for readers that sum per stack by
    /// position and add the samples at the end.
    pub fn stack_ids(&self) -> impl DoubleEndedIterator<Item = StackId> + ExactSizeIterator + Clone {
        self.stacks.ids()
    }

    /// Adds every stack of `profile`, each frame translated by `frame_of` (called once per stack,
    /// parents first), and returns the new id of each of `profile`'s stacks. Stacks that become
    /// equal become one.
    pub fn copy_stacks(
        &mut self,
        profile: &Profile,
        mut frame_of: impl FnMut(&mut Self, FrameId) -> FrameId,
    ) -> Vec<StackId> {
        let mut stacks: Vec<StackId> = Vec::with_capacity(profile.stacks.len());
        // Parents come before children in a stack table.
        for (parent, frame) in profile.stacks.parents().iter().zip(profile.stacks.frames()) {
            let frame = frame_of(self, *frame);
            let parent = parent.map(|s| stacks[s.index()]);
            stacks.push(self.stack(parent, frame));
        }
        stacks
    }

    /// Adds a sample row. `time_ns` must be given for all samples or for none: with times,
    /// each row is one sample of the profile's [`SampleTimeline`], lasting its nanosecond value.
    pub fn sample(&mut self, stack: StackId, time_ns: Option<i64>, values: &[i64]) {
        let index = self.samples.stack.len();
        if values.len() != self.value_types.len() {
            self.note(ModelError::ValueCount { index, found: values.len(), expected: self.value_types.len() });
            return;
        }
        if let Some(value) = values.iter().copied().find(|v| *v < 0) {
            self.note(ModelError::NegativeValue { index, value });
        }
        let weight_ns = self.value_types.iter().position(|t| t.unit == ValueUnit::Nanoseconds).map_or(0, |k| values[k]);
        match (time_ns, &mut self.timed) {
            (Some(time_ns), Some(list)) => list.push(TimedSample { row: index as u32, time_ns, weight_ns }),
            (Some(time_ns), None) if index == 0 && self.samples.timeline.is_none() => {
                self.timed = Some(vec![TimedSample { row: 0, time_ns, weight_ns }]);
            }
            (None, None) => {}
            _ => self.note(ModelError::MixedTimestamps { index }),
        }
        self.samples.stack.push(stack);
        for (column, v) in self.samples.values.get_mut().into_iter().flatten().zip(values) {
            column.push(*v);
        }
    }

    /// Gives the rows a timeline of a reader's own: its samples' rows are those added with
    /// [`ProfileBuilder::sample`] (without times), in order, and the rows must be its sums.
    pub fn timeline(&mut self, timeline: SampleTimeline) {
        if self.timed.is_some() {
            self.note(ModelError::MixedTimestamps { index: 0 });
        }
        self.samples.timeline = Some(timeline);
    }

    /// Gives the rows added so far (with [`ProfileBuilder::sample`], without times) a
    /// timeline of a reader's own whose sums they are, and leaves those sums to it: the rows'
    /// values (their samples and summed durations) are found by the timeline's first walk,
    /// whatever makes it, or when first asked for. The values given with the rows are not kept.
    /// Add no rows after it.
    pub fn summed_timeline(&mut self, source: impl crate::SampleSource + 'static) {
        self.timeline(SampleTimeline::summing(source, self.samples.stack.len()));
        self.samples.values = std::sync::OnceLock::new();
    }

    /// Adds a sample row taken in VM state `state`. Use it for every sample or for none.
    pub fn sample_in_state(&mut self, stack: StackId, time_ns: Option<i64>, values: &[i64], state: VmState) {
        let index = self.samples.stack.len();
        match &mut self.samples.vm_state {
            Some(states) if states.len() == index => states.push(state),
            None if index == 0 => self.samples.vm_state = Some(vec![state]),
            _ => self.note(ModelError::MixedStates { index }),
        }
        self.sample(stack, time_ns, values);
    }

    /// Gives the rows added so far the tier of each one's leaf code (one per row; else none is
    /// kept). Add no rows after it.
    pub fn row_tiers(&mut self, tiers: Vec<Option<crate::Tier>>) {
        self.samples.tier = (tiers.len() == self.samples.stack.len()).then_some(tiers);
    }

    /// Adds a warning about the input for the user (kept in [`Meta::warnings`]).
    pub fn warn(&mut self, warning: impl Into<crate::Warning>) {
        self.meta.warnings.push(warning.into());
    }

    /// Records that `ticks` samples of `stack` executed 1-based `line`. Add the hits of
    /// one stack together, in the order the profile lists them.
    pub fn line_hit(&mut self, stack: StackId, line: u32, ticks: u32) {
        self.line_hits.stack.push(stack);
        self.line_hits.line.push(line);
        self.line_hits.ticks.push(ticks);
    }

    /// Sets the recording's start, length and mean sampling interval (ns).
    pub fn timing(&mut self, start_ns: Option<i64>, duration_ns: Option<i64>, interval_ns: Option<i64>) {
        self.meta.start_ns = start_ns;
        self.meta.duration_ns = duration_ns;
        self.meta.interval_ns = interval_ns;
    }

    /// Records the text of the script `file` (a later text of the same file replaces it); a
    /// `file://` url as its path, as [`ProfileBuilder::func`] names files.
    pub fn script(&mut self, file: &str, origin: ScriptOrigin, text: std::sync::Arc<str>) {
        let file = match crate::file_url::path_of_file_url(file) {
            Some(path) => self.intern(&path),
            None => self.intern(file),
        };
        self.scripts.retain(|s| s.file != file);
        self.scripts.push(Script { file, origin, text });
    }

    /// Records the scripts' text `profile` carries (a profile rebuilt from it keeps them).
    pub fn copy_scripts(&mut self, profile: &Profile) {
        for script in &profile.scripts {
            self.script(profile.strings.get(script.file), script.origin, script.text.clone());
        }
    }

    /// The compilations and deoptimizations the profile records, to add to.
    pub fn jit_mut(&mut self) -> &mut crate::Jit {
        &mut self.jit
    }

    /// Records the compilations and deoptimizations `profile` records, for a profile rebuilt
    /// from it whose functions are the same (their ids re-made here).
    pub fn copy_jit(&mut self, profile: &Profile) {
        let jit = &profile.jit;
        let mut funcs = FxHashMap::default();
        let mut func = |b: &mut Self, old: FuncId| *funcs.entry(old).or_insert_with(|| b.copy_func(profile, old));
        let code = jit
            .code
            .iter()
            .map(|c| CodeObject {
                func: func(self, c.func),
                inlined: c.inlined.iter().map(|f| func(self, *f)).collect(),
                ..c.clone()
            })
            .collect();
        let deopts = jit
            .deopts
            .iter()
            .map(|d| Deopt {
                kind: self.copy_string(profile, d.kind),
                reason: self.copy_string(profile, d.reason),
                position: self.copy_string(profile, d.position),
                inlined_at: d.inlined_at.iter().map(|s| self.copy_string(profile, *s)).collect(),
                ..d.clone()
            })
            .collect();
        let not_optimized =
            jit.not_optimized.iter().map(|(f, why)| (func(self, *f), self.copy_string(profile, *why))).collect();
        self.jit = crate::Jit { code, deopts, not_optimized, deopts_logged: jit.deopts_logged };
    }

    fn copy_string(&mut self, profile: &Profile, id: StrId) -> StrId {
        self.intern(profile.strings.get(id))
    }

    /// `profile`'s function `old` as a function of this builder.
    fn copy_func(&mut self, profile: &Profile, old: FuncId) -> FuncId {
        let f = profile.funcs[old];
        let library = f.library.map(|l| self.copy_library(profile, l));
        let name = self.copy_string(profile, f.name);
        let file = self.copy_string(profile, f.file);
        self.func(Func { name, file, library, ..f })
    }

    /// Takes `meta`'s facts about the recording — its timing, the window its samples were cut
    /// to, its warnings — for a profile rebuilt from another one (a transform of its stacks).
    pub fn recording_of(&mut self, meta: &Meta) {
        self.meta.start_ns = meta.start_ns;
        self.meta.duration_ns = meta.duration_ns;
        self.meta.interval_ns = meta.interval_ns;
        self.meta.window = meta.window;
        self.meta.warnings.extend(meta.warnings.iter().cloned());
    }

    /// Says the samples added are only those of `window` of the recording (see
    /// [`crate::Meta::window`]); [`Self::timing`] gives the window's start and length.
    pub fn window(&mut self, window: crate::Window) {
        self.meta.window = Some(window);
    }

    fn note(&mut self, error: ModelError) {
        self.first_error.get_or_insert(error);
    }

    /// Validates and returns the profile.
    pub fn finish(mut self) -> Result<Profile, ModelError> {
        if let Some(error) = self.first_error.take() {
            return Err(error);
        }
        // Line hits are looked up by binary search on the stack column.
        if !self.line_hits.stack.is_sorted() {
            let mut order: Vec<usize> = (0..self.line_hits.len()).collect();
            order.sort_by_key(|i| self.line_hits.stack[*i]);
            let hits = &self.line_hits;
            self.line_hits = LineHits {
                stack: order.iter().map(|i| hits.stack[*i]).collect(),
                line: order.iter().map(|i| hits.line[*i]).collect(),
                ticks: order.iter().map(|i| hits.ticks[*i]).collect(),
            };
        }
        if let Some(mut timed) = self.timed.take() {
            // The timeline is in time order; samples taken at one time stay in the order added.
            timed.sort_by_key(|s| s.time_ns);
            self.samples.timeline = Some(SampleTimeline::new(SampleList(timed)));
        }
        if let Some(states) = &self.samples.vm_state {
            if states.len() != self.samples.stack.len() {
                return Err(ModelError::MixedStates { index: states.len() });
            }
        }
        let profile = Profile {
            strings: self.strings,
            funcs: self.funcs,
            frames: self.frames,
            libraries: self.libraries,
            stacks: self.stacks,
            samples: self.samples,
            value_types: self.value_types,
            line_hits: self.line_hits,
            scripts: self.scripts,
            jit: self.jit,
            meta: self.meta,
        };
        validate(&profile)?;
        Ok(profile)
    }
}

/// Checks that every id refers to an existing row and that parents precede children.
fn validate(p: &Profile) -> Result<(), ModelError> {
    let dangling = |what, index| Err(ModelError::Dangling { what, index });
    for (i, f) in p.funcs.as_slice().iter().enumerate() {
        if f.name.index() >= p.strings.len()
            || f.file.index() >= p.strings.len()
            || f.library.is_some_and(|l| l.index() >= p.libraries.len())
        {
            return dangling("function", i);
        }
    }
    for (i, l) in p.libraries.as_slice().iter().enumerate() {
        if l.path.index() >= p.strings.len() {
            return dangling("library", i);
        }
    }
    for (i, f) in p.frames.as_slice().iter().enumerate() {
        if f.func.index() >= p.funcs.len() {
            return dangling("frame", i);
        }
    }
    for (i, (parent, frame)) in p.stacks.parent.iter().zip(&p.stacks.frame).enumerate() {
        if frame.index() >= p.frames.len() || parent.is_some_and(|s| s.index() >= i) {
            return dangling("stack", i);
        }
    }
    let stacks = p.stacks.len();
    if let Some(i) = p.samples.stack.iter().position(|s| s.index() >= stacks) {
        return dangling("sample", i);
    }
    if let Some(i) = p.line_hits.stack.iter().position(|s| s.index() >= stacks) {
        return dangling("line hit", i);
    }
    Ok(())
}

/// The hash of a stack's (parent, frame) pair in [`ProfileBuilder`]'s index.
fn stack_hash(parent: Option<StackId>, frame: FrameId) -> u64 {
    FxBuildHasher.hash_one((parent, frame))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{FuncKind, ValueUnit};

    fn builder() -> ProfileBuilder {
        ProfileBuilder::new(SourceFormat::CpuProfile, vec![ValueType::SAMPLES, ValueType::WALL_NS])
    }

    /// A frame of a JavaScript function `name`, without a file or a position.
    pub(crate) fn func(b: &mut ProfileBuilder, name: &str) -> FrameId {
        let name = b.intern(name);
        let func = b.func(Func {
            name,
            file: StrId::EMPTY,
            line: None,
            column: None,
            kind: FuncKind::Js,
            tier: None,
            library: None,
        });
        b.frame(Frame { func, line: None, column: None })
    }

    #[test]
    fn deduplicates_and_orders_parents_first() {
        let mut b = builder();
        let a = func(&mut b, "a");
        let a_again = func(&mut b, "a");
        assert_eq!(a, a_again);
        let root = b.stack(None, a);
        let child = b.stack(Some(root), a);
        assert_eq!(b.stack(Some(root), a), child);
        assert!(root < child);
        b.sample(child, None, &[1, 10]);
        let p = b.finish().unwrap();
        assert_eq!(p.stacks.walk(child).count(), 2);
        assert_eq!(p.value_index(ValueUnit::Nanoseconds), Some(1));
        assert_eq!(p.strings.get(StrId::EMPTY), "");
    }

    #[test]
    fn timed_samples_make_a_timeline_in_time_order_and_windows_resum_the_rows() {
        let mut b = builder();
        let (fa, fb) = (func(&mut b, "a"), func(&mut b, "b"));
        let (a, b_stack) = (b.stack(None, fa), b.stack(None, fb));
        // Added out of order: the timeline sorts them, ties keeping the order added.
        b.sample(a, Some(30), &[1, 5]);
        b.sample(b_stack, Some(10), &[1, 7]);
        b.sample(a, Some(10), &[1, 3]);
        b.sample(b_stack, Some(20), &[1, 11]);
        let mut p = b.finish().unwrap();
        let mut walked = Vec::new();
        p.samples.timeline().unwrap().for_each(|s| walked.push((s.row, s.time_ns, s.weight_ns)));
        assert_eq!(walked, [(1, 10, 7), (2, 10, 3), (3, 20, 11), (0, 30, 5)]);
        // [10, 30): rows 1, 2 and 3 remain, renumbered 0, 1, 2; row 0 (at 30) goes.
        assert!(p.retain_window(10, 30));
        assert_eq!(p.samples.stacks(), [b_stack, a, b_stack]);
        assert_eq!(p.samples.values(1), [7, 3, 11]);
        let mut walked = Vec::new();
        p.samples.timeline().unwrap().for_each(|s| walked.push((s.row, s.time_ns)));
        assert_eq!(walked, [(0, 10), (1, 10), (2, 20)]);
        // A window of the window: only what both hold.
        assert!(p.retain_window(15, 100));
        assert_eq!(p.samples.stacks(), [b_stack]);
        assert_eq!((p.samples.values(0), p.samples.values(1)), (&[1][..], &[11][..]));
    }

    #[test]
    fn rejects_wrong_value_count_and_mixed_times() {
        let mut b = builder();
        let a = func(&mut b, "a");
        let s = b.stack(None, a);
        b.sample(s, None, &[1]);
        assert!(matches!(b.finish(), Err(ModelError::ValueCount { index: 0, found: 1, expected: 2 })));

        let mut b = builder();
        let a = func(&mut b, "a");
        let s = b.stack(None, a);
        b.sample(s, Some(1), &[1, 1]);
        b.sample(s, None, &[1, 1]);
        assert_eq!(b.finish().unwrap_err(), ModelError::MixedTimestamps { index: 1 });
    }

    #[test]
    fn line_hits_are_sorted_by_stack() {
        let mut b = builder();
        let a = func(&mut b, "a");
        let s0 = b.stack(None, a);
        let s1 = b.stack(Some(s0), a);
        b.line_hit(s1, 7, 2);
        b.line_hit(s0, 3, 1);
        b.line_hit(s1, 9, 4);
        let p = b.finish().unwrap();
        assert_eq!(p.line_hits.of(s1).collect::<Vec<_>>(), vec![(7, 2), (9, 4)]);
        assert_eq!(p.line_hits.of(s0).collect::<Vec<_>>(), vec![(3, 1)]);
    }
}
