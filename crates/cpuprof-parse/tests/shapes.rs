//! Shapes no recorded fixture has: trees too big for 16-bit node positions, and samples
//! written before nodes. Expected numbers follow from the construction.

use cpuprof_model::ValueUnit;
use cpuprof_parse::{parse, Origin, ParseOptions};

/// `(root)` with `n` leaf children, each sampled once, 1 µs apart.
fn star(n: usize, samples_first: bool) -> String {
    let mut nodes = vec![format!(
        r#"{{"id":1,"callFrame":{{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1}},"children":[{}]}}"#,
        (2..n + 2).map(|i| i.to_string()).collect::<Vec<_>>().join(",")
    )];
    for i in 2..n + 2 {
        nodes.push(format!(
            r#"{{"id":{i},"callFrame":{{"functionName":"f{i}","scriptId":"3","url":"file:///a.js","lineNumber":{i},"columnNumber":0}}}}"#
        ));
    }
    let samples = (2..n + 2).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let deltas = vec!["1"; n].join(",");
    let nodes = nodes.join(",");
    if samples_first {
        format!(r#"{{"samples":[{samples}],"timeDeltas":[{deltas}],"startTime":0,"endTime":{n},"nodes":[{nodes}]}}"#)
    } else {
        format!(r#"{{"nodes":[{nodes}],"startTime":0,"endTime":{n},"samples":[{samples}],"timeDeltas":[{deltas}]}}"#)
    }
}

fn check(n: usize, samples_first: bool) {
    let text = star(n, samples_first);
    let profile = parse(text.as_bytes(), &Origin("star".into()), &ParseOptions::default()).unwrap();
    assert_eq!(profile.stacks.len(), n + 1);
    assert_eq!(profile.samples.len(), n, "one summed row per sampled stack");
    let count = profile.samples.values(profile.value_index(ValueUnit::Count).unwrap());
    let ns = profile.samples.values(profile.value_index(ValueUnit::Nanoseconds).unwrap());
    assert!(count.iter().all(|c| *c == 1));
    // Every sample lasts until the next (1 µs); the last one the mean interval (also 1 µs).
    assert!(ns.iter().all(|d| *d == 1_000), "{:?}", &ns[..5]);
    assert_eq!(profile.meta.interval_ns, Some(1_000));
}

#[test]
fn trees_beyond_16_bit_positions() {
    check(70_000, false);
}

#[test]
fn samples_before_nodes() {
    check(1_000, true);
}

#[test]
fn timeline_keeps_every_sample_in_time_order() {
    let text = star(500, false);
    let profile = parse(text.as_bytes(), &Origin("star".into()), &ParseOptions::with_timeline()).unwrap();
    let mut times = Vec::new();
    profile.samples.timeline().unwrap().for_each(|s| times.push(s.time_ns));
    assert_eq!(times.len(), 500);
    assert!(times.windows(2).all(|w| w[1] - w[0] == 1_000));
}

#[test]
fn lone_surrogates_in_names_become_replacement_characters() {
    // V8 writes a lone surrogate as three U+FFFD; third-party files write the escape itself.
    let text = r#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"children":[2]},
        {"id":2,"callFrame":{"functionName":"bad\ud800name","scriptId":"3","url":"file:///a\u0020b.js","lineNumber":1,"columnNumber":0}}],
        "startTime":0,"endTime":10,"samples":[2],"timeDeltas":[1]}"#;
    let profile = parse(text.as_bytes(), &Origin("surrogate".into()), &ParseOptions::default()).unwrap();
    let names: Vec<&str> = profile.funcs.as_slice().iter().map(|f| profile.strings.get(f.name)).collect();
    assert!(names.contains(&"bad\u{fffd}\u{fffd}\u{fffd}name"), "{names:?}");
    let files: Vec<&str> = profile.funcs.as_slice().iter().map(|f| profile.strings.get(f.file)).collect();
    assert!(files.contains(&"/a b.js"), "{files:?}");
}
