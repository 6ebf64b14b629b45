//! Bounded reading: the input size limit, the limits on what is kept (tried on small inputs
//! through `test_limits`), format recognition across short reads, the JSON grammar of skipped
//! values, and a header whose end is before its start.

use std::io::{Read, Write};

use cpuprof_model::Profile;

use crate::{parse, Limits, Origin, ParseError, ParseErrorKind, ParseOptions, SourceFormat};

fn origin() -> Origin {
    Origin("t".into())
}

/// One gzip member per part.
fn gzip(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for part in parts {
        let mut member = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        member.write_all(part).unwrap();
        out.extend(member.finish().unwrap());
    }
    out
}

fn read(bytes: &[u8], options: &ParseOptions) -> Result<Profile, ParseError> {
    parse(bytes, &origin(), options)
}

fn error(bytes: &[u8], options: &ParseOptions) -> String {
    match read(bytes, options) {
        Ok(_) => panic!("read: {}", String::from_utf8_lossy(&bytes[..bytes.len().min(200)])),
        Err(e) => e.to_string(),
    }
}

/// Small limits, so that each is crossed by a small input.
fn small() -> Limits {
    Limits {
        value: 1000,
        pprof_message: 1000,
        pprof_decoded: 10_000,
        samples: 100,
        stacks: 50,
        nodes: 20,
        frames: 10,
        event_frames: 10,
    }
}

fn with(limits: Limits) -> ParseOptions {
    ParseOptions { test_limits: Some(limits), ..ParseOptions::default() }
}

const TRACE: &str = r#"{"traceEvents":[
{"pid":1,"tid":1,"ph":"P","cat":"disabled-by-default-v8.cpu_profiler","name":"Profile","id":"0x1","args":{"data":{"startTime":0}}},
{"pid":1,"tid":1,"ph":"P","cat":"disabled-by-default-v8.cpu_profiler","name":"ProfileChunk","id":"0x1","args":{"data":{"cpuProfile":{"nodes":[
  {"callFrame":{"functionName":"(root)","scriptId":0},"id":1},{"callFrame":{"functionName":"f","url":"/a.js","scriptId":3},"id":2,"parent":1}],
  "samples":[2,2]},"timeDeltas":[10,10]}}}]}"#;

/// `(root)` → `f`, sampled `samples` times 1 µs apart, with `extra` as its first key.
fn cpuprofile(extra: &str, samples: usize) -> String {
    format!(
        r#"{{{extra}"nodes":[{{"id":1,"callFrame":{{"functionName":"(root)","scriptId":"0","url":""}},"children":[2]}},
{{"id":2,"callFrame":{{"functionName":"f","scriptId":"3","url":"/a.js"}}}}],"startTime":0,"endTime":{samples},
"samples":[{}],"timeDeltas":[{}]}}"#,
        vec!["2"; samples].join(","),
        vec!["1"; samples].join(",")
    )
}

fn total_samples(p: &Profile) -> i64 {
    p.samples.values(0).iter().sum()
}

/// A reader that gives one byte per read, as a pipe may.
struct Trickle<'a>(&'a [u8]);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.len().min(buf.len()).min(1);
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn a_short_first_gzip_member_or_read_does_not_decide_the_format() {
    // `{` alone reads as a .cpuprofile; the whole prefix says trace.
    let (head, rest) = TRACE.as_bytes().split_at(1);
    for input in [gzip(&[head, rest]), gzip(&[b"", TRACE.as_bytes()]), gzip(&[b"", head, b"", rest])] {
        let p = read(&input, &ParseOptions::default()).unwrap();
        assert_eq!((p.meta.format, total_samples(&p)), (cpuprof_model::SourceFormat::Trace, 2));
    }
    // Plain input that comes a byte at a time (a pipe).
    let p = parse(Trickle(TRACE.as_bytes()), &origin(), &ParseOptions::default()).unwrap();
    assert_eq!(p.meta.format, cpuprof_model::SourceFormat::Trace);
    let p = parse(Trickle(&gzip(&[TRACE.as_bytes()])), &origin(), &ParseOptions::default()).unwrap();
    assert_eq!(p.meta.format, cpuprof_model::SourceFormat::Trace);
}

