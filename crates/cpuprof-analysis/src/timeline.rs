//! The profile over time: buckets of equal length with their category split and hottest
//! function, and the phases where the profile changes character (fixtures/oracle/SPEC.md
//! §11). A sample is counted in the bucket its timestamp falls in, as it belongs to a window,
//! and its time is spread over the buckets it lasts into (a sample lasts until the next is
//! taken), so that no bucket holds more time than its width and the buckets add up to the whole.

use cpuprof_model::{FuncId, FuncKind, Profile, TimedSample};
use rustc_hash::FxHashMap;
use std::sync::Arc;

use crate::category::{Categories, Category};
use crate::stretches::{walk_stretches, Stretches};
use crate::sums::{RowSum, SparseSums};
use crate::weights::{effective, weighs_time, Weight};
use crate::window::recording;

/// A function as a timeline or block names it. Its strings are shared: thousands of blocks
/// name the same few functions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionRef {
    /// Its name as reports show it (`(anonymous)` for anonymous functions).
    pub name: Arc<str>,
    /// Its file, `None` when it has none.
    pub file: Option<Arc<str>>,
    /// The 1-based line it starts at, if known.
    pub line: Option<u32>,
    /// The V8 tier of its code when tiers are kept apart: then `name` starts with the tier's
    /// marker (`*f`), as tables show it; [`FunctionRef::plain_name`] leaves it out.
    pub tier: Option<cpuprof_model::Tier>,
}

impl FunctionRef {
    /// `func` of `profile`.
    pub fn of(profile: &Profile, func: FuncId) -> Self {
        let f = &profile.funcs[func];
        let name = f.display_name(&profile.strings);
        let file = profile.func_file(f);
        FunctionRef {
            name: if name.is_empty() { "(anonymous)".into() } else { name.into() },
            file: (!file.is_empty()).then(|| file.into()),
            line: f.line,
            tier: f.tier,
        }
    }

    /// Its name without a tier's marker (as JSON names it, the tier apart).
    pub fn plain_name(&self) -> &str {
        match self.tier {
            Some(tier) => self.name.strip_prefix(tier.marker()).unwrap_or(&self.name),
            None => &self.name,
        }
    }
}

/// [`FunctionRef`]s made once per function of a profile.
pub(crate) struct FunctionRefs<'p> {
    profile: &'p Profile,
    made: Vec<Option<FunctionRef>>,
}

impl<'p> FunctionRefs<'p> {
    pub(crate) fn new(profile: &'p Profile) -> Self {
        Self { profile, made: vec![None; profile.funcs.len()] }
    }

    pub(crate) fn of(&mut self, func: FuncId) -> FunctionRef {
        let profile = self.profile;
        match self.made.get_mut(func.index()) {
            Some(slot) => slot.get_or_insert_with(|| FunctionRef::of(profile, func)).clone(),
            None => FunctionRef::of(profile, func),
        }
    }
}

/// The order of functions of equal weight (SPEC §5): name, file, line, column, kind.
pub(crate) fn func_order(profile: &Profile, a: FuncId, b: FuncId) -> std::cmp::Ordering {
    let (fa, fb) = (&profile.funcs[a], &profile.funcs[b]);
    fa.display_name(&profile.strings)
        .as_bytes()
        .cmp(fb.display_name(&profile.strings).as_bytes())
        .then_with(|| {
            let file = |f: &cpuprof_model::Func| Some(profile.func_file(f)).filter(|s| !s.is_empty());
            file(fa).cmp(&file(fb))
        })
        .then_with(|| fa.line.cmp(&fb.line))
        .then_with(|| fa.column.cmp(&fb.column))
        .then_with(|| fa.kind.as_str().cmp(fb.kind.as_str()))
}

