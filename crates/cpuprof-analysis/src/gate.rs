//! The regression gate of `diff`: rules such as `self:+2pp`, `total:+20%` or `self:+5ms`, and
//! which significant regressions cross them.
//!
//! A rule names a [`Metric`] and a threshold: share points (pp), relative growth (%) or time
//! per run. A row crosses a rule when it got significantly hotter (or is new) in the rule's
//! metric and its change reaches the threshold. Significance is per metric, so a rule on the
//! metric the report was not ranked by is decided on a report ranked by that metric.

use std::str::FromStr;

use cpuprof_model::Profile;

use crate::diff::{diff, DiffOptions, DiffReport, DiffRow, Verdict};
use crate::top::Metric;
use crate::weights::Weight;
use cpuprof_model::parse_duration_ns;

/// How far a change must go to cross a [`Rule`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Threshold {
    /// Share points (`2pp`).
    Points(f64),
    /// Relative growth, percent (`20%`).
    Percent(f64),
    /// Time per run, ns (`5ms`).
    Nanos(f64),
}

/// One rule of the gate, parsed from `METRIC:THRESHOLD` (`self:+2pp`, `total:+20%`,
/// `self:+5ms`; the `+` is optional).
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// The metric whose change is measured.
    pub metric: Metric,
    /// How far it must go.
    pub threshold: Threshold,
    /// The rule as written, for messages.
    text: String,
}

/// A rule that does not read as `METRIC:THRESHOLD`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}: expected METRIC:THRESHOLD such as self:+2pp, total:+20%, self:+5ms or block:+50ms")]
pub struct RuleError(String);

impl FromStr for Rule {
    type Err = RuleError;

    fn from_str(text: &str) -> Result<Self, RuleError> {
        let error = || RuleError(text.to_owned());
        let (metric, threshold) = text.split_once(':').ok_or_else(error)?;
        let metric = match metric {
            "self" => Metric::SelfTime,
            "total" => Metric::Total,
            _ => return Err(error()),
        };
        let threshold = threshold.strip_prefix('+').unwrap_or(threshold);
        let number = |s: &str| cpuprof_model::parse_decimal(s.trim());
        let threshold = if let Some(v) = threshold.strip_suffix("pp").and_then(number) {
            Threshold::Points(v)
        } else if let Some(v) = threshold.strip_suffix('%').and_then(number) {
            Threshold::Percent(v)
        } else if let Some(ns) = parse_duration_ns(threshold, false) {
            Threshold::Nanos(ns as f64)
        } else {
            return Err(error());
        };
        Ok(Self { metric, threshold, text: text.to_owned() })
    }
}

impl Rule {
    /// The rule as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `row`'s change in the rule's metric reaches the threshold (a growth: a row that
    /// shrank or stayed never crosses). Significance is not looked at here.
    pub fn crosses(&self, row: &DiffRow) -> bool {
        let (pp, ratio, ns) = match self.metric {
            Metric::SelfTime => (row.self_delta_pp(), row.self_ratio(), row.self_delta()),
            Metric::Total => (row.total_delta_pp(), row.total_ratio(), row.total_delta()),
        };
        match self.threshold {
            Threshold::Points(v) => pp >= v && pp > 0.0,
            // New in this metric (nothing to divide by): any growth is infinitely many percent.
            Threshold::Percent(v) => ratio.map_or(ns > 0.0, |r| (r - 1.0) * 100.0 >= v && r > 1.0),
            Threshold::Nanos(v) => ns >= v && ns > 0.0,
        }
    }
}

/// A rule on the event loop's longest block, `block:+50ms`: crossed when the longest block
/// grew by at least that much, beyond the noise ([`crate::BlockChange::significant`]).
#[derive(Clone, Debug, PartialEq)]
pub struct BlockRule {
    /// The growth that crosses it, ns.
    pub threshold_ns: f64,
    text: String,
}

