//! The mapper on the fixture bundle (fixtures/sourcemap/dist/app.min.js) through the library:
//! index maps, and thousands of damaged maps and scripts, none of which may panic.

use std::path::{Path, PathBuf};

use cpuprof_model::{Frame, Func, FuncKind, Profile, ProfileBuilder, SourceFormat, ValueType};
use cpuprof_sourcemap::SourceMaps;

fn dist() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/sourcemap/dist")
}

/// A profile of `script` with the frames of fixtures/sourcemap/README.md's table, each sampled once:
/// (V8 name, 1-based line, 1-based column).
fn profile(script: &Path) -> Profile {
    let frames = [("computeInvoiceTotal", 1, 1547), ("A", 1, 1967), ("v", 1, 1310), ("n", 1, 604), ("w", 1, 2656)];
    let mut b = ProfileBuilder::new(SourceFormat::CpuProfile, vec![ValueType::SAMPLES]);
    let file = b.intern(&format!("file://{}", script.display()));
    let mut parent = None;
    for (name, line, column) in frames {
        let name = b.intern(name);
        let func = b.func(Func {
            name,
            file,
            line: Some(line),
            column: Some(column),
            kind: FuncKind::Js,
            tier: None,
            library: None,
        });
        let frame = b.frame(Frame { func, line: None, column: None });
        let stack = b.stack(parent, frame);
        b.sample(stack, None, &[1]);
        b.line_hit(stack, 1, 1);
        parent = Some(stack);
    }
    b.finish().unwrap()
}

fn names(profile: &Profile) -> Vec<(String, String, Option<u32>)> {
    let strings = &profile.strings;
    let mut out: Vec<_> = profile
        .funcs
        .as_slice()
        .iter()
        .map(|f| (strings.get(f.name).to_owned(), strings.get(f.file).rsplit('/').next().unwrap().to_owned(), f.line))
        .collect();
    out.sort();
    out
}

#[test]
fn index_maps_are_flattened() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("app.min.js");
    std::fs::copy(dist().join("app.min.js"), &script).unwrap();
    let map = std::fs::read_to_string(dist().join("app.min.js.map")).unwrap();
    let index = format!(r#"{{"version":3,"sections":[{{"offset":{{"line":0,"column":0}},"map":{map}}}]}}"#);
    std::fs::write(dir.path().join("app.min.js.map"), index).unwrap();
    let mapped = SourceMaps::new(None).apply(&profile(&script), None).unwrap();
    assert_eq!(mapped.report.mapped, 5, "{:?}", mapped.report);
    let expected = [
        ("computeInvoiceTotal", "pricing.ts", 23),
        ("equal", "index.js", 7),
        ("fnv1aHash", "hash.ts", 8),
        ("main", "main.ts", 37),
        ("slugifyTitle", "text.ts", 7),
    ];
    let expected: Vec<_> = expected.iter().map(|(n, f, l)| ((*n).to_owned(), (*f).to_owned(), Some(*l))).collect();
    assert_eq!(names(&mapped.profile), expected);
}

/// A deterministic generator (no dependency for a test's dice).
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n.max(1) as u64) as usize
    }
}

fn damaged(original: &[u8], dice: &mut Dice) -> Vec<u8> {
    const PIECES: [&[u8]; 10] = [
        b"gggggggggggggggggggggggggggg",
        b"9999999999999999999",
        b"-1",
        b"\"sections\":[",
        b"\xff\xfe",
        b"//# sourceMappingURL=/dev/zero\n",
        b"\"names\":[],",
        b"\n\n\n",
        b"\\u0000",
        b";;;;,,,,",
    ];
    let mut bytes = original.to_vec();
    for _ in 0..=dice.below(4) {
        let at = dice.below(bytes.len() + 1);
        match dice.below(5) {
            0 => bytes.truncate(at),
            1 if at < bytes.len() => bytes[at] ^= 1 << dice.below(8),
            2 => {
                let piece = PIECES[dice.below(PIECES.len())];
                bytes.splice(at..at, piece.iter().copied());
            }
            3 if at < bytes.len() => {
                let end = (at + dice.below(64)).min(bytes.len());
                bytes.drain(at..end);
            }
            _ => {
                let end = (at + dice.below(32)).min(bytes.len());
                let copy = bytes[at..end].to_vec();
                bytes.splice(at..at, copy);
            }
        }
    }
    bytes
}

#[test]
fn damaged_maps_and_scripts_never_panic() {
    let map = std::fs::read(dist().join("app.min.js.map")).unwrap();
    let script_text = std::fs::read(dist().join("app.min.js")).unwrap();
    let inline = std::fs::read(dist().join("app.inline.min.js")).unwrap();
    let mut dice = Dice(8);
    let dir = tempfile::tempdir().unwrap();
    let mut mapped_some = 0;
    for case in 0..1500 {
        let script = dir.path().join(format!("app{case}.min.js"));
        let (code, map) = match case % 3 {
            0 => (script_text.clone(), Some(damaged(&map, &mut dice))),
            1 => (damaged(&script_text, &mut dice), Some(map.clone())),
            _ => (damaged(&inline, &mut dice), None),
        };
        // The damaged script names its map in its own comment; give it the name it expects.
        let code = String::from_utf8_lossy(&code).replace("app.min.js.map", &format!("app{case}.min.js.map"));
        std::fs::write(&script, code).unwrap();
        if let Some(map) = map {
            std::fs::write(dir.path().join(format!("app{case}.min.js.map")), map).unwrap();
        }
        let mapped = SourceMaps::new(None).apply(&profile(&script), None).unwrap();
        assert_eq!(mapped.profile.samples.len(), 5, "case {case}: samples lost");
        mapped_some += usize::from(mapped.report.mapped > 0);
        let _ = std::fs::remove_file(&script);
        let _ = std::fs::remove_file(dir.path().join(format!("app{case}.min.js.map")));
    }
    // Most damage leaves a usable map: the cases did reach the mapping.
    assert!(mapped_some > 300, "only {mapped_some} cases mapped anything");
}
