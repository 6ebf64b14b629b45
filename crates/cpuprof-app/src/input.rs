//! Reading a request's inputs: how to read them ([`ReadOptions`]: parse options, source maps),
//! which frames and samples count ([`FilterOptions`]) and the time window ([`WindowOptions`]),
//! with the hints that name the option to change added to the readers' errors and warnings.

use anyhow::Result;
use cpuprof_analysis::{
    between, cut_window, cut_window_summed, find_phase, recording, resolve_window, timeline, Bound, Bounds, CallGraph,
    CallGraphOptions, StackFilter, TimelineOptions, Weight, Window,
};
use cpuprof_parse::{FoldedWeight, ParseError, ParseOptions, Setting};
use cpuprof_render::text::visible;
use regex::Regex;

use std::path::Path;

use cpuprof_model::{Profile, SourceFormat};
use cpuprof_sourcemap::SourceMaps;

use crate::read::read_profile;
use crate::spelled;
use crate::usage::UsageError;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::PathBuf;

/// How inputs are read: their format, and options of particular formats.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(default)]
// Independent switches, each one of the command line's.
#[allow(clippy::struct_excessive_bools)]
pub struct ReadOptions {
    /// The input's format; `auto` recognises it from the content (gzip is always undone)
    pub input_format: InputFormat,
    /// Folded stacks: what the numbers are: `samples` (counts, the default) or `time` (ns)
    pub folded_weight: Weight,
    /// Tick logs and perf script text: keep a function's V8 tiers apart (~f, ^f, +f, *f)
    pub split_tiers: bool,
    /// Tick logs: keep V8's view of TurboFan-inlined functions (their time in the function they
    /// were inlined into) instead of giving each its own frame under its caller
    pub no_unroll_inlined: bool,
    /// Tick logs: read the libraries the log names under this folder instead of /
    pub symbols: Option<PathBuf>,
    /// pprof: the sample type to weigh by (cpu, wall, samples, …)
    pub sample_type: Option<String>,
    /// Chrome traces: the CPU profile to read, ID or PID:ID
    pub profile: Option<String>,
    /// Map JavaScript frames through source maps to their original names, sources and lines
    pub source_maps: bool,
    /// Look for the scripts and their source maps in this folder first; implies source_maps
    pub source_map_dir: Option<PathBuf>,
    /// Read at most this many bytes of an input, after gzip decompression (a number of bytes or
    /// a size: 500MB, 2GiB; default 2 GiB)
    #[serde(deserialize_with = "size_or_bytes")]
    #[schemars(range(min = 1))]
    pub max_input_size: Option<u64>,
    /// Tick logs: frames at their source lines (set by the analyses by line, not an option).
    #[serde(skip)]
    #[schemars(skip)]
    pub frame_lines: bool,
    /// Tick logs: what V8's compilers did, and each sample's tier (set by `jit`, not an option).
    #[serde(skip)]
    #[schemars(skip)]
    pub jit: bool,
}

/// The options as given on no command line.
impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            input_format: InputFormat::AUTO,
            folded_weight: Weight::Samples,
            split_tiers: false,
            no_unroll_inlined: false,
            symbols: None,
            sample_type: None,
            profile: None,
            source_maps: false,
            source_map_dir: None,
            max_input_size: None,
            frame_lines: false,
            jit: false,
        }
    }
}

/// An input's format: `auto` (recognised from the content) or one the readers read, named as
/// [`SourceFormat`] names them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputFormat(pub Option<SourceFormat>);

impl InputFormat {
    /// Recognise the format from the content.
    pub const AUTO: InputFormat = InputFormat(None);

    /// The format `name` names (`auto` or a [`SourceFormat`]'s name).
    pub fn from_name(name: &str) -> Option<InputFormat> {
        if name == "auto" {
            return Some(InputFormat::AUTO);
        }
        SourceFormat::ALL.iter().find(|f| f.as_str() == name).map(|f| InputFormat(Some(*f)))
    }

    /// Every name: `auto`, then the formats'.
    pub fn names() -> Vec<&'static str> {
        std::iter::once("auto").chain(SourceFormat::ALL.iter().map(|f| f.as_str())).collect()
    }
}