impl FromStr for BlockRule {
    type Err = RuleError;

    fn from_str(text: &str) -> Result<Self, RuleError> {
        let error = || RuleError(text.to_owned());
        let threshold = text.strip_prefix("block:").ok_or_else(error)?;
        let threshold = threshold.strip_prefix('+').unwrap_or(threshold);
        let ns = parse_duration_ns(threshold, false).ok_or_else(error)?;
        Ok(Self { threshold_ns: ns as f64, text: text.to_owned() })
    }
}

impl BlockRule {
    /// The rule as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `change` crosses it: significant, and the longest block grew by the threshold.
    pub fn crosses(&self, change: &crate::BlockChange) -> bool {
        change.significant && change.max_delta_ns > 0.0 && change.max_delta_ns >= self.threshold_ns
    }
}

/// Why the gate cannot decide on a comparison.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GateError {
    /// A rule in time per run, while the comparison is by sample counts (a profile has no
    /// times): the first such rule.
    #[error(
        "{}: a profile has no times (folded stacks), so the comparison is by sample counts: give a share (pp) or a ratio (%)",
        .0.as_str()
    )]
    TimeOnCounts(Rule),
    /// The rows were not tested for significance (the weights are not counts of samples taken),
    /// so no change can be called a regression.
    #[error(
        "a profile's weights are not counts of samples taken, so no change can be tested for significance and the gate cannot decide"
    )]
    Untested,
    /// A run has no samples (after the filter): every function would be new or gone, and
    /// the gate would pass on nothing at all. The side and the run's position in it.
    #[error("run {} of the {side} side has no samples to compare, so the gate cannot decide", .run + 1)]
    EmptyRun {
        /// `"base"` or `"new"`.
        side: &'static str,
        /// The run's position on its side, from 0.
        run: usize,
    },
}

/// A row that crossed one or more rules.
#[derive(Clone, Debug, PartialEq)]
pub struct Crossing {
    /// The row, from the report ranked by `metric`.
    pub row: DiffRow,
    /// The metric of the rules crossed.
    pub metric: Metric,
    /// The rules it crossed, in the order given.
    pub rules: Vec<Rule>,
}

/// The rules of a gate, in the order given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Gate {
    rules: Vec<Rule>,
}

impl Gate {
    /// A gate of `rules` (none: a gate that never trips).
    pub fn new(rules: Vec<Rule>) -> Self {
        Self { rules }
    }

    /// Whether the gate has no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Whether the rules can be applied to a comparison in `unit`: times cannot be compared
    /// with sample counts.
    pub fn check_unit(&self, unit: Weight) -> Result<(), GateError> {
        match self.rules.iter().find(|r| matches!(r.threshold, Threshold::Nanos(_))) {
            Some(rule) if unit == Weight::Samples => Err(GateError::TimeOnCounts(rule.clone())),
            _ => Ok(()),
        }
    }

    /// Whether the gate can decide on `report` (no rules: always).
    pub fn check(&self, report: &DiffReport) -> Result<(), GateError> {
        if self.is_empty() {
            return Ok(());
        }
        self.check_unit(report.unit)?;
        for (side, totals) in [("base", &report.base), ("new", &report.new)] {
            if let Some(run) = totals.run_samples.iter().position(|&s| s == 0) {
                return Err(GateError::EmptyRun { side, run });
            }
        }
        // Untested changes cannot be called regressions — but where nothing grew (identical
        // inputs, say) there is none to call, and the gate passes.
        let grew =
            |r: &crate::diff::DiffRow| r.verdict == Verdict::New || r.self_delta() > 0.0 || r.total_delta() > 0.0;
        if !report.tested && report.rows.iter().any(grew) {
            return Err(GateError::Untested);
        }
        Ok(())
    }

