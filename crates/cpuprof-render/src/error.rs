/// Why a profile could not be written or a flame graph drawn.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RenderError {
    /// A `.cpuprofile` lists every sample, and this profile has more than cpuprof writes.
    #[error(
        "the profile has {samples} samples and a .cpuprofile lists each one: more than the {limit} cpuprof writes"
    )]
    TooManySamples {
        /// The samples the file would list.
        samples: u64,
        /// [`crate::MAX_SAMPLES`].
        limit: u64,
    },
    /// The samples last longer than a `.cpuprofile`'s times can hold.
    #[error("the samples last {total_ns} ns in all: more than a .cpuprofile's times can hold")]
    TooLong {
        /// Their total duration in ns.
        total_ns: i64,
    },
    /// inferno could not draw the flame graph.
    #[error("{0}")]
    Draw(#[from] std::io::Error),
}