impl<'de> Deserialize<'de> for InputFormat {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        InputFormat::from_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown input format {name:?}; expected one of {}",
                InputFormat::names().join(", ")
            ))
        })
    }
}

impl JsonSchema for InputFormat {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "InputFormat".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "enum": InputFormat::names() })
    }
}

impl ReadOptions {
    /// Usage errors of the reading options (before anything is read).
    pub fn check(&self) -> Result<()> {
        if self.max_input_size == Some(0) {
            return Err(
                UsageError(format!("{} 0: expected a size of at least 1 byte", spelled("max_input_size"))).into()
            );
        }
        Ok(())
    }
}

/// `max_input_size`: bytes, a number or a size with a unit (`500MB`, `2GiB`, `1.5G`; `K`, `M`,
/// `G` and `T` are powers of 1024, `KB`, `MB`, … powers of 1000).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024f64.powi(2),
        "g" | "gib" => 1024f64.powi(3),
        "t" | "tib" => 1024f64.powi(4),
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        _ => return Err(format!("{text}: expected a size such as 500MB or 2GiB")),
    };
    match cpuprof_model::parse_decimal(number) {
        Some(v) if v * scale >= 1.0 && v * scale < 1.8e19 => Ok((v * scale).round() as u64),
        _ => Err(format!("{text}: expected a size such as 500MB or 2GiB")),
    }
}

/// `max_input_size` as a request gives it: bytes, or a size with its unit (`"500MB"`).
fn size_or_bytes<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Size {
        Bytes(u64),
        Text(String),
    }
    match Option::<Size>::deserialize(deserializer)? {
        None => Ok(None),
        Some(Size::Bytes(n)) => Ok(Some(n)),
        Some(Size::Text(text)) => parse_size(&text).map(Some).map_err(serde::de::Error::custom),
    }
}

impl FilterOptions {
    /// Usage errors of the filter (its regular expressions).
    pub fn check(&self) -> Result<()> {
        stack_filter(self)?;
        regex("hide", self.hide.as_deref())?;
        Ok(())
    }
}

impl WindowOptions {
    /// Usage errors of the window (how it is named, its times).
    pub fn check(&self) -> Result<()> {
        window_bounds(self)?;
        Ok(())
    }
}

/// Which samples count.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct FilterOptions {
    /// Count (idle) samples (the event loop waiting)
    pub include_idle: bool,
    /// Keep only samples with a function in their stack whose name or file matches this regex
    pub focus: Option<String>,
    /// Drop samples with a function in their stack whose name or file matches this regex
    pub ignore: Option<String>,
    /// Take the frames of functions whose name or file matches this regex out of every stack,
    /// keeping their samples on their callers (applied before focus and ignore)
    pub hide: Option<String>,
}

/// A time window, for profiles whose samples have times (.cpuprofile, tick logs).
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct WindowOptions {
    /// Only samples taken at or after this time into the recording (1.5s, 250ms; -2s: before its
    /// end; 90%: a share of its length)
    pub from: Option<String>,
    /// Only samples taken before this time into the recording (as from)
    pub to: Option<String>,
    /// Two patterns A and B: only samples from the first with A on its stack to the last with B
    #[schemars(length(min = 2, max = 2))]
    pub between: Vec<String>,
    /// Only the samples of one phase of the timeline: its number (1, 2, …) or label (startup, steady)
    pub phase: Option<String>,
}

/// Reads profiles with the input options. One reader serves every input of a command, so that
/// each source map is loaded once, whichever thread reads which input.
pub struct Reader<'a> {
    args: &'a ReadOptions,
    source_maps: Option<SourceMaps>,
    /// The folder source maps are looked for in first, when not the arguments' own.
    maps_dir: Option<std::path::PathBuf>,
    /// Set once the inputs' warnings have been said (a second read of them says nothing).
    quiet: std::sync::atomic::AtomicBool,
    /// The run the inputs are read for: its warnings are said there, from any thread.
    said: crate::said::Said,
}

