//! `report`: one self-contained HTML page to explore a profile.

use std::path::PathBuf;

use anyhow::Result;
use cpuprof_analysis::{blocks_only, report_data, without_tiers, ReportDataOptions, Weight};
use cpuprof_report::{render_report, ReportPage};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::input::{load_read, source_name, stack_filter, Loaded};
use crate::usage::UsageError;
use crate::{spelled, FilterOptions, ReadOptions, WindowOptions};

/// `report`: the HTML page.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct ReportRequest {
    /// The profile to read
    pub input: PathBuf,
    /// What a sample weighs: its duration (ns), or 1
    #[serde(default)]
    pub weight: Weight,
    /// List event-loop blocks at least this long (default 50ms)
    #[serde(default = "min_block")]
    pub min_block: String,
    /// Where to read scripts recorded elsewhere: OLD=NEW reads a script named OLD/… at NEW/…
    /// (several may be given; the first that matches is used)
    #[serde(default)]
    pub source_root: Vec<String>,
    #[serde(flatten)]
    pub filter: FilterOptions,
    #[serde(flatten)]
    pub window: WindowOptions,
    #[serde(flatten)]
    pub reading: ReadOptions,
}

fn min_block() -> String {
    cpuprof_analysis::defaults::REPORT_MIN_BLOCK.to_owned()
}

impl ReportRequest {
    /// The request for `input` with every option as given on no command line.
    pub fn new(input: PathBuf) -> ReportRequest {
        ReportRequest {
            input,
            weight: Weight::default(),
            min_block: min_block(),
            source_root: Vec::new(),
            filter: FilterOptions::default(),
            window: WindowOptions::default(),
            reading: ReadOptions::default(),
        }
    }

    /// Checks the options that need no input (usage errors, before anything is read).
    pub fn check(&self) -> Result<()> {
        self.options()?;
        crate::sources::source_roots(&self.source_root)?;
        self.filter.check()?;
        self.window.check()?;
        self.reading.check()
    }

    fn options(&self) -> Result<(ReportDataOptions, i64)> {
        let filter = stack_filter(&self.filter)?;
        let min_ns =
            cpuprof_analysis::parse_duration_ns(&self.min_block, true).filter(|ns| *ns > 0).ok_or_else(|| {
                UsageError(format!(
                    "{} {}: expected a length of time such as 50ms",
                    spelled("min_block"),
                    self.min_block
                ))
            })?;
        let mut options = ReportDataOptions::default();
        options.weight = self.weight;
        options.filter = filter;
        Ok((options, min_ns))
    }

    /// The page, of `loaded` when given (named `source`), else of the profile read from `input`.
    pub fn execute(&self, loaded: Option<(Loaded, String)>) -> Result<String> {
        let (options, min_ns) = self.options()?;
        let (loaded, source, row_tiers) = if let Some((loaded, source)) = loaded {
            (loaded, source, None)
        } else {
            // Tick logs' frames at their lines, for the functions' lines (the page's analyses
            // go by function), and their JIT records (tiers apart, folded back with each
            // sample's tier kept beside), for the function view's `jit` lines.
            let mut reading = self.reading.clone();
            reading.frame_lines = true;
            reading.jit = true;
            let source = source_name(&self.input);
            let Loaded { profile, window } = load_read(&self.input, &reading, &self.filter, &self.window, false, true)?;
            let (profile, tiers) = without_tiers(profile)
                .map_err(|e| anyhow::anyhow!("{source}: cannot fold the tiers of its functions: {e}"))?;
            (Loaded { profile, window }, source, Some(tiers))
        };
        let Loaded { profile, window } = loaded;
        // Two walks over the samples, side by side. Blocks need sample times: a profile
        // without them has none to show.
        let (data, blocks) = rayon::join(
            || report_data(&profile, &options),
            || blocks_only(&profile, min_ns, Some(cpuprof_analysis::defaults::REPORT_BLOCKS)).ok(),
        );
        let data = data.map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
        // Nothing counted: an empty profile, window, or filters that matched nothing (as `top` says).
        if data.buckets.iter().all(|b| b.weights.is_empty()) {
            crate::warn_empty(&source, &profile, window.is_some());
        }
        let blocks = blocks.filter(|_| data.timed);
        let roots = crate::sources::source_roots(&self.source_root)?;
        let sources = crate::sources::page_sources(&profile, &data, &roots);
        let jit = row_tiers
            .map(|tiers| {
                let graph_options = cpuprof_analysis::CallGraphOptions::new(options.weight, options.filter.clone());
                crate::jit::page_jit(&source, &profile, &tiers, &data, &graph_options)
            })
            .unwrap_or_default();
        let meta = crate::said::settled(&profile.meta);
        let page = ReportPage {
            source: &source,
            meta: &meta,
            data: &data,
            blocks: blocks.as_ref(),
            window_from_ns: window.map(|w| w.from_ns),
            sources: &sources,
            jit: &jit,
        };
        Ok(render_report(&page)?)
    }
}
