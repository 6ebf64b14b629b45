//! Sample times and durations the way Chrome DevTools' `CPUProfileDataModel` computes them.
//!
//! 1. Absolute times: `ts[i] = startTime + Σ_{k≤i} timeDeltas[k]`.
//! 2. Samples stable-sorted by time (this absorbs the negative deltas V8 writes around
//!    deoptimizations).
//! 3. `fixMissingSamples`: a lone `(program)` sample between two samples under the same
//!    top-level frame is given to the previous sample's node (V8 failed to walk that stack).
//! 4. Sample i lasts until sample i+1; the last one gets the mean interval.
//!
//! The sort is done without sorting: samples whose time is at least every earlier time are
//! already in order, so only the few that are not ("late" samples) are sorted and merged
//! back in. Memory is O(late samples), not O(samples).

/// Per-sample time deltas: whole microseconds in 16 bits each (what V8 writes: ±32 ms covers
/// every sampling interval), so 46 M samples take 92 MB. Any other delta (longer, negative
/// beyond 32 ms, or fractional) is stored as [`Deltas::BIG`] with its exact value in ns kept
/// in `big`, in order.
#[derive(Debug, Default)]
pub(crate) struct Deltas {
    pub(crate) narrow: Vec<i16>,
    pub(crate) big: Vec<i64>,
}

impl Deltas {
    /// Marks a delta kept in `big`.
    pub(crate) const BIG: i16 = i16::MIN;

    /// The 16-bit form of a delta of `us` whole microseconds, unless it needs the side table.
    #[inline]
    pub(crate) fn narrow_us(us: i64) -> Option<i16> {
        i16::try_from(us).ok().filter(|d| *d != Self::BIG)
    }

    /// The 16-bit form of a delta of `ns`, unless it needs the side table.
    pub(crate) fn narrow_ns(ns: i64) -> Option<i16> {
        if ns % 1000 == 0 {
            Self::narrow_us(ns / 1000)
        } else {
            None
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.narrow.len()
    }

    /// Absolute times, starting from `start_ns`, saturating instead of overflowing.
    pub(crate) fn times(&self, start_ns: i64) -> TimeIter<'_> {
        TimeIter { narrow: self.narrow.iter(), big: self.big.iter(), time: start_ns }
    }
}

/// Absolute sample times from [`Deltas`].
pub(crate) struct TimeIter<'a> {
    narrow: std::slice::Iter<'a, i16>,
    big: std::slice::Iter<'a, i64>,
    time: i64,
}

impl Iterator for TimeIter<'_> {
    type Item = i64;

    #[inline]
    fn next(&mut self) -> Option<i64> {
        let d = *self.narrow.next()?;
        let delta = if d == Deltas::BIG { self.big.next().copied().unwrap_or(0) } else { i64::from(d) * 1000 };
        self.time = self.time.saturating_add(delta);
        Some(self.time)
    }
}

/// A node position as samples store it: 16 bits when the tree has fewer than 65,536 nodes
/// (the usual case; it halves the largest column), else 32.
pub(crate) trait NodeIndex: Copy + Send + Sync + Into<u32> + PartialEq {
    /// Not a position (trees stored in this width have fewer nodes).
    const NONE: Self;
}
impl NodeIndex for u16 {
    const NONE: Self = u16::MAX;
}
impl NodeRoles<'_> {
    #[inline]
    fn is_program(&self, node: u32) -> bool {
        match self.programs {
            Programs::None => false,
            Programs::One(p) => node == p,
            Programs::Many(flags) => flags.get(node as usize).copied().unwrap_or(false),
        }
    }
}

impl NodeIndex for u32 {
    const NONE: Self = u32::MAX;
}

/// How sample times are known.
pub(crate) enum Times<'a> {
    /// From `timeDeltas`.
    Deltas { start_ns: i64, deltas: &'a Deltas },
    /// No `timeDeltas`: samples spread evenly over `[start, end)`, as DevTools does.
    Even { start_ns: i64, end_ns: i64 },
}

/// The `(program)` meta nodes: usually one, but hand-made files may have several.
#[derive(Clone, Copy)]
pub(crate) enum Programs<'a> {
    None,
    One(u32),
    /// Indexed by node position.
    Many(&'a [bool]),
}

/// What `fixMissingSamples` needs to know about nodes (indexed by node position).
pub(crate) struct NodeRoles<'a> {
    /// The `(program)` meta nodes.
    pub(crate) programs: Programs<'a>,
    /// True for `(program)`, `(garbage collector)` and `(idle)` meta nodes.
    pub(crate) is_system: &'a [bool],
    /// The ancestor of each node that is a direct child of the root (DevTools' "bottom node").
    pub(crate) bottom: &'a [u32],
}

#[cfg(test)]
/// Walks the samples in DevTools order and calls `emit(node, time_ns, duration_ns)` once per
/// sample, in order. Returns the mean interval in ns (0 with fewer than two samples).
pub(crate) fn attribute<N: NodeIndex>(
    nodes: &[N],
    times: &Times<'_>,
    end_ns: Option<i64>,
    roles: &NodeRoles<'_>,
    emit: impl FnMut(u32, i64, i64),
) -> i64 {
    let order = match times {
        Times::Deltas { start_ns, deltas } => Some(Order::of(nodes, deltas, *start_ns, None)),
        Times::Even { .. } => None,
    };
    attribute_in(nodes, times, order.as_ref(), end_ns, roles, emit)
}

