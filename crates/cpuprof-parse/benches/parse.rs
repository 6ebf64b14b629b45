//! Parse throughput. Uses the recorded fixtures by default; point `CPUPROF_BENCH_FILE` at a
//! big generated profile (`node scripts/gen-cpuprofile.js --out big.cpuprofile`) and
//! `CPUPROF_BENCH_TICKLOG` at a big tick log (`node scripts/gen-ticklog.js --size 200M -o big.log`)
//! for the numbers that matter. End-to-end figures beside other tools: scripts/bench-top.sh and
//! scripts/bench-ticklog.sh.

use std::hint::black_box;
use std::path::PathBuf;

use cpuprof_parse::{parse, Origin, ParseOptions};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn inputs() -> Vec<PathBuf> {
    if let Some(file) = std::env::var_os("CPUPROF_BENCH_FILE") {
        return vec![PathBuf::from(file)];
    }
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/cpuprofile");
    ["money-i100.cpuprofile", "deep-recursion.cpuprofile", "money.cpuprofile.gz"]
        .iter()
        .map(|f| fixtures.join(f))
        .collect()
}

/// Parses each input from memory: summed per stack, and (with `timeline`) kept per sample.
fn bench_files(c: &mut Criterion, group_name: &str, inputs: Vec<PathBuf>, timeline: bool) {
    let mut group = c.benchmark_group(group_name);
    for path in inputs {
        let bytes = std::fs::read(&path).expect("benchmark input");
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let origin = Origin(name.clone());
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(format!("summed/{name}"), |b| {
            b.iter(|| parse(black_box(&bytes[..]), &origin, &ParseOptions::default()).expect("valid input"));
        });
        if timeline {
            group.bench_function(format!("timeline/{name}"), |b| {
                b.iter(|| parse(black_box(&bytes[..]), &origin, &ParseOptions::with_timeline()).expect("valid input"));
            });
        }
    }
    group.finish();
}

fn bench_parse(c: &mut Criterion) {
    bench_files(c, "cpuprofile", inputs(), true);
}

/// Tick logs: the fixtures are small, so they mostly measure reading node's ELF symbols.
fn bench_ticklog(c: &mut Criterion) {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/ticklog");
    let inputs: Vec<PathBuf> = std::env::var_os("CPUPROF_BENCH_TICKLOG").map_or_else(
        || ["json-roundtrip.log", "code-moves.log"].iter().map(|f| fixtures.join(f)).collect(),
        |file| vec![PathBuf::from(file)],
    );
    bench_files(c, "ticklog", inputs, false);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench_parse, bench_ticklog
}
criterion_main!(benches);