/// The heaviest of `weights` (most weight first, ties in [`func_order`]).
pub(crate) fn heaviest(profile: &Profile, weights: &FxHashMap<FuncId, i64>) -> Option<(FuncId, i64)> {
    weights
        .iter()
        .map(|(f, w)| (*f, *w))
        .min_by(|(fa, wa), (fb, wb)| wb.cmp(wa).then_with(|| func_order(profile, *fa, *fb)))
}

/// True for the pseudo-frames that are not code a sample can enter by: `(root)`,
/// `(program)`, `(garbage collector)`, `(idle)`.
fn is_meta(kind: FuncKind) -> bool {
    matches!(kind, FuncKind::Root | FuncKind::Program | FuncKind::Gc | FuncKind::Idle)
}

/// Each stack's entry: the function of its outermost frame that is code (not `(root)`,
/// `(program)`, `(garbage collector)` or `(idle)`) — the timer, I/O callback, microtask
/// queue or module load a sample ran under. Parents first, one pass.
pub(crate) fn entries(profile: &Profile) -> Vec<Option<FuncId>> {
    let mut entry: Vec<Option<FuncId>> = Vec::with_capacity(profile.stacks.len());
    for (parent, frame) in profile.stacks.parents().iter().zip(profile.stacks.frames()) {
        let func = profile.frames[*frame].func;
        let inherited = parent.and_then(|p| entry[p.index()]);
        entry.push(inherited.or_else(|| (!is_meta(profile.funcs[func].kind)).then_some(func)));
    }
    entry
}

/// Options of [`timeline`].
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct TimelineOptions {
    /// The length of a bucket, ns. Default: from `buckets`, else [`default_bucket_ns`].
    pub bucket_ns: Option<i64>,
    /// The number of buckets the recording is cut into, when `bucket_ns` is not given.
    pub buckets: Option<u32>,
    /// What a sample weighs. Default is [`Weight::Time`].
    pub weight: Weight,
    /// Keep each bucket's samples per row, so that a phase's window is cut from its buckets
    /// without another walk (see [`Timeline::phase_rows`]).
    pub keep_rows: bool,
}

/// One bucket: `[start_ns, end_ns)` after the recording's start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bucket {
    /// Start, ns after the recording's start.
    pub start_ns: i64,
    /// End (excluded).
    pub end_ns: i64,
    /// Number of samples taken in it.
    pub samples: i64,
    /// Weight of its samples per category, indexed by [`Category::index`].
    pub categories: [i64; Category::ALL.len()],
    /// The function with the most self weight among its samples that are not idle, and that weight.
    pub top: Option<(FunctionRef, i64)>,
}

impl Bucket {
    /// Weight of its samples that are not idle.
    pub fn busy(&self) -> i64 {
        self.categories
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != Category::Idle.index())
            .map(|(_, v)| *v)
            .fold(0i64, i64::saturating_add)
    }

    /// Weight of one category's samples.
    pub fn of(&self, category: Category) -> i64 {
        self.categories[category.index()]
    }
}

/// A stretch of the recording with one character: its entry, or idle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    /// Start, ns after the recording's start (a bucket's start).
    pub start_ns: i64,
    /// End, excluded (a bucket's end).
    pub end_ns: i64,
    /// `startup`, `steady` or `phase N` (SPEC §11.5).
    pub label: String,
    /// What ran: the entry function's name, or `idle`.
    pub entry: String,
}

/// The result of [`timeline`].
#[derive(Clone, Debug)]
pub struct Timeline {
    /// Unit of the weights: ns or samples.
    pub unit: Weight,
    /// The recording's length, ns.
    pub length_ns: i64,
    /// The buckets' length, ns.
    pub bucket_ns: i64,
    /// The buckets, in time order, covering the recording and every sample.
    pub buckets: Vec<Bucket>,
    /// The phases, in time order, tiling the buckets.
    pub phases: Vec<Phase>,
    /// Each bucket's samples per row, when kept.
    pub(crate) rows: Option<Vec<Vec<RowSum>>>,
    /// Whether a sample lies outside its bucket's span (before the recording's start, or where
    /// a bucket's end saturates): the rows are then no window's samples.
    pub(crate) outside: bool,
}

