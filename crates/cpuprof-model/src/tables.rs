use std::marker::PhantomData;
use std::ops::Index;

use std::borrow::Cow;

use crate::{FrameId, FuncId, LibId, SampleTimeline, StackId, StrId, StringTable, TimedSample};

/// A column of entities addressed by a typed id (`Table<FuncId, Func>`).
#[derive(Clone, Debug)]
pub struct Table<I, T> {
    rows: Vec<T>,
    _id: PhantomData<I>,
}

impl<I, T> Default for Table<I, T> {
    fn default() -> Self {
        Self { rows: Vec::new(), _id: PhantomData }
    }
}

impl<I, T> Table<I, T> {
    pub(crate) fn push(&mut self, row: T) -> usize {
        self.rows.push(row);
        self.rows.len() - 1
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The rows in id order.
    pub fn as_slice(&self) -> &[T] {
        &self.rows
    }
}

macro_rules! index_by {
    ($id:ty, $row:ty) => {
        impl Index<$id> for Table<$id, $row> {
            type Output = $row;
            fn index(&self, id: $id) -> &$row {
                &self.rows[id.index()]
            }
        }
    };
}
index_by!(FuncId, Func);
index_by!(FrameId, Frame);
index_by!(LibId, Library);

/// What a function is. Pseudo-frames are told apart by kind, never by name:
/// a user function may well be called `(program)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FuncKind {
    /// JavaScript (or WebAssembly) code with a script.
    Js,
    /// Native code: V8 builtins, C++ callbacks, compiled regular expressions.
    Native,
    /// V8's `(program)`: time in the VM with no JavaScript stack.
    Program,
    /// V8's `(idle)`: the event loop waiting.
    Idle,
    /// V8's `(garbage collector)`.
    Gc,
    /// The `(root)` of a V8 call tree: never a row of its own.
    Root,
    /// Anything else.
    Other,
    /// A C++ function, named from an ELF symbol table.
    Cpp,
    /// Code inside a shared library (or executable) that no symbol covers: named by the library.
    SharedLib,
    /// A V8 builtin or bytecode handler.
    Builtin,
    /// A compiled regular expression.
    Regexp,
    /// An address no code map entry covers (V8's tick processor calls these "unaccounted").
    Unknown,
}

impl FuncKind {
    /// The lowercase name used in JSON and CSV output.
    pub fn as_str(self) -> &'static str {
        match self {
            FuncKind::Js => "js",
            FuncKind::Native => "native",
            FuncKind::Program => "program",
            FuncKind::Idle => "idle",
            FuncKind::Gc => "gc",
            FuncKind::Root | FuncKind::Other => "other",
            FuncKind::Cpp => "cpp",
            FuncKind::SharedLib => "shared-lib",
            FuncKind::Builtin => "builtin",
            FuncKind::Regexp => "regexp",
            FuncKind::Unknown => "unknown",
        }
    }
}

/// The V8 execution tier of JavaScript code, as tick logs record it per code object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    /// Bytecode run by the Ignition interpreter (`~`).
    Interpreted,
    /// Sparkplug's baseline code (`^`).
    Sparkplug,
    /// Maglev's mid-tier optimized code (`+`).
    Maglev,
    /// TurboFan's optimized code (`*`).
    TurboFan,
    /// Native-context-independent code of V8 8 and 9 (`-`).
    NativeContextIndependent,
}

impl Tier {
    /// The tier of a V8 log marker (`~ ^ + * -`), `None` for any other byte.
    pub fn from_marker(marker: u8) -> Option<Tier> {
        match marker {
            b'~' => Some(Tier::Interpreted),
            b'^' => Some(Tier::Sparkplug),
            b'+' => Some(Tier::Maglev),
            b'*' => Some(Tier::TurboFan),
            b'-' => Some(Tier::NativeContextIndependent),
            _ => None,
        }
    }