/// [`attribute`] with the samples' time order known (`order`, for `Times::Deltas`).
fn attribute_in<N: NodeIndex>(
    nodes: &[N],
    times: &Times<'_>,
    order: Option<&Order>,
    end_ns: Option<i64>,
    roles: &NodeRoles<'_>,
    emit: impl FnMut(u32, i64, i64),
) -> i64 {
    let n = nodes.len();
    let mut walker = Walker::new(roles, n, emit);
    match (times, order) {
        (Times::Deltas { start_ns, deltas }, Some(order)) => {
            order.walk(Half::Whole, nodes, deltas, *start_ns, &mut walker);
        }
        (Times::Deltas { start_ns, deltas }, None) => {
            Order::of(nodes, deltas, *start_ns, None).walk(Half::Whole, nodes, deltas, *start_ns, &mut walker);
        }
        (Times::Even { start_ns, end_ns: end }, _) => walk_even(nodes, *start_ns, *end, &mut walker),
    }
    let mean = walker.mean();
    walker.finish(mean, end_ns);
    mean
}

/// Like [`attribute`], but only the sum per node is wanted: returns `(count, duration)` per
/// node position of the samples taken in `[from, to)` (all of them without `window`), and the
/// mean interval of all. The samples are split in two halves walked on two threads (see
/// [`attribute_halves`]).
pub(crate) fn attribute_sums<N: NodeIndex>(
    nodes: &[N],
    node_count: usize,
    times: &Times<'_>,
    end_ns: Option<i64>,
    roles: &NodeRoles<'_>,
    window: Option<(i64, i64)>,
) -> (Vec<[i64; 2]>, i64) {
    let mut sums = vec![[0i64; 2]; node_count];
    let order = match times {
        Times::Deltas { start_ns, deltas } if nodes.len() >= 4 => {
            Some(Order::of(nodes, deltas, *start_ns, Some(roles)))
        }
        _ => None,
    };
    let mut second_sums = vec![[0i64; 2]; node_count];
    let halves = order.as_ref().and_then(|order| {
        attribute_halves(nodes, times, order, roles, adder(&mut sums, window), adder(&mut second_sums, window))
    });
    let Some(mean) = halves else {
        let mean = attribute_in(nodes, times, order.as_ref(), end_ns, roles, adder(&mut sums, window));
        return (sums, mean);
    };
    for (a, b) in sums.iter_mut().zip(&second_sums) {
        a[0] += b[0];
        a[1] = a[1].saturating_add(b[1]);
    }
    (sums, mean)
}

/// Walks the samples in DevTools order as two halves on two threads: `first` gets the samples
/// before the split point (`order.split`: an in-order sample near the middle that is not
/// `(program)`, so the second half's first sample needs no fix, and with it no knowledge of the
/// first half), `second` the rest; each in order. Each half settles its last sample with the
/// other's first; the last sample of all lasts the mean interval, known once both ends are.
/// Returns the mean interval; `None`, calling neither, without a split point (or deltas).
pub(crate) fn attribute_halves<N: NodeIndex, A, B>(
    nodes: &[N],
    times: &Times<'_>,
    order: &Order,
    roles: &NodeRoles<'_>,
    first: A,
    second: B,
) -> Option<i64>
where
    A: FnMut(u32, i64, i64) + Send,
    B: FnMut(u32, i64, i64) + Send,
{
    let (Times::Deltas { start_ns, deltas }, Some(at)) = (times, order.split) else { return None };
    let n = nodes.len();
    let (first_time, (last_time, last)) = rayon::join(
        || {
            let mut w = Walker::new(roles, n, first);
            order.walk(Half::First, nodes, deltas, *start_ns, &mut w);
            w.settle_before(nodes[at.index].into(), at.time);
            w.first_time()
        },
        || {
            // `second` itself, not a reference to it, so that its calls inline as `first`'s do.
            let mut w = Walker::new(roles, n, second);
            order.walk(Half::Second, nodes, deltas, *start_ns, &mut w);
            (w.pending_time(), (w.take_pending(), w.emit))
        },
    );
    let (first_time, last_time) = (first_time.unwrap_or(at.time), last_time.unwrap_or(at.time));
    let mean = ((i128::from(last_time) - i128::from(first_time)) / (n as i128 - 1)) as i64;
    let (last, mut second) = last;
    if let Some((node, _)) = last {
        second(node, last_time, mean);
    }
    Some(mean)
}

/// Which of `node_count` nodes are the leaf of a sample: a pass over the samples, with no
/// regard to their times.
pub(crate) fn sampled_nodes<N: NodeIndex>(nodes: &[N], node_count: usize) -> Vec<bool> {
    use rayon::prelude::*;
    nodes
        .par_chunks(1 << 20)
        .map(|chunk| {
            let mut seen = vec![false; node_count];
            for node in chunk {
                if let Some(s) = seen.get_mut(Into::<u32>::into(*node) as usize) {
                    *s = true;
                }
            }
            seen
        })
        .reduce(
            || vec![false; node_count],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(a, b)| *a |= b);
                a
            },
        )
}

