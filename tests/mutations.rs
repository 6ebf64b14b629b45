//! Deterministic mutation test of every parser: 10,000 mutated copies of real fixtures per
//! format (truncations at structural boundaries and anywhere, byte flips, numbers swapped or
//! replaced by huge, negative, non-finite or malformed ones, invalid UTF-8 and lone surrogates,
//! duplicated and deleted records). Each copy must give a clean error or a profile that every
//! analysis and writer handles (and whose `.cpuprofile` cpuprof reads back); none may panic,
//! hang (take over ten seconds), or allocate far beyond its size.
//!
//! The cases are the same on every run, in one process per core (each takes some of the
//! formats). Allocation is capped per case (a global allocator); going over the cap aborts the
//! process. To see which case did, rerun with
//! `CPUPROF_MUTATION_TRACE=1`, which prints each case before running it.
#![allow(clippy::print_stderr)] // per-format counts, and the trace, are for the reader of the log

use std::alloc::System;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cap::Cap;
use cpuprof_analysis::{fold, top, FoldOptions, GroupBy, Metric, StackFilter, TopOptions, Weight};
use cpuprof_model::{Profile, ValueUnit};
use cpuprof_parse::{parse, Origin, ParseOptions, SourceFormat};
use cpuprof_render::{render_collapsed, render_cpuprofile, render_pprof, render_top, Format, TopDocument};

#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, usize::MAX);

const CASES_PER_FORMAT: usize = 10_000;
// A hang detector, not a speed target: a mutated input of a few KB that takes this long has hit a
// loop or a quadratic path. Wall time, so it is generous: CI machines share their cores.
const SLOW: Duration = Duration::from_secs(10);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(bytes), &mut out).expect("gzip fixture");
    out
}