    /// The regressions of `report` (the diff of `base` and `new` with `options`) that cross a
    /// rule: significantly hotter or new rows, those of `options.metric` first (in the
    /// report's order), then those of the other metric when a rule names it (from a diff ranked
    /// by that metric). Empty: the gate passes.
    pub fn decide(
        &self,
        base: &[&Profile],
        new: &[&Profile],
        options: &DiffOptions,
        report: &DiffReport,
    ) -> Result<Vec<Crossing>, GateError> {
        self.check(report)?;
        let metric = options.metric;
        let other = match metric {
            Metric::SelfTime => Metric::Total,
            Metric::Total => Metric::SelfTime,
        };
        let other_report = self.rules.iter().any(|r| r.metric == other).then(|| {
            let mut other_options = options.clone();
            other_options.metric = other;
            diff(base, new, &other_options)
        });
        let mut crossings = Vec::new();
        for (rule_metric, report) in [(metric, Some(report)), (other, other_report.as_ref())] {
            let Some(report) = report else { continue };
            let regressions =
                report.rows.iter().filter(|r| r.significant && matches!(r.verdict, Verdict::Hotter | Verdict::New));
            for row in regressions {
                let rules: Vec<Rule> =
                    self.rules.iter().filter(|r| r.metric == rule_metric && r.crosses(row)).cloned().collect();
                if !rules.is_empty() {
                    crossings.push(Crossing { row: row.clone(), metric: rule_metric, rules });
                }
            }
        }
        Ok(crossings)
    }
}

#[cfg(test)]
mod tests {
    use cpuprof_parse::{parse, FoldedWeight, Origin, ParseOptions};

    use super::*;
    use crate::diff::{Normalize, SideNumbers};
    use crate::filter::StackFilter;

    fn rule(text: &str) -> Rule {
        text.parse().unwrap()
    }

    #[test]
    fn rules_parse() {
        assert_eq!(rule("self:+2pp").metric, Metric::SelfTime);
        assert_eq!(rule("self:+2pp").threshold, Threshold::Points(2.0));
        assert_eq!(rule("total:+20%").threshold, Threshold::Percent(20.0));
        assert_eq!(rule("total:+20%").metric, Metric::Total);
        assert_eq!(rule("self:5ms").threshold, Threshold::Nanos(5e6));
        assert_eq!(rule("self:+250us").threshold, Threshold::Nanos(250e3));
        assert_eq!(rule("self:+0.5pp").as_str(), "self:+0.5pp");
        for bad in ["self", "cpu:+2pp", "self:+2", "self:-2pp", "total:+x%", "self:+inf%", "self:+2 apples"] {
            assert_eq!(bad.parse::<Rule>(), Err(RuleError(bad.to_owned())), "{bad}");
        }
        assert_eq!(
            "cpu:1%".parse::<Rule>().unwrap_err().to_string(),
            "cpu:1%: expected METRIC:THRESHOLD such as self:+2pp, total:+20%, self:+5ms or block:+50ms"
        );
    }

    /// A row whose self and total numbers are `base` → `new` ns per run and `base_pct` →
    /// `new_pct` percent of busy time.
    fn row(base: f64, new: f64, base_pct: f64, new_pct: f64) -> DiffRow {
        let side = |ns: f64, pct: f64| SideNumbers {
            self_per_run: ns,
            total_per_run: ns,
            self_samples: 0,
            total_samples: 0,
            self_pct: pct,
            total_pct: pct,
            ..SideNumbers::default()
        };
        DiffRow {
            name: "f".to_owned(),
            file: None,
            line: None,
            kind: cpuprof_model::FuncKind::Js,
            base: side(base, base_pct),
            new: side(new, new_pct),
            verdict: Verdict::Hotter,
            significant: true,
            p_value: 0.0,
            min_p: 0.0,
        }
    }