/// Which nodes the samples' sums count (those sampled, after `fixMissingSamples` gave some
/// `(program)` samples away) and the mean interval, found without walking the samples, from
/// the nodes `sampled` ([`sampled_nodes`]): so the sums can be left to the timeline's first
/// walk. `None` when finding out would take the walk: several `(program)` nodes, or one none
/// of whose samples is sure to stay (one stays when it is the first sample, or when the next
/// one in time order is `(program)` too, which is the usual case).
pub(crate) fn sampled_without_walk<N: NodeIndex>(
    nodes: &[N],
    sampled: Vec<bool>,
    deltas: &Deltas,
    start_ns: i64,
    roles: &NodeRoles<'_>,
    order: &Order,
) -> Option<(Vec<bool>, i64)> {
    let n = nodes.len();
    match roles.programs {
        Programs::None => {}
        Programs::Many(_) => return None,
        Programs::One(p) => {
            if n >= 3
                && sampled.get(p as usize).copied().unwrap_or(false)
                && !program_stays(nodes, deltas, start_ns, p, order)
            {
                return None;
            }
        }
    }
    let mean = match order.span {
        Some((first, last)) if n >= 2 => ((i128::from(last) - i128::from(first)) / (n as i128 - 1)) as i64,
        _ => 0,
    };
    Some((sampled, mean))
}

/// Whether a sample of the `(program)` node `p` surely keeps it: it is the first in time order,
/// or the next sample in time order is `p` too (`fixMissingSamples` gives a `(program)` sample
/// away only when neither neighbour is a system node).
fn program_stays<N: NodeIndex>(nodes: &[N], deltas: &Deltas, start_ns: i64, p: u32, order: &Order) -> bool {
    let is_late = |i: usize| order.late_by_index.binary_search(&i).is_ok();
    // Whether a late sample goes between in-order samples at `from` and `to`: one at a time in
    // `[from, to)` (a late sample goes before the first in-order sample strictly later).
    let late_between = |from: i64, to: i64| {
        let at = order.late.partition_point(|l| l.0 < from);
        order.late.get(at).is_some_and(|l| l.0 < to)
    };
    let mut times = deltas.times(start_ns);
    let Some(first) = times.next() else { return false };
    if nodes.first().is_some_and(|n| (*n).into() == p) && order.late.first().is_none_or(|l| l.0 >= first) {
        return true;
    }
    let mut before = first;
    for (i, t) in times.enumerate().map(|(k, t)| (k + 1, t)) {
        let pair = (nodes[i - 1]).into() == p && nodes[i].into() == p;
        if pair && !is_late(i - 1) && !is_late(i) && !late_between(before, t) {
            return true;
        }
        before = t;
    }
    false
}

/// [`Times`] owned, for a timeline that outlives the parse.
pub(crate) enum OwnedTimes {
    Deltas { start_ns: i64, deltas: Deltas },
    Even { start_ns: i64, end_ns: i64 },
}

impl OwnedTimes {
    pub(crate) fn borrowed(&self) -> Times<'_> {
        match self {
            OwnedTimes::Deltas { start_ns, deltas } => Times::Deltas { start_ns: *start_ns, deltas },
            OwnedTimes::Even { start_ns, end_ns } => Times::Even { start_ns: *start_ns, end_ns: *end_ns },
        }
    }
}

/// [`NodeRoles`] owned (indexed by node position).
pub(crate) struct OwnedRoles {
    pub(crate) programs: Vec<u32>,
    pub(crate) is_program: Vec<bool>,
    pub(crate) is_system: Vec<bool>,
    pub(crate) bottom: Vec<u32>,
}

impl OwnedRoles {
    pub(crate) fn borrowed(&self) -> NodeRoles<'_> {
        let programs = match self.programs.as_slice() {
            [] => Programs::None,
            [one] => Programs::One(*one),
            _ => Programs::Many(&self.is_program),
        };
        NodeRoles { programs, is_system: &self.is_system, bottom: &self.bottom }
    }
}

/// A `.cpuprofile`'s (or trace's) timeline in its own columns: each sample's node and time
/// delta, 4 bytes a sample in the usual case, walked in DevTools order on demand.
pub(crate) struct NodeTimeline<N> {
    pub(crate) nodes: Vec<N>,
    pub(crate) times: OwnedTimes,
    pub(crate) end_ns: Option<i64>,
    pub(crate) roles: OwnedRoles,
    /// The profile's row of each node's stack (`u32::MAX` for a node never sampled).
    pub(crate) row_of_node: Vec<u32>,
    /// The samples' time order, found on the first walk (a pass over every delta).
    pub(crate) order: std::sync::OnceLock<Option<Order>>,
}

/// How many samples a walk hands over at a time: few enough to stay in the L2 cache, enough
/// that the call per batch costs nothing.
const BATCH: usize = 2048;

