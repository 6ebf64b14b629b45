//! Profile writers: a profile, or its fold, into another profile format (pprof, `.cpuprofile`,
//! folded stacks and the flame graphs drawn from them). Reports on a profile are in
//! [`crate::reports`].

pub(crate) mod cpuprofile;
pub(crate) mod flamegraph;
pub(crate) mod pprof;