    /// The tier's name in reports' data (JSON, CSV): `interpreted`, `sparkplug`, `maglev`,
    /// `turbofan`, `nci`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Interpreted => "interpreted",
            Tier::Sparkplug => "sparkplug",
            Tier::Maglev => "maglev",
            Tier::TurboFan => "turbofan",
            Tier::NativeContextIndependent => "nci",
        }
    }

    /// The marker V8's logs (and `node --prof-process`) put before a function name.
    pub fn marker(self) -> char {
        match self {
            Tier::Interpreted => '~',
            Tier::Sparkplug => '^',
            Tier::Maglev => '+',
            Tier::TurboFan => '*',
            Tier::NativeContextIndependent => '-',
        }
    }
}

/// A library: a shared object or executable mapped into the process (pprof's `Mapping`,
/// samply's lib table). Native code names its library instead of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Library {
    /// The path as the profile has it (`/usr/lib/x86_64-linux-gnu/libc.so.6`).
    pub path: StrId,
    /// `[start, end)` of its first mapping in the process, if known.
    pub range: Option<(u64, u64)>,
}

/// A function: what a top-N table groups by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Func {
    /// The name as the profile has it; `StrId::EMPTY` for anonymous functions.
    pub name: StrId,
    /// The script as the profile names it, a `file://` url as its path (see
    /// [`crate::file_url`]); `StrId::EMPTY` when unknown.
    pub file: StrId,
    /// 1-based line where the function starts, if known.
    pub line: Option<u32>,
    /// 1-based column where the function starts, if known.
    pub column: Option<u32>,
    /// What kind of code this is.
    pub kind: FuncKind,
    /// The tier the code ran in, when the profile keeps tiers apart (tick logs read with
    /// `split_tiers`): then each tier of a function is a function of its own.
    pub tier: Option<Tier>,
    /// The library native code lives in (tick logs' C++ and shared-library code).
    pub library: Option<LibId>,
}

impl Func {
    /// The name as reports show it: with the tier's marker before it (`*f`, `~(anonymous)`)
    /// when the function has a tier, else the plain name (`""` for anonymous functions).
    pub fn display_name<'a>(&self, strings: &'a StringTable) -> Cow<'a, str> {
        let name = strings.get(self.name);
        match self.tier {
            None => Cow::Borrowed(name),
            Some(tier) if name.is_empty() => Cow::Owned(format!("{}(anonymous)", tier.marker())),
            Some(tier) => Cow::Owned(format!("{}{name}", tier.marker())),
        }
    }

    /// The file as reports show it: the script, or for native code the path of its library.
    pub fn display_file<'a>(&self, strings: &'a StringTable, libraries: &Table<LibId, Library>) -> &'a str {
        match self.library {
            Some(library) => strings.get(libraries[library].path),
            None => strings.get(self.file),
        }
    }
}

/// A frame: a function, optionally at the position that was executing (a call site or
/// the sampled instruction). V8 `.cpuprofile` nodes carry no such position, so their
/// frames have `line == None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    /// The function this frame belongs to.
    pub func: FuncId,
    /// 1-based line executing in this frame, if known.
    pub line: Option<u32>,
    /// 1-based column executing in this frame, if known.
    pub column: Option<u32>,
}

/// The stack prefix tree.
///
/// Invariants (checked by [`crate::ProfileBuilder::finish`]): a stack's parent always has a
/// smaller id than the stack itself, so one forward pass visits parents before children and
/// one backward pass visits children before parents, without recursion; no two stacks share
/// the same `(parent, frame)`.
#[derive(Clone, Debug, Default)]
pub struct StackTable {
    pub(crate) parent: Vec<Option<StackId>>,
    pub(crate) frame: Vec<FrameId>,
}

impl StackTable {
    /// Number of stacks.
    pub fn len(&self) -> usize {
        self.frame.len()
    }

    /// True when there are no stacks.
    pub fn is_empty(&self) -> bool {
        self.frame.is_empty()
    }

    /// The caller stack of `stack`, `None` at a root.
    pub fn parent(&self, stack: StackId) -> Option<StackId> {
        self.parent[stack.index()]
    }

