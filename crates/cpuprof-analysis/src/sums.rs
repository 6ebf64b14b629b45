//! The one sparse accumulator of the analyses: weights summed per index (sample rows,
//! functions, tree nodes) over a stretch of samples in a dense table, with the indices touched
//! listed, so that reading a stretch out costs its samples, not the table.

/// Weights per index, dense, with the indices added to since the last read listed, each once.
pub(crate) struct SparseSums {
    sums: Vec<i64>,
    /// Whether each index is listed in `touched`.
    seen: Vec<bool>,
    /// The indices added to since the last read, each once (those that weigh 0 too: a function
    /// that ran for no time still ran).
    touched: Vec<u32>,
}

impl SparseSums {
    /// Sums over indices `0..len` (an index beyond is ignored).
    pub(crate) fn new(len: usize) -> Self {
        Self { sums: vec![0; len], seen: vec![false; len], touched: Vec::new() }
    }

    #[inline]
    pub(crate) fn add(&mut self, index: u32, w: i64) {
        let i = index as usize;
        let (Some(sum), Some(seen)) = (self.sums.get_mut(i), self.seen.get_mut(i)) else { return };
        if !*seen {
            *seen = true;
            self.touched.push(index);
        }
        *sum = sum.saturating_add(w);
    }

    /// The indices added to since the last read with their sums, in the order first added,
    /// zero sums included; the sums start again from 0.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = (u32, i64)> + '_ {
        let (sum, seen) = (&mut self.sums, &mut self.seen);
        self.touched.drain(..).map(move |index| {
            seen[index as usize] = false;
            (index, std::mem::take(&mut sum[index as usize]))
        })
    }

    /// The indices with a sum other than 0, in index order, with their sums; the sums start
    /// again from 0.
    pub(crate) fn take_sorted(&mut self) -> Vec<(u32, i64)> {
        // Many indices touched: a scan of every sum in order costs less than sorting the list
        // (a 500 MB profile's report sorted ~10,000 nodes in each of its buckets).
        if self.touched.len() > self.sums.len() / 64 {
            for index in self.touched.drain(..) {
                self.seen[index as usize] = false;
            }
            return (0..).zip(&mut self.sums).filter(|(_, w)| **w != 0).map(|(n, w)| (n, std::mem::take(w))).collect();
        }
        self.touched.sort_unstable();
        let mut out = Vec::with_capacity(self.touched.len());
        for index in self.touched.drain(..) {
            self.seen[index as usize] = false;
            let w = std::mem::take(&mut self.sums[index as usize]);
            if w != 0 {
                out.push((index, w));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::SparseSums;

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
            assert!(dense.sums.iter().all(|w| *w == 0) && dense.touched.is_empty() && !dense.seen.contains(&true));
        }
    }
}