impl<N: NodeIndex> NodeTimeline<N> {
    fn order(&self) -> Option<&Order> {
        let roles = self.roles.borrowed();
        let order = self.order.get_or_init(|| match &self.times {
            OwnedTimes::Deltas { start_ns, deltas } => Some(Order::of(&self.nodes, deltas, *start_ns, Some(&roles))),
            OwnedTimes::Even { .. } => None,
        });
        order.as_ref()
    }

    /// Walks the samples in DevTools order as two halves on two threads (see
    /// [`attribute_halves`]), or all of them through `first` when they do not split.
    fn attribute_split<A, B>(&self, first: A, second: B)
    where
        A: FnMut(u32, i64, i64) + Send,
        B: FnMut(u32, i64, i64) + Send,
    {
        let times = self.times.borrowed();
        let roles = self.roles.borrowed();
        match self.order().filter(|o| o.split.is_some()) {
            Some(order) => {
                attribute_halves(&self.nodes, &times, order, &roles, first, second);
            }
            None => {
                attribute_in(&self.nodes, &times, self.order(), self.end_ns, &roles, first);
            }
        }
    }
}

/// Hands samples to `visit` a batch at a time.
struct Batcher<'v, V: FnMut(&[cpuprof_model::TimedSample]) + ?Sized> {
    rows: &'v [u32],
    batch: Vec<cpuprof_model::TimedSample>,
    visit: &'v mut V,
}

impl<'v, V: FnMut(&[cpuprof_model::TimedSample]) + ?Sized> Batcher<'v, V> {
    fn new(rows: &'v [u32], visit: &'v mut V) -> Self {
        Self { rows, batch: Vec::with_capacity(BATCH), visit }
    }

    #[inline]
    fn push(&mut self, node: u32, time_ns: i64, weight_ns: i64) {
        let row = self.rows.get(node as usize).copied().unwrap_or(u32::MAX);
        self.batch.push(cpuprof_model::TimedSample { row, time_ns, weight_ns });
        if self.batch.len() == BATCH {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if !self.batch.is_empty() {
            (self.visit)(&self.batch);
            self.batch.clear();
        }
    }
}

impl<N: NodeIndex> cpuprof_model::SampleSource for NodeTimeline<N> {
    fn walk(&self, visit: &mut dyn FnMut(&[cpuprof_model::TimedSample])) {
        let times = self.times.borrowed();
        let order = self.order();
        let mut batcher = Batcher::new(&self.row_of_node, visit);
        let roles = self.roles.borrowed();
        attribute_in(&self.nodes, &times, order, self.end_ns, &roles, |node, t, d| batcher.push(node, t, d));
        batcher.flush();
    }

    fn walk_halves(
        &self,
        first: &mut (dyn FnMut(&[cpuprof_model::TimedSample]) + Send),
        second: &mut (dyn FnMut(&[cpuprof_model::TimedSample]) + Send),
    ) {
        let (mut a, mut b) = (Batcher::new(&self.row_of_node, first), Batcher::new(&self.row_of_node, second));
        self.attribute_split(|node, t, d| a.push(node, t, d), |node, t, d| b.push(node, t, d));
        a.flush();
        b.flush();
    }
}

/// DevTools' condition for giving a `(program)` sample to its neighbours' node: neither
/// neighbour is a system node and both share the bottom node.
#[cold]
fn fixable(roles: &NodeRoles<'_>, prev: u32, next: u32) -> bool {
    let system = |node: u32| roles.is_system.get(node as usize).copied().unwrap_or(false);
    let bottom = |node: u32| roles.bottom.get(node as usize).copied().unwrap_or(node);
    !system(prev) && !system(next) && bottom(prev) == bottom(next)
}

/// An `emit` that adds each sample (taken in `[from, to)`, with a `window`) to its node's
/// `(count, duration)`.
fn adder(sums: &mut [[i64; 2]], window: Option<(i64, i64)>) -> impl FnMut(u32, i64, i64) + '_ {
    move |node, time, duration| {
        if window.is_some_and(|(from, to)| !(from..to).contains(&time)) {
            return;
        }
        if let Some(sum) = sums.get_mut(node as usize) {
            sum[0] += 1;
            sum[1] = sum[1].saturating_add(duration);
        }
    }
}

/// Position of the first negative value, checking 32 at a time (the check vectorizes).
fn first_negative(values: &[i16]) -> Option<usize> {
    let mut chunks = values.chunks_exact(32);
    let mut offset = 0;
    for chunk in &mut chunks {
        if chunk.iter().fold(0, |acc, d| acc | *d) < 0 {
            return chunk.iter().position(|d| *d < 0).map(|p| offset + p);
        }
        offset += 32;
    }
    chunks.remainder().iter().position(|d| *d < 0).map(|p| offset + p)
}

fn walk_even<N: NodeIndex, E: FnMut(u32, i64, i64)>(
    nodes: &[N],
    start_ns: i64,
    end_ns: i64,
    walker: &mut Walker<'_, E>,
) {
    // As DevTools: no clamping, and floor division, so an end before the start gives
    // decreasing times, which the stable sort by time then reverses.
    let span = i128::from(end_ns) - i128::from(start_ns);
    let n = nodes.len().max(1) as i128;
    let time = |i: usize| start_ns.saturating_add((i as i128 * span).div_euclid(n) as i64);
    if span >= 0 {
        for (i, node) in nodes.iter().enumerate() {
            walker.push((*node).into(), time(i));
        }
    } else {
        let mut order: Vec<(i64, usize)> = (0..nodes.len()).map(|i| (time(i), i)).collect();
        order.sort_by_key(|(t, _)| *t);
        for (t, i) in order {
            walker.push(nodes[i].into(), t);
        }
    }
}

