//! Times as people type them on the command line: the analysis crate's parser, under the
//! name the commands use.

pub(crate) use cpuprof_analysis::parse_duration_ns as nanoseconds;
