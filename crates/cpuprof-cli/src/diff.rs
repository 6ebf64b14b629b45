//! `cpuprof diff`: the flags mapped to a `DiffRequest` (`cpuprof_app::diff`), the outputs
//! claimed before any input is read, the answer written (the report, its flame graph and page,
//! GitHub's annotations and job summary), then the gate's verdict.

use anyhow::Result;
use cpuprof_app::diff::{Checked, DiffBy as By, DiffRequest, Shown};
use cpuprof_render::{render_diff, render_diff_annotations, DiffDocument, Format};

use crate::args::{DiffArgs, DiffBy, NormalizeArg, ReportFormatArg};
use crate::io::Output;
use cpuprof_app::UsageError;

/// A significant regression crossed a `--fail-on` threshold (exit code 3).
#[derive(Debug)]
pub(crate) struct GateTripped(pub(crate) String);

impl std::fmt::Display for GateTripped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "regression: {}", self.0)
    }
}

impl std::error::Error for GateTripped {}

/// The request `diff`'s flags make.
pub(crate) fn diff_request(args: &DiffArgs) -> DiffRequest {
    DiffRequest {
        pair: args.pair.clone(),
        base: args.base.clone(),
        new: args.new.clone(),
        normalize: match args.normalize {
            NormalizeArg::Time => cpuprof_analysis::Normalize::Time,
            NormalizeArg::Share => cpuprof_analysis::Normalize::Share,
        },
        sort: args.sort.into(),
        by: match args.by {
            DiffBy::Function => By::Function,
            DiffBy::Line => By::Line,
        },
        rows: args.rows.options(),
        min_delta: args.min_delta.clone(),
        explain: args.explain,
        link: args.link.clone(),
        fail_on: args.fail_on.clone(),
        blocks: args.blocks,
        base_source_map_dir: args.base_source_map_dir.clone(),
        new_source_map_dir: args.new_source_map_dir.clone(),
        base_root: args.base_root.clone(),
        new_root: args.new_root.clone(),
        map: args.map.clone(),
        filter: args.filter.options(),
        window: args.window.options(),
        base_window: args.base_window.clone(),
        new_window: args.new_window.clone(),
        base_phase: args.base_phase.clone(),
        new_phase: args.new_phase.clone(),
        reading: args.reading.options(),
    }
}

/// The outputs of a diff: the report, and the flame graph and page when asked.
struct Outputs {
    output: Output,
    svg: Option<Output>,
    html: Option<Output>,
}

/// `cpuprof diff`: the request checked, the outputs claimed (before any input is read), both
/// sides read and compared, then the report, its files and the gate's verdict.
pub(crate) fn run_diff(args: &DiffArgs) -> Result<()> {
    if args.output.format == ReportFormatArg::Brief {
        return Err(brief_refused().into());
    }
    let request = diff_request(args);
    let checked = request.check()?;
    let outputs = claim_outputs(args, &checked)?;
    let shown = Shown {
        flamegraph: args.flamegraph.is_some(),
        page: args.report.is_some(),
        csv: args.output.format == ReportFormatArg::Csv,
    };
    let answer = checked.execute(&request, shown)?;
    let Outputs { output, svg, html } = outputs;
    let cwd = crate::terminal::current_dir();
    let doc =
        answer.document(crate::terminal::terminal(args.output.output.as_deref(), args.output.wide, cwd.as_deref()));
    write_report(&doc, args.output.format, output)?;
    if let (Some(svg_output), Some(drawn)) = (svg, &answer.flame_svg) {
        match drawn {
            Ok(drawn) => svg_output.write(drawn)?,
            Err(e) => return Err(anyhow::anyhow!("{e}")),
        }
    }
    if let Some(html) = html {
        html.write(answer.page(&doc)?.as_bytes())?;
    }
    if answer.crossed.is_empty() {
        Ok(())
    } else {
        Err(GateTripped(answer.crossed.join("; ")).into())
    }
}

/// Claims every output of the diff, refusing any that is an input or the job summary.
fn claim_outputs(args: &DiffArgs, request: &Checked) -> Result<Outputs> {
    let inputs = request.inputs();
    let input_paths: Vec<&std::path::Path> = inputs.iter().map(|p| p.as_path()).collect();
    let output = Output::new(args.output.output.as_deref(), &input_paths)?;
    if args.output.format == ReportFormatArg::Github {
        if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
            let summary = std::path::Path::new(&summary);
            crate::io::refuse_appending_to_input(summary, "GITHUB_STEP_SUMMARY", &input_paths)?;
            let outputs = [
                ("-o", args.output.output.as_deref()),
                ("--flamegraph", args.flamegraph.as_deref()),
                ("--report", args.report.as_deref()),
            ];
            if let Some((flag, _)) = outputs.iter().find(|(_, o)| o.is_some_and(|o| crate::io::same_file(o, summary))) {
                return Err(UsageError(format!(
                    "{flag} names the job summary file (GITHUB_STEP_SUMMARY), which --format github adds the report to"
                ))
                .into());
            }
        }
    }
    let svg_output = args.flamegraph.as_deref().map(|svg| Output::new(Some(svg), &input_paths)).transpose()?;
    let html_output = args.report.as_deref().map(|html| Output::new(Some(html), &input_paths)).transpose()?;
    Ok(Outputs { output, svg: svg_output, html: html_output })
}

/// `--format brief` sums up one profile: not a diff.
fn brief_refused() -> UsageError {
    UsageError("--format brief is for top (one profile); a diff has table, json, csv, markdown and github".to_owned())
}

/// Writes the report in `format`. For GitHub the annotations go to the output and the Markdown
/// report is appended to the job summary (the file `GITHUB_STEP_SUMMARY` names: the runner
/// gives each step its own and collects it, so it is added to, not replaced), or follows the
/// annotations outside Actions.
fn write_report(doc: &DiffDocument<'_>, format: ReportFormatArg, output: Output) -> Result<()> {
    let format = match format {
        ReportFormatArg::Table => Format::Table,
        ReportFormatArg::Json => Format::Json,
        ReportFormatArg::Csv => Format::Csv,
        ReportFormatArg::Markdown => Format::Markdown,
        ReportFormatArg::Brief => return Err(brief_refused().into()),
        ReportFormatArg::Github => {
            let mut text = render_diff_annotations(doc);
            let markdown = render_diff(doc, Format::Markdown);
            match std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
                Some(summary) => append_summary(std::path::Path::new(&summary), &markdown)?,
                None => text.push_str(&markdown),
            }
            return output.write(text.as_bytes());
        }
    };
    output.write(render_diff(doc, format).as_bytes())
}

/// Appends `markdown` to the job summary file at `path`, after a blank line.
fn append_summary(path: &std::path::Path, markdown: &str) -> Result<()> {
    use std::io::Write as _;
    let shown = cpuprof_render::text::visible(&path.display().to_string());
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| anyhow::anyhow!("GITHUB_STEP_SUMMARY {shown}: cannot open it to add the report: {e}"))?;
    file.write_all(format!("{markdown}\n").as_bytes())
        .map_err(|e| anyhow::anyhow!("GITHUB_STEP_SUMMARY {shown}: cannot add the report: {e}"))
}