/// An in-order sample where the walk can be split.
#[derive(Clone, Copy)]
struct SplitPoint {
    index: usize,
    time: i64,
    /// How many big deltas come before `index + 1`.
    big_before: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Half {
    Whole,
    First,
    Second,
}

/// The time order of the samples: which are late, and where they go.
pub(crate) struct Order {
    /// Late samples as a stable sort places them: by (time, index).
    late: Vec<(i64, usize)>,
    /// Indices of the late samples, ascending.
    late_by_index: Vec<usize>,
    split: Option<SplitPoint>,
    /// The earliest and the latest sample's time (`None` without samples).
    span: Option<(i64, i64)>,
}

impl Order {
    /// With `split`, also picks a split point: the first in-order sample from the middle on
    /// that is not a `(program)` node.
    pub(crate) fn of<N: NodeIndex>(
        nodes: &[N],
        deltas: &Deltas,
        start_ns: i64,
        split: Option<&NodeRoles<'_>>,
    ) -> Order {
        let narrow = &deltas.narrow[..];
        let n = narrow.len();
        let middle = n / 2;
        let mut big = deltas.big.iter();
        let (mut big_seen, mut late, mut chosen) = (0, Vec::new(), None);
        let (mut t, mut max, mut i) = (start_ns, i64::MIN, 0);
        while i < n {
            // While no sample is behind and deltas are not negative, every sample is in order:
            // add the run up at once (vectorized) up to the next negative delta. Big deltas
            // are marked by a negative number too, so they are taken one at a time below.
            if t >= max {
                let limit = match (split, chosen) {
                    (Some(_), None) if i < middle => middle,
                    (Some(_), None) => i,
                    _ => n,
                };
                let end = first_negative(&narrow[i..limit]).map_or(limit, |p| i + p);
                if end > i {
                    let sum: i64 = narrow[i..end].iter().map(|d| i64::from(*d)).sum::<i64>() * 1000;
                    t = t.saturating_add(sum);
                    max = t;
                    i = end;
                    continue;
                }
            }
            let d = narrow[i];
            let delta = if d == Deltas::BIG {
                big_seen += 1;
                big.next().copied().unwrap_or(0)
            } else {
                i64::from(d) * 1000
            };
            t = t.saturating_add(delta);
            if t < max {
                late.push((t, i));
            } else {
                max = t;
                let fits = split.is_some_and(|roles| nodes.get(i).is_some_and(|n| !roles.is_program((*n).into())));
                if chosen.is_none() && fits && i >= middle && i > 0 {
                    chosen = Some(SplitPoint { index: i, time: t, big_before: big_seen });
                }
            }
            i += 1;
        }
        let late_by_index = late.iter().map(|(_, i)| *i).collect();
        late.sort_unstable();
        let span = deltas.times(start_ns).next().map(|first| (late.first().map_or(first, |l| l.0.min(first)), max));
        Order { late, late_by_index, split: chosen, span }
    }

    /// Feeds one half of the samples (or all) to `walker` in time order.
    fn walk<N: NodeIndex, E: FnMut(u32, i64, i64)>(
        &self,
        half: Half,
        nodes: &[N],
        deltas: &Deltas,
        start_ns: i64,
        walker: &mut Walker<'_, E>,
    ) {
        let (range, late, mut times, skip) = match (half, self.split) {
            (Half::First, Some(at)) => {
                let late_end = self.late.partition_point(|(t, _)| *t < at.time);
                let skip_end = self.late_by_index.partition_point(|i| *i < at.index);
                (0..at.index, &self.late[..late_end], deltas.times(start_ns), &self.late_by_index[..skip_end])
            }
            (Half::Second, Some(at)) => {
                let late_start = self.late.partition_point(|(t, _)| *t < at.time);
                let skip_start = self.late_by_index.partition_point(|i| *i < at.index);
                // The split sample itself, then the samples after it.
                walker.push(nodes[at.index].into(), at.time);
                let times = TimeIter {
                    narrow: deltas.narrow.get(at.index + 1..).unwrap_or(&[]).iter(),
                    big: deltas.big.get(at.big_before..).unwrap_or(&[]).iter(),
                    time: at.time,
                };
                (at.index + 1..nodes.len(), &self.late[late_start..], times, &self.late_by_index[skip_start..])
            }
            _ => (0..nodes.len(), &self.late[..], deltas.times(start_ns), &self.late_by_index[..]),
        };
        let (mut next_late, mut next_skip) = (0, 0);
        let mut i = range.start;
        while i < range.end {
            // Most samples are in order, with narrow deltas and no late sample due before
            // them: those go through the walker's tight loop, the rest one by one below.
            let stop = skip.get(next_skip).map_or(range.end, |s| (*s).min(range.end));
            let due = late.get(next_late).map_or(i64::MAX, |l| l.0);
            let rest = times.narrow.as_slice();
            let run = stop.saturating_sub(i).min(rest.len());
            let (pushed, t) = walker.push_run(&nodes[i..i + run], &rest[..run], times.time, due);
            if pushed > 0 {
                times.narrow = rest[pushed..].iter();
                times.time = t;
                i += pushed;
                continue;
            }
            let Some(t) = times.next() else { break };
            if skip.get(next_skip) == Some(&i) {
                next_skip += 1;
                i += 1;
                continue;
            }
            // A late sample goes before the first in-order sample that is strictly later.
            while let Some(&(lt, li)) = late.get(next_late) {
                if lt >= t {
                    break;
                }
                walker.push(nodes[li].into(), lt);
                next_late += 1;
            }
            walker.push(nodes[i].into(), t);
            i += 1;
        }
        for &(lt, li) in &late[next_late..] {
            walker.push(nodes[li].into(), lt);
        }
    }
}

/// Applies `fixMissingSamples` and durations to samples fed in time order. Each sample is
/// settled when the next one arrives: its duration and the fix both depend on that neighbour.
struct Walker<'r, E> {
    roles: &'r NodeRoles<'r>,
    /// Whether the fix can apply at all (there is a `(program)` node and n ≥ 3).
    fixes: bool,
    n: usize,
    emit: E,
    first: i64,
    /// The settled node of the sample before `pending`, `u32::MAX` at the start.
    prev: u32,
    /// The sample whose duration is not known yet (`u32::MAX`: none yet).
    pending: (u32, i64),
    /// How many samples were pushed.
    pushed: usize,
}

