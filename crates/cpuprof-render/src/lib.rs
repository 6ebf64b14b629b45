//! Renderers: analysis results into bytes — tables, JSON, CSV and Markdown.
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

mod cpuprofile;
mod csv_out;
mod diff;
mod error;
mod flamegraph;
mod json;
mod markdown;
mod pprof;
mod table;
pub mod text;
pub mod time;

use cpuprof_analysis::{GroupBy, TopReport, Weight};

use cpuprof_model::Meta;
pub use cpuprofile::{render_cpuprofile, CpuProfileOutput, MAX_SAMPLES};
pub use diff::{regression_text, render_diff, DiffDocument};
pub use error::RenderError;
pub use flamegraph::{render_collapsed, render_differential, render_flamegraph, FlameOptions};
pub use pprof::render_pprof;

/// Output formats of tabular commands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[non_exhaustive]
pub enum Format {
    /// An aligned text table with a summary line.
    #[default]
    Table,
    /// JSON (a documented, stable schema).
    Json,
    /// CSV with a header row.
    Csv,
    /// A Markdown table, e.g. for a pull-request comment.
    Markdown,
}

/// A top report with what is needed to present it.
#[derive(Clone, Copy, Debug)]
pub struct TopDocument<'a> {
    /// The input as the user named it.
    pub source: &'a str,
    /// Facts about the recording.
    pub meta: &'a Meta,
    /// The numbers.
    pub report: &'a TopReport,
    /// What the rows stand for.
    pub by: GroupBy,
    /// How many rows to show (`None`: all).
    pub limit: Option<usize>,
}

impl TopDocument<'_> {
    fn rows(&self) -> &[cpuprof_analysis::TopRow] {
        let rows = &self.report.rows;
        &rows[..self.limit.unwrap_or(rows.len()).min(rows.len())]
    }

    fn unit(&self) -> &'static str {
        match self.report.unit {
            Weight::Samples => "samples",
            _ => "ns",
        }
    }

    fn pct(&self, value: i64) -> f64 {
        if self.report.total == 0 {
            0.0
        } else {
            100.0 * value as f64 / self.report.total as f64
        }
    }

    fn by_group(&self) -> bool {
        matches!(self.by, GroupBy::File | GroupBy::Package)
    }
}

/// Renders `doc` in `format`.
pub fn render_top(doc: &TopDocument<'_>, format: Format) -> String {
    match format {
        Format::Table => table::top(doc),
        Format::Json => json::top(doc),
        Format::Csv => csv_out::top(doc),
        Format::Markdown => markdown::top(doc),
    }
}

/// `bytes` gzipped with no name and mtime 0 in the header, so the same input gives the same file.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::GzBuilder::new().mtime(0).write(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    let _ = std::io::Write::write_all(&mut encoder, bytes);
    encoder.finish().unwrap_or_default()
}
