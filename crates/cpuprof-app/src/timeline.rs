//! `timeline` and `blocks`: the profile over time.

use std::path::PathBuf;

use anyhow::Result;
use cpuprof_analysis::{blocks_only, timeline, Blocks, Timeline, TimelineOptions, Weight, Window};
use cpuprof_model::Meta;
use cpuprof_render::{BlocksDocument, TimelineDocument};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::input::{load_timed, source_name, Loaded};
use crate::top::Rows;
use crate::usage::UsageError;
use crate::{spelled, ReadOptions, WindowOptions};

/// A duration option (`100ms`, `1s`; a bare number is seconds), or a usage error naming it.
fn duration(field: &str, text: &str, example: &str) -> Result<i64> {
    cpuprof_analysis::parse_duration_ns(text, true).filter(|ns| *ns > 0).ok_or_else(|| {
        UsageError(format!("{} {text}: expected a length of time such as {example}", spelled(field))).into()
    })
}

/// `timeline`: busy, GC, idle and each category per bucket of time, and the phases.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct TimelineRequest {
    /// The profile to read (a format with sample times: .cpuprofile, tick log, Chrome trace)
    pub input: PathBuf,
    /// The length of a bucket (100ms, 1s)
    #[serde(default)]
    pub bucket: Option<String>,
    /// Cut the recording into N buckets (1 to 100000)
    #[serde(default)]
    #[schemars(range(min = 1, max = 100_000))]
    pub buckets: Option<u32>,
    /// What a sample weighs: its duration (ns), or 1
    #[serde(default)]
    pub weight: Weight,
    #[serde(flatten)]
    pub window: WindowOptions,
    #[serde(flatten)]
    pub reading: ReadOptions,
}

/// `timeline`'s answer.
pub struct TimelineAnswer {
    pub source: String,
    pub meta: Meta,
    pub timeline: Timeline,
    pub window: Option<Window>,
}

impl TimelineAnswer {
    /// The report to render, `width` columns wide; `bucket_table`: a table of the buckets under
    /// the chart.
    pub fn document(&self, width: Option<usize>, bucket_table: bool) -> TimelineDocument<'_> {
        TimelineDocument {
            source: &self.source,
            meta: &self.meta,
            timeline: &self.timeline,
            window: self.window,
            width,
            bucket_table,
        }
    }
}

impl TimelineRequest {
    /// Usage errors (before anything is read or an output is claimed).
    pub fn check(&self) -> Result<()> {
        if self.bucket.is_some() && self.buckets.is_some() {
            return Err(UsageError(format!("{} cannot be used with {}", spelled("bucket"), spelled("buckets"))).into());
        }
        if self.buckets.is_some_and(|n| !(1..=100_000).contains(&n)) {
            return Err(UsageError(format!("{}: expected 1 to 100000 buckets", spelled("buckets"))).into());
        }
        self.bucket.as_deref().map(|b| duration("bucket", b, "100ms or 1.5s")).transpose()?;
        self.window.check()?;
        self.reading.check()
    }

    /// Answers the request.
    pub fn execute(&self) -> Result<TimelineAnswer> {
        self.check()?;
        let bucket_ns = self.bucket.as_deref().map(|b| duration("bucket", b, "100ms or 1.5s")).transpose()?;
        let Loaded { profile, window } = load_timed(&self.input, &self.reading, &self.window, "timeline")?;
        let mut options = TimelineOptions::default();
        options.bucket_ns = bucket_ns;
        options.buckets = self.buckets;
        options.weight = self.weight;
        let source = source_name(&self.input);
        let line = timeline(&profile, &options).map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
        if profile.samples.is_empty() {
            crate::warn_empty(&source, &profile, window.is_some());
        }
        Ok(TimelineAnswer { source, meta: crate::said::settled(&profile.meta), timeline: line, window })
    }
}

/// `blocks`: what blocked the event loop.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct BlocksRequest {
    /// The profile to read (a format with sample times: .cpuprofile, tick log, Chrome trace)
    pub input: PathBuf,
    /// Report blocks at least this long (default 50ms)
    #[serde(default = "min_block")]
    pub min: String,
    #[serde(flatten)]
    pub rows: Rows,
    #[serde(flatten)]
    pub window: WindowOptions,
    #[serde(flatten)]
    pub reading: ReadOptions,
}

fn min_block() -> String {
    cpuprof_analysis::defaults::MIN_BLOCK.to_owned()
}

/// `blocks`' answer.
pub struct BlocksAnswer {
    pub source: String,
    pub meta: Meta,
    pub blocks: Blocks,
    pub window: Option<Window>,
    pub limit: Option<usize>,
}

impl BlocksAnswer {
    /// The report to render, `width` columns wide.
    pub fn document(&self, width: Option<usize>) -> BlocksDocument<'_> {
        BlocksDocument {
            source: &self.source,
            meta: &self.meta,
            blocks: &self.blocks,
            window: self.window,
            limit: self.limit,
            width,
        }
    }
}

impl BlocksRequest {
    fn min_ns(&self) -> Result<i64> {
        Ok(cpuprof_analysis::parse_duration_ns(&self.min, true).ok_or_else(|| {
            UsageError(format!("{} {}: expected a length of time such as 50ms or 0.2s", spelled("min"), self.min))
        })?)
    }

    /// Usage errors (before anything is read or an output is claimed).
    pub fn check(&self) -> Result<()> {
        self.min_ns()?;
        self.rows.check()?;
        self.window.check()?;
        self.reading.check()
    }

    /// Answers the request.
    pub fn execute(&self) -> Result<BlocksAnswer> {
        self.check()?;
        let min_ns = self.min_ns()?;
        let Loaded { profile, window } = load_timed(&self.input, &self.reading, &self.window, "event-loop blocks")?;
        let source = source_name(&self.input);
        // Nothing below reads the samples' values: the walk need not sum them.
        let found = blocks_only(&profile, min_ns, self.rows.limit()).map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
        if profile.samples.is_empty() {
            crate::warn_empty(&source, &profile, window.is_some());
        } else if found.idle_samples == 0 {
            crate::warn(&format!(
                "{source}: no idle samples: the event loop never waited in this {} (a batch job?), so each stretch of it is one block, not a stall",
                if window.is_some() { "window" } else { "recording" }
            ));
        }
        Ok(BlocksAnswer {
            source,
            meta: crate::said::settled(&profile.meta),
            blocks: found,
            window,
            limit: self.rows.limit(),
        })
    }
}
