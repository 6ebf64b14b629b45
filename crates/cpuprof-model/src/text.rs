//! Which characters of a name no output may show raw. Function names and urls come from
//! other people's code; these characters would run terminal commands, break lines, reorder
//! what a reader sees (bidi controls, as in "Trojan Source") or hide text.

/// True for C0/C1 controls and DEL; the bidi marks, embeddings, overrides and isolates; the
/// line and paragraph separators; invisible characters (soft hyphen, zero-width space, word
/// joiner and invisible operators, BOM, tag characters); and the noncharacters U+FFFE/U+FFFF
/// (which no XML document may hold). Zero-width joiners stay: emoji are built with them.
pub fn is_unsafe_to_show(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{ad}'
                | '\u{061c}'
                | '\u{180e}'
                | '\u{200b}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
                | '\u{fffe}'
                | '\u{ffff}'
                | '\u{e0000}'..='\u{e007f}'
        )
}

/// `c` as a visible escape, `\u{1b}`: what every text output writes for such characters.
pub fn escaped(c: char) -> String {
    format!("\\u{{{:x}}}", u32::from(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_characters() {
        for c in ['\0', '\n', '\u{1b}', '\u{7f}', '\u{85}', '\u{202e}', '\u{2066}', '\u{2028}', '\u{feff}', '\u{ffff}']
        {
            assert!(is_unsafe_to_show(c), "{c:?}");
        }
        for c in ['a', ' ', 'é', '名', '🔥', '\u{ff1b}', '\u{a0}', '\u{200d}'] {
            assert!(!is_unsafe_to_show(c), "{c:?}");
        }
        assert_eq!(escaped('\u{1b}'), "\\u{1b}");
    }
}
