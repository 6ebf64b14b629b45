//! The one sparse accumulator of the analyses: samples and their weight summed per index
//! (sample rows, functions, tree nodes) over a stretch of samples in a dense table, with the
//! indices touched listed, so that reading a stretch out costs its samples, not the table.

/// A row's sums over a stretch of samples (as [`SparseSums::take_rows`] reads them out).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowSum {
    /// The row (see [`cpuprof_model::TimedSample::row`]).
    pub row: u32,
    /// How many of the stretch's samples are in it.
    pub samples: i64,
    /// Their weight, ns (as [`cpuprof_model::TimedSample::weight_ns`]).
    pub ns: i64,
}

/// Samples and their weight per index, dense, with the indices added to since the last read
/// listed, each once. An adaptive table ([`SparseSums::adaptive`]) stops listing after a read
/// of at least an eighth of the table in samples, and reads the whole table instead (that test
/// and push on every sample took a quarter of a timeline's walk), until a stretch is short again.
pub(crate) struct SparseSums {
    /// Samples and weight per index; an index with no sample was not added to.
    sums: Vec<(i64, i64)>,
    /// The indices added to since the last read, each once (those that weigh 0 too: a function
    /// that ran for no time still ran), while `listing`.
    touched: Vec<u32>,
    /// Whether the indices added to are listed in `touched` (else a read scans the table).
    listing: bool,
    /// Whether each read of the rows chooses whether the next stretch is listed.
    adapts: bool,
}

impl SparseSums {
    /// Sums over indices `0..len` (an index beyond is ignored), always listed.
    pub(crate) fn new(len: usize) -> Self {
        Self { sums: vec![(0, 0); len], touched: Vec::new(), listing: true, adapts: false }
    }

    /// [`SparseSums::new`], listing only the stretches that are short for the table.
    pub(crate) fn adaptive(len: usize) -> Self {
        Self { adapts: true, ..Self::new(len) }
    }

    #[inline]
    pub(crate) fn add(&mut self, index: u32, w: i64) {
        let Some(sum) = self.sums.get_mut(index as usize) else { return };
        if self.listing && sum.0 == 0 {
            self.touched.push(index);
        }
        *sum = (sum.0 + 1, sum.1.saturating_add(w));
    }