impl Timeline {
    /// The samples of `phase`'s window per sample row of the profile (`rows` of them): (count,
    /// ns), as [`Profile::retain_window_summed`] takes them; `None` unless the rows were kept
    /// ([`TimelineOptions::keep_rows`]).
    pub fn phase_rows(&self, phase: &Phase, rows: usize) -> Option<Vec<(i64, i64)>> {
        let kept = self.rows.as_ref().filter(|_| !self.outside)?;
        let (first, end) = ((phase.start_ns / self.bucket_ns) as usize, (phase.end_ns / self.bucket_ns) as usize);
        let mut sums = vec![(0i64, 0i64); rows];
        for r in kept.get(first..end.min(kept.len()))?.iter().flatten() {
            let sum = sums.get_mut(r.row as usize)?;
            *sum = (sum.0 + r.samples, sum.1.saturating_add(r.ns));
        }
        Some(sums)
    }
}

/// The bucket length for a recording `length_ns` long: the smallest of 1, 2, 5 × 10^k ns, at
/// least 1 ms, that cuts it into at most 50 buckets.
pub fn default_bucket_ns(length_ns: i64) -> i64 {
    round_bucket_ns(length_ns, 50)
}

/// The smallest of 1, 2, 5 × 10^k ns, at least 1 ms, that cuts `length_ns` into at most
/// `buckets` buckets.
pub(crate) fn round_bucket_ns(length_ns: i64, buckets: u32) -> i64 {
    let buckets = i64::from(buckets.max(1));
    let wanted = length_ns.max(0).saturating_add(buckets - 1) / buckets;
    let mut step: i64 = 1_000_000;
    loop {
        for m in [1, 2, 5] {
            if step.saturating_mul(m) >= wanted {
                return step.saturating_mul(m);
            }
        }
        if step > i64::MAX / 100 {
            return i64::MAX / 4;
        }
        step *= 10;
    }
}

/// The most buckets a timeline has: more would only take memory (a 1 ns bucket over an hour, a
/// sample that a damaged clock put years later).
pub const MAX_BUCKETS: u64 = 100_000;

/// Why a timeline cannot be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimelineError {
    /// The profile's samples have no times (pprof, folded stacks).
    #[error("its samples have no times, so it has no timeline")]
    NoTimes,
    /// The buckets asked for (or the samples' times) would make more than [`MAX_BUCKETS`].
    #[error(
        "buckets of {bucket_ns} ns would make {buckets} of them (at most {MAX_BUCKETS}): take longer buckets, or a window"
    )]
    TooManyBuckets {
        /// How many there would be.
        buckets: u64,
        /// Of this length, ns.
        bucket_ns: i64,
    },
}

