//! The HTML report: one page that opens from disk, offline, and computes its views (top, flame
//! graph, callers and callees, for the whole profile or a range of its timeline) from data
//! embedded once ([`cpuprof_analysis::ReportData`]).
//!
//! The page is `assets/report.html` (a minijinja template: what it fills in from the profile
//! is escaped by the engine) with `assets/report.css`, `assets/report.js` and uPlot (the
//! timeline chart, vendored in `assets/vendor/uplot` with its licence) inline. Its
//! Content-Security-Policy allows exactly that script and that style (by hash), images from
//! `data:` and `blob:` (the diff page's flame graph, inflated in the page) and nothing else: no network, no other script, whatever a function's name says.
//! The data is a `<script type="application/json">` block (never run) that the page reads with
//! `JSON.parse`, and names reach the page's DOM as text only.
#![deny(missing_docs)]

use cpuprof_analysis::{Blocks, Category, FunctionRef, ReportData, Weight, PRUNED};
use cpuprof_model::Meta;
use serde::Serialize;
use sha2::{Digest, Sha256};

const TEMPLATE: &str = include_str!("../assets/report.html");
const STYLE: &str = include_str!("../assets/report.css");
const PAGE_SCRIPT: &str = include_str!("../assets/page.js");
const PROFILE_SCRIPT: &str = include_str!("../assets/report.js");
const DIFF_SCRIPT: &str = include_str!("../assets/diff.js");
const UPLOT_JS: &str = include_str!("../assets/vendor/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../assets/vendor/uplot/uPlot.min.css");

/// A profile's report: what the page shows.
pub struct ReportPage<'a> {
    /// The input's name as reports show it.
    pub source: &'a str,
    /// Facts about the recording (format, length, interval, warnings).
    pub meta: &'a Meta,
    /// The tables the page computes from.
    pub data: &'a ReportData,
    /// The event-loop blocks, where the profile has a timeline.
    pub blocks: Option<&'a Blocks>,
    /// Where the window the profile was cut to starts in the recording (its times count from
    /// there), when it was cut.
    pub window_from_ns: Option<i64>,
    /// The source text around the lines of the functions whose lines the page lists (the
    /// heaviest ones), for the function view's annotated source.
    pub sources: &'a [FunctionSource],
    /// What V8 did to the hottest functions (tick logs: tiers, deopts, inlining), as `cpuprof
    /// jit` says it, for the function view.
    pub jit: &'a [FunctionJit],
}

/// `cpuprof jit`'s lines for one function (escaped; without the title).
#[derive(Clone, Debug, Serialize)]
pub struct FunctionJit {
    /// The function: an index into the data's functions.
    pub function: u32,
    /// The lines, sub-lines indented by two spaces.
    pub lines: Vec<String>,
}

/// The text of some lines of a function's script: those the page annotates.
#[derive(Clone, Debug, Serialize)]
pub struct FunctionSource {
    /// The function: an index into the data's functions.
    pub function: u32,
    /// The file the text was read from, as the page says it.
    pub file: String,
    /// Where it came from: `disk`, `script-source` or `sourcemap`.
    pub origin: &'static str,
    /// Lines as (1-based number, text), in line order.
    pub lines: Vec<(u32, String)>,
}

/// A comparison's report: what the page of `cpuprof diff --report` shows.
pub struct DiffPage<'a> {
    /// The comparison as `diff --format json` writes it (its rows, up to a page's worth, with
    /// the first changes explained), on one line.
    pub json: &'a str,
    /// The base inputs as named (the page's title names the first of each side).
    pub base_sources: &'a [String],
    /// The new inputs as named.
    pub new_sources: &'a [String],
    /// How many rows the comparison has (the document may hold fewer).
    pub rows: usize,
    /// The differential flame graph (SVG), shown as an image; `None` when it could not be drawn.
    pub flame_svg: Option<&'a [u8]>,
}

