//! Renderers: analysis results into bytes — [`reports`] (tables, JSON, CSV and Markdown, one
//! module per format) — and profiles into other profile formats (writers: pprof, `.cpuprofile`,
//! folded stacks, flame graphs).
//!
//! Depends on `cpuprof-model` and `cpuprof-analysis`. Everything is rendered into a `String`
//! in full (the CLI writes it out atomically afterwards), with no terminal detection: output
//! is the same for the same input. Names come from other people's code, so every format
//! escapes them its own way (see [`text`]).
//!
//! ```
//! use cpuprof_render::time::format_ns;
//! assert_eq!(format_ns(1_234_567), "1.23 ms");
//! ```
#![deny(missing_docs)]

pub mod defaults;
mod error;
pub mod reports;
pub mod text;
pub mod time;
mod writers;

pub use error::RenderError;
pub use reports::{
    jit_function_lines, regression_text, render_annotate, render_blocks, render_brief, render_calls, render_diff,
    render_diff_annotations, render_diff_json_line, render_jit, render_timeline, render_top, render_tree,
    AnnotateDocument, AnnotatedFunction, BlocksDocument, BriefDocument, CallsDocument, Checkouts, DiffDocument, Format,
    InputTotal, JitDocument, Link, SourceOrigin, SourceText, Terminal, TimelineDocument, TopDocument, TreeDocument,
    TreeView,
};
pub use writers::cpuprofile::{render_cpuprofile, CpuProfileOutput, MAX_SAMPLES};
pub use writers::flamegraph::{frame_color, render_empty_flamegraph};
pub use writers::flamegraph::{render_collapsed, render_differential, render_flamegraph, FlameOptions};
pub use writers::pprof::render_pprof;

/// `bytes` gzipped with no name and mtime 0 in the header, so the same input gives the same file.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::GzBuilder::new().mtime(0).write(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    let _ = std::io::Write::write_all(&mut encoder, bytes);
    encoder.finish().unwrap_or_default()
}
