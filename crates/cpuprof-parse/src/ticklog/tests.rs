use cpuprof_model::{FuncKind, StrId, Tier};

use super::*;

const HEAD: &str = "v8-version,11,3,244,8,-node.38,0\nprofiler,begin,500\n";

fn parse_with(text: &str, options: &ParseOptions) -> Profile {
    parse(text.as_bytes(), &Origin("t.log".into()), options).unwrap()
}

fn parse_text(text: &str) -> Profile {
    parse_with(text, &ParseOptions::default())
}

/// `(stack as names leaf first, ticks)` sorted, for every sample row (names as reports show
/// them: a kept tier's marker before the name).
fn stacks(p: &Profile) -> Vec<(Vec<String>, i64)> {
    let mut out: Vec<(Vec<String>, i64)> = p
        .samples
        .stacks()
        .iter()
        .zip(p.samples.values(0))
        .map(|(s, n)| {
            let names =
                p.stacks.walk(*s).map(|f| p.funcs[p.frames[f].func].display_name(&p.strings).into_owned()).collect();
            (names, *n)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn js_code_ticks_and_interval() {
    let log = format!(
        "{HEAD}code-creation,JS,10,1,0x1000,100,work file:///a.js:3:10,0x9000,~\n\
         code-creation,JS,13,2,0x2000,100,work file:///a.js:3:10,0x9000,*\n\
         code-creation,JS,10,1,0x3000,100, file:///a.js:1:1,0x9100,~\n\
         tick,0x1010,10,0,0x0,0,0x3010\n\
         tick,0x2010,11,0,0x0,0,0x3010\n\
         tick,0x2020,12,0,0x0,1,0x3020\n"
    );
    let p = parse_text(&log);
    // The tiers of `work` are one function; the anonymous script is its caller.
    // Two rows of one stack: JS state and GC state.
    assert_eq!(stacks(&p), vec![(vec!["work".into(), String::new()], 1), (vec!["work".into(), String::new()], 2)]);
    assert_eq!(p.meta.interval_ns, Some(500_000));
    assert_eq!(p.meta.format, SourceFormat::TickLog);
    let states = p.samples.vm_states().unwrap();
    assert!(states.contains(&VmState::Gc) && states.contains(&VmState::Js));
    assert_eq!(p.samples.values(1).iter().sum::<i64>(), 3 * 500_000);
    assert!(p.meta.warnings.is_empty(), "{:?}", p.meta.warnings);

    let split = parse_with(&log, &ParseOptions { split_tiers: true, ..ParseOptions::default() });
    let names: Vec<String> = stacks(&split).into_iter().map(|(s, _)| s[0].clone()).collect();
    assert_eq!(names, vec!["*work", "*work", "~work"]);
    // The tier is a field: the names stay plain, and each tier is a function of its own.
    let mut tiers: Vec<(&str, Option<Tier>)> =
        split.funcs.as_slice().iter().map(|f| (split.strings.get(f.name), f.tier)).collect();
    tiers.sort();
    assert_eq!(
        tiers,
        vec![("", Some(Tier::Interpreted)), ("work", Some(Tier::Interpreted)), ("work", Some(Tier::TurboFan))]
    );
    let anonymous = split.funcs.as_slice().iter().find(|f| f.name == StrId::EMPTY).unwrap();
    assert_eq!(anonymous.display_name(&split.strings), "~(anonymous)");
    assert!(p.funcs.as_slice().iter().all(|f| f.tier.is_none()), "tiers are only kept when asked for");
}

#[test]
fn a_name_that_starts_like_a_tier_marker_is_a_name() {
    // Without split tiers nothing is added to names, and nothing is taken from them.
    let log =
        format!("{HEAD}code-creation,JS,10,1,0x1000,100,*gen file:///a.js:3:10,0x9000,^\ntick,0x1010,10,0,0x0,0\n");
    assert_eq!(stacks(&parse_text(&log)), vec![(vec!["*gen".into()], 1)]);
    let split = parse_with(&log, &ParseOptions { split_tiers: true, ..ParseOptions::default() });
    assert_eq!(stacks(&split), vec![(vec!["^*gen".into()], 1)]);
    assert_eq!(split.funcs.as_slice().iter().map(|f| split.strings.get(f.name)).collect::<Vec<_>>(), ["*gen"]);
}

#[test]
fn code_events_cost_memory_for_the_live_code_only() {
    use std::fmt::Write;
    // 100,000 functions compiled over and over at 64 addresses (as V8 reuses code space),
    // 50,000 more created, moved and deleted; ticks land in two of the 64 that are left.
    let mut log = String::from(HEAD);
    for i in 0..100_000u64 {
        let at = 0x10_0000 + (i % 64) * 0x100;
        writeln!(log, "code-creation,JS,10,{i},{at:#x},256,f{i} file:///m{}.js:1:1,0x9000,~", i % 1000).unwrap();
    }
    for i in 0..50_000u64 {
        let (at, to) = (0x100_0000 + i * 0x100, 0x8000_0000 + i * 0x100);
        writeln!(log, "code-creation,LazyCompile,10,{i},{at:#x},256,g{i} /g.js:2:2,0x9100,*").unwrap();
        writeln!(log, "code-move,{at:#x},{to:#x}\ncode-delete,{to:#x}").unwrap();
    }
    log.push_str("tick,0x100010,1,0,0x0,0\ntick,0x100110,2,0,0x0,0,0x100010\n");
    let p = parse_text(&log);
    assert_eq!(stacks(&p), vec![(vec!["f99968".into()], 1), (vec!["f99969".into(), "f99968".into()], 1)]);
    assert!(p.meta.warnings.is_empty(), "{:?}", p.meta.warnings);
    // Only code that ran was named: "", two names and two files (each a url and its path);
    // two functions and frames.
    let sizes = (p.strings.len(), p.funcs.len(), p.frames.len());
    assert!(sizes.0 <= 7 && sizes.1 <= 2 && sizes.2 <= 2, "strings, funcs, frames: {sizes:?}");
}

#[test]
fn names_with_raw_commas_and_line_breaks_are_recovered() {
    let log = format!(
        "{HEAD}code-creation,JS,10,1,0x1000,100,with,comma /x.js:2:3,0x9000,~\n\
         code-creation,JS,10,1,0x2000,100,line\nbreak /x.js:4:5,0x9100,~\n\
         code-creation,RegExp,3,1,0x3000,50,(\\\\d+)\\x2C\\\\s*\n\
         tick,0x1001,1,0,0x0,0\ntick,0x2001,2,0,0x0,0\ntick,0x3001,3,0,0x0,0\n"
    );
    let p = parse_text(&log);
    let leaves: Vec<String> = stacks(&p).into_iter().map(|(s, _)| s[0].clone()).collect();
    assert_eq!(leaves, vec!["RegExp: (\\d+),\\s*", "line\nbreak", "with,comma"]);
    assert!(p.meta.warnings.is_empty(), "{:?}", p.meta.warnings);
    let func = p.funcs.as_slice().iter().find(|f| p.strings.get(f.name) == "with,comma").unwrap();
    assert_eq!((p.strings.get(func.file), func.line, func.column), ("/x.js", Some(2), Some(3)));
}

#[test]
fn bytecode_handlers_external_callbacks_and_unaccounted() {
    let log = format!(
        "{HEAD}code-creation,BytecodeHandler,0,1,0x100,16,Add\n\
         code-creation,Builtin,2,1,0x200,16,CallApiCallback\n\
         code-creation,JS,10,1,0x1000,100,interp /a.js:1:1,0x9000,~\n\
         tick,0x105,1,0,0x0,0,0x1010\n\
         tick,0x205,2,1,0x1020,6,0x1010\n\
         tick,0x999999,3,0,0x0,0,0x1010,0x888888\n\
         tick,0x105,4,0,0x0,0\n"
    );
    let p = parse_text(&log);
    assert_eq!(
        stacks(&p),
        vec![
            // Frame 0 in nothing: unaccounted; unknown callers are dropped.
            (vec!["(unaccounted)".into(), "interp".into()], 1),
            // Only a handler: kept rather than nothing.
            (vec!["BytecodeHandler:Add".into()], 1),
            // The handler is skipped: interpreted time lands on the function.
            (vec!["interp".into()], 1),
            // External callback: it replaces the pc.
            (vec!["interp".into(), "interp".into()], 1),
        ]
    );
}

#[test]
fn code_moves_deletes_and_reused_stacks() {
    let log = format!(
        "{HEAD}code-creation,JS,13,1,0x1000,16,a /a.js:1:1,0x9000,*\n\
         tick,0x1001,1,0,0x0,0\n\
         code-move,0x1000,0x5000\n\
         tick,0x1001,2,0,0x0,0\ntick,0x5001,3,0,0x0,0\n\
         code-move,0x5000,0x6000\ncode-move,0x7000,0x8000\n\
         tick,0x6001,4,0,0x0,0\n\
         code-delete,0x6000\n\
         tick,0x6001,5,0,0x0,0\n"
    );
    let p = parse_text(&log);
    assert_eq!(stacks(&p), vec![(vec!["(unaccounted)".into()], 2), (vec!["a".into()], 3)]);
    assert!(p.meta.warnings.iter().any(|w| w.contains("1 code-move line(s) name code the log never created")));
}

#[test]
fn damaged_logs_are_read_with_one_warning_each() {
    let clean = format!(
        "{HEAD}code-creation,JS,10,1,0x1000,100,f /a.js:1:1,0x9000,~\n\
         tick,0x1001,1,0,0x0,0\n\ntick,0x1001,2,0,0x0,0\ntick,0xZZ,3\ncode-move,0x1\ntick,0x1001,4,0,0x0"
    );
    let p = parse_text(&clean.replace('\n', "\r\n"));
    assert_eq!(p.samples.values(0).iter().sum::<i64>(), 2);
    let warnings = p.meta.warnings.iter().map(|w| &w.message[..]).collect::<Vec<_>>().join("\n");
    for expected in
        ["no line end", "end in CR LF", "skipped 1 empty line", "skipped 2 malformed line(s); the first, line 7"]
    {
        assert!(warnings.contains(expected), "{expected:?} missing from:\n{warnings}");
    }
    assert_eq!(p.meta.warnings.len(), 4, "{warnings}");
}

#[test]
fn no_interval_and_no_version_are_warned_about() {
    let p = parse_text("tick,0x1,5,0,0x0,0\n");
    assert_eq!(p.meta.interval_ns, Some(1_000_000));
    assert_eq!(p.meta.warnings.len(), 2, "{:?}", p.meta.warnings);
    let err = parse("profiler,end\n".as_bytes(), &Origin("t.log".into()), &ParseOptions::default()).unwrap_err();
    assert!(err.to_string().contains("not a V8 tick log"), "{err}");
}

#[test]
fn garbage_never_panics() {
    // Every prefix of a log with every kind of line, and some byte noise.
    let log = format!(
        "{HEAD}shared-library,/nonexistent/lib.so,0x7000,0x8000,0\nnew,CodeRange,0x10000,0\n\
         code-creation,Builtin,2,1,0x100,16,B\ncode-creation,JS,10,1,0x1000,100,f /a.js:1:1,0x9000,~\n\
         tick,0x7001,1,0,0x0,0,0x1001,+10,-20,overflow\ncode-move,0x1000,0x2000\nsfi-move,0x9000,0x9100\n\
         tick,0x10,2,1,0x7002,6\n"
    );
    for end in 0..log.len() {
        let _ = parse(&log.as_bytes()[..end], &Origin("t.log".into()), &ParseOptions::default());
    }
    let mut noisy = log.into_bytes();
    for i in (0..noisy.len()).step_by(7) {
        noisy[i] = noisy[i].wrapping_mul(31).wrapping_add(i as u8);
        let _ = parse(&noisy[..], &Origin("t.log".into()), &ParseOptions::default());
    }
}

#[test]
fn libraries_without_symbols_are_labelled_and_reported() {
    let log = format!("{HEAD}shared-library,/nonexistent/libx.so,0x7000,0x8000,0\ntick,0x7001,1,0,0x0,0\n");
    let p = parse_text(&log);
    assert_eq!(stacks(&p), vec![(vec!["libx.so".into()], 1)]);
    // The function names its library; the path is the library's, not a file's.
    let func = p.funcs.as_slice()[0];
    assert_eq!((func.kind, func.file), (FuncKind::SharedLib, StrId::EMPTY));
    let library = p.libraries[func.library.unwrap()];
    assert_eq!((p.strings.get(library.path), library.range), ("/nonexistent/libx.so", Some((0x7000, 0x8000))));
    assert_eq!(p.func_file(&func), "/nonexistent/libx.so");
    assert!(
        p.meta.warnings.iter().any(|w| w.starts_with("no symbols for /nonexistent/libx.so")),
        "{:?}",
        p.meta.warnings
    );
}

#[test]
fn a_library_path_with_dot_dot_is_looked_up_inside_the_symbols_folder() {
    // DIR/../outside exists; a log naming /../outside must not reach it through `symbols_root`.
    let top = std::env::temp_dir().join(format!("cpuprof-dotdot-{}", std::process::id()));
    let dir = top.join("sym");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(top.join("outside"), b"not a library").unwrap();
    let log = format!("{HEAD}shared-library,/../outside,0x7000,0x8000,0\ntick,0x7001,1,0,0x0,0\n");
    let options = ParseOptions { symbols_root: Some(dir.clone()), ..ParseOptions::default() };
    let p = parse_with(&log, &options);
    std::fs::remove_dir_all(&top).unwrap();
    assert_eq!(stacks(&p), vec![(vec!["outside".into()], 1)]);
    let expected = format!("no symbols for /../outside: cannot read {}: ", dir.join("outside").display());
    assert!(p.meta.warnings.iter().any(|w| w.starts_with(&expected)), "{:?}", p.meta.warnings);
}

#[test]
fn a_name_split_by_line_breaks_does_not_swallow_the_next_record() {
    let log = format!(
        "{HEAD}code-creation,JS,10,1,0x1000,16,two\nline\nbreaks /a.js:1:1,0x9000,~\n\
         code-creation,JS,10,1,0x2000,16,nosfi /a.js:2:1\n\
         code-creation,JS,10,1,0x3000,16,bar /a.js:3:1,0x9100,~\n\
         code-creation,JS,10,1,0x4000,16,internalBinding node:x:1:2,0xcode-creation,JS,10,1,0x5000,16,y /b.js:1:1,0x9200,~\n\
         tick,0x1001,1,0,0x0,0\ntick,0x2001,2,0,0x0,0\ntick,0x3001,3,0,0x0,0\ntick,0x4001,4,0,0x0,0\n"
    );
    let p = parse_text(&log);
    let leaves: Vec<String> = stacks(&p).into_iter().map(|(s, _)| s[0].clone()).collect();
    // A line two isolates tore into each other names nothing: its tick is unaccounted.
    assert_eq!(leaves, vec!["(unaccounted)", "bar", "nosfi", "two\nline\nbreaks"]);
    assert!(
        p.meta.warnings.iter().any(|w| w.contains("skipped 1 malformed line(s); the first, line 8")),
        "{:?}",
        p.meta.warnings
    );
}

#[test]
fn remapped_builtins_follow_the_builtins_and_the_code_range() {
    // The copy sits at code range + 512 MiB − the blob rounded up to 256 KiB.
    let copy = 0x1000_0000u64 + (512 << 20) - (256 << 10);
    let tick = format!("tick,{:#x},1,0,0x0,0\n", copy + 0x10);
    let log =
        format!("{HEAD}{tick}new,CodeRange,0x10000000,0\n{tick}code-creation,Builtin,2,1,0x100,32,MyBuiltin\n{tick}");
    let p = parse_text(&log);
    assert_eq!(stacks(&p), vec![(vec!["(unaccounted)".into()], 2), (vec!["MyBuiltin".into()], 1)]);
}

#[test]
fn overlong_lines_are_skipped_not_fatal() {
    let source = "x".repeat(3 << 20);
    let log = format!(
        "{HEAD}script-source,1,{source}\ncode-creation,JS,10,1,0x1000,16,f /a.js:1:1,0x9000,~\ntick,0x1001,1,0,0x0,0\n"
    );
    let p = parse_text(&log);
    assert_eq!(stacks(&p), vec![(vec!["f".into()], 1)]);
    assert!(p.meta.warnings.iter().any(|w| w.contains("skipped 1 line(s) longer than")), "{:?}", p.meta.warnings);
}

#[test]
fn a_gzip_stream_cut_short_gives_what_came_before() {
    use std::io::Write;
    let mut ticks = String::new();
    for i in 0..2000 {
        ticks.push_str(&format!("tick,0x1001,{i},0,0x0,0\n"));
    }
    let log = format!("{HEAD}code-creation,JS,10,1,0x1000,16,f /a.js:1:1,0x9000,~\n{ticks}");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(log.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let p = crate::parse(&gz[..gz.len() / 2], &Origin("t.log.gz".into()), &ParseOptions::default()).unwrap();
    let ticks = p.samples.values(0).iter().sum::<i64>();
    assert!(ticks > 0 && ticks < 2000, "{ticks}");
    assert!(p.meta.warnings.iter().any(|w| w.contains("the input is damaged after")), "{:?}", p.meta.warnings);
}

/// Hand-made from node 8's log format (V8 6.0): strings quoted, a zero-size macOS library,
/// ticks without a pc in state 3 (OTHER in V8 6.0's numbering) and a pc in no code.
#[test]
fn node8_quoted_log() {
    let log = "v8-version,6,0,287,53,0\n\
        shared-library,\"/usr/local/bin/node\",0x100000,0x200000,0\n\
        shared-library,\"/usr/lib/empty, with comma.dylib\",0x300000,0x300000,0\n\
        profiler,\"begin\",250\n\
        code-creation,LazyCompile,5,14007,0x1000,166,\" :1:1\",0x45,\n\
        code-creation,LazyCompile,5,14007,0x2000,100,\"d /Users/a b/simple.js:20:11\",0x46,*\n\
        code-creation,Stub,2,4000,0x3000,50,\"CEntryStub\"\n\
        tick,0x2010,10,0,0x0,0,0x1010\n\
        tick,0x2020,11,0,0x0,0,0x1010\n\
        tick,0x0,12,0,0x0,3\n\
        tick,0x0,13,0,0x0,1\n\
        tick,0x150000,14,0,0x0,4,0x2010,0x1010\n\
        tick,0x9000,15,0,0x0,0\n";
    let p = parse_text(log);
    assert_eq!(
        stacks(&p),
        vec![
            (vec!["(GC)".into()], 1),
            (vec!["(OTHER)".into()], 1),
            (vec!["(unaccounted)".into()], 1),
            (vec!["d".into(), String::new()], 2),
            (vec!["node".into(), "d".into(), String::new()], 1),
        ]
    );
    let d = p.funcs.as_slice().iter().find(|f| p.strings.get(f.name) == "d").unwrap();
    assert_eq!((p.strings.get(d.file), d.line, d.column), ("/Users/a b/simple.js", Some(20), Some(11)));
    let kinds: Vec<(&str, FuncKind)> = p
        .funcs
        .as_slice()
        .iter()
        .map(|f| (p.strings.get(f.name), f.kind))
        .filter(|(n, _)| n.starts_with('('))
        .collect();
    assert!(kinds.contains(&("(OTHER)", FuncKind::Program)) && kinds.contains(&("(GC)", FuncKind::Gc)), "{kinds:?}");
    // 4 is EXTERNAL in V8 6.0, COMPILER in V8 11.
    assert!(p.samples.vm_states().unwrap().contains(&VmState::External));
    assert_eq!(p.meta.interval_ns, Some(250_000));
    // Only the missing symbols of the library the log names are worth a warning.
    assert!(
        p.meta.warnings.iter().all(|w| w.starts_with("no symbols for /usr/local/bin/node")),
        "{:?}",
        p.meta.warnings
    );
    assert!(p.libraries.as_slice().iter().all(|l| p.strings.get(l.path) == "/usr/local/bin/node"));
}

/// The pre-2013 forms, as V8's own tick processor test log writes them: code-creation without
/// a time, ticks with the stack pointer in place of the time and a bare `0` as tos.
#[test]
fn pre_2013_log() {
    let log = "shared-library,\"shell\",0x08048000,0x081ee000\n\
        profiler,\"begin\",1\n\
        code-creation,Script,0,0xf541cd80,736,\"exp.js\"\n\
        code-creation,LazyCompile,0,0xf541d120,145,\"exp native math.js:41\"\n\
        function-creation,0xf441d280,0xf541d120\n\
        code-creation,LoadIC,0,0xf541d280,117,\"j\"\n\
        tick,0x80f82d1,0xffdfe880,0,0,0,0xf541ce5c\n\
        tick,0xf541d2be,0xffdff1e4,0,0,0\n\
        tick,0xf7edec90,0xffdff0ec,0,0,0,0xf541d1a1,0xf541ceea\n\
        profiler,\"end\"\n";
    let p = parse_text(log);
    assert_eq!(
        stacks(&p),
        vec![
            // `fn script:line`, without a column then.
            (vec!["(unaccounted)".into(), "exp native".into(), "exp.js".into()], 1),
            (vec!["LoadIC: j".into()], 1),
            (vec!["shell".into(), "exp.js".into()], 1),
        ]
    );
    // The interval was in milliseconds then; the ticks are placed 1 ms apart.
    assert_eq!(p.meta.interval_ns, Some(1_000_000));
    assert_eq!(p.meta.duration_ns, Some(3_000_000));
    assert_eq!(p.meta.warnings.len(), 1, "{:?}", p.meta.warnings);
    assert!(p.meta.warnings[0].contains("3 tick(s) have no time"), "{:?}", p.meta.warnings);
}

/// Hand-made from the layout of `node --prof-process --preprocess` (V8's `JsonProfile`):
/// `s` is leaf-first `code index, offset` pairs, `-1, address` for no code.
#[test]
fn preprocess_json() {
    let json = r#"{
      "code": [
        {"name": "/usr/bin/node", "type": "SHARED_LIB"},
        {"name": "T start", "type": "CPP"},
        {"name": "Wide", "timestamp": 1, "type": "CODE", "kind": "BytecodeHandler"},
        {"name": "work /a.js:3:10", "type": "JS", "kind": "Opt", "func": 0, "tm": 5},
        {"name": " /a.js:1:1", "type": "JS", "kind": "Unopt", "func": 1, "tm": 4,
         "source": {"script": 1, "start": 0, "end": 9, "positions": "", "inlined": "", "fns": []}},
        {"name": "An IC handler", "timestamp": 2, "type": "CODE", "kind": "Handler"}
      ],
      "functions": [{"name": "work /a.js:3:10", "codes": [3]}, {"name": " /a.js:1:1", "codes": [4]}],
      "ticks": [
        {"tm": 1000, "vm": 0, "s": [3, 16, 4, 8]},
        {"tm": 2000, "vm": 0, "s": [2, 4, 3, 16, 4, 8]},
        {"tm": 3000, "vm": 6, "s": [1, 99, -1, 4096, 4, 8]},
        {"tm": 4000, "vm": 5, "s": [-1, 0]},
        {"tm": 5000, "vm": 1, "s": [-1, 77, 4, 8]},
        {"tm": 6000, "vm": 0, "s": [5, 1]},
        {"tm": 6500, "vm": 0, "s": [0, 1]}
      ],
      "scripts": []
    }"#;
    let origin = Origin("x.json".into());
    let forced = ParseOptions { format: Some(SourceFormat::PreprocessJson), ..ParseOptions::default() };
    let p = crate::parse(json.as_bytes(), &origin, &forced).unwrap();
    assert_eq!(p.meta.format, SourceFormat::PreprocessJson);
    assert_eq!(
        stacks(&p),
        vec![
            (vec!["(OTHER)".into()], 1),
            (vec!["(unaccounted)".into(), String::new()], 1),
            (vec!["Handler: An IC handler".into()], 1),
            (vec!["node".into()], 1),
            (vec!["start".into(), String::new()], 1),
            // The bytecode handler is passed over: its tick is the function's.
            (vec!["work".into(), String::new()], 1),
            (vec!["work".into(), String::new()], 1),
        ]
    );
    assert_eq!(p.meta.duration_ns, Some(5_500_000 + 1_000_000));
    assert!(p.meta.warnings.iter().any(|w| w.contains("1 caller frame(s) were in no code")), "{:?}", p.meta.warnings);
    assert_eq!(crate::sniff(json.as_bytes()), Some(SourceFormat::PreprocessJson));

    for (bad, expected) in [
        (r#"{"code": [], "ticks": [{"tm": 1, "vm": 0, "s": [0, 1]}]}"#, "code index 0 is not in `code`"),
        (r#"{"code": [], "ticks": [{"tm": 1, "vm": 0, "s": [0]}]}"#, "not code/offset pairs"),
        (r#"{"code": [{"type": "JS"}], "ticks": []}"#, "missing field `name`"),
        (r#"{"ticks": [], "code": []}"#, "`ticks` comes before `code`"),
        (r#"{"code": []}"#, "missing `ticks`"),
    ] {
        let e = crate::parse(bad.as_bytes(), &origin, &forced).unwrap_err();
        assert!(e.to_string().contains(expected), "{bad}: {e}");
        assert!(e.to_string().starts_with("x.json"), "{e}");
    }
}

/// The caches (callers by frames, leaves by code object, rows by what decides them) give what
/// a plain replay gives: every address looked up in the code map as it is at that tick. The
/// replay here is written from the format's rules alone (a list of code objects; new code and
/// moves replace what they overlap), over a log where code is created over other code, moved
/// (also onto other code), deleted and sampled again and again, far more changes than the
/// decoder remembers, with pcs moving inside functions and return addresses that repeat.
#[test]
fn cached_stacks_match_a_plain_replay_of_the_code_map() {
    use std::fmt::Write;
    let mut random = crate::xorshift(0x2545_f491_4f6c_dd1d);
    let mut next = move |n: u64| random() % n;
    // (start, size, name, is JavaScript) of the live code, as the plain replay sees it.
    let mut live: Vec<(u64, u64, String, bool)> = Vec::new();
    let place = |live: &mut Vec<(u64, u64, String, bool)>, start: u64, size: u64, name: String, js: bool| {
        live.retain(|(s, z, _, _)| s + z <= start || start + size <= *s);
        live.push((start, size, name, js));
    };
    let find =
        |live: &[(u64, u64, String, bool)], a: u64| live.iter().find(|(s, z, _, _)| *s <= a && a < s + z).cloned();
    let space = |next: &mut dyn FnMut(u64) -> u64| 0x1000 + next(64) * 0x40 + next(0x40);
    // Call sites that repeat: fixed frame sequences.
    let sequences: Vec<Vec<u64>> =
        (0..24).map(|i| (0..(i % 6)).map(|_| 0x1000 + next(64) * 0x40 + next(0x40)).collect()).collect();
    let mut log = String::from(HEAD);
    let mut expected = std::collections::BTreeMap::<Vec<String>, i64>::new();
    let mut created = 0;
    for time in 0..20_000u64 {
        match next(100) {
            0..=3 => {
                let (start, size) = (0x1000 + next(64) * 0x40, 0x20 + next(4) * 0x20);
                created += 1;
                let js = next(4) > 0;
                if js {
                    writeln!(log, "code-creation,JS,13,{time},{start:#x},{size},f{created} /a.js:1:1,0x9000,*")
                        .unwrap();
                    place(&mut live, start, size, format!("f{created}"), true);
                } else {
                    writeln!(log, "code-creation,RegExp,3,{time},{start:#x},{size},r{created}").unwrap();
                    place(&mut live, start, size, format!("RegExp: r{created}"), false);
                }
            }
            4..=5 if !live.is_empty() => {
                let (start, size, name, js) = live.remove(next(live.len() as u64) as usize);
                let to = 0x1000 + next(64) * 0x40;
                writeln!(log, "code-move,{start:#x},{to:#x}").unwrap();
                place(&mut live, to, size, name, js);
            }
            6 if !live.is_empty() => {
                let (start, ..) = live.remove(next(live.len() as u64) as usize);
                writeln!(log, "code-delete,{start:#x}").unwrap();
            }
            _ => {
                let pc = space(&mut next);
                let tos = if next(3) == 0 { 0 } else { space(&mut next) };
                let frames = &sequences[next(sequences.len() as u64) as usize];
                let state = [0, 1, 6][next(3) as usize];
                write!(log, "tick,{pc:#x},{time},0,{tos:#x},{state}").unwrap();
                for f in frames {
                    write!(log, ",{f:#x}").unwrap();
                }
                log.push('\n');
                let mut names = vec![find(&live, pc).map_or("(unaccounted)".to_owned(), |c| c.2)];
                names.extend(find(&live, tos).filter(|c| c.3).map(|c| c.2));
                names.extend(frames.iter().filter_map(|f| find(&live, *f)).map(|c| c.2));
                *expected.entry(names).or_default() += 1;
            }
        }
    }
    let mut got = std::collections::BTreeMap::<Vec<String>, i64>::new();
    for (names, ticks) in stacks(&parse_text(&log)) {
        *got.entry(names).or_default() += ticks;
    }
    assert!(expected.len() > 1000, "{} distinct stacks: too few to test the caches", expected.len());
    assert_eq!(got, expected);
}

/// What the reader remembers of a leaf (an address range that resolves one way) never
/// reaches past what the code map says there: code inside a library mapping, another mapping
/// of the binary read through the builtins, empty code taking another's place. Each log's
/// ticks are named as a plain lookup at that tick names them.
#[test]
fn remembered_leaves_and_stacks_follow_every_kind_of_code() {
    let names = |log: &str| -> Vec<(Vec<String>, i64)> { stacks(&parse_text(&format!("{HEAD}{log}"))) };
    let two_mappings = "shared-library,/nonexistent/n,0x10000,0x20000,0\n\
                        shared-library,/nonexistent/n,0x40000,0x50000,0\n\
                        code-creation,Builtin,2,1,0x10000,256,B\n";
    // JS code inside the second mapping, over addresses that read the builtin B through it.
    let log = format!(
        "{two_mappings}code-creation,JS,13,2,0x40080,32,j /a.js:1:1,0x9000,*\n\
         tick,0x40010,3,0,0x0,0\ntick,0x40090,4,0,0x0,0\n"
    );
    assert_eq!(names(&log), vec![(vec!["B".into()], 1), (vec!["j".into()], 1)]);
    // A frame read through the second mapping, then the builtin it read deleted.
    let log = format!("{two_mappings}tick,0x1,3,0,0x0,0,0x40010\ncode-delete,0x10000\ntick,0x1,4,0,0x0,0,0x40010\n");
    assert_eq!(
        names(&log),
        vec![(vec!["(unaccounted)".into(), "B".into()], 1), (vec!["(unaccounted)".into(), "n".into()], 1)]
    );
    // Empty code created where code starts: that code is gone, as leaf and as frame.
    let log = "code-creation,JS,13,1,0x1000,256,a /a.js:1:1,0x9000,*\n\
               tick,0x1010,2,0,0x0,0\ntick,0x1,2,0,0x0,0,0x1010\n\
               code-creation,JS,13,3,0x1000,0,z /a.js:2:1,0x9100,*\n\
               tick,0x1020,4,0,0x0,0\ntick,0x1,4,0,0x0,0,0x1010\n";
    assert_eq!(
        names(log),
        // A frame no code covers is left out of the stack.
        vec![(vec!["(unaccounted)".into()], 2), (vec!["(unaccounted)".into(), "a".into()], 1), (vec!["a".into()], 1)]
    );
    // Builtins as large as the address space: no overflow where their copy would be.
    let log = "new,CodeRange,0x1000,0\ncode-creation,Builtin,2,1,0x0,18446744073709551615,X\n\
               code-creation,JS,13,2,0x2000,16,f /a.js:1:1,0x9000,*\ntick,0x2001,3,0,0x0,0\n";
    assert_eq!(names(log), vec![(vec!["f".into()], 1)]);
}