/// The profile over time. Needs the samples' times (read with a timeline). One walk of the
/// timeline: samples come in time order, so each bucket is summed per row in a dense scratch
/// array and settled (per function) when the next bucket begins.
pub fn timeline(profile: &Profile, options: &TimelineOptions) -> Result<Timeline, TimelineError> {
    let (start, length) = recording(profile).ok_or(TimelineError::NoTimes)?;
    let bucket_ns = options
        .bucket_ns
        .or_else(|| options.buckets.map(|n| (length.max(0) as u64).div_ceil(u64::from(n.max(1))) as i64))
        .unwrap_or_else(|| default_bucket_ns(length))
        .max(1);
    let count = (length.max(0) as u64).div_ceil(bucket_ns as u64).max(1);
    if count > MAX_BUCKETS {
        return Err(TimelineError::TooManyBuckets { buckets: count, bucket_ns });
    }
    let facts = RowFacts::of(profile);
    let by_time = weighs_time(profile, options.weight);
    let timeline = match profile.samples.timeline() {
        Some(timeline) => Some(timeline),
        None if profile.samples.is_empty() => None,
        None => return Err(TimelineError::NoTimes),
    };
    // Two halves of the samples at once; each sums its own buckets, which are added up (the
    // bucket the halves meet in gets both halves' samples).
    let walk = || BucketWalk::new(&facts, start, bucket_ns, by_time, options.keep_rows);
    let (mut early, mut late) = (walk(), walk());
    if let Some(timeline) = timeline {
        walk_stretches(timeline, profile.samples.len(), &mut early, &mut late);
    }
    let outside = early.outside || late.outside;
    let (mut sums, beyond, mut lasting) = early.finish();
    let (late_sums, late_beyond, late_lasting) = late.finish();
    lasting.extend(late_lasting);
    if let Some(k) = beyond.max(late_beyond) {
        return Err(TimelineError::TooManyBuckets { buckets: k + 1, bucket_ns });
    }
    if sums.len() < late_sums.len() {
        sums.resize_with(late_sums.len(), BucketSums::default);
    }
    for (sum, more) in sums.iter_mut().zip(late_sums) {
        sum.add(more);
    }
    if sums.len() < count as usize {
        sums.resize_with(count as usize, BucketSums::default);
    }
    for (k, last) in &lasting {
        spread(&mut sums, &facts, start, bucket_ns, *k, last);
    }
    let buckets: Vec<Bucket> = sums
        .iter()
        .enumerate()
        .map(|(k, sum)| Bucket {
            start_ns: (k as i64).saturating_mul(bucket_ns),
            end_ns: (k as i64 + 1).saturating_mul(bucket_ns),
            samples: sum.samples,
            categories: sum.categories,
            top: heaviest(profile, &sum.self_of).map(|(f, w)| (FunctionRef::of(profile, f), w)),
        })
        .collect();
    let rows = options.keep_rows.then(|| sums.iter_mut().map(|s| std::mem::take(&mut s.rows)).collect());
    let entry_of: Vec<FxHashMap<FuncId, i64>> = sums.into_iter().map(|sum| sum.entry_of).collect();
    let phases = phases(profile, &buckets, &entry_of);
    Ok(Timeline {
        unit: effective(profile, options.weight),
        length_ns: length,
        bucket_ns,
        buckets,
        phases,
        rows,
        outside,
    })
}

/// One bucket's sums: samples, weight per category, self weight per function and weight per
/// entry.
#[derive(Default)]
struct BucketSums {
    samples: i64,
    categories: [i64; Category::ALL.len()],
    self_of: FxHashMap<FuncId, i64>,
    entry_of: FxHashMap<FuncId, i64>,
    /// Its samples per row, when kept.
    rows: Vec<RowSum>,
}

impl BucketSums {
    fn add(&mut self, mut other: BucketSums) {
        self.rows.append(&mut other.rows);
        self.samples = self.samples.saturating_add(other.samples);
        for (c, o) in self.categories.iter_mut().zip(other.categories) {
            *c = c.saturating_add(o);
        }
        for (map, more) in [(&mut self.self_of, other.self_of), (&mut self.entry_of, other.entry_of)] {
            for (f, w) in more {
                let v = map.entry(f).or_default();
                *v = v.saturating_add(w);
            }
        }
    }
}

/// Samples in time order summed into buckets: a stretch per bucket (as many as the walk meets
/// it), whose rows are summed per category, function and entry when it is settled.
struct BucketWalk<'f> {
    facts: &'f RowFacts,
    start: i64,
    bucket_ns: i64,
    /// Whether a row weighs its ns (else its samples).
    by_time: bool,
    sums: Vec<BucketSums>,
    /// The bucket of the current stretch, and of the one being settled.
    current: usize,
    settling: usize,
    /// The current bucket's span on the profile's clock: a division only when a sample leaves it.
    span: (i64, i64),
    /// The latest bucket past [`MAX_BUCKETS`] a sample fell in.
    beyond: Option<u64>,
    /// Whether the buckets keep their rows.
    keep_rows: bool,
    /// The bucket the last stretch was settled in.
    settled_in: usize,
    /// The samples that last past the end of the bucket they were settled in, with that bucket.
    lasting: Vec<(usize, TimedSample)>,
    /// A stretch's self weight per function and weight per entry, before its bucket's maps.
    own: SparseSums,
    under: SparseSums,
    /// Whether a sample is where a bucket and the window of its ends differ: before the
    /// recording's start (the first bucket has it, no window does), or in a bucket whose end
    /// saturates (a window's end does not name it exactly).
    outside: bool,
}