    /// The innermost frame of `stack`.
    pub fn frame(&self, stack: StackId) -> FrameId {
        self.frame[stack.index()]
    }

    /// Parent column, indexed by stack position.
    pub fn parents(&self) -> &[Option<StackId>] {
        &self.parent
    }

    /// Frame column, indexed by stack position.
    pub fn frames(&self) -> &[FrameId] {
        &self.frame
    }

    /// Frames of `stack` from the leaf up to the root.
    pub fn walk(&self, stack: StackId) -> impl Iterator<Item = FrameId> + '_ {
        std::iter::successors(Some(stack), |s| self.parent(*s)).map(|s| self.frame(s))
    }
}

/// The unit of one sample value column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueUnit {
    /// A plain count of samples.
    Count,
    /// Nanoseconds.
    Nanoseconds,
}

/// What one sample value column counts or times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// Samples taken.
    Samples,
    /// A file's sample records, one each, where nothing says how many samples a record
    /// stands for (a pprof profile of times without counts or a usable period): not counts of
    /// samples taken, so no test of sampling noise holds on them.
    Records,
    /// CPU time.
    Cpu,
    /// Wall-clock time (profiles that include idle time).
    Wall,
}

impl ValueKind {
    /// The name pprof's `sample_type` uses (`samples`, `cpu`, `wall`).
    pub fn as_str(self) -> &'static str {
        match self {
            ValueKind::Samples => "samples",
            ValueKind::Records => "records",
            ValueKind::Cpu => "cpu",
            ValueKind::Wall => "wall",
        }
    }
}

/// What one sample value column measures (pprof's `sample_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ValueType {
    /// What is measured.
    pub kind: ValueKind,
    /// The unit of the values.
    pub unit: ValueUnit,
}

impl ValueType {
    /// Number of samples.
    pub const SAMPLES: ValueType = ValueType { kind: ValueKind::Samples, unit: ValueUnit::Count };
    /// Number of sample records (see [`ValueKind::Records`]).
    pub const RECORDS: ValueType = ValueType { kind: ValueKind::Records, unit: ValueUnit::Count };
    /// Wall-clock nanoseconds (profiles that include idle time).
    pub const WALL_NS: ValueType = ValueType { kind: ValueKind::Wall, unit: ValueUnit::Nanoseconds };
    /// CPU nanoseconds.
    pub const CPU_NS: ValueType = ValueType { kind: ValueKind::Cpu, unit: ValueUnit::Nanoseconds };
}

/// What the VM was doing when a sample was taken (V8 11's `StateTag`, as tick logs record it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum VmState {
    /// Running JavaScript.
    Js,
    /// Collecting garbage.
    Gc,
    /// Parsing JavaScript.
    Parser,
    /// Compiling bytecode.
    BytecodeCompiler,
    /// Optimizing (Sparkplug, Maglev, TurboFan).
    Compiler,
    /// Inside V8 doing something else.
    Other,
    /// Outside V8: in a C++ callback or native code.
    External,
    /// Blocked in `Atomics.wait`.
    AtomicsWait,
    /// Idle: the embedder has no work.
    Idle,
    /// A state this version does not know.
    Unknown,
}

impl VmState {
    /// The state of V8's numeric `StateTag` (V8 11.3 numbering).
    pub fn from_tag(tag: i64) -> VmState {
        match tag {
            0 => VmState::Js,
            1 => VmState::Gc,
            2 => VmState::Parser,
            3 => VmState::BytecodeCompiler,
            4 => VmState::Compiler,
            5 => VmState::Other,
            6 => VmState::External,
            7 => VmState::AtomicsWait,
            8 => VmState::Idle,
            _ => VmState::Unknown,
        }
    }

    /// The uppercase name V8 uses (`JS`, `GC`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            VmState::Js => "JS",
            VmState::Gc => "GC",
            VmState::Parser => "PARSER",
            VmState::BytecodeCompiler => "BYTECODE_COMPILER",
            VmState::Compiler => "COMPILER",
            VmState::Other => "OTHER",
            VmState::External => "EXTERNAL",
            VmState::AtomicsWait => "ATOMICS_WAIT",
            VmState::Idle => "IDLE",
            VmState::Unknown => "UNKNOWN",
        }
    }
}

