//! `top` aggregation cost on parsed profiles (parsing excluded). `CPUPROF_BENCH_FILE` picks
//! another input than the deepest recorded fixture.

use std::hint::black_box;
use std::path::PathBuf;

use cpuprof_analysis::{top, GroupBy, Metric, StackFilter, TopOptions, Weight};
use cpuprof_parse::{parse, Origin, ParseOptions};
use criterion::{criterion_group, criterion_main, Criterion};

fn bench_top(c: &mut Criterion) {
    let path = std::env::var_os("CPUPROF_BENCH_FILE").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/cpuprofile/deep-recursion.cpuprofile"),
        PathBuf::from,
    );
    let file = std::fs::File::open(&path).expect("benchmark input");
    let profile = parse(file, &Origin(path.display().to_string()), &ParseOptions::default()).expect("valid input");
    let mut group = c.benchmark_group("top");
    for (name, by) in [("function", GroupBy::Function), ("package", GroupBy::Package), ("line", GroupBy::Line)] {
        let options = TopOptions::new(by, Weight::Time, Metric::SelfTime, StackFilter::default());
        group.bench_function(name, |b| b.iter(|| top(black_box(&profile), &options)));
    }
    group.finish();
}

criterion_group!(benches, bench_top);
criterion_main!(benches);