impl<'f> BucketWalk<'f> {
    fn new(facts: &'f RowFacts, start: i64, bucket_ns: i64, by_time: bool, keep_rows: bool) -> Self {
        Self {
            facts,
            start,
            bucket_ns,
            by_time,
            keep_rows,
            settled_in: 0,
            lasting: Vec::new(),
            outside: start.saturating_add(bucket_ns) == i64::MAX,
            sums: vec![BucketSums::default()],
            current: 0,
            settling: 0,
            span: (start, start.saturating_add(bucket_ns)),
            beyond: None,
            own: SparseSums::new(facts.func_ids.len()),
            under: SparseSums::new(facts.func_ids.len()),
        }
    }

    /// Moves to the bucket `time_ns` falls in; `false`, staying, when it is past the last
    /// bucket there may be.
    fn enter(&mut self, time_ns: i64) -> bool {
        let k = (time_ns.saturating_sub(self.start).max(0) / self.bucket_ns) as u64;
        if k >= MAX_BUCKETS {
            self.beyond = Some(self.beyond.map_or(k, |b| b.max(k)));
            return false;
        }
        let (from, to) = ((k as i64).saturating_mul(self.bucket_ns), (k as i64 + 1).saturating_mul(self.bucket_ns));
        self.span = (self.start.saturating_add(from), self.start.saturating_add(to));
        self.outside |= time_ns < self.start || to == i64::MAX || self.span.1 == i64::MAX;
        self.settling = std::mem::replace(&mut self.current, k as usize);
        if self.current >= self.sums.len() {
            self.sums.resize_with(self.current + 1, BucketSums::default);
        }
        true
    }

    /// Adds a stretch's rows to bucket `k`: its sample count, categories, functions and
    /// entries.
    fn add_rows(&mut self, k: usize, rows: &[RowSum]) {
        self.settled_in = k;
        let bucket = &mut self.sums[k];
        if self.keep_rows {
            bucket.rows.extend_from_slice(rows);
        }
        for r in rows {
            let row = r.row as usize;
            // A source's row past the profile's is not one of its samples.
            let Some(category) = self.facts.category.get(row) else { continue };
            let w = if self.by_time { r.ns } else { r.samples };
            bucket.samples = bucket.samples.saturating_add(r.samples);
            bucket.categories[category.index()] = bucket.categories[category.index()].saturating_add(w);
            if let Some(leaf) = self.facts.leaf[row] {
                self.own.add(leaf.index() as u32, w);
                if let Some(e) = self.facts.entry[row] {
                    self.under.add(e.index() as u32, w);
                }
            }
        }
        // Summed densely first: a function has many rows, the maps get it once.
        for (sums, map) in [(&mut self.own, &mut bucket.self_of), (&mut self.under, &mut bucket.entry_of)] {
            for (f, w) in sums.drain() {
                let v = map.entry(self.facts.func_ids[f as usize]).or_default();
                *v = v.saturating_add(w);
            }
        }
    }

    fn finish(self) -> (Vec<BucketSums>, Option<u64>, Vec<(usize, TimedSample)>) {
        (self.sums, self.beyond, self.lasting)
    }
}

