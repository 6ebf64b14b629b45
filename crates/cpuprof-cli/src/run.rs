//! Dispatch: clap arguments → library options → pipeline → output.

use anyhow::Result;
use cpuprof_analysis::{top, GroupBy, SortBy, StackFilter, TopOptions, Weight};
use cpuprof_parse::ParseOptions;
use cpuprof_render::{render_top, TopDocument};
use regex::Regex;

use crate::args::{By, Cli, Command, Sort, TopArgs, WeightArg};
use crate::io::{read_profile, Output};

/// A bad argument found after clap's own checks (exit code 2).
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

pub(crate) fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Top(args) => run_top(&args),
    }
}

fn regex(flag: &str, pattern: Option<&str>) -> Result<Option<Regex>> {
    pattern.map(|p| Regex::new(p).map_err(|e| UsageError(format!("invalid {flag} regex: {e}")).into())).transpose()
}

fn top_options(args: &TopArgs) -> Result<TopOptions> {
    let by = match args.by {
        By::Function => GroupBy::Function,
        By::File => GroupBy::File,
        By::Package => GroupBy::Package,
        By::Line => GroupBy::Line,
    };
    let weight = match args.weight {
        WeightArg::Time => Weight::Time,
        WeightArg::Samples => Weight::Samples,
    };
    let sort = match args.sort {
        Sort::SelfTime => SortBy::SelfWeight,
        Sort::Total => SortBy::Total,
    };
    let filter = StackFilter {
        include_idle: args.include_idle,
        focus: regex("--focus", args.focus.as_deref())?,
        ignore: regex("--ignore", args.ignore.as_deref())?,
    };
    Ok(TopOptions::new(by, weight, sort, filter))
}

fn run_top(args: &TopArgs) -> Result<()> {
    let options = top_options(args)?;
    let output = Output::new(args.output.output.as_deref(), &[args.input.as_path()])?;
    let mut parse = ParseOptions::default();
    parse.split_tiers = args.ticklog.split_tiers;
    parse.symbols_root.clone_from(&args.ticklog.symbols);
    if let Some(dir) = &args.ticklog.symbols {
        if !dir.is_dir() {
            return Err(UsageError(format!("--symbols {}: not a directory", dir.display())).into());
        }
    }
    let profile = read_profile(&args.input, &parse)?;
    for warning in &profile.meta.warnings {
        crate::warn(&format!("{}: {warning}", args.input.display()));
    }
    let report = top(&profile, &options);
    let source = args.input.display().to_string();
    let doc = TopDocument {
        source: if crate::io::is_dash(&args.input) { "<stdin>" } else { &source },
        meta: &profile.meta,
        report: &report,
        by: options.by,
        limit: if args.all { None } else { usize::try_from(args.limit).ok() },
    };
    output.write(render_top(&doc, args.output.format).as_bytes())
}
