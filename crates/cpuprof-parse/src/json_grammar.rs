//! JSON's grammar as a table: for each state and byte, the next state, or an action for the
//! few transitions a table cannot make (opening and closing containers, which need the stack;
//! jumping over string bodies; the end of a value; a line break; an error). One lookup per
//! byte keeps checking skipped values about as fast as skipping them unchecked.
//!
//! The table accepts exactly RFC 8259's grammar, but for what [`crate::json_scan`] leaves out
//! for speed: the bytes of a string it jumps over are not checked to be UTF-8 (names are read
//! lossily anyway) nor to be free of control characters other than the line break (they do
//! not change the structure; a value parsed afterwards is checked by serde_json), and nesting
//! is bounded by its stack.

/// A value must start here.
pub(crate) const VALUE: u8 = 0;
/// Just after `[`: a value or `]`.
pub(crate) const FIRST_ITEM: u8 = 1;
/// Just after `{`: a key or `}`.
pub(crate) const FIRST_KEY: u8 = 2;
/// After `,` in an object: a key.
const KEY: u8 = 3;
/// After a key: `:`.
const COLON: u8 = 4;
/// After a value in an object: `,` or `}`.
pub(crate) const NEXT_IN_OBJECT: u8 = 5;
/// After a value in an array: `,` or `]`.
pub(crate) const NEXT_IN_ARRAY: u8 = 6;
/// Inside a string value.
pub(crate) const STRING: u8 = 7;
/// Inside an object key.
pub(crate) const KEY_STRING: u8 = 8;
/// After a backslash in a string value / in a key.
const ESCAPE: u8 = 9;
const KEY_ESCAPE: u8 = 10;
/// Inside `\uXXXX` of a string value: 11 to 14 for 4 to 1 hex digits to go; 15 to 18 in a key.
const HEX: u8 = 11;
const KEY_HEX: u8 = 15;
/// Inside a number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
const MINUS: u8 = 19;
const ZERO: u8 = 20;
const INT: u8 = 21;
const POINT: u8 = 22;
const FRACTION: u8 = 23;
const EXPONENT: u8 = 24;
const EXPONENT_SIGN: u8 = 25;
const EXPONENT_DIGITS: u8 = 26;
/// Inside `true` (27, 28, 29: expecting `r`, `u`, `e`), `false` (30 to 33) and `null` (34 to 36).
const TRUE: u8 = 27;
const FALSE: u8 = 30;
const NULL: u8 = 34;
const STATES: usize = 37;

/// Table entries from here on are actions.
pub(crate) const ACTIONS: u8 = 64;
/// Not allowed here.
pub(crate) const ERROR: u8 = 64;
/// A line break between tokens.
pub(crate) const NEWLINE: u8 = 65;
/// `{` / `[` opening a value.
pub(crate) const OPEN_OBJECT: u8 = 66;
pub(crate) const OPEN_ARRAY: u8 = 67;
/// The `}` or `]` that closes the open container (the state has checked which).
pub(crate) const CLOSE: u8 = 68;
/// The opening quote of a string value / key, or the end of an escape inside one: the body
/// follows.
pub(crate) const STRING_BODY: u8 = 69;
pub(crate) const KEY_BODY: u8 = 70;
/// The last byte of a string value or literal.
pub(crate) const END_VALUE: u8 = 71;
/// The byte after a number (not part of it).
pub(crate) const END_NUMBER: u8 = 72;
/// A control character inside a string.
pub(crate) const CONTROL: u8 = 73;

/// `TABLE[state][byte]`: the next state, or an action.
pub(crate) static TABLE: [[u8; 256]; STATES] = build();

