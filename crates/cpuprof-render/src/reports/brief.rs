//! `top --format brief` (and the MCP server's `load`): a profile in at most 40 lines, for a
//! person or an agent deciding where to look next.

use cpuprof_analysis::{Blocks, HotPath};

use super::words::{function_text, header, pct_of, short_location, top_amount, unit_amount};
use super::TopDocument;
use crate::text::{truncate, visible};
use crate::time::format_ns;

/// What a brief summary shows.
#[derive(Clone, Copy, Debug)]
pub struct BriefDocument<'a> {
    /// The profile's `top` by function, heaviest self time first (the rows shown: `limit`).
    pub top: TopDocument<'a>,
    /// The heaviest call paths.
    pub paths: &'a [HotPath],
    /// The event-loop blocks (the longest described), when the profile has sample times.
    pub blocks: Option<&'a Blocks>,
}

/// The widest a line of the summary gets (names are cut to fit).
const WIDTH: usize = 160;

/// How many of a path's innermost functions are shown.
const PATH_FRAMES: usize = 6;

/// How many of the reader's warnings are quoted.
const WARNINGS: usize = 3;

/// Renders `doc`: the header, the top functions by self time (with their handles), the heaviest
/// call paths, the longest event-loop block and the warnings.
pub fn render_brief(doc: &BriefDocument<'_>) -> String {
    let top = &doc.top;
    let mut lines: Vec<String> = header(top).lines().map(str::to_owned).collect();
    lines.push(format!("top {} by self time (self%, self, total%, handle, function, location):", top.rows().len()));
    for row in top.rows() {
        let name = truncate(&visible(&row.name), 48);
        let location = visible(&short_location(row));
        lines.push(format!(
            "  {:>5.1}%  {:>8}  {:>5.1}%  {}  {name}  {location}",
            top.pct(row.self_weight),
            top_amount(top, row.self_weight),
            top.pct(row.total_weight),
            row.handle()
        ));
    }
    if !doc.paths.is_empty() {
        lines.push("heaviest call paths (self time at the end of each):".to_owned());
        for path in doc.paths {
            // The innermost frames say most: the outer ones go first when the path is long.
            let cut = path.functions.len().saturating_sub(PATH_FRAMES);
            let mut names: Vec<String> = path.functions[cut..].iter().map(|f| visible(&f.name)).collect();
            if cut > 0 {
                names.insert(0, "…".to_owned());
            }
            let share = pct_of(path.weight, top.report.total);
            let amount = unit_amount(top.report.unit, path.weight);
            lines.push(format!("  {share:>5.1}%  {amount:>8}  {}", names.join(" > ")));
        }
    }
    match doc.blocks {
        None => lines.push("event loop: no sample times in this format, so no blocks".to_owned()),
        Some(b) if b.idle_samples == 0 => lines.push(
            "event loop: no idle samples (a batch job, or a recorder without idle notifications): no blocks to tell"
                .to_owned(),
        ),
        Some(b) => {
            lines.push(format!("event loop: {}", super::words::blocks_summary(b, false)));
            if let Some(longest) = b.blocks.iter().max_by_key(|b| (b.duration_ns, std::cmp::Reverse(b.start_ns))) {
                let mut line = format!(
                    "  longest: {} at {}, entered by {}",
                    super::words::block_duration(longest),
                    format_ns(longest.start_ns),
                    visible(&function_text(&longest.entry))
                );
                if longest.common.is_some() || longest.native.is_some() {
                    line.push_str(&format!(", blocked in {}", visible(&super::words::blocked_in(longest))));
                }
                lines.push(line);
            }
        }
    }
    let warnings = &top.meta.warnings;
    if !warnings.is_empty() {
        lines.push(format!("warnings ({}):", warnings.len()));
        for warning in warnings.iter().take(WARNINGS) {
            lines.push(format!("  {}", visible(&warning.message)));
        }
        if warnings.len() > WARNINGS {
            lines.push(format!("  … {} more", warnings.len() - WARNINGS));
        }
    }
    let mut out = String::new();
    for line in lines {
        out.push_str(truncate(&line, WIDTH).trim_end());
        out.push('\n');
    }
    out
}