/// Samples as columns. Row `i` is one sample, or (as readers aggregate) all the samples of
/// one stack (and VM state): `values[k][i]` is then their sum for value type `k` (the
/// `samples/count` column says how many there were). Where the format has times, the
/// [`SampleTimeline`] gives the samples one at a time; the rows are then its sums.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    pub(crate) stack: Vec<StackId>,
    pub(crate) vm_state: Option<Vec<VmState>>,
    /// The tier of each row's leaf code, where the reader kept it (tick logs read with their
    /// JIT records): which of V8's compilers made the code the sample was taken in.
    pub(crate) tier: Option<Vec<Option<Tier>>>,
    /// The value columns; unset while they are left to the timeline to sum (a reader that
    /// keeps a timeline need not walk it only to sum the rows: the first walk does).
    pub(crate) values: std::sync::OnceLock<Vec<Vec<i64>>>,
    /// Each column's unit, for summing them from the timeline.
    pub(crate) units: Vec<ValueUnit>,
    pub(crate) timeline: Option<SampleTimeline>,
}

impl Samples {
    /// Number of sample rows.
    pub fn len(&self) -> usize {
        self.stack.len()
    }

    /// True when there are no sample rows.
    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }

    /// The leaf stack of each row.
    pub fn stacks(&self) -> &[StackId] {
        &self.stack
    }

    /// The samples one at a time in time order, when the profile keeps its times.
    pub fn timeline(&self) -> Option<&SampleTimeline> {
        self.timeline.as_ref()
    }

    /// The VM state of each row, when the format records one (tick logs).
    pub fn vm_states(&self) -> Option<&[VmState]> {
        self.vm_state.as_deref()
    }

    /// The tier of each row's leaf code, when the reader kept it.
    pub fn tiers(&self) -> Option<&[Option<Tier>]> {
        self.tier.as_deref()
    }

    /// The column of value type number `k` (see [`Profile::value_types`]). When the columns
    /// were left to the timeline and no walk found them yet, this walks it (a pass over every
    /// sample): an analysis over time that walks anyway should do so first.
    pub fn values(&self, k: usize) -> &[i64] {
        &self.columns()[k]
    }

    /// Whether the value columns are known without walking the timeline (`false`: they are
    /// left to its first walk, see [`crate::ProfileBuilder::summed_timeline`]).
    pub fn values_known(&self) -> bool {
        self.values.get().is_some() || self.timeline.as_ref().is_some_and(SampleTimeline::sums_known)
    }

    fn columns(&self) -> &Vec<Vec<i64>> {
        self.values.get_or_init(|| self.summed())
    }

    /// The value columns from the timeline's sums.
    fn summed(&self) -> Vec<Vec<i64>> {
        let sums = self.timeline.as_ref().and_then(SampleTimeline::row_sums).unwrap_or(&[]);
        let sum = |row: usize| sums.get(row).copied().unwrap_or((0, 0));
        let column = |unit: ValueUnit| -> Vec<i64> {
            (0..self.stack.len())
                .map(|row| match unit {
                    ValueUnit::Count => sum(row).0,
                    ValueUnit::Nanoseconds => sum(row).1,
                })
                .collect()
        };
        self.units.iter().map(|u| column(*u)).collect()
    }

    /// Multiplies value column `k` by `num / den` (rounded to the nearest integer, `den > 0`):
    /// times of windows of different lengths put on one scale (per second of window). The
    /// timeline goes: its samples no longer add up to the rows.
    pub fn scale_values(&mut self, k: usize, num: i64, den: i64) {
        self.columns();
        self.timeline = None;
        let den = i128::from(den.max(1));
        let Some(columns) = self.values.get_mut() else { return };
        for v in &mut columns[k] {
            let scaled = (i128::from(*v) * i128::from(num) + den / 2).div_euclid(den);
            *v = i64::try_from(scaled).unwrap_or(if scaled < 0 { i64::MIN } else { i64::MAX });
        }
    }
}