#[test]
fn the_input_size_limit_counts_decompressed_bytes() {
    let text = b"main;work 3\n"; // 12 bytes
    let at = |max_input_size| ParseOptions { max_input_size, ..ParseOptions::default() };
    assert_eq!(total_samples(&read(text, &at(12)).unwrap()), 3);
    assert_eq!(total_samples(&read(&gzip(&[text]), &at(12)).unwrap()), 3);
    assert_eq!(error(text, &at(11)), "t: the input exceeds the limit of 11 bytes");
    assert_eq!(error(&gzip(&[text]), &at(11)), "t: the decompressed input exceeds the limit of 11 bytes");
    // Within the first bytes, which are read to recognise the format.
    assert_eq!(error(&gzip(&[text]), &at(1)), "t: the decompressed input exceeds the limit of 1 bytes");
    // A tick log keeps what came before a damaged stream; a stream over the limit is an error.
    let mut log = "v8-version,11,3,244,8,-node.38,0\nprofiler,begin,500\n\
                   code-creation,JS,10,1,0x1000,16,f /a.js:1:1,0x9000,~\n"
        .to_owned();
    for i in 0..20_000 {
        log.push_str(&format!("tick,0x1001,{i},0,0x0,0\n"));
    }
    let log = gzip(&[log.as_bytes()]);
    assert_eq!(total_samples(&read(&log, &at(700_000)).unwrap()), 20_000);
    assert_eq!(error(&log, &at(300_000)), "t: the decompressed input exceeds the limit of 293.0 KiB");
}

#[test]
fn the_default_limits_and_how_they_scale() {
    let at = |size: u64| ParseOptions { max_input_size: size, ..ParseOptions::default() }.limits();
    let default = ParseOptions::default().limits();
    assert_eq!(ParseOptions::default().max_input_size, 2 << 30);
    assert_eq!((default.value, default.pprof_message, default.pprof_decoded), (128 << 20, 512 << 20, 1 << 30));
    assert_eq!((default.samples, default.stacks, default.nodes, default.frames), (1 << 26, 1 << 24, 1 << 22, 1 << 22));
    // A larger size raises them in proportion; a smaller one leaves them (it bounds all by itself).
    assert_eq!((at(8 << 30).value, at(8 << 30).samples), (512 << 20, 1 << 28));
    assert_eq!((at(1 << 20).value, at(1 << 20).samples), (default.value, default.samples));
    // 1 GiB × (2^64 − 1) / 2 GiB, rounded down: no overflow.
    assert_eq!(at(u64::MAX).pprof_decoded, u64::MAX / 2);
}

