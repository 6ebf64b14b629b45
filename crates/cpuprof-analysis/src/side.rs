//! One side of a comparison as its explanations read it: each run's call graph, with the names
//! diff matches files by, and how a report's row is found in each run.

use rustc_hash::FxHashMap;

use cpuprof_model::Profile;

use crate::calltree::{CallGraph, CallGraphOptions};
use crate::diff::{matched_file_names, DiffOptions, DiffReport, DiffRow};
use crate::top::TopRow;
use crate::weights::Weight;

/// One side's runs, each as a call graph, with the names diff matches files by.
pub(crate) struct Side<'p> {
    pub(crate) runs: Vec<(CallGraph<'p>, FxHashMap<String, String>)>,
}

impl<'p> Side<'p> {
    pub(crate) fn new(
        profiles: &[&'p Profile],
        report: &DiffReport,
        options: &DiffOptions,
        root: Option<&str>,
    ) -> Self {
        let weight = if report.unit == Weight::Samples { Weight::Samples } else { Weight::Time };
        let runs = profiles
            .iter()
            .map(|p| {
                let graph = CallGraph::new(p, &CallGraphOptions::new(weight, options.filter.clone()));
                (graph, matched_file_names(p, root, &report.moved_files))
            })
            .collect();
        Self { runs }
    }

    /// How run `run` keys a function as the report keys functions: its name and file (as
    /// the report names files).
    pub(crate) fn key_of(&self, run: usize, f: &TopRow) -> (String, Option<String>) {
        let files = &self.runs[run].1;
        let name = f.plain_name().to_owned();
        let file = f.file.as_deref().map(|file| files.get(file).cloned().unwrap_or_else(|| file.to_owned()));
        (name, file)
    }

    /// `row`'s function in run `run`: the functions of its name and file with samples, those
    /// nearest its start line.
    pub(crate) fn matching(&self, run: usize, row: &DiffRow) -> Vec<usize> {
        let graph = &self.runs[run].0;
        let candidates: Vec<usize> = (0..graph.functions().len())
            .filter(|f| graph.functions()[*f].total_samples != 0)
            .filter(|f| self.key_of(run, &graph.functions()[*f]) == (row.name.clone(), row.file.clone()))
            .collect();
        let distance = |f: &usize| match (graph.functions()[*f].line, row.line) {
            (Some(a), Some(b)) => a.abs_diff(b),
            _ => 0,
        };
        let Some(nearest) = candidates.iter().map(distance).min() else { return Vec::new() };
        candidates.into_iter().filter(|f| distance(f) == nearest).collect()
    }
}
