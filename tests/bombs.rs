//! Decompression bombs: a few MB of gzip that expand into a huge `nodes` value, trace event,
//! folded line, perf script event, `samples` array, pprof string table, or into whitespace and
//! tick-log lines.
//! Each is generated here, read by the library and by the binary, and must end in one error
//! line naming the file and the limit it crossed, with exit 1 and no abort. The binary runs
//! with its address space capped (`ulimit -v`), so a reader that kept what it read would be
//! killed instead.

use crate::common;

use std::io::Write;
use std::path::Path;

use common::cpuprof;
use cpuprof_parse::{parse, Origin, ParseErrorKind, ParseOptions};

const MIB: usize = 1 << 20;

/// `head`, then `body` repeated to about `size` bytes, then `tail`, gzipped. Each part is a
/// gzip member of its own (one file, as `cat a.gz b.gz` makes), and the body is one member of
/// 1 MiB written again and again: a GiB-sized bomb takes a few MB and no time to make.
fn bomb(head: &[u8], body: &[u8], size: usize, tail: &[u8]) -> Vec<u8> {
    let member = |bytes: &[u8]| {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    };
    let block = body.repeat(MIB / body.len());
    let block = member(&block);
    let mut out = member(head);
    for _ in 0..size / MIB {
        out.extend_from_slice(&block);
    }
    out.extend(member(tail));
    out
}

/// Reads `bytes` with the library, expecting a too-large error with this message.
fn library(bytes: &[u8], options: &ParseOptions, expected: &str) {
    let e = parse(bytes, &Origin("bomb".into()), options).expect_err("a bomb must not be read");
    assert!(matches!(e.kind, ParseErrorKind::TooLarge { .. }), "{e}");
    assert_eq!(e.to_string(), format!("bomb{expected}"));
}

/// Runs `cpuprof top FILE ARGS` on `bytes` in at most 1.5 GiB of address space, expecting exit
/// 1 and the one line `cpuprof: error: FILE<expected> (--max-input-size raises it)`.
fn binary(bytes: &[u8], name: &str, args: &[&str], expected: &str) {
    binary_within(bytes, name, args, expected, 1_572_864);
}

/// [`binary`] with at most `kib` KiB of address space (binary, stacks and heap).
fn binary_within(bytes: &[u8], name: &str, args: &[&str], expected: &str, kib: u64) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(name);
    std::fs::write(&file, bytes).unwrap();
    assert!(bytes.len() < 4 * MIB, "{name}: {} bytes of gzip", bytes.len());
    let bin = assert_cmd::cargo::cargo_bin("cpuprof");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(r#"ulimit -v {kib} && exec "$0" "$@""#))
        .arg(&bin)
        .arg("top")
        .arg(&file)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
    assert!(out.stdout.is_empty(), "{name}");
    let path = display(&file);
    assert_eq!(stderr, format!("cpuprof: error: {path}{expected} (--max-input-size raises it)\n"), "{name}");
}

