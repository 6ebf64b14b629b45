//! `top` aggregation, and the walks of `blocks` and `timeline`, on parsed profiles (parsing
//! excluded). `CPUPROF_BENCH_FILE` picks another input than the deepest recorded fixture.

use std::hint::black_box;
use std::path::PathBuf;

use cpuprof_analysis::{blocks_only, timeline, top, GroupBy, Metric, StackFilter, TimelineOptions, TopOptions, Weight};
use cpuprof_model::Profile;
use cpuprof_parse::{parse, Origin, ParseOptions};
use criterion::{criterion_group, criterion_main, Criterion};

/// The input, its samples' times kept when `timeline`.
fn input(timeline: bool) -> Profile {
    let path = std::env::var_os("CPUPROF_BENCH_FILE").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/cpuprofile/deep-recursion.cpuprofile"),
        PathBuf::from,
    );
    let file = std::fs::File::open(&path).expect("benchmark input");
    let mut options = ParseOptions::default();
    options.timeline = timeline;
    parse(file, &Origin(path.display().to_string()), &options).expect("valid input")
}

fn bench_top(c: &mut Criterion) {
    let profile = input(false);
    let mut group = c.benchmark_group("top");
    for (name, by) in [("function", GroupBy::Function), ("package", GroupBy::Package), ("line", GroupBy::Line)] {
        let options = TopOptions::new(by, Weight::Time, Metric::SelfTime, StackFilter::default());
        group.bench_function(name, |b| b.iter(|| top(black_box(&profile), &options)));
    }
    group.finish();
}

/// The walks over time, as `cpuprof blocks` and `cpuprof timeline` make them (the samples' time
/// order, found by the first walk, is kept: each iteration is the walk itself).
fn bench_time(c: &mut Criterion) {
    let profile = input(true);
    let mut group = c.benchmark_group("time");
    group.sample_size(10);
    group.bench_function("blocks", |b| {
        b.iter(|| blocks_only(black_box(&profile), 50_000_000, Some(20)).expect("the samples have times"));
    });
    let options = TimelineOptions::default();
    group.bench_function("timeline", |b| {
        b.iter(|| timeline(black_box(&profile), &options).expect("the samples have times"));
    });
    group.finish();
}

criterion_group!(benches, bench_top, bench_time);
criterion_main!(benches);