/// Line-level hit counts of stacks (V8's `positionTicks`): `ticks[i]` samples of `stack[i]`
/// executed 1-based `line[i]`. Rows are sorted by stack, in the order the profile lists them.
#[derive(Clone, Debug, Default)]
pub struct LineHits {
    pub(crate) stack: Vec<StackId>,
    pub(crate) line: Vec<u32>,
    pub(crate) ticks: Vec<u32>,
}

impl LineHits {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.stack.len()
    }

    /// True when no stack has line hits.
    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }

    /// `(line, ticks)` pairs of `stack`, in profile order.
    pub fn of(&self, stack: StackId) -> impl Iterator<Item = (u32, u32)> + '_ {
        let start = self.stack.partition_point(|s| *s < stack);
        let end = self.stack.partition_point(|s| *s <= stack);
        self.line[start..end].iter().copied().zip(self.ticks[start..end].iter().copied())
    }
}

/// The format a profile was read from: one list for the model, the parser (which reads each)
/// and the CLI (which names them). Exhaustive, so that adding one is an error wherever a
/// format must be handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceFormat {
    /// V8 `.cpuprofile` JSON (`node --cpu-prof`, inspector `Profiler.stop`, DevTools).
    CpuProfile,
    /// V8 tick log (`node --prof`, `isolate-*-v8.log`).
    TickLog,
    /// pprof `profile.proto` (`go tool pprof`, Pyroscope, Parca).
    Pprof,
    /// Chrome trace events (`Profile` + `ProfileChunk`): DevTools' Performance panel, node's
    /// `--trace-event-categories disabled-by-default-v8.cpu_profiler`.
    Trace,
    /// Folded stacks, `a;b;c 42` (inferno, FlameGraph, perf scripts).
    Folded,
    /// The JSON of V8's tick processor (`node --prof-process --preprocess`), as speedscope imports it.
    PreprocessJson,
    /// Linux `perf script` text (`perf record -g node --perf-basic-prof app.js`).
    PerfScript,
}

impl SourceFormat {
    /// Every format, in the order help texts list them.
    ///
    /// ```
    /// use cpuprof_model::SourceFormat;
    /// assert_eq!("ticklog".parse(), Ok(SourceFormat::TickLog));
    /// for format in SourceFormat::ALL {
    ///     assert_eq!(format.as_str().parse(), Ok(format));
    /// }
    /// assert!("json".parse::<SourceFormat>().is_err());
    /// ```
    pub const ALL: [SourceFormat; 7] = [
        SourceFormat::CpuProfile,
        SourceFormat::TickLog,
        SourceFormat::Pprof,
        SourceFormat::Trace,
        SourceFormat::Folded,
        SourceFormat::PreprocessJson,
        SourceFormat::PerfScript,
    ];

    /// The name used in reports (and to name the format when it is chosen by hand).
    pub fn as_str(self) -> &'static str {
        match self {
            SourceFormat::CpuProfile => "cpuprofile",
            SourceFormat::TickLog => "ticklog",
            SourceFormat::Pprof => "pprof",
            SourceFormat::Trace => "trace",
            SourceFormat::Folded => "folded",
            SourceFormat::PreprocessJson => "preprocess",
            SourceFormat::PerfScript => "perf-script",
        }
    }

    /// What the format is, in a few words (`V8 .cpuprofile JSON`).
    pub fn description(self) -> &'static str {
        match self {
            SourceFormat::CpuProfile => "V8 .cpuprofile JSON",
            SourceFormat::TickLog => "V8 tick log (node --prof)",
            SourceFormat::Pprof => "pprof profile.proto",
            SourceFormat::Trace => "Chrome trace events JSON",
            SourceFormat::Folded => "Folded stacks (a;b;c 42)",
            SourceFormat::PreprocessJson => "V8 tick processor JSON (node --prof-process --preprocess)",
            SourceFormat::PerfScript => "Linux perf script text (perf record -g)",
        }
    }
}

