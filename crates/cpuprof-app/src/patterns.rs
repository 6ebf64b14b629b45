//! Function patterns (`name`, `name@file:line:column`, `fn:` handles, regexes) that name no
//! single function: the messages that list the candidates.

use cpuprof_analysis::{CallGraph, FindError, Weight};
use cpuprof_render::text::visible;
use cpuprof_render::time::format_ns;

use crate::usage::{UsageChoices, UsageError};

/// How many candidates an ambiguous pattern's message lists.
const CANDIDATES_SHOWN: usize = 20;

/// The error for a pattern that names no single function: an ambiguous one or a bad regex is
/// a usage error (exit 2) listing the candidates, one a line, each with the pattern that names
/// it alone; none at all is a failure (exit 1).
pub fn not_found(graph: &CallGraph<'_>, pattern: &str, source: &str, error: FindError) -> anyhow::Error {
    let amount = |v: i64| if graph.unit() == Weight::Samples { format!("{v} samples") } else { format_ns(v) };
    let numbers = |f: usize| {
        let row = &graph.functions()[f];
        format!("{}, self {}, total {}", row.kind.as_str(), amount(row.self_weight), amount(row.total_weight))
    };
    let describe = |f: &usize| format!("{} ({})", visible(&exact_pattern(graph, *f)), numbers(*f));
    let shown = visible(pattern);
    match error {
        FindError::Ambiguous(found) => {
            // Each candidate's own `name@file:line:column`, when that names it alone and
            // pastes as shown; else its number among this pattern's candidates.
            let mut choices: Vec<String> = found
                .iter()
                .take(CANDIDATES_SHOWN)
                .enumerate()
                .map(|(i, f)| {
                    let exact = exact_pattern(graph, *f);
                    let alone = matches!(graph.find(&exact), Ok(g) if g == *f) && visible(&exact) == exact;
                    let paste = if alone { exact } else { format!("{shown}#{}", i + 1) };
                    format!("  #{} {paste}  ({})", i + 1, numbers(*f))
                })
                .collect();
            if found.len() > CANDIDATES_SHOWN {
                choices.push(format!(
                    "  … and {} more: narrow the pattern (its file, :line, :column)",
                    found.len() - CANDIDATES_SHOWN
                ));
            }
            // name@file:line given, and functions on that line: only the column tells them apart.
            let rows: Vec<&cpuprof_analysis::TopRow> = found.iter().map(|f| &graph.functions()[*f]).collect();
            let one_line = pattern.contains('@')
                && rows.windows(2).all(|w| (&w[0].name, &w[0].file, w[0].line) == (&w[1].name, &w[1].file, w[1].line));
            let how = if one_line {
                "they start on the same line: add the column (name@file:line:column)"
            } else {
                "name one as shown (name@file:line:column)"
            };
            UsageChoices {
                head: format!(
                    "{shown}: {} functions match in {source}; {how}, or by its number as {shown}#N:",
                    found.len()
                ),
                choices,
            }
            .into()
        }
        FindError::Empty => {
            UsageError("PATTERN is empty: give a function's name, name@file:line or a regex".to_owned()).into()
        }
        FindError::Regex(e) => {
            UsageError(format!("{shown}: no function has that name, and it is not a valid regular expression: {e}"))
                .into()
        }
        FindError::NoSamples(found) => {
            let list: Vec<String> = found.iter().take(CANDIDATES_SHOWN).map(describe).collect();
            anyhow::anyhow!(
                "{shown}: the functions that match have no samples left after the filters: {}",
                list.join("; ")
            )
        }
        _ => anyhow::anyhow!("{shown}: no function in {source} matches (by name, name@file:line or regex)"),
    }
}

/// `name@file:line:column` of function `f` (as much of it as is known), as a pattern names it.
fn exact_pattern(graph: &CallGraph<'_>, f: usize) -> String {
    let row = &graph.functions()[f];
    let mut at = row.name.clone();
    if let Some(file) = row.file.as_deref().filter(|f| !f.is_empty()) {
        at.push('@');
        at.push_str(file);
        if let Some(line) = row.line {
            at.push_str(&format!(":{line}"));
            if let Some(column) = row.column {
                at.push_str(&format!(":{column}"));
            }
        }
    }
    at
}