fn fixtures(dir: &str, ext: &str) -> Vec<(String, Vec<u8>)> {
    let mut names: Vec<String> = std::fs::read_dir(root().join(dir))
        .expect("fixture folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(ext))
        .collect();
    names.sort();
    names.into_iter().map(|n| (n.clone(), read(&format!("{dir}/{n}")))).collect()
}

/// Small real inputs of each format: mutating them is cheap, and every part of the format is in them.
fn seeds(format: SourceFormat) -> Vec<(String, Vec<u8>)> {
    match format {
        SourceFormat::CpuProfile => {
            let mut seeds = fixtures("fixtures/edge", ".cpuprofile");
            seeds.push(("inspector-profile".into(), read("fixtures/cpuprofile/inspector-profile.cpuprofile")));
            seeds.push(("money.cpuprofile.gz".into(), read("fixtures/cpuprofile/money.cpuprofile.gz")));
            seeds
        }
        SourceFormat::TickLog => {
            // A recorded log thinned out: every record kind, a tenth of the code objects, 120 ticks.
            let text = String::from_utf8(read("fixtures/ticklog/eval.log")).expect("UTF-8 log");
            let (mut code, mut ticks) = (0, 0);
            let thinned: String = text
                .lines()
                .filter(|line| {
                    if line.starts_with("code-creation") || line.starts_with("code-source-info") {
                        code += 1;
                        code % 10 == 0
                    } else if line.starts_with("tick") {
                        ticks += 1;
                        ticks <= 120
                    } else {
                        true
                    }
                })
                .flat_map(|line| [line, "\n"])
                .collect();
            vec![("eval.log (thinned)".into(), thinned.into_bytes())]
        }
        SourceFormat::Pprof => {
            let handmade = read("fixtures/pprof/handmade.pb.gz");
            vec![
                ("handmade.pb".into(), gunzip(&handmade)),
                ("handmade.pb.gz".into(), handmade),
                ("google-pprof-wall.pb".into(), gunzip(&read("fixtures/pprof/google-pprof-wall.pb.gz"))),
            ]
        }
        SourceFormat::Trace => {
            // node's trace cut to its Profile events and the first two chunks of each profile.
            let trace: serde_json::Value =
                serde_json::from_slice(&gunzip(&read("fixtures/trace/money.trace.json.gz"))).expect("trace JSON");
            let mut chunks = std::collections::HashMap::new();
            let events: Vec<serde_json::Value> = trace["traceEvents"]
                .as_array()
                .expect("events")
                .iter()
                .filter(|e| match e["name"].as_str() {
                    Some("Profile") => true,
                    Some("ProfileChunk") => {
                        let n = chunks.entry(e["id"].to_string()).or_insert(0);
                        *n += 1;
                        *n <= 2
                    }
                    _ => false,
                })
                .cloned()
                .collect();
            let array = serde_json::to_vec(&events).expect("JSON");
            let object = serde_json::to_vec(&serde_json::json!({ "traceEvents": events })).expect("JSON");
            vec![("money.trace.json (cut)".into(), object), ("money.array.json (cut)".into(), array)]
        }
        SourceFormat::Folded => {
            let profile = parse_ok(&read("fixtures/cpuprofile/money.cpuprofile"), SourceFormat::CpuProfile);
            let folded = fold(&profile, &FoldOptions::default());
            vec![("money.folded".into(), render_collapsed(&folded).into_bytes())]
        }
        SourceFormat::PreprocessJson => {
            // node's --preprocess JSON cut to 60 ticks and the code they name (renumbered).
            let json: serde_json::Value =
                serde_json::from_slice(&gunzip(&read("fixtures/ticklog/async-await.preprocess.json.gz")))
                    .expect("preprocess JSON");
            let code = json["code"].as_array().expect("code");
            let mut kept: Vec<serde_json::Value> = Vec::new();
            let mut renumbered = std::collections::HashMap::new();
            let ticks: Vec<serde_json::Value> = json["ticks"].as_array().expect("ticks")[..60]
                .iter()
                .map(|tick| {
                    let mut tick = tick.clone();
                    let s = tick["s"].as_array_mut().expect("s");
                    for i in (0..s.len()).step_by(2) {
                        if let Some(index) = s[i].as_u64() {
                            let new = *renumbered.entry(index).or_insert_with(|| {
                                kept.push(code[index as usize].clone());
                                kept.len() - 1
                            });
                            s[i] = new.into();
                        }
                    }
                    tick
                })
                .collect();
            let cut = serde_json::json!({"code": kept, "functions": [], "ticks": ticks});
            vec![("async-await.preprocess.json (cut)".into(), serde_json::to_vec(&cut).expect("JSON"))]
        }
        SourceFormat::PerfScript => {
            // The recorded perf script cut to its header and first 12 samples.
            let text = String::from_utf8(read("fixtures/perf/fib.perf-script.txt")).expect("UTF-8 perf script");
            let mut samples = 0;
            let cut: String = text
                .split_inclusive('\n')
                .take_while(|line| {
                    samples += usize::from(line.starts_with("node "));
                    samples <= 12
                })
                .collect();
            vec![("fib.perf-script.txt (cut)".into(), cut.into_bytes())]
        }
    }
}

fn options(format: SourceFormat, timeline: bool) -> ParseOptions {
    // No symbol files: a mutated library path must not send the tick-log parser to the disk.
    let empty = std::env::temp_dir().join("cpuprof-mutations-no-symbols");
    let _ = std::fs::create_dir_all(&empty);
    let mut options = if timeline { ParseOptions::with_timeline() } else { ParseOptions::default() };
    options.format = Some(format);
    options.symbols_root = Some(empty);
    options
}

fn parse_ok(bytes: &[u8], format: SourceFormat) -> Profile {
    parse(bytes, &Origin("seed".into()), &options(format, false)).expect("seed parses")
}

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Numbers that break assumptions: limits of every width, non-finite and malformed forms.
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "-1",
    "1e400",
    "-1e400",
    "1e-400",
    "NaN",
    "Infinity",
    "0.5",
    "1.7976931348623157e308",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9007199254740993",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "0x10",
    "1e",
    "--1",
    "",
];