impl<'r, E: FnMut(u32, i64, i64)> Walker<'r, E> {
    fn new(roles: &'r NodeRoles<'r>, n: usize, emit: E) -> Self {
        let fixes = n >= 3 && !matches!(roles.programs, Programs::None);
        Self { roles, fixes, n, emit, first: 0, prev: u32::MAX, pending: (u32::MAX, 0), pushed: 0 }
    }

    #[inline]
    fn push(&mut self, next: u32, t: i64) {
        let (mut node, pt) = self.pending;
        if self.pushed == 0 {
            self.first = t;
        }
        self.pushed += 1;
        if node != u32::MAX {
            if self.fixes
                && self.roles.is_program(node)
                && self.prev != u32::MAX
                && fixable(self.roles, self.prev, next)
            {
                node = self.prev;
            }
            (self.emit)(node, pt, t.saturating_sub(pt));
            self.prev = node;
        }
        self.pending = (next, t);
    }

    /// Pushes the in-order samples `nodes[k]` at times `t + Σ deltas[..=k]` (narrow µs) while
    /// no delta is big and no time passes `limit`; returns how many were pushed and the last
    /// time. The same as [`Walker::push`] one by one, in a loop lean enough to keep in
    /// registers: no saturation (times start within ±2^62 and a run of fewer than 2^37
    /// samples of at most ±2^25 ns each cannot leave ±2^63), one `(program)` node compared.
    #[inline]
    fn push_run<N: NodeIndex>(&mut self, nodes: &[N], deltas: &[i16], t: i64, limit: i64) -> (usize, i64) {
        const SAFE: std::ops::Range<i64> =
            -cpuprof_model::defaults::TIME_LIMIT_NS..cpuprof_model::defaults::TIME_LIMIT_NS;
        let (mut node, mut pt) = self.pending;
        let program = match self.roles.programs {
            _ if !self.fixes => u32::MAX,
            Programs::One(p) => p,
            Programs::None | Programs::Many(_) => return (0, t),
        };
        if node == u32::MAX || !SAFE.contains(&t) || !SAFE.contains(&pt) || nodes.len() >= 1 << 37 {
            return (0, t);
        }
        let roles = self.roles;
        let emit = &mut self.emit;
        let mut prev = self.prev;
        let mut t = t;
        let mut k = 0;
        for (next, &d) in nodes.iter().zip(deltas) {
            if d == Deltas::BIG {
                break;
            }
            let nt = t + i64::from(d) * 1000;
            if nt > limit {
                break;
            }
            let next: u32 = (*next).into();
            if node == program && prev != u32::MAX && fixable(roles, prev, next) {
                node = prev;
            }
            emit(node, pt, nt - pt);
            prev = node;
            (node, pt, t) = (next, nt, nt);
            k += 1;
        }
        self.pending = (node, pt);
        self.prev = prev;
        self.pushed += k;
        (k, t)
    }

    /// The first time pushed, if any.
    fn first_time(&self) -> Option<i64> {
        (self.pushed > 0).then_some(self.first)
    }

    /// The time of the sample not yet settled, if any.
    fn pending_time(&self) -> Option<i64> {
        (self.pending.0 != u32::MAX).then_some(self.pending.1)
    }

    /// Hands over the sample not yet settled.
    fn take_pending(&mut self) -> Option<(u32, i64)> {
        let pending = std::mem::replace(&mut self.pending, (u32::MAX, 0));
        (pending.0 != u32::MAX).then_some(pending)
    }