impl Stretches for BucketWalk<'_> {
    fn span(&self) -> (i64, i64) {
        self.span
    }

    fn cut(&mut self, s: &TimedSample) -> bool {
        self.enter(s.time_ns)
    }

    fn settle(&mut self, rows: &[RowSum]) {
        self.add_rows(self.settling, rows);
    }

    fn end(&mut self, rows: &[RowSum]) {
        self.add_rows(self.current, rows);
    }

    fn settled_last(&mut self, last: &TimedSample) {
        let bucket_end = self.start.saturating_add((self.settled_in as i64 + 1).saturating_mul(self.bucket_ns));
        if self.by_time && last.time_ns.saturating_add(last.weight_ns) > bucket_end {
            self.lasting.push((self.settled_in, *last));
        }
    }
}

/// Spreads the time of `last`, a sample settled in bucket `k`, over the buckets it lasts into:
/// a sample lasts until the next is taken, so that a bucket holds no more time than its width
/// however long a sample is (an idle wait, a stall). Its count stays where it was taken, and so
/// do the rows kept for `--phase` (a window takes whole samples). Time past the last bucket stays
/// in it (the last sample's mean interval may end after the recording), so the total is exact.
fn spread(sums: &mut [BucketSums], facts: &RowFacts, start: i64, bucket_ns: i64, k: usize, last: &TimedSample) {
    let row = last.row as usize;
    let Some(&category) = facts.category.get(row) else { return };
    let (leaf, entry) = (facts.leaf[row], facts.entry[row]);
    let bucket_end = start.saturating_add((k as i64 + 1).saturating_mul(bucket_ns));
    let mut left = last.time_ns.saturating_add(last.weight_ns).saturating_sub(bucket_end.max(last.time_ns));
    let move_time = |sums: &mut [BucketSums], to: usize, ns: i64| {
        for (b, w) in [(k, -ns), (to, ns)] {
            let bucket = &mut sums[b];
            bucket.categories[category.index()] = bucket.categories[category.index()].saturating_add(w);
            if let Some(leaf) = leaf {
                let v = bucket.self_of.entry(leaf).or_default();
                *v = v.saturating_add(w);
                if let Some(e) = entry {
                    let v = bucket.entry_of.entry(e).or_default();
                    *v = v.saturating_add(w);
                }
            }
        }
    };
    let last_bucket = sums.len().saturating_sub(1);
    let mut to = k + 1;
    while left > 0 && to <= last_bucket {
        let piece = if to == last_bucket { left } else { left.min(bucket_ns) };
        move_time(sums, to, piece);
        left -= piece;
        to += 1;
    }
}

/// What the analyses over time need to know of each sample row.
pub(crate) struct RowFacts {
    /// Its category (SPEC §10).
    pub(crate) category: Vec<Category>,
    /// Its leaf function, when that counts for "top" (not idle, not `(root)`).
    pub(crate) leaf: Vec<Option<FuncId>>,
    /// The entry its stack ran under.
    pub(crate) entry: Vec<Option<FuncId>>,
    /// The profile's functions by index.
    pub(crate) func_ids: Vec<FuncId>,
}

impl RowFacts {
    pub(crate) fn of(profile: &Profile) -> Self {
        let categories = Categories::new(profile);
        let entry_of_stack = entries(profile);
        let stacks = profile.samples.stacks();
        let category: Vec<Category> = (0..stacks.len()).map(|row| categories.of_sample(profile, row)).collect();
        let leaf = stacks
            .iter()
            .zip(&category)
            .map(|(stack, c)| {
                let leaf = profile.func_of(*stack);
                (*c != Category::Idle && profile.funcs[leaf].kind != FuncKind::Root).then_some(leaf)
            })
            .collect();
        let entry = stacks.iter().map(|s| entry_of_stack[s.index()]).collect();
        Self { category, leaf, entry, func_ids: profile.funcs.ids().collect() }
    }
}

/// What a bucket is, for phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Character {
    Idle,
    Entry(FuncId),
}