impl<'a> Reader<'a> {
    pub fn new(args: &'a ReadOptions) -> Result<Self> {
        for (field, dir) in [("symbols", &args.symbols), ("source_map_dir", &args.source_map_dir)] {
            if let Some(dir) = dir.as_ref().filter(|d| !d.is_dir()) {
                return Err(UsageError(format!("{} {}: not a directory", spelled(field), dir.display())).into());
            }
        }
        let source_maps =
            (args.source_maps || args.source_map_dir.is_some()).then(|| SourceMaps::new(args.source_map_dir.clone()));
        Ok(Self {
            args,
            source_maps,
            maps_dir: None,
            quiet: std::sync::atomic::AtomicBool::new(false),
            said: crate::said::Said::current(),
        })
    }

    /// A reader whose source maps are looked for in `dir` first (`diff`'s per-side folders).
    pub fn with_source_map_dir(args: &'a ReadOptions, field: &str, dir: &Path) -> Result<Self> {
        if !dir.is_dir() {
            return Err(UsageError(format!("{} {}: not a directory", spelled(field), dir.display())).into());
        }
        let source_maps = Some(SourceMaps::new(Some(dir.to_path_buf())));
        Ok(Self { source_maps, maps_dir: Some(dir.to_path_buf()), ..Self::new(args)? })
    }