    /// Settles the pending sample against the sample that follows it in another half.
    fn settle_before(&mut self, next: u32, t: i64) {
        let saved = (self.pushed, self.first);
        self.push(next, t);
        self.pending = (u32::MAX, 0);
        (self.pushed, self.first) = saved;
    }

    /// The mean interval over all `n` samples, from the first and last times pushed.
    fn mean(&self) -> i64 {
        match self.pending_time() {
            Some(last) if self.n >= 2 => ((i128::from(last) - i128::from(self.first)) / (self.n as i128 - 1)) as i64,
            _ => 0,
        }
    }

    /// Settles the last sample: it lasts the mean interval or, when it is the only sample,
    /// until `end_ns`.
    fn finish(mut self, mean: i64, end_ns: Option<i64>) {
        let Some((node, last)) = self.take_pending() else { return };
        let duration = if self.n >= 2 { mean } else { end_ns.map_or(0, |end| end.saturating_sub(last).max(0)) };
        (self.emit)(node, last, duration);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Deltas {
        fn push(&mut self, ns: i64) {
            let d = Self::narrow_ns(ns).unwrap_or_else(|| {
                self.big.push(ns);
                Self::BIG
            });
            self.narrow.push(d);
        }
    }

    fn run(nodes: &[u32], deltas_us: &[i64], roles: &NodeRoles<'_>) -> (Vec<(u32, i64, i64)>, i64) {
        let mut deltas = Deltas::default();
        for d in deltas_us {
            deltas.push(d * 1000);
        }
        let mut out = Vec::new();
        let mean = attribute(nodes, &Times::Deltas { start_ns: 0, deltas: &deltas }, None, roles, |n, t, d| {
            out.push((n, t, d));
        });
        (out, mean)
    }

    const NO_ROLES: NodeRoles<'static> = NodeRoles { programs: Programs::None, is_system: &[], bottom: &[] };

    #[test]
    fn next_delta_and_mean_for_the_last() {
        // times 10, 20, 35 µs: durations 10, 15, then the mean (35-10)/2 = 12.5 µs
        let (out, mean) = run(&[1, 2, 3], &[10, 10, 15], &NO_ROLES);
        assert_eq!(out, vec![(1, 10_000, 10_000), (2, 20_000, 15_000), (3, 35_000, 12_500)]);
        assert_eq!(mean, 12_500);
    }

    #[test]
    fn negative_delta_is_sorted_stably() {
        // times: 10, 20, 19, 30, 30 → sorted (stable): 10(a) 19(c) 20(b) 30(d) 30(e)
        let (out, _) = run(&[1, 2, 3, 4, 5], &[10, 10, -1, 11, 0], &NO_ROLES);
        let order: Vec<u32> = out.iter().map(|s| s.0).collect();
        assert_eq!(order, vec![1, 3, 2, 4, 5]);
        let durations: Vec<i64> = out.iter().map(|s| s.2).collect();
        assert_eq!(durations, vec![9_000, 1_000, 10_000, 0, 5_000]);
    }

    #[test]
    fn equal_late_times_keep_file_order() {
        // times: 50, 10, 10, 60 → 10(b) 10(c) 50(a) 60(d)
        let (out, _) = run(&[1, 2, 3, 4], &[50, -40, 0, 50], &NO_ROLES);
        let order: Vec<u32> = out.iter().map(|s| s.0).collect();
        assert_eq!(order, vec![2, 3, 1, 4]);
    }

    #[test]
    fn lone_program_sample_goes_to_the_previous_node() {
        // nodes: 0 root, 1 (program), 2 main (child of root), 3 work (child of 2)
        let is_system = [false, true, false, false];
        let bottom = [0, 1, 2, 2];
        let roles = NodeRoles { programs: Programs::One(1), is_system: &is_system, bottom: &bottom };
        let (out, _) = run(&[3, 1, 2, 1, 1, 3], &[1, 1, 1, 1, 1, 1], &roles);
        let order: Vec<u32> = out.iter().map(|s| s.0).collect();
        // sample 1 is fixed (neighbours 3 and 2 share bottom 2); samples 3 and 4 are a run.
        assert_eq!(order, vec![3, 3, 2, 1, 1, 3]);
    }

    #[test]
    fn big_deltas_survive() {
        let mut d = Deltas::default();
        d.push(5);
        d.push(i64::from(i32::MAX) + 10);
        d.push(7);
        d.push(i64::from(i32::MIN));
        d.push(1);
        assert_eq!(d.len(), 5);
        let big = i64::from(i32::MAX) + 15;
        assert_eq!(
            d.times(0).collect::<Vec<_>>(),
            vec![5, big, big + 7, big + 7 + i64::from(i32::MIN), big + 8 + i64::from(i32::MIN)]
        );
        // Whole microseconds within ±32 ms are stored narrow; -32.768 ms is the marker value, so not.
        let mut d = Deltas::default();
        for ns in [3_000, -32_767_000, -32_768_000, 32_767_000, 32_768_000, 0] {
            d.push(ns);
        }
        assert_eq!(d.narrow.iter().filter(|v| **v != Deltas::BIG).count(), 4);
        assert_eq!(d.times(0).collect::<Vec<_>>(), vec![3_000, -32_764_000, -65_532_000, -32_765_000, 3_000, 3_000]);
    }

    /// DevTools' algorithm as written there: absolute times, a stable sort, the in-place
    /// `fixMissingSamples` loop, next-time durations, the mean interval for the last.
    fn reference(nodes: &[u32], deltas_ns: &[i64], start_ns: i64, roles: &NodeRoles<'_>) -> Vec<(u32, i64, i64)> {
        let mut t = start_ns;
        let times: Vec<i64> = deltas_ns
            .iter()
            .map(|d| {
                t = t.saturating_add(*d);
                t
            })
            .collect();
        let mut order: Vec<usize> = (0..nodes.len()).collect();
        order.sort_by_key(|i| times[*i]);
        let mut sorted: Vec<u32> = order.iter().map(|i| nodes[*i]).collect();
        let sorted_times: Vec<i64> = order.iter().map(|i| times[*i]).collect();
        let n = sorted.len();
        for i in 1..n.saturating_sub(1) {
            let (prev, next) = (sorted[i - 1], sorted[i + 1]);
            if roles.is_program(sorted[i]) && fixable(roles, prev, next) {
                sorted[i] = prev;
            }
        }
        let mean = if n >= 2 {
            ((i128::from(sorted_times[n - 1]) - i128::from(sorted_times[0])) / (n as i128 - 1)) as i64
        } else {
            0
        };
        (0..n)
            .map(|i| {
                let duration = if i + 1 < n { sorted_times[i + 1].saturating_sub(sorted_times[i]) } else { mean };
                (sorted[i], sorted_times[i], duration)
            })
            .collect()
    }

    #[test]
    fn the_walk_equals_devtools_algorithm_as_written() {
        // nodes: 0 root, 1 (program), 2 (gc), 3..6 under top-level 3, 7..9 under top-level 7
        let is_system = [false, true, true, false, false, false, false, false, false, false];
        let bottom = [0, 1, 2, 3, 3, 3, 3, 7, 7, 7];
        let roles = NodeRoles { programs: Programs::One(1), is_system: &is_system, bottom: &bottom };
        let mut next = crate::xorshift(0x9e37_79b9_7f4a_7c15);
        for case in 0..2000 {
            let n = 2 + (next() % 80) as usize + usize::from(case % 10 == 0) * 3000;
            // Runs of the same node, as real profiles have, and plenty of (program).
            let mut node = 3;
            let nodes: Vec<u32> = (0..n)
                .map(|_| {
                    if next() % 3 == 0 {
                        node = 1 + (next() % 9) as u32;
                    }
                    node
                })
                .collect();
            let deltas_ns: Vec<i64> = (0..n)
                .map(|_| match next() % 40 {
                    0 => -((next() % 3000) as i64) * 1000,
                    1 => 0,
                    2 if case % 7 == 0 => i64::from(i32::MAX) + 5,
                    3 if case % 5 == 0 => (next() % 2000) as i64,
                    4 if case % 11 == 0 => -40_000_000,
                    _ => (900 + next() % 300) as i64 * 1000,
                })
                .collect();
            let mut deltas = Deltas::default();
            for d in &deltas_ns {
                deltas.push(*d);
            }
            let mut walked = Vec::new();
            attribute(&nodes, &Times::Deltas { start_ns: 7_000, deltas: &deltas }, None, &roles, |n, t, d| {
                walked.push((n, t, d));
            });
            assert_eq!(walked, reference(&nodes, &deltas_ns, 7_000, &roles), "case {case}");
        }
    }

    #[test]
    fn parallel_sums_equal_the_ordered_walk() {
        // nodes: 0 root, 1 (program), 2 (gc), 3..6 under top-level 3, 7..9 under top-level 7
        let is_system = [false, true, true, false, false, false, false, false, false, false];
        let bottom = [0, 1, 2, 3, 3, 3, 3, 7, 7, 7];
        let roles = NodeRoles { programs: Programs::One(1), is_system: &is_system, bottom: &bottom };
        let mut next = crate::xorshift(0x2545_f491_4f6c_dd1d);
        for case in 0..500 {
            let n = (next() % 60) as usize + usize::from(case % 3 == 0) * 500;
            let nodes: Vec<u32> = (0..n).map(|_| 1 + (next() % 9) as u32).collect();
            let mut deltas = Deltas::default();
            for _ in 0..n {
                let d = match next() % 10 {
                    0 => -((next() % 3) as i64) * 1000,
                    1 => 0,
                    2 if case % 7 == 0 => i64::from(i32::MAX) + 5,
                    3 if case % 5 == 0 => (next() % 2000) as i64,
                    _ => (next() % 2000) as i64 * 1000,
                };
                deltas.push(d);
            }
            let times = Times::Deltas { start_ns: 1_000, deltas: &deltas };
            let mut expected = vec![[0i64; 2]; 10];
            let mean = attribute(&nodes, &times, Some(5_000_000), &roles, |node, _, d| {
                expected[node as usize][0] += 1;
                expected[node as usize][1] += d;
            });
            let (sums, parallel_mean) = attribute_sums(&nodes, 10, &times, Some(5_000_000), &roles, None);
            assert_eq!((sums, parallel_mean), (expected, mean), "case {case}: n={n}");
        }
    }
}