/// Byte ranges of the decimal numbers in `bytes`.
fn numbers(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() || (bytes[i] == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let start = i;
            i += 1;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || matches!(bytes[i], b'.' | b'e' | b'E' | b'+' | b'-'))
            {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

/// Offsets just after a structural byte: where a writer would have been cut off mid-record.
fn boundaries(bytes: &[u8]) -> Vec<usize> {
    bytes.iter().enumerate().filter(|(_, b)| b",]}\":\n; ".contains(b)).map(|(i, _)| i + 1).collect()
}

/// One mutation of `bytes`; returns its name.
fn mutate(bytes: &mut Vec<u8>, rng: &mut Rng) -> &'static str {
    let len = bytes.len();
    match rng.below(11) {
        0 => {
            let cuts = boundaries(bytes);
            if let Some(cut) = cuts.get(rng.below(cuts.len())) {
                bytes.truncate(*cut);
            }
            "truncate at a boundary"
        }
        1 => {
            bytes.truncate(rng.below(len + 1));
            "truncate"
        }
        2 => {
            for _ in 0..=rng.below(4) {
                let at = rng.below(len);
                if let Some(b) = bytes.get_mut(at) {
                    *b ^= 1 << rng.below(8);
                }
            }
            "flip bits"
        }
        3 | 4 => {
            let spans = numbers(bytes);
            if let Some(&(start, end)) = spans.get(rng.below(spans.len())) {
                let new = rng.pick(NUMBERS).as_bytes().to_vec();
                bytes.splice(start..end, new);
            }
            "replace a number"
        }
        5 => {
            let spans = numbers(bytes);
            if spans.len() >= 2 {
                let (a, b) = (spans[rng.below(spans.len())], spans[rng.below(spans.len())]);
                let (first, second) = if a.0 < b.0 { (a, b) } else { (b, a) };
                if first.1 <= second.0 {
                    let (x, y) = (bytes[first.0..first.1].to_vec(), bytes[second.0..second.1].to_vec());
                    bytes.splice(second.0..second.1, x);
                    bytes.splice(first.0..first.1, y);
                }
            }
            "swap two numbers"
        }
        6 => {
            let at = rng.below(len + 1);
            let junk: &[&[u8]] =
                &[b"\xff", b"\xc3", b"\xed\xa0\x80", b"\\ud800", b"\\udc00\\ud800", b"\0", b"\xef\xbb\xbf"];
            bytes.splice(at..at, rng.pick(junk).iter().copied());
            "insert invalid UTF-8 or a lone surrogate"
        }
        7 => {
            // A record again: a line, or what lies between two commas.
            let separator = if bytes.contains(&b'\n') && rng.below(2) == 0 { b'\n' } else { b',' };
            let marks: Vec<usize> =
                bytes.iter().enumerate().filter(|(_, b)| **b == separator).map(|(i, _)| i).collect();
            if marks.len() >= 2 {
                let i = rng.below(marks.len() - 1);
                let (start, end) = (marks[i], marks[(i + 1 + rng.below(3)).min(marks.len() - 1)]);
                let record = bytes[start..end].to_vec();
                bytes.splice(end..end, record);
            }
            "duplicate a record"
        }
        8 => {
            let start = rng.below(len + 1);
            let end = (start + 1 + rng.below(64)).min(len);
            bytes.drain(start..end.max(start));
            "delete a slice"
        }
        9 => {
            // Protobuf varints and lengths: runs of continuation bits, or the largest values.
            let at = rng.below(len + 1);
            let run: &[&[u8]] = &[&[0xff; 10], &[0x80; 9], &[0xff, 0xff, 0xff, 0xff, 0x0f], &[0x00]];
            bytes.splice(at..at, rng.pick(run).iter().copied());
            "insert varint bytes"
        }
        _ => {
            let at = rng.below(len);
            let value = rng.next() as u8;
            if let Some(b) = bytes.get_mut(at) {
                *b = value;
            }
            "set a byte"
        }
    }
}

/// What runs on an accepted profile: every analysis and writer a command would use.
fn exercise(profile: &Profile) {
    for (by, weight, formats) in [
        (GroupBy::Function, Weight::Time, &[Format::Table, Format::Json, Format::Csv, Format::Markdown][..]),
        (GroupBy::Line, Weight::Samples, &[Format::Json]),
    ] {
        let filter = StackFilter { include_idle: true, ..StackFilter::default() };
        let report = top(profile, &TopOptions::new(by, weight, Metric::SelfTime, filter));
        let doc = TopDocument {
            source: "case",
            meta: &profile.meta,
            report: &report,
            by,
            limit: Some(20),
            window: None,
            inputs: &[],
            terminal: cpuprof_render::Terminal::default(),
        };
        for format in formats {
            let _ = render_top(&doc, *format);
        }
    }
    let folded = fold(profile, &FoldOptions::default());
    let _ = render_collapsed(&folded);
    let _ = render_pprof(profile, false);
    // What cpuprof accepts it can write as a .cpuprofile (one entry per sample: within reason),
    // and read back.
    let samples = profile
        .value_index(ValueUnit::Count)
        .map(|k| profile.samples.values(k).iter().fold(0i64, |sum, c| sum.saturating_add((*c).max(0))));
    if samples.is_some_and(|n| n <= 1_000_000) {
        let written = render_cpuprofile(profile).expect("a profile of few samples is written");
        if let Err(e) = parse(&written.json[..], &Origin("written".into()), &options(SourceFormat::CpuProfile, false)) {
            panic!("the written .cpuprofile does not parse: {e}");
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_owned())
}

/// Set in the processes [`mutated_fixtures_give_clean_errors_or_valid_reports`] starts: which of
/// them this is, as `INDEX/COUNT` (it takes the formats whose position is INDEX modulo COUNT).
const SHARD: &str = "CPUPROF_MUTATION_SHARD";

#[test]
fn mutated_fixtures_give_clean_errors_or_valid_reports() {
    if std::env::var_os(SHARD).is_some() {
        return mutate_formats();
    }
    // The cap is on the whole process, so the formats run in processes of their own, one per
    // core (this test binary again, told which formats to take), instead of threads of one.
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get).min(SourceFormat::ALL.len());
    let exe = std::env::current_exe().expect("the test binary");
    let shards: Vec<_> = (0..cores)
        .map(|index| {
            std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "mutated_fixtures_give_clean_errors_or_valid_reports",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(SHARD, format!("{index}/{cores}"))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start a shard")
        })
        .collect();
    // Drained at once, each on a thread (one shard's full pipe would stall it until the one
    // waited for first ended).
    let outputs: Vec<std::process::Output> = std::thread::scope(|scope| {
        let waits: Vec<_> = shards.into_iter().map(|shard| scope.spawn(move || shard.wait_with_output())).collect();
        waits.into_iter().map(|w| w.join().expect("a waiting thread").expect("a shard ends")).collect()
    });
    let (mut failed, mut said_all) = (Vec::new(), String::new());
    for (index, out) in outputs.into_iter().enumerate() {
        let said = String::from_utf8_lossy(&out.stderr);
        eprint!("{said}");
        said_all.push_str(&said);
        if !out.status.success() {
            failed.push(format!(
                "shard {index}/{cores} ({}):\n{said}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stdout)
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    // Every format was mutated, by one shard or another (a shard that ran no test says nothing).
    for format in SourceFormat::ALL {
        let line = format!("{format:?}: {CASES_PER_FORMAT} cases");
        assert!(said_all.lines().any(|l| l.starts_with(&line)), "{format:?} was not mutated");
    }
}

/// The formats of this process's shard, each mutated [`CASES_PER_FORMAT`] times.
fn mutate_formats() {
    let shard = std::env::var(SHARD).expect("a shard");
    let (index, count) = shard
        .split_once('/')
        .and_then(|(i, n)| Some((i.parse::<usize>().ok()?, n.parse::<usize>().ok()?)))
        .expect("INDEX/COUNT");
    let trace = std::env::var_os("CPUPROF_MUTATION_TRACE").is_some();
    let dump = std::env::temp_dir().join("cpuprof-mutations");
    let mut failures: Vec<String> = Vec::new();
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for (f, format) in SourceFormat::ALL.into_iter().enumerate().filter(|(f, _)| f % count == index) {
        let seeds = seeds(format);
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (f as u64 + 1));
        let (mut accepted, mut slowest) = (0, Duration::ZERO);
        for case in 0..CASES_PER_FORMAT {
            let (seed_name, seed) = rng.pick(&seeds);
            let mut bytes = seed.clone();
            let mut applied = Vec::new();
            for _ in 0..=rng.below(3) {
                applied.push(mutate(&mut bytes, &mut rng));
            }
            let label = format!("{format:?} case {case}: {seed_name}, {}", applied.join(" + "));
            if trace {
                eprintln!("{label} ({} bytes)", bytes.len());
            }
            // A 1 KB input may not make cpuprof allocate gigabytes: 64 MiB plus 256 bytes per byte.
            let before = ALLOCATOR.allocated();
            let _ = ALLOCATOR.set_limit(before.saturating_add((64 << 20) + 256 * bytes.len()));
            let started = Instant::now();
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                let parsed = parse(&bytes[..], &Origin("case".into()), &options(format, case % 2 == 1));
                if let Ok(profile) = &parsed {
                    exercise(profile);
                }
                parsed.is_ok()
            }));
            let took = started.elapsed();
            let _ = ALLOCATOR.set_limit(usize::MAX);
            slowest = slowest.max(took);
            let failure = match outcome {
                Ok(ok) => {
                    accepted += usize::from(ok);
                    (took > SLOW).then(|| format!("took {took:?}"))
                }
                Err(payload) => Some(format!("panicked: {}", panic_message(payload.as_ref()))),
            };
            if let Some(why) = failure {
                let _ = std::fs::create_dir_all(&dump);
                let file = dump.join(format!("{format:?}-{case}"));
                let _ = std::fs::write(&file, &bytes);
                failures.push(format!("{label}: {why} (input: {})", file.display()));
            }
        }
        eprintln!(
            "{format:?}: {CASES_PER_FORMAT} cases from {} seed(s), {accepted} accepted, slowest {slowest:?}",
            seeds.len()
        );
    }
    std::panic::set_hook(previous_hook);
    assert!(failures.is_empty(), "{} failing cases:\n{}", failures.len(), failures.join("\n"));
}
