//! `cpuprof report`: the HTML page to explore a profile.

use std::path::{Path, PathBuf};

use anyhow::Result;
use cpuprof_app::report::ReportRequest;

use crate::args::ReportArgs;
use crate::io::{is_dash, Output};
use cpuprof_app::UsageError;

/// Where a report of `input` goes by default: beside it, `NAME.report.html` (the input's name
/// without its profile extensions), never over it (the output refuses an input anyway).
pub(crate) fn default_report_path(input: &Path) -> Option<PathBuf> {
    if is_dash(input) {
        return None;
    }
    let name = input.file_name()?.to_string_lossy().into_owned();
    let mut stem = name.as_str();
    for ext in [".gz", ".cpuprofile", ".json", ".log", ".pb", ".prof", ".pprof", ".folded", ".txt"] {
        stem = stem.strip_suffix(ext).unwrap_or(stem);
    }
    let stem = if stem.is_empty() { "profile" } else { stem };
    Some(input.with_file_name(format!("{stem}.report.html")))
}

/// The request `report`'s flags make.
fn report_request(args: &ReportArgs) -> ReportRequest {
    ReportRequest {
        input: args.input.clone(),
        weight: args.weight.into(),
        min_block: args.min_block.clone(),
        source_root: args.source_root.clone(),
        filter: args.filter.options(),
        window: args.window.options(),
        reading: args.reading.options(),
    }
}

pub(crate) fn run_report(args: &ReportArgs) -> Result<()> {
    let path = match (&args.output, default_report_path(&args.input)) {
        (Some(path), _) => path.clone(),
        (None, Some(path)) => path,
        (None, None) if is_dash(&args.input) => {
            return Err(UsageError("a report of standard input needs -o FILE (or -o - for stdout)".to_owned()).into())
        }
        (None, None) => {
            return Err(UsageError(format!(
                "{}: no file name to name the report after: give -o FILE",
                args.input.display()
            ))
            .into())
        }
    };
    let request = report_request(args);
    request.check()?;
    let output = Output::new(Some(&path), &[args.input.as_path()])?;
    write_page(&request.execute(None)?, output, &path)
}

/// Writes a page to `output` (at `path`), and says where.
pub(crate) fn write_page(html: &str, output: Output, path: &Path) -> Result<()> {
    output.write(html.as_bytes())?;
    if !is_dash(path) {
        crate::say(&format!("wrote {}", path.display()));
    }
    Ok(())
}