    #[test]
    fn thresholds_by_hand() {
        // 8 ms → 10 ms per run, 20% → 23% of busy time: +2 ms, +25%, +3pp.
        let r = row(8e6, 10e6, 20.0, 23.0);
        assert!(rule("self:+3pp").crosses(&r));
        assert!(!rule("self:+3.1pp").crosses(&r));
        assert!(rule("self:+25%").crosses(&r));
        assert!(!rule("self:+25.1%").crosses(&r));
        assert!(rule("total:+2ms").crosses(&r));
        assert!(!rule("total:+2001us").crosses(&r));
        // A zero threshold still needs growth: a row that shrank crosses nothing.
        let cooler = row(10e6, 8e6, 23.0, 20.0);
        for text in ["self:0pp", "self:0%", "self:0ms"] {
            assert!(!rule(text).crosses(&cooler), "{text}");
        }
        // New in the metric (base 0): every percentage is crossed, and time and share as
        // usual.
        let new = row(0.0, 1e6, 0.0, 0.5);
        assert!(rule("self:+1000%").crosses(&new));
        assert!(rule("self:+1ms").crosses(&new) && !rule("self:+1.5ms").crosses(&new));
        assert!(rule("self:+0.5pp").crosses(&new) && !rule("self:+0.6pp").crosses(&new));
    }

    fn folded(text: &str, weight: FoldedWeight) -> Profile {
        let mut options = ParseOptions::default();
        options.format = None;
        options.folded_weight = weight;
        parse(text.as_bytes(), &Origin("t.folded".into()), &options).unwrap()
    }

    /// A `.cpuprofile` with `work` and `rest` sampled every 1 ms: `work` samples of the one,
    /// `rest` of the other.
    fn cpuprofile(work: usize, rest: usize) -> Profile {
        let frame = |name: &str, line: i32| {
            format!(
                r#""callFrame":{{"functionName":"{name}","scriptId":"1","url":"file:///app.js","lineNumber":{line},"columnNumber":0}}"#
            )
        };
        let samples: Vec<&str> = std::iter::repeat_n("2", work).chain(std::iter::repeat_n("3", rest)).collect();
        let deltas = vec!["1000"; samples.len()];
        let json = format!(
            r#"{{"nodes":[{{"id":1,{},"children":[2,3]}},{{"id":2,{}}},{{"id":3,{}}}],"startTime":0,"endTime":{},"samples":[{}],"timeDeltas":[{}]}}"#,
            frame("(root)", -1),
            frame("work", 1),
            frame("rest", 9),
            samples.len() * 1000,
            samples.join(","),
            deltas.join(",")
        );
        parse(json.as_bytes(), &Origin("t.cpuprofile".into()), &ParseOptions::default()).unwrap()
    }

    fn decide(
        gate: &Gate,
        base: &[&Profile],
        new: &[&Profile],
        normalize: Normalize,
    ) -> Result<Vec<Crossing>, GateError> {
        let options = DiffOptions::new(normalize, Metric::SelfTime, crate::defaults::ALPHA, StackFilter::default());
        let report = diff(base, new, &options);
        gate.decide(base, new, &options, &report)
    }