/// SPEC §11.5: the process's start-up, then runs of buckets by what they work under — a wait
/// between two stretches of the same work is part of that work, so a server idle between its
/// timers is one phase — with short runs absorbed by their longer neighbour.
fn phases(profile: &Profile, buckets: &[Bucket], entry_of: &[FxHashMap<FuncId, i64>]) -> Vec<Phase> {
    let work = |k: usize| heaviest(profile, &entry_of[k]).map(|(f, _)| f);
    // Start-up: module loading, up to the first return to the event loop (other work) or the
    // first stretch that is mostly idle.
    // Its work is the first JavaScript work (buckets before it ran no JavaScript of their own:
    // `(program)`, the collector, a tick log's C++ bootstrap), else the first work of any kind.
    let is_js = |f: FuncId| profile.funcs[f].kind == FuncKind::Js;
    let mut startup: Option<FuncId> = None;
    let mut first_work: Option<FuncId> = None;
    let mut startup_len = 0;
    for (k, bucket) in buckets.iter().enumerate() {
        // The first bucket holds the start however short it is; a later one mostly idle ends it.
        let mostly_idle = bucket.busy() < bucket.of(Category::Idle);
        if mostly_idle && k > 0 {
            break;
        }
        match (work(k), startup) {
            (Some(f), None) if is_js(f) => startup = Some(f),
            (Some(f), None) => first_work = first_work.or(Some(f)),
            // Work that is not JavaScript (C++ under the loader) does not end it; other JavaScript does.
            (Some(f), Some(s)) if f != s && is_js(f) => break,
            _ => {}
        }
        startup_len = k + 1;
        if mostly_idle {
            break;
        }
    }
    let startup = startup.or(first_work);
    if startup.is_none() {
        startup_len = 0;
    }
    let mut runs: Vec<(Character, usize)> = Vec::new();
    let mut previous = startup.map_or(Character::Idle, Character::Entry);
    for (k, bucket) in buckets.iter().enumerate().skip(startup_len) {
        let (busy, idle) = (bucket.busy(), bucket.of(Category::Idle));
        let quiet = busy.saturating_mul(20) < busy.saturating_add(idle);
        let character = if quiet { Character::Idle } else { work(k).map_or(previous, Character::Entry) };
        previous = character;
        match runs.last_mut() {
            Some((c, n)) if *c == character => *n += 1,
            _ => runs.push((character, 1)),
        }
    }
    let runs = smooth(&join_waits(&runs), buckets.len().div_ceil(20).max(3));
    let bucket_ns = buckets.first().map_or(1, |b| b.end_ns - b.start_ns);
    let mut all: Vec<(Character, usize)> = Vec::with_capacity(runs.len() + 1);
    if let Some(s) = startup {
        all.push((Character::Entry(s), startup_len));
    }
    all.extend(runs);
    let rest = usize::from(startup.is_some());
    // `steady`: the longest of the rest that works (the earliest on a tie), else the longest.
    let steady = all
        .iter()
        .enumerate()
        .skip(if all.len() > 1 { rest } else { 0 })
        .min_by_key(|(i, (c, n))| (*c == Character::Idle, std::cmp::Reverse(*n), *i))
        .map(|(i, _)| i);
    let mut first = 0usize;
    all.iter()
        .enumerate()
        .map(|(i, (character, n))| {
            let label = if Some(i) == steady {
                "steady".to_owned()
            } else if i == 0 && startup.is_some() {
                "startup".to_owned()
            } else {
                format!("phase {}", i + 1)
            };
            let entry = match character {
                Character::Idle => "idle".to_owned(),
                Character::Entry(f) => FunctionRef::of(profile, *f).plain_name().to_owned(),
            };
            let phase = Phase {
                start_ns: (first as i64).saturating_mul(bucket_ns),
                end_ns: ((first + n) as i64).saturating_mul(bucket_ns),
                label,
                entry,
            };
            first += n;
            phase
        })
        .collect()
}