/// Why a report could not be rendered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// The page's data could not be written as JSON.
    #[error("cannot render the report: its data: {0}")]
    Data(#[from] serde_json::Error),
    /// The flame graph could not be compressed.
    #[error("cannot render the report: compressing the flame graph: {0}")]
    Compress(#[from] std::io::Error),
    /// The page's template could not be filled.
    #[error("cannot render the report: {0}")]
    Template(#[from] minijinja::Error),
}

/// The page of `page`, as one HTML document.
pub fn render_report(page: &ReportPage<'_>) -> Result<String, ReportError> {
    let data = PageData::of(page);
    let json = serde_json::to_string(&data)?;
    fill("profile", page.source, &json)
}

/// The page of a comparison, as one HTML document.
pub fn render_diff_report(page: &DiffPage<'_>) -> Result<String, ReportError> {
    // The document is serde_json's own output: embedded as it is, not parsed again. The flame
    // graph is gzipped (a big comparison's SVG is megabytes of repetitive XML: a tenth of it
    // compressed); the page inflates it with the browser's DecompressionStream.
    let flame = match page.flame_svg {
        Some(svg) => {
            let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            std::io::Write::write_all(&mut gzip, svg)?;
            let gzipped = gzip.finish()?;
            format!("\"{}\"", data_encoding::BASE64.encode(&gzipped))
        }
        None => "null".to_owned(),
    };
    let json = format!(r#"{{"diff":{},"rows_total":{},"flame_svg_gzip_base64":{flame}}}"#, page.json, page.rows);
    let first = |sources: &[String]| match sources {
        [one] => one.clone(),
        [first, rest @ ..] => format!("{first} (+{})", rest.len()),
        [] => String::new(),
    };
    let title = format!("{} → {}", first(page.base_sources), first(page.new_sources));
    fill("diff", &title, &json)
}

/// The template filled: `kind` (`profile` or `diff`) says which views the script builds.
fn fill(kind: &str, source: &str, json: &str) -> Result<String, ReportError> {
    // A comparison's page has no timeline: no uPlot.
    let (script, style) = if kind == "diff" {
        (format!("{PAGE_SCRIPT}\n{DIFF_SCRIPT}"), STYLE.to_owned())
    } else {
        (format!("{UPLOT_JS}\n{PAGE_SCRIPT}\n{PROFILE_SCRIPT}"), format!("{UPLOT_CSS}\n{STYLE}"))
    };
    // Nothing in the page's own code may end its element early (the data is escaped below).
    debug_assert!(!script.contains("</script") && !style.contains("</style"));
    let policy = format!(
        "default-src 'none'; script-src '{}'; style-src '{}'; img-src data: blob:; connect-src 'none'; base-uri 'none'; form-action 'none'",
        csp_hash(&script),
        csp_hash(&style)
    );
    let mut env = minijinja::Environment::new();
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    env.add_template("report.html", TEMPLATE)?;
    let template = env.get_template("report.html")?;
    template
        .render(minijinja::context! {
            kind => kind,
            title => cpuprof_render::text::visible(source),
            policy => policy,
            style => minijinja::Value::from_safe_string(style),
            script => minijinja::Value::from_safe_string(script),
            data => minijinja::Value::from_safe_string(script_safe(json)),
        })
        .map_err(ReportError::from)
}

/// `'sha256-…'` of `text`, as a Content-Security-Policy names an inline element.
fn csp_hash(text: &str) -> String {
    format!("sha256-{}", data_encoding::BASE64.encode(&Sha256::digest(text.as_bytes())))
}

/// JSON made safe inside `<script type="application/json">`: `<`, `>` and `&` as JSON escapes
/// (the same string to `JSON.parse`), so no name can close the element or open a comment.
fn script_safe(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 64);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            // Valid JSON, but line terminators to older JavaScript parsers.
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The embedded data, column-wise: one array per field keeps it compact.
#[derive(Serialize)]
struct PageData<'a> {
    source: &'a str,
    format: &'a str,
    unit: &'static str,
    duration_ns: Option<i64>,
    interval_ns: Option<i64>,
    warnings: Vec<String>,
    timed: bool,
    bucket_ns: i64,
    window_from_ns: Option<i64>,
    categories: Vec<&'static str>,
    category_colors: Vec<String>,
    functions: Functions<'a>,
    paths: Vec<&'a str>,
    files: &'a [String],
    file_totals: &'a [i64],
    packages: &'a [String],
    package_totals: &'a [i64],
    nodes: Nodes,
    buckets: Buckets,
    lines: Vec<[i64; 3]>,
    sources: &'a [FunctionSource],
    jit: &'a [FunctionJit],
    pruned: Pruned,
    blocks: Option<PageBlocks>,
    chart: PageChart<'a>,
}

/// The flame chart's runs ([`cpuprof_analysis::ChartRuns`]).
#[derive(Serialize)]
struct PageChart<'a> {
    start_ns: &'a [i64],
    end_ns: &'a [i64],
    node: &'a [u32],
    runs: usize,
    slot_ns: Option<i64>,
}

#[derive(Serialize)]
struct Functions<'a> {
    name: Vec<&'a str>,
    /// Index into `paths`, -1 for none.
    file: Vec<i64>,
    line: Vec<Option<u32>>,
    column: Vec<Option<u32>>,
    kind: Vec<&'static str>,
    category: Vec<usize>,
    file_group: Vec<u32>,
    package_group: Vec<u32>,
    /// Total over the whole profile (exact: computed before pruning).
    whole_total: Vec<i64>,
    color: Vec<String>,
}