    /// From now on, reads without a word on stderr: for reading inputs again whose warnings
    /// were said the first time.
    pub fn hush(&self) {
        self.quiet.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    fn warn(&self, message: &str) {
        if !self.quiet.load(std::sync::atomic::Ordering::Relaxed) {
            self.said.warn(message);
        }
    }

    /// Reads `input` (with per-sample times when `timeline` or a `window` is given), reports the
    /// parser's warnings and maps it through source maps when asked to. The reader keeps only
    /// the samples of a `--from`/`--to` window where it can ([`cut_to_window`] cuts the rest).
    pub fn load(&self, input: &Path, timeline: bool, window: Option<&WindowSpec>) -> Result<Profile> {
        let profile = if crate::session::serving() && !crate::read::is_dash(input) {
            // An MCP session reads a profile once, whole and with its times, for every question
            // after (the window is cut from it as from a format the reader cannot cut).
            let reading = format!("{:?} {:?}", self.args, self.maps_dir);
            crate::session::cached(input, &reading, || self.read(input, true, None))?
        } else {
            self.read(input, timeline, window)?
        };
        // Said at every read, a profile kept from an earlier one included: each run's report
        // carries its inputs' warnings.
        for warning in &profile.meta.warnings {
            self.warn(&format!("{}: {warning}", source_name(input)));
        }
        Ok(profile)
    }

    fn read(&self, input: &Path, timeline: bool, window: Option<&WindowSpec>) -> Result<Profile> {
        let reading = self.args;
        let mut parse =
            if timeline || window.is_some() { ParseOptions::with_timeline() } else { ParseOptions::default() };
        if let Some(WindowSpec::Bounds(from, to)) = window {
            parse.window = Some(Bounds { from: *from, to: *to });
        }
        // What V8's compilers did includes each sample's tier: read with JIT records, a
        // sample's leaf is named with its code's tier.
        parse.split_tiers = reading.split_tiers;
        parse.unroll_inlined = !reading.no_unroll_inlined;
        parse.frame_lines = reading.frame_lines;
        parse.jit = reading.jit;
        parse.symbols_root.clone_from(&reading.symbols);
        parse.sample_type.clone_from(&reading.sample_type);
        parse.profile_id.clone_from(&reading.profile);
        parse.folded_weight = match reading.folded_weight {
            Weight::Time => FoldedWeight::Nanoseconds,
            _ => FoldedWeight::Samples,
        };
        parse.format = reading.input_format.0;
        if let Some(size) = reading.max_input_size {
            parse.max_input_size = size;
        }
        let mut profile = read_profile(input, &parse).map_err(|e| match e.downcast_ref::<ParseError>() {
            Some(p) => match p.kind.setting() {
                Some(setting) => anyhow::anyhow!("{p}{}", hint(setting)),
                None => e,
            },
            None => e,
        })?;
        // Warnings name the setting that acts on them; the flag is added here, once, so that the
        // reports (JSON `warnings` included) say it too.
        for warning in &mut profile.meta.warnings {
            if let Some(setting) = warning.setting.take() {
                warning.message.push_str(&hint(setting));
            }
        }
        // Options of one format, given for a file of another: say so rather than ignore them quietly.
        let format = profile.meta.format;
        let unused: [(&str, bool, &[SourceFormat]); 5] = [
            ("profile", reading.profile.is_some(), &[SourceFormat::Trace]),
            ("sample_type", reading.sample_type.is_some(), &[SourceFormat::Pprof]),
            // The formats that know V8's JIT tiers.
            (
                "split_tiers",
                reading.split_tiers,
                &[SourceFormat::TickLog, SourceFormat::PreprocessJson, SourceFormat::PerfScript],
            ),
            ("symbols", reading.symbols.is_some(), &[SourceFormat::TickLog]),
            ("no_unroll_inlined", reading.no_unroll_inlined, &[SourceFormat::TickLog]),
        ];
        for (option, given, applies_to) in unused {
            if given && !applies_to.contains(&format) {
                let names: Vec<&str> = applies_to.iter().map(|f| f.as_str()).collect();
                let names = match names.split_last() {
                    Some((last, [])) => (*last).to_owned(),
                    Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                    None => String::new(),
                };
                let option = spelled(option);
                let ignored = format!("{option} is for {names} input and was ignored: this is {}", format.as_str());
                profile.meta.warnings.push(cpuprof_model::Warning::new(ignored));
            }
        }
        let Some(source_maps) = &self.source_maps else { return Ok(profile) };
        // The mapped profile keeps the warnings read so far and adds the source maps'.
        Ok(source_maps
            .apply(&profile, near(input).as_deref())
            .map_err(|e| anyhow::anyhow!("{}: cannot apply source maps: {e}", input.display()))?
            .profile)
    }
}

/// How to change a reading setting, with the flag that sets it, to follow an error or warning
/// of the libraries (which name no flags).
fn hint(setting: Setting) -> String {
    match setting {
        Setting::Format(None) => format!("; name the format with {}", spelled("input_format")),
        Setting::Format(Some(format)) => {
            format!("; read it with {} {} or auto", spelled("input_format"), format.as_str())
        }
        Setting::ProfileId => format!("; choose with {}", spelled("profile")),
        Setting::SampleType => format!("; choose one with {}", spelled("sample_type")),
        Setting::SymbolsRoot => format!("; use {} DIR to point at the right copy", spelled("symbols")),
        Setting::MaxInputSize => format!(" ({} raises it)", spelled("max_input_size")),
        _ => String::new(),
    }
}

/// The folder `input` was read from (`.` for a bare file name; none for stdin): scripts the
/// profile names are looked for there too, for a profile kept beside a copy of its build.
fn near(input: &Path) -> Option<std::path::PathBuf> {
    if crate::read::is_dash(input) {
        return None;
    }
    Some(input.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf())
}

/// The input as reports name it.
pub fn source_name(input: &Path) -> String {
    if crate::read::is_dash(input) {
        "<stdin>".to_owned()
    } else {
        input.display().to_string()
    }
}

/// The regular expression of option `field`, compiled.
pub fn regex(field: &str, pattern: Option<&str>) -> Result<Option<Regex>> {
    pattern
        .map(|p| Regex::new(p).map_err(|e| UsageError(format!("invalid {} regex: {e}", spelled(field))).into()))
        .transpose()
}

/// `profile` with the frames `--hide` names taken out of its stacks (as it is without the flag).
pub fn hide_frames(profile: Profile, args: &FilterOptions, input: &Path) -> Result<Profile> {
    let Some(hide) = regex("hide", args.hide.as_deref())? else { return Ok(profile) };
    cpuprof_analysis::hide_frames(&profile, &hide)
        .map_err(|e| anyhow::anyhow!("{}: cannot hide frames: {e}", source_name(input)))
}

pub fn stack_filter(args: &FilterOptions) -> Result<StackFilter> {
    Ok(StackFilter {
        include_idle: args.include_idle,
        focus: regex("focus", args.focus.as_deref())?,
        ignore: regex("ignore", args.ignore.as_deref())?,
    })
}

/// A profile read for an analysis, with the frame transforms and the time window applied.
pub struct Loaded {
    pub profile: Profile,
    /// The window its samples were cut to, when one was given.
    pub window: Option<Window>,
}

/// Reads `input` for an analysis: `--hide`, then `--collapse-recursion` when `collapse`, and
/// the time window (only the samples taken in it are kept).
pub fn load(
    input: &Path,
    reading: &ReadOptions,
    filter: &FilterOptions,
    window: &WindowOptions,
    collapse: bool,
) -> Result<Loaded> {
    load_read(input, reading, filter, window, collapse, false)
}

/// [`load`], the samples read with their times when `timeline` (for a report's timeline).
pub fn load_read(
    input: &Path,
    reading: &ReadOptions,
    filter: &FilterOptions,
    window: &WindowOptions,
    collapse: bool,
    timeline: bool,
) -> Result<Loaded> {
    let bounds = window_bounds(window)?;
    let profile = Reader::new(reading)?.load(input, timeline, bounds.as_ref())?;
    let mut profile = hide_frames(profile, filter, input)?;
    if collapse {
        profile = cpuprof_analysis::collapse_recursion(&profile)
            .map_err(|e| anyhow::anyhow!("{}: cannot collapse recursion: {e}", source_name(input)))?;
    }
    let window = cut_to_window(&mut profile, bounds.as_ref(), input)?;
    crate::said::settle(&mut profile.meta);
    Ok(Loaded { profile, window })
}

/// Keeps only `profile`'s samples in the window `spec` (when given; read with a timeline).
pub fn cut_to_window(profile: &mut Profile, spec: Option<&WindowSpec>, input: &Path) -> Result<Option<Window>> {
    let Some(spec) = spec else { return Ok(None) };
    if let (WindowSpec::Bounds(..), Some(window)) = (spec, profile.meta.window) {
        // The reader kept only the window's samples.
        return Ok(Some(window));
    }
    let source = source_name(input);
    if profile.samples.timeline().is_none() && !profile.samples.is_empty() {
        return Err(anyhow::anyhow!(
            "{source}: {} input has no timeline, so {} cannot apply",
            profile.meta.format.as_str(),
            spec.flag()
        ));
    }
    let mut sums = None;
    let window = match spec {
        WindowSpec::Bounds(from, to) => {
            let length = recording(profile).map_or(0, |(_, length)| length);
            resolve_window(length, *from, *to).map_err(|e| UsageError(format!("{}: {e}", spec.flag())))?
        }
        WindowSpec::Phase(name) => {
            let (window, phase_sums) = phase_window(profile, name, &source, &spelled("phase"))?;
            sums = phase_sums;
            window
        }
        WindowSpec::Between(a, b) => {
            let graph = CallGraph::new(profile, &CallGraphOptions::new(Weight::Time, StackFilter::default()));
            let find = |pattern: &str| {
                graph.find(pattern).map_err(|e| crate::patterns::not_found(&graph, pattern, &source, e))
            };
            let (fa, fb) = (find(a)?, find(b)?);
            between(profile, &graph.stacks_with(fa), &graph.stacks_with(fb)).ok_or_else(|| {
                anyhow::anyhow!(
                    "{source}: {} {} {}: no sample with the second function comes at or after the first sample with the first",
                    spelled("between"),
                    visible(a),
                    visible(b)
                )
            })?
        }
    };
    let cut = match &sums {
        Some(sums) => cut_window_summed(profile, window, sums),
        None => cut_window(profile, window),
    };
    cut.map(Some).map_err(|e| UsageError(format!("{}: {e}", spec.flag())).into())
}

/// A phase's samples per sample row: (count, ns).
type PhaseRows = Vec<(i64, i64)>;

/// The window of the phase `name` names (a number or a label) on `profile`'s timeline, and its
/// samples per row when the timeline's walk could sum them (see `Timeline::phase_rows`).
pub fn phase_window(profile: &Profile, name: &str, source: &str, flag: &str) -> Result<(Window, Option<PhaseRows>)> {
    let mut options = TimelineOptions::default();
    options.keep_rows = true;
    let line = timeline(profile, &options).map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
    let phase = find_phase(&line.phases, name).ok_or_else(|| {
        let list: Vec<String> = line
            .phases
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{} {} ({})", i + 1, p.label, visible(&p.entry)))
            .collect();
        UsageError(format!("{flag} {}: {source} has no such phase; its phases: {}", visible(name), list.join(", ")))
    })?;
    let sums = line.phase_rows(phase, profile.samples.len());
    Ok((Window { from_ns: phase.start_ns, to_ns: phase.end_ns }, sums))
}

/// The time window an analysis is cut to, as given.
#[derive(Clone, Debug)]
pub enum WindowSpec {
    /// `--from` and `--to` (either may be open).
    Bounds(Option<Bound>, Option<Bound>),
    /// `--between A B`.
    Between(String, String),
    /// `--phase P`.
    Phase(String),
}

impl WindowSpec {
    /// The options it was given with, for messages.
    fn flag(&self) -> String {
        match self {
            WindowSpec::Bounds(..) => format!("{}/{}", spelled("from"), spelled("to")),
            WindowSpec::Between(..) => spelled("between"),
            WindowSpec::Phase(_) => spelled("phase"),
        }
    }
}

/// `--from`/`--to`, `--between` or `--phase`, read; `None` when none is given.
pub fn window_bounds(window: &WindowOptions) -> Result<Option<WindowSpec>> {
    // One way to name a window (the command line's parser checks this first).
    let bounded = window.from.is_some() || window.to.is_some();
    if !window.between.is_empty() && (bounded || window.phase.is_some()) {
        let others = if bounded { format!("{}/{}", spelled("from"), spelled("to")) } else { spelled("phase") };
        return Err(UsageError(format!("{} cannot be used with {others}", spelled("between"))).into());
    }
    if window.phase.is_some() && bounded {
        return Err(UsageError(format!(
            "{} cannot be used with {}/{}",
            spelled("phase"),
            spelled("from"),
            spelled("to")
        ))
        .into());
    }
    match window.between.as_slice() {
        [] => {}
        [a, b] => return Ok(Some(WindowSpec::Between(a.clone(), b.clone()))),
        _ => return Err(UsageError(format!("{}: expected 2 patterns, A and B", spelled("between"))).into()),
    }
    if let Some(phase) = &window.phase {
        return Ok(Some(WindowSpec::Phase(phase.clone())));
    }
    let bound = |field: &str, text: &Option<String>| -> Result<Option<Bound>> {
        let flag = spelled(field);
        text.as_deref()
            .map(|t| {
                Bound::parse(t).ok_or_else(|| {
                    UsageError(format!(
                        "{flag} {t}: expected a time into the recording (1.5s, 250ms, 800us, 2min, 1h), from its end (-2s) or a share of it (90%)"
                    ))
                    .into()
                })
            })
            .transpose()
    };
    let bounds = (bound("from", &window.from)?, bound("to", &window.to)?);
    Ok((bounds.0.is_some() || bounds.1.is_some()).then_some(WindowSpec::Bounds(bounds.0, bounds.1)))
}

/// Reads `input` with its samples' times, for the analyses over time (`timeline`, `blocks`),
/// and cuts it to the window; `what` names the analysis in the error for formats without times.
pub fn load_timed(input: &Path, reading: &ReadOptions, window: &WindowOptions, what: &str) -> Result<Loaded> {
    let spec = window_bounds(window)?;
    let mut profile = Reader::new(reading)?.load(input, true, spec.as_ref())?;
    if profile.samples.timeline().is_none() && !profile.samples.is_empty() {
        return Err(anyhow::anyhow!(
            "{}: {} input has no timeline (its samples have no times), so it has no {what}",
            source_name(input),
            profile.meta.format.as_str()
        ));
    }
    let window = cut_to_window(&mut profile, spec.as_ref(), input)?;
    crate::said::settle(&mut profile.meta);
    Ok(Loaded { profile, window })
}