/// Runs with each idle run between two runs of the same work given that work, and equal
/// neighbours merged: waiting between timers is not a change of phase.
fn join_waits(runs: &[(Character, usize)]) -> Vec<(Character, usize)> {
    let mut out: Vec<(Character, usize)> = Vec::with_capacity(runs.len());
    for (i, &(character, n)) in runs.iter().enumerate() {
        let character = match (character, i.checked_sub(1).map(|p| runs[p].0), runs.get(i + 1).map(|r| r.0)) {
            (Character::Idle, Some(before @ Character::Entry(_)), Some(after)) if before == after => before,
            _ => character,
        };
        match out.last_mut() {
            Some((c, len)) if *c == character => *len += n,
            _ => out.push((character, n)),
        }
    }
    out
}

/// A run of buckets of one character, linked to its neighbours.
struct Run {
    character: Character,
    len: usize,
    first: usize,
    prev: Option<usize>,
    next: Option<usize>,
}

/// SPEC §11.5's smoothing: while there is more than one run and one shorter than `min_run`,
/// the shortest (the earliest of equal ones) takes its longer neighbour's character (the earlier
/// on a tie) and equal neighbours merge. Runs are a linked list and the short ones a set ordered
/// by (length, position), so that this takes O(R log R) for R runs, not O(R²).
fn smooth(runs: &[(Character, usize)], min_run: usize) -> Vec<(Character, usize)> {
    use std::collections::BTreeSet;
    let mut list: Vec<Run> = Vec::with_capacity(runs.len());
    let mut first = 0;
    for (i, (character, len)) in runs.iter().enumerate() {
        let next = (i + 1 < runs.len()).then_some(i + 1);
        list.push(Run { character: *character, len: *len, first, prev: i.checked_sub(1), next });
        first += len;
    }
    let mut short: BTreeSet<(usize, usize, usize)> =
        list.iter().enumerate().filter(|(_, r)| r.len < min_run).map(|(i, r)| (r.len, r.first, i)).collect();
    let mut alive = list.len();
    while alive > 1 {
        let Some((_, _, at)) = short.pop_first() else { break };
        let (left, right) = (list[at].prev, list[at].next);
        let into = match (left, right) {
            (Some(l), Some(r)) if list[r].len > list[l].len => r,
            (Some(l), _) => l,
            (None, Some(r)) => r,
            (None, None) => break,
        };
        list[at].character = list[into].character;
        // Merge `at` with its neighbours of the same character, into the leftmost of them.
        let mut keep = at;
        while let Some(l) = list[keep].prev.filter(|l| list[*l].character == list[at].character) {
            keep = l;
        }
        short.remove(&(list[keep].len, list[keep].first, keep));
        while let Some(n) = list[keep].next.filter(|n| list[*n].character == list[keep].character) {
            short.remove(&(list[n].len, list[n].first, n));
            list[keep].len += list[n].len;
            list[keep].next = list[n].next;
            if let Some(after) = list[n].next {
                list[after].prev = Some(keep);
            }
            alive -= 1;
        }
        if list[keep].len < min_run {
            short.insert((list[keep].len, list[keep].first, keep));
        }
    }
    let mut out = Vec::with_capacity(alive);
    let mut at = (!list.is_empty()).then_some(0);
    while let Some(i) = at {
        out.push((list[i].character, list[i].len));
        at = list[i].next;
    }
    out
}

/// The phase `name` names: its 1-based number, or its label (`startup`, `steady`, `phase 3`).
pub fn find_phase<'a>(phases: &'a [Phase], name: &str) -> Option<&'a Phase> {
    let name = name.trim();
    // Digits only: `+2` is no phase's number (Rust's parser would take it).
    match name.parse::<usize>().ok().filter(|_| name.bytes().all(|b| b.is_ascii_digit())) {
        Some(n) => n.checked_sub(1).and_then(|i| phases.get(i)),
        None => phases.iter().find(|p| p.label.eq_ignore_ascii_case(name)),
    }
}