#[derive(Serialize)]
struct Nodes {
    /// -1 for the outermost frames.
    parent: Vec<i64>,
    /// -1 for `(pruned)`.
    function: Vec<i64>,
}

#[derive(Serialize)]
struct Buckets {
    start_ns: Vec<i64>,
    end_ns: Vec<i64>,
    samples: Vec<i64>,
    counted: Vec<i64>,
    counted_samples: Vec<i64>,
    /// Per bucket, per category.
    categories: Vec<Vec<i64>>,
    /// Per bucket: node (as the difference from the previous one), self weight, node, ….
    weights: Vec<Vec<i64>>,
}

#[derive(Serialize)]
struct Pruned {
    at_most_share: f64,
    weight: i64,
    nodes: u64,
    unnamed: i64,
}

#[derive(Serialize)]
struct PageBlocks {
    min_ns: i64,
    count: usize,
    p50_ns: i64,
    p95_ns: i64,
    max_ns: i64,
    blocked_pct: f64,
    idle_samples: i64,
    /// How many blocks an edge of the recording cuts.
    cut: usize,
    list: Vec<PageBlock>,
}

#[derive(Serialize)]
struct PageBlock {
    start_ns: i64,
    duration_ns: i64,
    samples: i64,
    entry: PageFunction,
    top: Vec<(PageFunction, i64)>,
    common: Option<PageFunction>,
    under: Option<PageFunction>,
    native: Option<PageFunction>,
    /// `start`, `end` or `both` when an edge of the recording cuts it.
    cut: Option<&'static str>,
}

#[derive(Serialize)]
struct PageFunction {
    name: String,
    file: Option<String>,
    line: Option<u32>,
}

impl From<&FunctionRef> for PageFunction {
    fn from(f: &FunctionRef) -> Self {
        PageFunction { name: f.name.to_string(), file: f.file.as_ref().map(ToString::to_string), line: f.line }
    }
}