    /// The indices added to since the last read with their weights, in the order first added,
    /// zero weights included; the sums start again from 0. (A table that is always listed.)
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = (u32, i64)> + '_ {
        debug_assert!(!self.adapts, "drained tables are listed");
        let sums = &mut self.sums;
        self.touched.drain(..).map(move |index| (index, std::mem::take(&mut sums[index as usize]).1))
    }

    /// The indices with a weight other than 0, in index order, with their weights; the sums
    /// start again from 0. (A table that is always listed.)
    pub(crate) fn take_sorted(&mut self) -> Vec<(u32, i64)> {
        debug_assert!(!self.adapts, "sorted tables are listed");
        // Many indices touched: a scan of every sum in order costs less than sorting the list
        // (a 500 MB profile's report sorted ~10,000 nodes in each of its buckets).
        if self.touched.len() > self.sums.len() / 64 {
            self.touched.clear();
            return (0..)
                .zip(&mut self.sums)
                .filter(|(_, sum)| sum.0 != 0)
                .map(|(n, sum)| (n, std::mem::take(sum).1))
                .filter(|(_, w)| *w != 0)
                .collect();
        }
        self.touched.sort_unstable();
        let mut out = Vec::with_capacity(self.touched.len());
        for index in self.touched.drain(..) {
            let w = std::mem::take(&mut self.sums[index as usize]).1;
            if w != 0 {
                out.push((index, w));
            }
        }
        out
    }

    /// The indices added to since the last read, each once with its samples and weight (those
    /// that weigh 0 too), into `out` (cleared first); the sums start again from 0.
    pub(crate) fn take_rows(&mut self, out: &mut Vec<RowSum>) {
        out.clear();
        let mut samples = 0i64;
        if !self.listing || self.touched.len() >= self.sums.len() / 8 {
            // Most of the table, or not listed: read in order, not at random.
            self.touched.clear();
            for (row, sum) in (0..).zip(&mut self.sums).filter(|(_, sum)| sum.0 != 0) {
                let (n, ns) = std::mem::take(sum);
                samples += n;
                out.push(RowSum { row, samples: n, ns });
            }
        } else {
            for row in self.touched.drain(..) {
                let (n, ns) = std::mem::take(&mut self.sums[row as usize]);
                samples += n;
                out.push(RowSum { row, samples: n, ns });
            }
        }
        if self.adapts {
            // The next stretch is listed only after one of fewer than an eighth of the table in
            // samples, so each read of the whole table is paid for by that many samples.
            self.listing = samples < (self.sums.len() / 8) as i64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{RowSum, SparseSums};

    #[test]
    fn sums_are_read_out_once_and_start_again() {
        let mut sums = SparseSums::new(200);
        for (i, w) in [(5, 2), (3, 0), (5, 1), (150, 4)] {
            sums.add(i, w);
        }
        sums.add(900, 1); // beyond the table: ignored
        assert_eq!(sums.drain().collect::<Vec<_>>(), [(5, 3), (3, 0), (150, 4)]);
        assert_eq!(sums.drain().count(), 0);
        for (i, w) in [(9, 1), (2, 5), (9, 1), (4, 0)] {
            sums.add(i, w);
        }
        assert_eq!(sums.take_sorted(), [(2, 5), (9, 2)]);
        // Dense: most of the table touched, read by a scan.
        let mut dense = SparseSums::new(10);
        for i in (0..10).rev() {
            dense.add(i, i64::from(i % 3));
        }
        assert_eq!(dense.take_sorted(), [(1, 1), (2, 2), (4, 1), (5, 2), (7, 1), (8, 2)]);
        dense.add(1, 7);
        assert_eq!(dense.drain().collect::<Vec<_>>(), [(1, 7)]);
    }

    /// An adaptive table lists a stretch's rows until a stretch of at least an eighth of the
    /// table in samples, then reads itself whole until a stretch is short again; either way each
    /// read gives the stretch's rows once, zero weights too, and nothing of the stretch before.
    #[test]
    fn an_adaptive_table_reads_each_stretch_listed_or_whole() {
        let mut sums = SparseSums::adaptive(80);
        let mut out = Vec::new();
        let mut modes = Vec::new();
        // Stretches of 3, 40, 2, 12, 9 and 1 samples (an eighth of the table is 10).
        for (stretch, len) in [3u32, 40, 2, 12, 9, 1].into_iter().enumerate() {
            modes.push(sums.listing);
            let mut want = std::collections::BTreeMap::new();
            for k in 0..len {
                let (row, w) = ((k * 7 + stretch as u32) % 80, i64::from(k % 3));
                sums.add(row, w);
                let e = want.entry(row).or_insert((0, 0));
                *e = (e.0 + 1, e.1 + w);
            }
            sums.take_rows(&mut out);
            out.sort_by_key(|r| r.row);
            let want: Vec<RowSum> = want.into_iter().map(|(row, (samples, ns))| RowSum { row, samples, ns }).collect();
            assert_eq!(out, want, "stretch {stretch}");
        }
        assert_eq!(modes, [true, true, false, true, false, true]);
        assert!(sums.sums.iter().all(|s| *s == (0, 0)) && sums.touched.is_empty());
    }

    /// Whether few nodes are touched (the list sorted) or many (every sum scanned), the sums
    /// come out in node order, a node touched twice once, those back at 0 left out, and the
    /// scratch is empty after.
    #[test]
    fn dense_sums_come_out_in_node_order_either_way() {
        let n = 640;
        for touched in [3usize, 9, 11, 200, 640] {
            let mut dense = SparseSums::new(n);
            let mut want = std::collections::BTreeMap::new();
            // Nodes in a scrambled order, some twice, one cancelled out.
            for k in 0..touched {
                let node = (k * 37 % n) as u32;
                let w = (k as i64 % 5) + 1;
                dense.add(node, w);
                *want.entry(node).or_insert(0) += w;
                if k % 3 == 0 {
                    dense.add(node, 2);
                    *want.entry(node).or_insert(0) += 2;
                }
            }
            dense.add(1, 4);
            dense.add(1, -4);
            *want.entry(1).or_insert(0) += 0;
            want.retain(|_, w| *w != 0);
            let got = dense.take_sorted();
            assert_eq!(got, want.into_iter().collect::<Vec<_>>(), "{touched} nodes touched");
            assert!(dense.take_sorted().is_empty(), "{touched} nodes touched: emptied");
            assert!(dense.sums.iter().all(|w| *w == (0, 0)) && dense.touched.is_empty());
        }
    }
}