/// `{"x":VALUE,…}`: the value is skipped, and must be JSON.
#[test]
fn skipped_values_are_held_to_the_json_grammar() {
    let good = [
        "1",
        "-0.5e+3",
        "0",
        "2E-7",
        r#""a\"\\\/\b\f\n\r\t\u00e9 é""#,
        "[]",
        "{}",
        r#"[1,[2,{"a":[true,false,null]}],"x"]"#,
        " { \"a\" : 1 ,\n \"b\" : [ ] } ",
        &format!("{}{}", "[".repeat(1024), "]".repeat(1024)),
    ];
    for value in good {
        let p = read(cpuprofile(&format!(r#""x":{value},"#), 2).as_bytes(), &ParseOptions::default());
        assert_eq!(total_samples(&p.unwrap()), 2, "{value}");
    }
    // `{"x":` is 5 bytes: the value starts at column 6.
    let bad = [
        // (The object's own loop points just after the byte it did not expect.)
        ("1 2", "1:9: invalid JSON: expected `,` or `}` after the value of `x`, found `2`"),
        ("01", "1:8: invalid JSON: expected `,` or `}` after the value of `x`, found `1`"),
        ("[1]]", "1:10: invalid JSON: expected `,` or `}` after the value of `x`, found `]`"),
        ("tru", "1:9: invalid JSON: in a value: expected `true`, `false` or `null`, found `,`"),
        ("nul", "1:9: invalid JSON: in a value: expected `true`, `false` or `null`, found `,`"),
        ("[1 2]", "1:9: invalid JSON: in a value: expected `,` or `]`, found `2`"),
        (r#"{"a" 1}"#, "1:11: invalid JSON: in a value: expected `:`, found `1`"),
        ("[1,]", "1:9: invalid JSON: in a value: expected a value, found `]`"),
        ("[}", "1:7: invalid JSON: in a value: expected a value, found `}`"),
        (r#"{"a":1,}"#, "1:13: invalid JSON: in a value: expected a key, found `}`"),
        ("{1:2}", "1:7: invalid JSON: in a value: expected a key or `}`, found `1`"),
        ("-", "1:7: invalid JSON: in a value: expected a digit, found `,`"),
        ("1.", "1:8: invalid JSON: in a value: expected a digit, found `,`"),
        ("1e+", "1:9: invalid JSON: in a value: expected a digit, found `,`"),
        (r#""\q""#, "1:8: invalid JSON: in a value: expected an escape (`\\n`, `\\u…`, …), found `q`"),
        (r#""\u12g4""#, "1:11: invalid JSON: in a value: expected a hex digit, found `g`"),
        ("\"a\nb\"", "1:8: invalid JSON: in a value: control character inside a string"),
        ("x", "1:6: invalid JSON: in a value: expected a value, found `x`"),
    ];
    for (value, expected) in bad {
        let e = error(cpuprofile(&format!(r#""x":{value},"#), 2).as_bytes(), &ParseOptions::default());
        assert_eq!(e, format!("t:{expected}"), "{value}");
    }
    // Keys the reader looks at are checked too.
    let e = error(cpuprofile(r#""\q":1,"#, 2).as_bytes(), &ParseOptions::default());
    assert_eq!(e, "t:1:4: invalid JSON: expected an escape (`\\n`, `\\u…`, …) in a string, found `q`");
    let deep = format!("{}{}", "[".repeat(1025), "]".repeat(1025));
    let e = error(cpuprofile(&format!(r#""x":{deep},"#), 2).as_bytes(), &ParseOptions::default());
    assert_eq!(e, "t:1:1030: invalid JSON: in a value: nested deeper than 1024 levels");
    // In a trace: skipped keys, and events that are not profile events.
    let trace = TRACE.replacen('{', r#"{"metadata":{"a":[1 2]},"#, 1);
    assert_eq!(
        error(trace.as_bytes(), &ParseOptions::default()),
        "t:1:21: invalid JSON: in a value: expected `,` or `]`, found `2`"
    );
    let trace = TRACE.replacen('[', r#"[{"ph":"X","name":"RunTask","args":{"v":tru}},"#, 1);
    assert_eq!(
        error(trace.as_bytes(), &ParseOptions::default()),
        "t:1:59: invalid JSON: in a trace event: expected `true`, `false` or `null`, found `}`"
    );
}

#[test]
fn an_end_before_the_start_gives_the_samples_span_not_a_negative_duration() {
    // Samples at 110 and 130 µs (start 100, deltas 10 and 20); the last lasts the mean interval,
    // 20 µs, so the samples end at 150 µs: 50 µs after the start.
    let text = cpuprofile("", 2)
        .replace(r#""startTime":0,"endTime":2"#, r#""startTime":100,"endTime":50"#)
        .replace(r#""timeDeltas":[1,1]"#, r#""timeDeltas":[10,20]"#);
    for options in [ParseOptions::default(), ParseOptions::with_timeline()] {
        let p = read(text.as_bytes(), &options).unwrap();
        assert_eq!((p.meta.start_ns, p.meta.duration_ns), (Some(100_000), Some(50_000)));
    }
    // Without deltas the samples are spread over the 70 µs between the two.
    let text = text.replace(r#","timeDeltas":[10,20]"#, "").replace(r#""endTime":50"#, r#""endTime":30"#);
    let p = read(text.as_bytes(), &ParseOptions::default()).unwrap();
    assert_eq!((p.meta.start_ns, p.meta.duration_ns), (Some(100_000), Some(70_000)));
    // A trace whose last chunk ends before its `Profile` event starts: samples at 10 and 20 µs
    // after the start, the last lasting 10 µs.
    let trace = TRACE.replace(r#""timeDeltas":[10,10]"#, r#""timeDeltas":[10,10],"endTime":-5"#);
    let p = read(trace.as_bytes(), &ParseOptions::default()).unwrap();
    assert_eq!((p.meta.start_ns, p.meta.duration_ns), (Some(0), Some(30_000)));
}

#[test]
fn json_values_read_whole_have_a_size_limit() {
    let limits = Limits { value: 100, ..small() };
    let e = error(cpuprofile("", 2).as_bytes(), &with(limits));
    assert_eq!(e, "t:1:10: `nodes` exceeds the limit of 100 bytes");
    let limits = Limits { value: 200, ..small() };
    let e = error(TRACE.as_bytes(), &with(limits));
    assert_eq!(e, "t:3:1: a trace event exceeds the limit of 200 bytes");
    // Skipped values are not kept, so their size does not matter.
    let long = format!(r#""x":"{}","#, "a".repeat(5000));
    assert_eq!(total_samples(&read(cpuprofile(&long, 2).as_bytes(), &with(small())).unwrap()), 2);
}

#[test]
fn samples_and_nodes_have_count_limits() {
    let limits = small(); // 100 samples, 20 nodes
    assert_eq!(total_samples(&read(cpuprofile("", 100).as_bytes(), &with(limits)).unwrap()), 100);
    // `samples` starts line 3: its `[` is at column 11.
    let e = error(cpuprofile("", 101).as_bytes(), &with(limits));
    assert_eq!(e, "t:3:11: `samples` exceeds the limit of 100 entries");
    // Samples before the nodes, and deltas alone.
    let samples = vec!["2"; 101].join(",");
    let e = error(format!(r#"{{"samples":[{samples}],"nodes":[]}}"#).as_bytes(), &with(limits));
    assert_eq!(e, "t:1:12: `samples` exceeds the limit of 100 entries");
    let e = error(format!(r#"{{"timeDeltas":[{samples}],"nodes":[]}}"#).as_bytes(), &with(limits));
    assert_eq!(e, "t:1:15: `timeDeltas` exceeds the limit of 100 entries");
    let e = error(cpuprofile("", 2).as_bytes(), &with(Limits { nodes: 1, ..limits }));
    assert_eq!(e, "t:1:10: `nodes` exceeds the limit of 1 nodes");
    // Nodes past the limit are counted, not read: one that is not a node is not looked at.
    let odd = cpuprofile("", 2).replace(r#"{"id":2,"#, r#""x",{"id":2,"#);
    assert_eq!(
        error(odd.as_bytes(), &with(limits)),
        "t:2:3: invalid JSON: in `nodes`: invalid type: string \"x\", expected struct RawNode"
    );
    let e = error(odd.as_bytes(), &with(Limits { nodes: 1, ..limits }));
    assert_eq!(e, "t:1:10: `nodes` exceeds the limit of 1 nodes");
    // A trace profile, over its chunks.
    let e = error(TRACE.as_bytes(), &with(Limits { samples: 1, ..limits }));
    assert_eq!(e, "t:3:1: a CPU profile of the trace exceeds the limit of 1 samples");
    let e = error(TRACE.as_bytes(), &with(Limits { nodes: 1, ..limits }));
    assert_eq!(e, "t:3:1: a CPU profile of the trace exceeds the limit of 1 nodes");
    let profiles: Vec<String> = (0..1025)
        .map(|i| {
            format!(r#"{{"pid":1,"tid":1,"ph":"P","name":"Profile","id":"{i}","args":{{"data":{{"startTime":0}}}}}}"#)
        })
        .collect();
    let e = error(format!("[{}]", profiles.join(",\n")).as_bytes(), &ParseOptions::default());
    assert_eq!(e, "t:1025:1: the trace exceeds the limit of 1,024 CPU profiles");
}

#[test]
fn folded_lines_stacks_and_frames_have_limits() {
    let limits = Limits { value: 12, ..small() };
    assert_eq!(total_samples(&read(b"main;work 3\n", &with(limits)).unwrap()), 3);
    let e = error(b"main;work 3\nmain;work2 3\n", &with(limits));
    assert_eq!(e, "t:2:1: a line exceeds the limit of 12 bytes");
    // 50 stacks: one line 50 frames deep; a 51st frame is one stack too many.
    let deep = |n: usize| format!("{} 1\n", cpuprof_folded::join_stack(vec!["a"; n]));
    assert_eq!(total_samples(&read(deep(50).as_bytes(), &with(small())).unwrap()), 1);
    let e = error(format!("{}{}", deep(50), deep(51)).as_bytes(), &with(small()));
    assert_eq!(e, "t:2:1: the profile exceeds the limit of 50 distinct stacks");
    // 10 distinct frames.
    let frames = |n: usize| (0..n).map(|i| format!("f{i} 1")).collect::<Vec<_>>().join("\n");
    assert_eq!(total_samples(&read(frames(10).as_bytes(), &with(small())).unwrap()), 10);
    let e = error(frames(11).as_bytes(), &with(small()));
    assert_eq!(e, "t:11:1: the profile exceeds the limit of 10 distinct frames");
}

mod pprof_input {
    use pprof::protos::{Function, Line, Location, Message, Profile as Proto, Sample, ValueType};

    use super::*;
    use crate::pprof::DecodedSize;

    /// `strings` extra strings; one sample per stack in `stacks` (location ids, leaf first);
    /// location i is function 1 at line i.
    fn proto(strings: usize, stacks: &[Vec<u64>]) -> Vec<u8> {
        let locations = stacks.iter().flatten().copied().max().unwrap_or(0);
        let mut string_table: Vec<String> = ["", "samples", "count", "f", "a.js"].map(str::to_owned).to_vec();
        string_table.extend((0..strings).map(|_| String::new()));
        Proto {
            sample_type: vec![ValueType { ty: 1, unit: 2 }],
            string_table,
            function: vec![Function { id: 1, name: 3, filename: 4, ..Function::default() }],
            location: (1..=locations)
                .map(|i| Location { id: i, line: vec![Line { function_id: 1, line: i as i64 }], ..Location::default() })
                .collect(),
            sample: stacks
                .iter()
                .map(|ids| Sample { location_id: ids.clone(), value: vec![1], label: vec![] })
                .collect(),
            ..Proto::default()
        }
        .encode_to_vec()
    }

    #[test]
    fn the_decoded_size_is_measured_before_decoding() {
        use std::mem::size_of;
        let bytes = proto(0, &[vec![1, 2, 3]]);
        // Strings: 5 × 24 for the Strings, heap blocks of 32 for `samples`, `count`, `f`, `a.js`
        // (glibc's smallest). The sample: its struct, a block of 48 for 3 ids (capacity 4 × 8
        // bytes + 8 of header, in 16-byte steps) and one of 48 for 1 value. Each location: its
        // struct and a block of 80 for one line (capacity 4 × 16 + 8, in 16-byte steps).
        let expected = size_of::<ValueType>()
            + 5 * 24
            + 4 * 32
            + size_of::<Sample>()
            + 48
            + 48
            + 3 * (size_of::<Location>() + 80)
            + size_of::<Function>();
        let measured = DecodedSize::of(&bytes);
        assert_eq!(
            (measured.bytes, measured.strings, measured.samples, measured.locations, measured.functions),
            (expected as u64, 5, 1, 3, 1)
        );
        // A truncated message is measured as far as it goes.
        assert!(DecodedSize::of(&bytes[..bytes.len() - 3]).bytes < expected as u64);
    }

    #[test]
    fn messages_decoded_sizes_and_stacks_have_limits() {
        let stack: Vec<u64> = (1..=50).rev().collect();
        let p =
            read(&proto(0, std::slice::from_ref(&stack)), &with(Limits { pprof_message: 2000, ..small() })).unwrap();
        assert_eq!(total_samples(&p), 1);
        let e = error(&proto(0, &[stack]), &with(Limits { pprof_message: 100, ..small() }));
        assert_eq!(e, "t: the pprof message exceeds the limit of 100 bytes");
        // 600 empty strings: 2 bytes each on the wire, 24 once decoded.
        let limits = Limits { pprof_message: 5000, pprof_decoded: 10_000, ..small() };
        let e = error(&proto(600, &[vec![1]]), &with(limits));
        assert_eq!(
            e,
            "t: the pprof message once decoded (605 strings, 1 samples, 1 locations, 1 functions) exceeds the limit of 9.8 KiB"
        );
        // 51 distinct frames in one stack.
        let limits = Limits { pprof_message: 5000, ..small() };
        let e = error(&proto(0, &[(1..=51).rev().collect()]), &with(limits));
        assert_eq!(e, "t: the profile exceeds the limit of 50 distinct stacks");
    }

    #[test]
    fn a_pprof_input_may_be_forced_and_still_bounded() {
        let options =
            ParseOptions { format: Some(SourceFormat::Pprof), ..with(Limits { pprof_message: 5, ..small() }) };
        assert_eq!(error(&proto(0, &[vec![1]]), &options), "t: the pprof message exceeds the limit of 5 bytes");
    }
}

#[test]
fn too_large_is_its_own_error_kind() {
    let e = read(b"main;work 3\n", &ParseOptions { max_input_size: 4, ..ParseOptions::default() }).unwrap_err();
    assert!(matches!(e.kind, ParseErrorKind::TooLarge { .. }), "{e:?}");
}

#[test]
fn an_unknown_child_is_named_with_the_node_that_lists_it() {
    // The second node's children come after the first's in the list of every child id.
    let text = r#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"},"children":[2,3]},
{"id":2,"callFrame":{"functionName":"f"},"children":[]},{"id":3,"callFrame":{"functionName":"g"},"children":[9]}],
"samples":[2],"timeDeltas":[1]}"#;
    assert_eq!(
        error(text.as_bytes(), &ParseOptions::default()),
        "t:1:10: node 3 lists child id 9, which is not a node"
    );
}