impl<'a> PageData<'a> {
    fn of(page: &ReportPage<'a>) -> Self {
        let data = page.data;
        let mut paths: Vec<&'a str> = Vec::new();
        let mut path_index: std::collections::HashMap<&'a str, i64> = std::collections::HashMap::new();
        let mut functions = Functions {
            name: Vec::new(),
            file: Vec::new(),
            line: Vec::new(),
            column: Vec::new(),
            kind: Vec::new(),
            category: Vec::new(),
            file_group: Vec::new(),
            package_group: Vec::new(),
            whole_total: Vec::new(),
            color: Vec::new(),
        };
        for f in &data.functions {
            functions.name.push(&f.name);
            functions.file.push(f.file.as_deref().map_or(-1, |p| {
                *path_index.entry(p).or_insert_with(|| {
                    paths.push(p);
                    paths.len() as i64 - 1
                })
            }));
            functions.line.push(f.line);
            functions.column.push(f.column);
            functions.kind.push(f.kind.as_str());
            functions.category.push(f.category.index());
            functions.file_group.push(f.file_group);
            functions.package_group.push(f.package_group);
            functions.whole_total.push(f.whole_total);
            functions.color.push(hex(cpuprof_render::frame_color(f.category, &f.name)));
        }
        let nodes = Nodes {
            parent: data.parents.iter().map(|p| p.map_or(-1, i64::from)).collect(),
            function: data.node_functions.iter().map(|f| if *f == PRUNED { -1 } else { i64::from(*f) }).collect(),
        };
        let b = &data.buckets;
        let buckets = Buckets {
            start_ns: b.iter().map(|b| b.start_ns).collect(),
            end_ns: b.iter().map(|b| b.end_ns).collect(),
            samples: b.iter().map(|b| b.samples).collect(),
            counted: b.iter().map(|b| b.counted).collect(),
            counted_samples: b.iter().map(|b| b.counted_samples).collect(),
            categories: b.iter().map(|b| b.categories.to_vec()).collect(),
            weights: b
                .iter()
                .map(|b| {
                    let mut previous = 0i64;
                    b.weights
                        .iter()
                        .flat_map(|(node, w)| {
                            let delta = i64::from(*node) - previous;
                            previous = i64::from(*node);
                            [delta, *w]
                        })
                        .collect()
                })
                .collect(),
        };
        let blocks = page.blocks.map(|found| {
            let (p50, p95, max) = found.percentiles();
            PageBlocks {
                min_ns: found.min_ns,
                count: found.count(),
                p50_ns: p50,
                p95_ns: p95,
                max_ns: max,
                blocked_pct: found.blocked_pct(),
                idle_samples: found.idle_samples,
                cut: found.cut,
                list: found
                    .blocks
                    .iter()
                    .map(|b| PageBlock {
                        start_ns: b.start_ns,
                        duration_ns: b.duration_ns,
                        samples: b.samples,
                        entry: (&b.entry).into(),
                        top: b.top.iter().map(|(f, w)| (f.into(), *w)).collect(),
                        common: b.common.as_ref().map(Into::into),
                        under: b.under.as_ref().map(Into::into),
                        native: b.native.as_ref().map(Into::into),
                        cut: b.cut.map(cpuprof_analysis::BlockCut::as_str),
                    })
                    .collect(),
            }
        });
        PageData {
            source: page.source,
            format: page.meta.format.as_str(),
            unit: if data.unit == Weight::Samples { "samples" } else { "ns" },
            duration_ns: page.meta.duration_ns,
            interval_ns: page.meta.interval_ns,
            warnings: page.meta.warnings.iter().map(|w| w.message.clone()).collect(),
            timed: data.timed,
            bucket_ns: data.bucket_ns,
            window_from_ns: page.window_from_ns,
            categories: Category::ALL.iter().map(|c| c.as_str()).collect(),
            category_colors: Category::ALL.iter().map(|c| hex(cpuprof_render::frame_color(*c, c.as_str()))).collect(),
            functions,
            paths,
            files: &data.files,
            file_totals: &data.file_totals,
            packages: &data.packages,
            package_totals: &data.package_totals,
            nodes,
            buckets,
            lines: data.lines.iter().map(|(f, l, w)| [i64::from(*f), i64::from(*l), *w]).collect(),
            sources: page.sources,
            jit: page.jit,
            pruned: Pruned {
                at_most_share: data.pruned.at_most_share,
                weight: data.pruned.weight,
                nodes: data.pruned.nodes,
                unnamed: data.pruned.unnamed,
            },
            blocks,
            chart: PageChart {
                start_ns: &data.chart.start_ns,
                end_ns: &data.chart.end_ns,
                node: &data.chart.node,
                runs: data.chart.runs,
                slot_ns: data.chart.slot_ns,
            },
        }
    }
}

fn hex([r, g, b]: [u8; 3]) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_cannot_leave_its_script_element() {
        let json = serde_json::to_string("</script><script>alert(1)</script><!-- & \u{2028}").unwrap();
        let safe = script_safe(&json);
        assert!(!safe.contains('<') && !safe.contains('>') && !safe.contains('&'));
        assert_eq!(serde_json::from_str::<String>(&safe).unwrap(), "</script><script>alert(1)</script><!-- & \u{2028}");
    }

    #[test]
    fn the_page_code_cannot_end_its_element() {
        for asset in [PAGE_SCRIPT, PROFILE_SCRIPT, DIFF_SCRIPT, UPLOT_JS] {
            assert!(!asset.to_ascii_lowercase().contains("</script"));
        }
        for asset in [STYLE, UPLOT_CSS] {
            assert!(!asset.to_ascii_lowercase().contains("</style"));
        }
    }
}