impl std::str::FromStr for SourceFormat {
    type Err = UnknownSourceFormat;

    /// The format [`SourceFormat::as_str`] names.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        SourceFormat::ALL.into_iter().find(|f| f.as_str() == name).ok_or(UnknownSourceFormat)
    }
}

/// A name that is not one of [`SourceFormat::as_str`]'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a profile format cpuprof reads ({})", source_format_names())]
pub struct UnknownSourceFormat;

/// "cpuprofile, ticklog, … or perf-script": every [`SourceFormat`]'s name, for messages.
fn source_format_names() -> String {
    let names: Vec<&str> = SourceFormat::ALL.iter().map(|f| f.as_str()).collect();
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Facts about the whole recording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    /// Where the profile came from.
    pub format: SourceFormat,
    /// Start of the recording in ns on the recorder's clock (monotonic for V8), if known.
    pub start_ns: Option<i64>,
    /// Length of the recording in ns, if known.
    pub duration_ns: Option<i64>,
    /// Mean interval between samples in ns, if known (for tick logs: the configured one).
    pub interval_ns: Option<i64>,
    /// The window its samples were last cut to (ns after the start of the recording as it
    /// was before), when they were: `start_ns` and `duration_ns` are the window's then.
    pub window: Option<crate::Window>,
    /// What the parser had to work around, one sentence each (shown to the user).
    pub warnings: Vec<crate::Warning>,
}

/// A parsed profile. Build one with [`crate::ProfileBuilder`].
#[derive(Clone, Debug)]
pub struct Profile {
    /// All strings.
    pub strings: StringTable,
    /// Functions, deduplicated.
    pub funcs: Table<FuncId, Func>,
    /// Frames, deduplicated.
    pub frames: Table<FrameId, Frame>,
    /// Libraries native code lives in, deduplicated.
    pub libraries: Table<LibId, Library>,
    /// The stack prefix tree.
    pub stacks: StackTable,
    /// Sample rows.
    pub samples: Samples,
    /// What each sample value column measures.
    pub value_types: Vec<ValueType>,
    /// Line-level hits per stack, where the format has them.
    pub line_hits: LineHits,
    /// Scripts' text the input carries (a tick log's `script-source`, a source map's
    /// `sourcesContent`), one per file.
    pub scripts: Vec<Script>,
    /// What V8's compilers did, where the input records it.
    pub jit: crate::Jit,
    /// Facts about the recording.
    pub meta: Meta,
}

/// Where the text of a [`Script`] came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptOrigin {
    /// A tick log's `script-source` record: the script as V8 compiled it.
    ScriptSource,
    /// A source map's `sourcesContent`: an original source.
    SourceMap,
}

/// A script's text, as the input carried it.
#[derive(Clone, Debug)]
pub struct Script {
    /// The script, as functions name it ([`Func::file`]).
    pub file: StrId,
    /// Where its text came from.
    pub origin: ScriptOrigin,
    /// Its text (shared: profiles rebuilt from this one keep it without a copy).
    pub text: std::sync::Arc<str>,
}

impl Profile {
    /// The index of the first value column of `unit`, if any.
    pub fn value_index(&self, unit: ValueUnit) -> Option<usize> {
        self.value_types.iter().position(|t| t.unit == unit)
    }

    /// Whether the count column counts samples taken (not sample records of unknown weight,
    /// [`ValueKind::Records`]): what a test of sampling noise needs.
    pub fn counts_samples(&self) -> bool {
        self.value_types.contains(&ValueType::SAMPLES)
    }

    /// The file of `func` as reports show it: its script, or its library's path.
    pub fn func_file(&self, func: &Func) -> &str {
        func.display_file(&self.strings, &self.libraries)
    }

    /// The text the profile carries of the script `file`, if any.
    pub fn script(&self, file: &str) -> Option<&Script> {
        self.scripts.iter().find(|s| self.strings.get(s.file) == file)
    }

    /// The function of the innermost frame of `stack`.
    pub fn func_of(&self, stack: StackId) -> FuncId {
        self.frames[self.stacks.frame(stack)].func
    }

