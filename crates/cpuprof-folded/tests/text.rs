//! The folded text format at the crate's boundary: escaping keeps a label one frame on one
//! line, reading undoes it exactly, and lines are joined, counted and ordered as `collapse`
//! writes them. Expected values are worked by hand from the rules in the crate docs.

use cpuprof_folded::{escape_frame, join_stack, push_line, push_stack, split_stack, unescape_frame, write_sorted};

#[test]
fn labels_cannot_split_frames_or_lines() {
    assert_eq!(escape_frame("a;b\nc\rd"), "a\u{ff1b}b\\nc\\rd");
    assert_eq!(escape_frame("plain name"), "plain name");
    assert_eq!(escape_frame(r"C:\temp\new\\x\u{1b}\"), r"C:\temp\\new\\\x\\u{1b}\");
    assert_eq!(escape_frame("a\\\n|b\\\u{1b}"), r"a\\\n|b\\\u{1b}");
    assert_eq!(escape_frame("\u{1b}[31m\ttab\u{202e}"), "\\u{1b}[31m\\u{9}tab\\u{202e}");
    assert_eq!(escape_frame("RegExp: ^(a+)+ 200"), "RegExp: ^(a+)+\u{a0}200");
    assert_eq!(escape_frame("v 1.2 x"), "v 1.2 x");
    assert_eq!(escape_frame("ends with space "), "ends with space ");
}

#[test]
fn reading_undoes_escaping() {
    let hostile = [
        "semi;colon",
        "new\nline\r",
        "RegExp: ^(a+)+ 200",
        "back\\slash",
        r"C:\temp\new\\x\u{1b}\",
        "\u{1b}[31m\u{202e}\t",
        "looks escaped \\u{41} \\n",
        "",
        "；already full-width",
    ];
    for label in hostile {
        let written = escape_frame(label);
        assert!(!written.contains([';', '\n', '\r']), "{written:?}");
        if label.contains('；') {
            // U+FF1B is how `;` is written, so a label that has one reads back as `;`.
            assert_eq!(unescape_frame(&written), label.replace('；', ";"));
        } else {
            assert_eq!(unescape_frame(&written), label, "{written:?}");
        }
    }
    // Text that only looks like an escape of a character `escape_frame` would not escape stays.
    assert_eq!(unescape_frame(r"\u{41}\u{+1b}\u{1b"), r"\u{41}\u{+1b}\u{1b");
    // A no-break space reads as a space only before a trailing number.
    assert_eq!(unescape_frame("a\u{a0}b 1"), "a\u{a0}b 1");
}

#[test]
fn stacks_join_and_split_on_the_separator() {
    let frames = ["(root)", "main /a.js:1", "x\u{ff1b}y"];
    let stack = join_stack(frames);
    assert_eq!(stack, "(root);main /a.js:1;x\u{ff1b}y");
    assert_eq!(split_stack(&stack).collect::<Vec<_>>(), frames);
    assert_eq!(join_stack(Vec::<String>::new()), "");
    let mut out = String::from("(only in base);");
    push_stack(&mut out, ["a", "b"]);
    assert_eq!(out, "(only in base);a;b");
}

#[test]
fn lines_carry_one_or_two_counts() {
    let mut line = String::new();
    push_line(&mut line, "a;b", [42]);
    assert_eq!(line, "a;b 42");
    line.clear();
    push_line(&mut line, "a;b", [3.0f64, 7.0]);
    assert_eq!(line, "a;b 3 7");
}

#[test]
fn written_lines_are_sorted_by_the_stack_not_the_line() {
    // By line, "f 1x;g 3" (digit '1') would come before "f 5" (digit '5'); by stack, "f" is a
    // prefix of "f 1x;g" and comes first. `;` (0x3B) sorts after ' ' (0x20).
    let stacks = vec![("f 1x;g".to_owned(), 3), ("f;a".to_owned(), 2), ("f".to_owned(), 5), ("e".to_owned(), 1)];
    assert_eq!(write_sorted(stacks), "e 1\nf 5\nf 1x;g 3\nf;a 2\n");
    assert_eq!(write_sorted(Vec::new()), "");
}
