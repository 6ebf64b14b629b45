//! What the crate's tests build profiles with.

use cpuprof_model::{Frame, Func, FuncKind, ProfileBuilder, StackId, StrId};

/// The tests' random numbers (splitmix64): `next(n)` is in `0..n`.
pub(crate) fn random(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

/// A top-level stack of one function `name`.
pub(crate) fn stack(b: &mut ProfileBuilder, name: &str, kind: FuncKind) -> StackId {
    let name = b.intern(name);
    let func = b.func(Func { name, file: StrId::EMPTY, line: None, column: None, kind, tier: None, library: None });
    let frame = b.frame(Frame { func, line: None, column: None });
    b.stack(None, frame)
}

/// A timeline's samples, walked as two halves split at sample `at`, in batches of 7 (so that
/// a walk's state carries across batches).
pub(crate) struct Halves {
    pub(crate) samples: Vec<cpuprof_model::TimedSample>,
    pub(crate) at: usize,
}

impl cpuprof_model::SampleSource for Halves {
    fn walk(&self, visit: &mut dyn FnMut(&[cpuprof_model::TimedSample])) {
        self.samples.chunks(7).for_each(visit);
    }

    fn walk_halves(
        &self,
        first: &mut (dyn FnMut(&[cpuprof_model::TimedSample]) + Send),
        second: &mut (dyn FnMut(&[cpuprof_model::TimedSample]) + Send),
    ) {
        let (a, b) = self.samples.split_at(self.at);
        a.chunks(7).for_each(first);
        b.chunks(7).for_each(second);
    }
}
