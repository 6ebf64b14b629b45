use super::*;

fn parse_text(text: &str) -> Profile {
    parse(text.as_bytes(), &Origin("t.log".into()), &ParseOptions::default()).unwrap()
}

#[test]
fn placeholder() {
    let p = parse_text("v8-version,11,3,244,8,-node.38,0\nprofiler,begin,1000\ntick,0x1,5,0,0x0,0\n");
    assert_eq!(p.samples.len(), 1);
}
