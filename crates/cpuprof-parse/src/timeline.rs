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

/// Per-sample time deltas in ns, stored in 32 bits while they fit (1 ms = 10^6 ns), widened
/// on the first one that does not.
#[derive(Debug, Default)]
pub(crate) struct Deltas {
    narrow: Vec<i32>,
    wide: Option<Vec<i64>>,
}

impl Deltas {
    pub(crate) fn push(&mut self, ns: i64) {
        if let Some(wide) = &mut self.wide {
            wide.push(ns);
        } else if let Ok(small) = i32::try_from(ns) {
            self.narrow.push(small);
        } else {
            let mut wide: Vec<i64> = self.narrow.drain(..).map(i64::from).collect();
            wide.push(ns);
            self.narrow = Vec::new();
            self.wide = Some(wide);
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.wide.as_ref().map_or(self.narrow.len(), Vec::len)
    }

    /// Absolute times, starting from `start_ns`, saturating instead of overflowing.
    fn times(&self, start_ns: i64) -> impl Iterator<Item = i64> + Clone + '_ {
        let narrow = self.narrow.iter().map(|d| i64::from(*d));
        let wide = self.wide.iter().flatten().copied();
        narrow.chain(wide).scan(start_ns, |t, d| {
            *t = t.saturating_add(d);
            Some(*t)
        })
    }
}

/// How sample times are known.
pub(crate) enum Times<'a> {
    /// From `timeDeltas`.
    Deltas { start_ns: i64, deltas: &'a Deltas },
    /// No `timeDeltas`: samples spread evenly over `[start, end)`, as DevTools does.
    Even { start_ns: i64, end_ns: i64 },
}

/// What `fixMissingSamples` needs to know about nodes (indexed by node position).
pub(crate) struct NodeRoles<'a> {
    /// The `(program)` meta node, if there is one.
    pub(crate) program: Option<u32>,
    /// True for `(program)`, `(garbage collector)` and `(idle)` meta nodes.
    pub(crate) is_system: &'a [bool],
    /// The ancestor of each node that is a direct child of the root (DevTools' "bottom node").
    pub(crate) bottom: &'a [u32],
}

/// Walks the samples in DevTools order and calls `emit(node, time_ns, duration_ns)` once per
/// sample. Returns the mean interval in ns (0 with fewer than two samples).
pub(crate) fn attribute(
    nodes_of_samples: &[u32],
    times: &Times<'_>,
    end_ns: Option<i64>,
    roles: &NodeRoles<'_>,
    mut emit: impl FnMut(u32, i64, i64),
) -> i64 {
    let n = nodes_of_samples.len();
    if n == 0 {
        return 0;
    }
    let (first, last) = match times {
        Times::Deltas { start_ns, deltas } => {
            let sorted = sorted_order(nodes_of_samples, deltas.times(*start_ns));
            walk(sorted, n, roles, end_ns, &mut emit)
        }
        Times::Even { start_ns, end_ns: end } => {
            let span = i128::from(end.saturating_sub(*start_ns).max(0));
            let n_wide = n as i128;
            let even = nodes_of_samples.iter().enumerate().map(|(i, node)| {
                let offset = (i as i128 * span / n_wide) as i64;
                (*node, start_ns.saturating_add(offset))
            });
            walk(even, n, roles, end_ns, &mut emit)
        }
    };
    if n < 2 {
        0
    } else {
        ((i128::from(last) - i128::from(first)) / (n as i128 - 1)) as i64
    }
}

/// Samples `(node, time)` in stable time order.
fn sorted_order<'a>(
    nodes: &'a [u32],
    times: impl Iterator<Item = i64> + Clone + 'a,
) -> impl Iterator<Item = (u32, i64)> + 'a {
    // Late samples: earlier than some sample before them. Everything else is in order.
    let mut late: Vec<(i64, usize)> = Vec::new();
    let mut max = i64::MIN;
    for (i, t) in times.clone().enumerate() {
        if t < max {
            late.push((t, i));
        } else {
            max = t;
        }
    }
    let mut late_indices: Vec<usize> = late.iter().map(|(_, i)| *i).collect();
    late_indices.reverse(); // popped from the back, smallest index first
    late.sort_unstable(); // (time, index): the order a stable sort gives
    let mut in_order = times.enumerate().filter(move |(i, _)| {
        if late_indices.last() == Some(i) {
            late_indices.pop();
            false
        } else {
            true
        }
    });
    let mut late = late.into_iter().peekable();
    let mut next_in_order = in_order.next();
    std::iter::from_fn(move || {
        let take_late = match (late.peek(), next_in_order) {
            (Some(l), Some((i, t))) => (l.0, l.1) < (t, i),
            (Some(_), None) => true,
            (None, _) => false,
        };
        let (i, t) = if take_late {
            let (t, i) = late.next()?;
            (i, t)
        } else {
            let (i, t) = next_in_order?;
            next_in_order = in_order.next();
            (i, t)
        };
        Some((nodes[i], t))
    })
}

/// Applies `fixMissingSamples` and durations to samples already in time order. Returns the
/// first and last sample times.
fn walk(
    samples: impl Iterator<Item = (u32, i64)>,
    n: usize,
    roles: &NodeRoles<'_>,
    end_ns: Option<i64>,
    emit: &mut impl FnMut(u32, i64, i64),
) -> (i64, i64) {
    let mut samples = samples.peekable();
    let Some(&(_, first)) = samples.peek() else { return (0, 0) };
    let fix = roles.program.filter(|_| n >= 3);
    let system = |node: u32| roles.is_system.get(node as usize).copied().unwrap_or(false);
    let bottom = |node: u32| roles.bottom.get(node as usize).copied().unwrap_or(node);
    let mut prev: Option<u32> = None;
    let mut pending: Option<(u32, i64)> = None; // the sample whose duration is not known yet
    let mut last = first;
    while let Some((mut node, t)) = samples.next() {
        if let (Some(program), Some(p), Some(&(next, _))) = (fix, prev, samples.peek()) {
            if node == program && !system(p) && !system(next) && bottom(p) == bottom(next) {
                node = p;
            }
        }
        if let Some((pn, pt)) = pending {
            emit(pn, pt, t.saturating_sub(pt));
        }
        pending = Some((node, t));
        prev = Some(node);
        last = t;
    }
    if let Some((pn, pt)) = pending {
        let duration = if n >= 2 {
            ((i128::from(last) - i128::from(first)) / (n as i128 - 1)) as i64
        } else {
            end_ns.map_or(0, |end| end.saturating_sub(pt).max(0))
        };
        emit(pn, pt, duration);
    }
    (first, last)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    const NO_ROLES: NodeRoles<'static> = NodeRoles { program: None, is_system: &[], bottom: &[] };

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
        let roles = NodeRoles { program: Some(1), is_system: &is_system, bottom: &bottom };
        let (out, _) = run(&[3, 1, 2, 1, 1, 3], &[1, 1, 1, 1, 1, 1], &roles);
        let order: Vec<u32> = out.iter().map(|s| s.0).collect();
        // sample 1 is fixed (neighbours 3 and 2 share bottom 2); samples 3 and 4 are a run.
        assert_eq!(order, vec![3, 3, 2, 1, 1, 3]);
    }

    #[test]
    fn wide_deltas_survive() {
        let mut d = Deltas::default();
        d.push(5);
        d.push(i64::from(i32::MAX) + 10);
        d.push(7);
        assert_eq!(d.len(), 3);
        assert_eq!(d.times(0).collect::<Vec<_>>(), vec![5, i64::from(i32::MAX) + 15, i64::from(i32::MAX) + 22]);
    }
}
