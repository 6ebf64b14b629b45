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

/// A star like [`star`] whose node ids are `id(i)` (i = 0 for the root, 1..=n for the leaves),
/// each leaf sampled `i` times, and `extra` added to every leaf's call frame.
fn star_with(n: usize, id: impl Fn(usize) -> u64, extra: &str) -> String {
    let root = format!(
        r#"{{"id":{},"callFrame":{{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1}},"children":[{}]}}"#,
        id(0),
        (1..=n).map(|i| id(i).to_string()).collect::<Vec<_>>().join(",")
    );
    let leaves = (1..=n).map(|i| {
        format!(
            r#"{{"id":{},"callFrame":{{"functionName":"f{i}","scriptId":"3","url":"file:///a.js","lineNumber":{i},"columnNumber":0{extra}}}}}"#,
            id(i)
        )
    });
    let nodes = std::iter::once(root).chain(leaves).collect::<Vec<_>>().join(",");
    let samples: Vec<String> = (1..=n).flat_map(|i| std::iter::repeat_n(id(i).to_string(), i)).collect();
    let deltas = vec!["1"; samples.len()].join(",");
    format!(
        r#"{{"nodes":[{nodes}],"startTime":0,"endTime":{},"samples":[{}],"timeDeltas":[{deltas}]}}"#,
        samples.len(),
        samples.join(",")
    )
}

/// Samples per function name, from a parse of `text`.
fn samples_per_function(text: &str) -> Result<std::collections::BTreeMap<String, i64>, String> {
    let profile =
        parse(text.as_bytes(), &Origin("star".into()), &ParseOptions::default()).map_err(|e| e.to_string())?;
    let count = profile.samples.values(profile.value_index(ValueUnit::Count).unwrap()).to_vec();
    let mut per = std::collections::BTreeMap::new();
    for (row, stack) in profile.samples.stacks().iter().enumerate() {
        let name = profile.strings.get(profile.funcs[profile.func_of(*stack)].name).to_owned();
        *per.entry(name).or_insert(0) += count[row];
    }
    Ok(per)
}

#[test]
fn samples_name_their_nodes_whatever_the_ids_and_whatever_else_says_id() {
    // Samples are read while the tree is built, by the ids a scan of `nodes` finds: the
    // counts must not depend on how the ids run or on other `"id"` keys the scan meets.
    let n = 300;
    let expected: std::collections::BTreeMap<String, i64> = (1..=n).map(|i| (format!("f{i}"), i as i64)).collect();
    let shapes: Vec<(&str, String)> = vec![
        ("ids 1..n in order", star_with(n, |i| i as u64 + 1, "")),
        ("ids in reverse", star_with(n, |i| (n - i) as u64 + 1, "")),
        ("ids with gaps", star_with(n, |i| 7 * i as u64 + 3, "")),
        ("huge sparse ids", star_with(n, |i| 1_000_000_000_000 + 977 * i as u64, "")),
        ("an id key inside every call frame", star_with(n, |i| i as u64 + 1, r#","id":5"#)),
        ("an id key naming the next node", star_with(n, |i| i as u64 + 1, r#","x":{"id": 2}"#)),
        ("id text inside strings", star_with(n, |i| i as u64 + 1, r#","note":"\"id\":4""#)),
    ];
    for (what, text) in shapes {
        assert_eq!(samples_per_function(&text).as_ref(), Ok(&expected), "{what}");
    }
}

#[test]
fn a_sample_of_no_node_is_reported_at_its_index_whatever_the_path() {
    let n = 5;
    let text = star_with(n, |i| i as u64 + 1, "");
    // Samples are 2,3,3,4,4,4,…: make the 4th (index 3) name an unknown id, small or huge.
    for unknown in ["99", "100000", "123456789012345"] {
        let bad = text.replacen("\"samples\":[2,3,3,4,", &format!("\"samples\":[2,3,3,{unknown},"), 1);
        assert_ne!(bad, text);
        let error = samples_per_function(&bad).unwrap_err();
        assert!(error.contains(&format!("sample 3 refers to unknown node id {unknown}")), "{error}");
    }
}

#[test]
fn an_error_in_nodes_comes_before_errors_after_it() {
    let text = star_with(3, |i| i as u64 + 1, "");
    let duplicate = text.replacen(r#"{"id":3,"#, r#"{"id":2,"#, 1);
    // Nodes are built while the samples are read: an error in both reports the nodes'.
    let both = duplicate.replacen("\"samples\":[2,", "\"samples\":[x,", 1);
    let times = duplicate.replacen("\"startTime\":0", "\"startTime\":\"x\"", 1);
    for (what, text) in [("nodes alone", &duplicate), ("samples too", &both), ("startTime too", &times)] {
        let error = samples_per_function(text).unwrap_err();
        assert!(error.contains("id 2"), "{what}: {error}");
    }
}