const fn build() -> [[u8; 256]; STATES] {
    let mut t = [[ERROR; 256]; STATES];
    // Whitespace between tokens.
    let between = [VALUE, FIRST_ITEM, FIRST_KEY, KEY, COLON, NEXT_IN_OBJECT, NEXT_IN_ARRAY];
    let mut k = 0;
    while k < between.len() {
        let s = between[k] as usize;
        t[s][b' ' as usize] = between[k];
        t[s][b'\t' as usize] = between[k];
        t[s][b'\r' as usize] = between[k];
        t[s][b'\n' as usize] = NEWLINE;
        k += 1;
    }
    // What starts a value.
    let mut k = 0;
    while k < 2 {
        let s = [VALUE, FIRST_ITEM][k] as usize;
        t[s][b'"' as usize] = STRING_BODY;
        t[s][b'{' as usize] = OPEN_OBJECT;
        t[s][b'[' as usize] = OPEN_ARRAY;
        t[s][b'-' as usize] = MINUS;
        t[s][b'0' as usize] = ZERO;
        t = digits(t, s, b'1', INT);
        t[s][b't' as usize] = TRUE;
        t[s][b'f' as usize] = FALSE;
        t[s][b'n' as usize] = NULL;
        k += 1;
    }
    t[FIRST_ITEM as usize][b']' as usize] = CLOSE;
    t[FIRST_KEY as usize][b'"' as usize] = KEY_BODY;
    t[FIRST_KEY as usize][b'}' as usize] = CLOSE;
    t[KEY as usize][b'"' as usize] = KEY_BODY;
    t[COLON as usize][b':' as usize] = VALUE;
    t[NEXT_IN_OBJECT as usize][b',' as usize] = KEY;
    t[NEXT_IN_OBJECT as usize][b'}' as usize] = CLOSE;
    t[NEXT_IN_ARRAY as usize][b',' as usize] = VALUE;
    t[NEXT_IN_ARRAY as usize][b']' as usize] = CLOSE;
    // Strings (their bodies are mostly jumped over; this covers what the jump leaves).
    let mut b = 0;
    while b < 256 {
        let (string, key) = if b < 0x20 { (CONTROL, CONTROL) } else { (STRING, KEY_STRING) };
        t[STRING as usize][b] = string;
        t[KEY_STRING as usize][b] = key;
        b += 1;
    }
    t[STRING as usize][b'"' as usize] = END_VALUE;
    t[KEY_STRING as usize][b'"' as usize] = COLON;
    t[STRING as usize][b'\\' as usize] = ESCAPE;
    t[KEY_STRING as usize][b'\\' as usize] = KEY_ESCAPE;
    let escapes = *b"\"\\/bfnrt";
    let mut k = 0;
    while k < escapes.len() {
        t[ESCAPE as usize][escapes[k] as usize] = STRING_BODY;
        t[KEY_ESCAPE as usize][escapes[k] as usize] = KEY_BODY;
        k += 1;
    }
    t[ESCAPE as usize][b'u' as usize] = HEX;
    t[KEY_ESCAPE as usize][b'u' as usize] = KEY_HEX;
    let mut left = 0;
    while left < 4 {
        let (value, key) = if left == 3 { (STRING_BODY, KEY_BODY) } else { (HEX + left + 1, KEY_HEX + left + 1) };
        let hex = *b"0123456789abcdefABCDEF";
        let mut k = 0;
        while k < hex.len() {
            t[(HEX + left) as usize][hex[k] as usize] = value;
            t[(KEY_HEX + left) as usize][hex[k] as usize] = key;
            k += 1;
        }
        left += 1;
    }
    // Numbers: where one may end, any other byte ends it (and is read again after it).
    let mut b = 0;
    while b < 256 {
        t[ZERO as usize][b] = END_NUMBER;
        t[INT as usize][b] = END_NUMBER;
        t[FRACTION as usize][b] = END_NUMBER;
        t[EXPONENT_DIGITS as usize][b] = END_NUMBER;
        b += 1;
    }
    t[MINUS as usize][b'0' as usize] = ZERO;
    t = digits(t, MINUS as usize, b'1', INT);
    t = digits(t, INT as usize, b'0', INT);
    t = digits(t, POINT as usize, b'0', FRACTION);
    t = digits(t, FRACTION as usize, b'0', FRACTION);
    t = digits(t, EXPONENT as usize, b'0', EXPONENT_DIGITS);
    t = digits(t, EXPONENT_SIGN as usize, b'0', EXPONENT_DIGITS);
    t = digits(t, EXPONENT_DIGITS as usize, b'0', EXPONENT_DIGITS);
    let mut k = 0;
    while k < 3 {
        let s = [ZERO, INT, FRACTION][k] as usize;
        if k < 2 {
            t[s][b'.' as usize] = POINT;
        }
        t[s][b'e' as usize] = EXPONENT;
        t[s][b'E' as usize] = EXPONENT;
        k += 1;
    }
    t[EXPONENT as usize][b'+' as usize] = EXPONENT_SIGN;
    t[EXPONENT as usize][b'-' as usize] = EXPONENT_SIGN;
    // Literals.
    let letters = [(TRUE, *b"rue_"), (FALSE, *b"alse"), (NULL, *b"ull_")];
    let mut k = 0;
    while k < 3 {
        let (first, rest) = letters[k];
        let len = if rest[3] == b'_' { 3 } else { 4 };
        let mut j = 0;
        while j < len {
            t[(first as usize) + j][rest[j] as usize] = if j + 1 == len { END_VALUE } else { first + j as u8 + 1 };
            j += 1;
        }
        k += 1;
    }
    t
}

/// `t[state][d] = next` for the digits `d` from `from` to `9`.
const fn digits(mut t: [[u8; 256]; STATES], state: usize, from: u8, next: u8) -> [[u8; 256]; STATES] {
    let mut d = from;
    while d <= b'9' {
        t[state][d as usize] = next;
        d += 1;
    }
    t
}

/// What the grammar expected in `state`, for an error.
pub(crate) fn expected(state: u8) -> &'static str {
    match state {
        VALUE | FIRST_ITEM => "a value",
        FIRST_KEY => "a key or `}`",
        KEY => "a key",
        COLON => "`:`",
        NEXT_IN_OBJECT => "`,` or `}`",
        NEXT_IN_ARRAY => "`,` or `]`",
        ESCAPE | KEY_ESCAPE => "an escape (`\\n`, `\\u…`, …)",
        HEX..=18 => "a hex digit",
        MINUS..=EXPONENT_DIGITS => "a digit",
        _ => "`true`, `false` or `null`",
    }
}

/// Whether a value may end in `state` at the end of the input (a number, which only the next
/// byte would end).
pub(crate) fn ends_at_end_of_input(state: u8) -> bool {
    matches!(state, ZERO | INT | FRACTION | EXPONENT_DIGITS)
}