fn max_input_size(bytes: u64) -> ParseOptions {
    let mut options = ParseOptions::default();
    options.max_input_size = bytes;
    options
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn a_huge_nodes_value() {
    let b = bomb(br#"{"nodes":[{"id":1,"callFrame":{"functionName":""#, b"a", 1 << 30, b"");
    library(&b, &ParseOptions::default(), ":1:10: `nodes` exceeds the limit of 128 MiB");
    binary(&b, "nodes.cpuprofile.gz", &[], ":1:10: `nodes` exceeds the limit of 128 MiB");
}

#[test]
fn a_huge_trace_event() {
    let b = bomb(br#"{"traceEvents":[{"name":"ProfileChunk","args":""#, b"a", 1 << 30, b"");
    library(&b, &ParseOptions::default(), ":1:17: a trace event exceeds the limit of 128 MiB");
    binary(&b, "trace.json.gz", &[], ":1:17: a trace event exceeds the limit of 128 MiB");
}

#[test]
fn a_huge_folded_line() {
    let b = bomb(b"main;", b"a;", 1 << 30, b"a 1\n");
    library(&b, &ParseOptions::default(), ":1:1: a line exceeds the limit of 128 MiB");
    binary(&b, "stacks.folded.gz", &[], ":1:1: a line exceeds the limit of 128 MiB");
}

#[test]
fn a_perf_script_event_of_millions_of_frames() {
    // One event whose stack goes on for 1 GiB: 77 million frames of 14 bytes, or half a
    // million of 2 KiB. Whole events are what inferno folds into one line, so one is bounded
    // in frames and, as a folded line is, in bytes.
    let head = b"node 1 1.000000: 1 cpu-clock: \n";
    let b = bomb(head, b"\t 7f00 f (/x)\n", 1 << 30, b"");
    let expected = ":1:1: an event exceeds the limit of 1,048,576 frames";
    library(&b, &ParseOptions::default(), expected);
    binary(&b, "frames.perf.gz", &[], expected);
    let frame = format!("\t 7f00 {} (/x)\n", "f".repeat(2040));
    let b = bomb(head, frame.as_bytes(), 1 << 30, b"");
    let expected = ":1:1: an event exceeds the limit of 128 MiB";
    library(&b, &ParseOptions::default(), expected);
    binary(&b, "names.perf.gz", &[], expected);
}

/// `events` perf script events of `blocks` MiB of 14-byte frames each, told apart by their
/// outermost frame (the last line): every frame of each is a stack of its own.
fn distinct_events(events: usize, blocks: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..events {
        let root = format!("\t 7f00 r{i} (/x)\n\n");
        out.extend(bomb(b"node 1 1.000000: 1 cpu-clock: \n", b"\t 7f00 f (/x)\n", blocks * MIB, root.as_bytes()));
    }
    out
}

#[test]
fn perf_script_events_each_just_under_the_frame_limit() {
    // 70 events of 1,048,573 frames (14 MiB each, 1 GiB in all), each a million distinct
    // stacks: the limit on distinct stacks stops them after 16 events, as they are read.
    let b = distinct_events(70, 14);
    // (The binary alone: the library reads the same, and 16 million stacks take minutes in a
    // debug build.)
    let expected = ": the profile exceeds the limit of 16,777,216 distinct stacks";
    // Within 1 GiB of address space: the index of 16 million stacks holds their ids only (a map
    // keyed by the (parent, frame) pairs took the peak to 1.37 GB).
    binary_within(&b, "distinct.perf.gz", &[], expected, 1 << 20);
}

#[test]
fn a_huge_samples_array() {
    // Past 2^26 entries (the default limit, tried on small limits in cpuprof-parse) or past the
    // input size, whichever comes first.
    let head = br#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}}],"samples":["#;
    let b = bomb(head, b"1,", 1 << 30, b"1]}");
    library(&b, &max_input_size(32 << 20), ": the decompressed input exceeds the limit of 32 MiB");
    binary(
        &b,
        "samples.cpuprofile.gz",
        &["--max-input-size", "32MiB"],
        ": the decompressed input exceeds the limit of 32 MiB",
    );
}

#[test]
fn a_huge_pprof_string_table() {
    // 100 MiB of empty strings: 2 bytes each on the wire, 24 once decoded.
    let b = bomb(b"", b"\x32\x00", 100 << 20, b"");
    let expected = ": the pprof message once decoded (52,428,800 strings, 0 samples, 0 locations, 0 functions) \
                    exceeds the limit of 1 GiB";
    library(&b, &ParseOptions::default(), expected);
    binary(&b, "strings.pb.gz", &[], expected);
}

#[test]
fn whitespace_and_tick_logs_stream_up_to_the_input_size() {
    let b = bomb(br#"{"nodes":"#, b" ", 1 << 30, b"[]}");
    let expected = ": the decompressed input exceeds the limit of 16 MiB";
    library(&b, &max_input_size(16 << 20), expected);
    binary(&b, "spaces.cpuprofile.gz", &["--max-input-size", "16MiB"], expected);
    let head = b"v8-version,11,3,244,8,-node.38,0\ncode-creation,JS,10,1,0x1000,16,f /a.js:1:1,0x9000,~\n";
    let b = bomb(head, b"tick,0x1001,1,0,0x0,0\n", 1 << 30, b"");
    binary(&b, "ticks.log.gz", &["--max-input-size", "16MiB"], expected);
}

#[test]
fn max_input_size_takes_sizes_as_people_write_them() {
    let tail = br#""nodes":[{"id":1,"callFrame":{"functionName":"(root)"}}],"samples":[],"timeDeltas":[]}"#;
    let b = bomb(b"{", b" ", 4 * MIB, tail);
    for (size, limit) in [("3MiB", "3 MiB"), ("3M", "3 MiB"), ("3000000", "2.9 MiB"), ("3MB", "2.9 MiB"), ("1.5g", "")]
    {
        if limit.is_empty() {
            // Larger than the input: read as usual.
            cpuprof().args(["top", "-", "--max-input-size", size]).write_stdin(b.clone()).assert().success();
            continue;
        }
        let out = cpuprof().args(["top", "-", "--max-input-size", size]).write_stdin(b.clone()).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("cpuprof: error: <stdin>: the decompressed input exceeds the limit of {limit} (--max-input-size raises it)\n")
        );
    }
    for bad in ["", "0", "-1", "2 parsecs", "GiB"] {
        cpuprof().args(["top", "-", "--max-input-size", bad]).write_stdin(b.clone()).assert().code(2);
    }
}