    #[test]
    fn decisions_on_timed_profiles() {
        // `work`: 1000 → 2000 samples of 1 ms, i.e. 1 s → 2 s per run, +100%: far beyond
        // noise. `rest` stays at 1000 samples.
        let (base, new) = (cpuprofile(1000, 1000), cpuprofile(2000, 1000));
        let gate = |rules: &[&str]| Gate::new(rules.iter().map(|r| rule(r)).collect());
        let hit = |rules: &[&str]| {
            decide(&gate(rules), &[&base], &[&new], Normalize::Time)
                .unwrap()
                .iter()
                .map(|c| format!("{} {}", c.row.name, c.rules.iter().map(Rule::as_str).collect::<Vec<_>>().join(",")))
                .collect::<Vec<_>>()
        };
        assert_eq!(hit(&["self:+100%"]), ["work self:+100%"]);
        assert!(hit(&["self:+101%"]).is_empty());
        // Growth per run is 1 s, whatever the mean interval adds to each sample's weight.
        assert_eq!(hit(&["self:+999ms", "self:+2s"]), ["work self:+999ms"]);
        // Share of busy time: 50% → 66.7%, +16.7pp.
        assert_eq!(hit(&["self:+16pp"]), ["work self:+16pp"]);
        assert!(hit(&["self:+17pp"]).is_empty());
        // A total rule is decided on the report ranked by total: (root) is in every sample,
        // 2 s → 3 s per run (+50%); work's total is its self, +100%.
        assert_eq!(hit(&["total:+50%"]), ["(root) total:+50%", "work total:+50%"]);
        assert_eq!(hit(&["total:+51%"]), ["work total:+51%"]);
        // Rules on both metrics: the ranking metric's crossings first.
        assert_eq!(hit(&["total:+51%", "self:+1s"]), ["work self:+1s", "work total:+51%"]);
        // The other side of the same change never trips.
        let back = decide(&gate(&["self:0%"]), &[&new], &[&base], Normalize::Time).unwrap();
        assert!(back.is_empty(), "{back:?}");
        // No rules, no crossings.
        assert!(hit(&[]).is_empty());
    }

    #[test]
    fn counts_and_untested_weights() {
        // Folded sample counts: work 100 → 300, rest 100 → 100. 3×; 50% → 75%.
        let base = folded("main;work 100\nmain;rest 100\n", FoldedWeight::Samples);
        let new = folded("main;work 300\nmain;rest 100\n", FoldedWeight::Samples);
        let gate = Gate::new(vec![rule("self:+200%"), rule("self:+25pp"), rule("self:+26pp")]);
        let crossings = decide(&gate, &[&base], &[&new], Normalize::Share).unwrap();
        assert_eq!(crossings.len(), 1, "{crossings:?}");
        assert_eq!(crossings[0].row.name, "work");
        assert_eq!(crossings[0].rules, [rule("self:+200%"), rule("self:+25pp")]);
        // A time threshold means nothing on counts.
        let timed = Gate::new(vec![rule("self:+2pp"), rule("self:+1ms"), rule("self:+2ms")]);
        assert_eq!(timed.check_unit(Weight::Samples), Err(GateError::TimeOnCounts(rule("self:+1ms"))));
        assert_eq!(timed.check_unit(Weight::Time), Ok(()));
        assert!(matches!(decide(&timed, &[&base], &[&new], Normalize::Share), Err(GateError::TimeOnCounts(_))));
        // Times without counts: nothing was tested, so the gate cannot pass or fail.
        let base = folded("main;work 100000\nmain;rest 100000\n", FoldedWeight::Nanoseconds);
        let new = folded("main;work 300000\nmain;rest 100000\n", FoldedWeight::Nanoseconds);
        let gate = Gate::new(vec![rule("self:+1%")]);
        assert_eq!(decide(&gate, &[&base], &[&new], Normalize::Time), Err(GateError::Untested));
        // ... but where nothing grew (a profile against itself) there is no regression to call.
        assert_eq!(decide(&gate, &[&base], &[&base], Normalize::Time), Ok(Vec::new()));
        // Without rules there is nothing to decide, so nothing to refuse.
        assert_eq!(decide(&Gate::default(), &[&base], &[&new], Normalize::Time), Ok(vec![]));
    }

    #[test]
    fn an_empty_run_is_refused() {
        let base = folded("main;work 100\n", FoldedWeight::Samples);
        let empty = folded("(idle) 100\n", FoldedWeight::Samples);
        let gate = Gate::new(vec![rule("self:+1%")]);
        assert_eq!(
            decide(&gate, &[&base], &[&base, &empty], Normalize::Time),
            Err(GateError::EmptyRun { side: "new", run: 1 })
        );
        assert_eq!(
            decide(&gate, &[&empty], &[&base], Normalize::Time).unwrap_err().to_string(),
            "run 1 of the base side has no samples to compare, so the gate cannot decide"
        );
    }
}