    /// Keeps only the samples taken in `[from_ns, to_ns)` (ns on the profile's clock, as
    /// [`TimedSample::time_ns`]): the rows become the sums of the window's samples (rows
    /// without one go), the timeline the window's. `false`, changing nothing, without a timeline.
    pub fn retain_window(&mut self, from_ns: i64, to_ns: i64) -> bool {
        let Some(timeline) = self.samples.timeline.as_ref().map(|t| t.within(from_ns, to_ns)) else {
            return false;
        };
        let rows = self.samples.len();
        let add = |sums: &mut Vec<(i64, i64)>, s: TimedSample| {
            if let Some(sum) = sums.get_mut(s.row as usize) {
                *sum = (sum.0.saturating_add(1), sum.1.saturating_add(s.weight_ns));
            }
        };
        let (mut sums, mut later) = (vec![(0i64, 0i64); rows], vec![(0i64, 0i64); rows]);
        timeline.for_each_half(|s| add(&mut sums, s), |s| add(&mut later, s));
        for (sum, more) in sums.iter_mut().zip(&later) {
            *sum = (sum.0.saturating_add(more.0), sum.1.saturating_add(more.1));
        }
        self.keep_rows_summed(&timeline, &sums);
        true
    }

    /// [`Profile::retain_window`] with the window's samples already summed per row: `sums[row]`
    /// is (count, ns) of the row's samples taken in `[from_ns, to_ns)`, e.g. from the time
    /// buckets the window is made of. `false`, changing nothing, without a timeline.
    pub fn retain_window_summed(&mut self, from_ns: i64, to_ns: i64, sums: &[(i64, i64)]) -> bool {
        let Some(timeline) = self.samples.timeline.as_ref().map(|t| t.within(from_ns, to_ns)) else {
            return false;
        };
        self.keep_rows_summed(&timeline, sums);
        true
    }

    /// Keeps the rows with a sample in `sums` (count, ns per row), as their sums, and
    /// `timeline` as the samples'.
    fn keep_rows_summed(&mut self, timeline: &SampleTimeline, sums: &[(i64, i64)]) {
        let rows = self.samples.len();
        let mut map = vec![u32::MAX; rows];
        let mut values = vec![Vec::new(); self.value_types.len()];
        let mut kept = Samples {
            vm_state: self.samples.vm_state.as_ref().map(|_| Vec::new()),
            tier: self.samples.tier.as_ref().map(|_| Vec::new()),
            units: self.samples.units.clone(),
            ..Samples::default()
        };
        for (row, &(count, weight)) in sums.iter().take(rows).enumerate().filter(|(_, (count, _))| *count > 0) {
            map[row] = kept.stack.len() as u32;
            kept.stack.push(self.samples.stack[row]);
            if let (Some(states), Some(all)) = (kept.vm_state.as_mut(), self.samples.vm_state.as_ref()) {
                states.push(all[row]);
            }
            if let (Some(tiers), Some(all)) = (kept.tier.as_mut(), self.samples.tier.as_ref()) {
                tiers.push(all[row]);
            }
            for (k, column) in values.iter_mut().enumerate() {
                column.push(match self.value_types[k].unit {
                    ValueUnit::Count => count,
                    ValueUnit::Nanoseconds => weight,
                });
            }
        }
        kept.values = values.into();
        kept.timeline = Some(timeline.renumbered(&map));
        self.samples = kept;
    }
}

#[cfg(test)]
mod tests {
    use super::{SourceFormat, UnknownSourceFormat};

    #[test]
    fn an_unknown_format_names_every_format_by_the_name_that_reads_it() {
        let message = UnknownSourceFormat.to_string();
        for format in SourceFormat::ALL {
            assert!(message.contains(format.as_str()), "{message} leaves out {}", format.as_str());
            assert_eq!(format.as_str().parse::<SourceFormat>(), Ok(format));
        }
        assert_eq!("nope".parse::<SourceFormat>(), Err(UnknownSourceFormat));
    }
}
