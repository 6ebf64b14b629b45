//! Stage one: bytes → lines → tick records, in parallel over pieces of a chunk.
//!
//! Ticks are almost all of a log, so they are parsed here, off the sequential path, and a
//! hash of their frames (the callers, which repeat) is computed while the line is hot. Every other
//! line is kept as a byte range for the sequential stage, which owns the code map.

use rayon::prelude::*;

/// A tick as written: `tick,pc,time,is_ext_cb,tos_or_cb,vmstate,frame…`. Before 2013 V8
/// wrote the stack pointer (`0x…`) after the pc: `tick,pc,sp,time,is_ext_cb,tos_or_cb,vmstate,…`
/// in 2012, `tick,pc,sp,is_ext_cb,tos_or_cb,vmstate,…` before; some logs a bare `0` as tos.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tick {
    pub(super) pc: u64,
    pub(super) tos: u64,
    pub(super) time_us: i64,
    /// False for the form without a time: `time_us` is then 0.
    pub(super) timed: bool,
    /// One of the forms with a stack pointer (whose logs gave the interval in milliseconds).
    pub(super) old: bool,
    /// Hash of the frames (not pc or tos, which change from tick to tick even in one
    /// function): equal callers (under one code map) hash equal.
    pub(super) hash: u64,
    /// First frame in [`Batch::addrs`].
    pub(super) frames: u32,
    pub(super) frame_count: u32,
    pub(super) state: u8,
    pub(super) external: bool,
}

/// One physical line.
#[derive(Clone, Copy, Debug)]
pub(super) enum Item {
    Tick(Tick),
    /// Any other line, as `[start, end)` in the chunk, without the line end.
    Other(u32, u32),
}

/// The lines of one piece of a chunk, in order.
#[derive(Debug, Default)]
pub(super) struct Batch {
    pub(super) items: Vec<Item>,
    pub(super) addrs: Vec<u64>,
    /// Lines that ended in `\r\n`.
    pub(super) crlf: u64,
}

impl Batch {
    pub(super) fn frames(&self, tick: &Tick) -> &[u64] {
        &self.addrs[tick.frames as usize..(tick.frames + tick.frame_count) as usize]
    }
}

/// Splits `chunk` (whole lines, each ending in `\n`) into pieces and parses them in parallel.
pub(super) fn parse_chunk(chunk: &[u8]) -> Vec<Batch> {
    const PIECE: usize = 1 << 20;
    let mut bounds = vec![0usize];
    let mut at = 0;
    while chunk.len() - at > PIECE {
        match memchr::memchr(b'\n', &chunk[at + PIECE..]) {
            Some(i) => {
                at += PIECE + i + 1;
                bounds.push(at);
            }
            None => break,
        }
    }
    bounds.push(chunk.len());
    let pieces: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).filter(|(a, b)| a < b).collect();
    pieces.into_par_iter().map(|(start, end)| parse_piece(chunk, start, end)).collect()
}

fn parse_piece(chunk: &[u8], start: usize, end: usize) -> Batch {
    let mut batch = Batch::default();
    let mut line_start = start;
    for nl in memchr::memchr_iter(b'\n', &chunk[start..end]) {
        let line_end = start + nl;
        let mut body_end = line_end;
        if body_end > line_start && chunk[body_end - 1] == b'\r' {
            body_end -= 1;
            batch.crlf += 1;
        }
        let line = &chunk[line_start..body_end];
        let item = match line.strip_prefix(b"tick,") {
            Some(fields) => match parse_tick(fields, &mut batch.addrs) {
                Some(tick) => Item::Tick(tick),
                None => Item::Other(line_start as u32, body_end as u32),
            },
            None => Item::Other(line_start as u32, body_end as u32),
        };
        batch.items.push(item);
        line_start = line_end + 1;
    }
    batch
}

/// The frames V8 keeps per tick, plus pc and tos: anything longer is not a real tick.
const MAX_FRAMES: usize = 4096;

/// Parses the fields after `tick,`; `None` for anything malformed (the sequential stage
/// reports it). Frames are appended to `addrs` only when the whole line is good.
fn parse_tick(fields: &[u8], addrs: &mut Vec<u64>) -> Option<Tick> {
    let mut cursor = Cursor { bytes: fields, at: 0 };
    let pc = cursor.hex()?;
    if cursor.peek_hex().is_none() {
        return parse_rest(cursor, pc, true, addrs);
    }
    // The pre-2013 forms have the stack pointer here, which says nothing about the stack.
    cursor.hex()?;
    // 2012's time, then the rest; else the rest right away (2011). A line of one form does
    // not read as the other: the field after the time is 0 or 1 and the one after tos
    // decimal, where 2011 has tos (`0x…`) and the first frame.
    parse_rest(cursor, pc, true, addrs)
        .or_else(|| parse_rest(cursor, pc, false, addrs))
        .map(|tick| Tick { old: true, ..tick })
}

/// The fields after pc (and the stack pointer): `[time,]is_ext_cb,tos_or_cb,vmstate,frame…`.
fn parse_rest(mut cursor: Cursor<'_>, pc: u64, timed: bool, addrs: &mut Vec<u64>) -> Option<Tick> {
    let time_us = if timed { cursor.int()? } else { 0 };
    let external = match cursor.int()? {
        0 => false,
        1 => true,
        _ => return None,
    };
    let tos = match cursor.peek_hex() {
        Some(()) => cursor.hex()?,
        None => u64::try_from(cursor.int()?).ok()?,
    };
    let state = u8::try_from(cursor.int()?).ok()?;
    let first = addrs.len();
    let frames = parse_frames(&mut cursor, pc, addrs);
    if frames.is_none() {
        addrs.truncate(first);
    }
    let hash = frames?;
    let frame_count = (addrs.len() - first) as u32;
    Some(Tick { pc, tos, time_us, timed, old: false, hash, frames: first as u32, frame_count, state, external })
}

/// Appends the frames to `addrs`; their hash, `None` when one is malformed.
fn parse_frames(cursor: &mut Cursor<'_>, pc: u64, addrs: &mut Vec<u64>) -> Option<u64> {
    let first = addrs.len();
    let mut hash = SEED;
    let mut previous = pc;
    while !cursor.done() {
        let frame = match cursor.peek() {
            Some(b'+' | b'-') => {
                // Relative to the previous frame, in hex (V8 writes these on some platforms).
                let negative = cursor.peek() == Some(b'-');
                cursor.at += 1;
                let delta = cursor.bare_hex()?;
                if negative {
                    previous.wrapping_sub(delta)
                } else {
                    previous.wrapping_add(delta)
                }
            }
            Some(b'o') => {
                // `overflow`: V8 could not walk further. Dropped, as the tick processor does.
                cursor.skip_field();
                continue;
            }
            _ => cursor.hex()?,
        };
        previous = frame;
        hash = mix(hash, frame);
        addrs.push(frame);
        if addrs.len() - first > MAX_FRAMES {
            return None;
        }
    }
    Some(finish(mix(hash, (addrs.len() - first) as u64)))
}

const SEED: u64 = 0x243f_6a88_85a3_08d3;

fn mix(h: u64, word: u64) -> u64 {
    (h.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
}

fn finish(h: u64) -> u64 {
    h ^ (h >> 29)
}

/// Hash of a key as [`parse_tick`] computes it, for ticks built by hand (tests).
#[cfg(test)]
pub(super) fn hash_of(frames: &[u64]) -> u64 {
    let mut h = SEED;
    for f in frames {
        h = mix(h, *f);
    }
    finish(mix(h, frames.len() as u64))
}

const NOT_HEX: u8 = 0xff;

/// The value of each byte as a hex digit, or [`NOT_HEX`].
static HEX: [u8; 256] = {
    let mut table = [NOT_HEX; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        table[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

/// Reads comma-separated fields.
#[derive(Clone, Copy)]
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn done(&self) -> bool {
        self.at >= self.bytes.len()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// Ends a field: at a comma (consumed) or at the end of the line.
    fn end_field(&mut self) -> Option<()> {
        match self.bytes.get(self.at) {
            None => Some(()),
            Some(b',') => {
                self.at += 1;
                Some(())
            }
            Some(_) => None,
        }
    }

    fn skip_field(&mut self) {
        match memchr::memchr(b',', &self.bytes[self.at..]) {
            Some(i) => self.at += i + 1,
            None => self.at = self.bytes.len(),
        }
    }

    /// `Some` when the next field starts with `0x`.
    fn peek_hex(&self) -> Option<()> {
        self.bytes.get(self.at..self.at + 2).filter(|p| *p == b"0x").map(|_| ())
    }

    /// `0x…` hex, the only way V8 writes addresses.
    fn hex(&mut self) -> Option<u64> {
        if self.bytes.get(self.at..self.at + 2)? != b"0x" {
            return None;
        }
        self.at += 2;
        self.bare_hex()
    }

    fn bare_hex(&mut self) -> Option<u64> {
        let digits = self.bytes.get(self.at..)?;
        let mut value: u64 = 0;
        let mut count = 0;
        let mut significant = 0;
        for &b in digits {
            let digit = HEX[usize::from(b)];
            if digit == NOT_HEX {
                break;
            }
            value = value << 4 | u64::from(digit);
            count += 1;
            significant += usize::from(significant > 0 || digit > 0);
        }
        // More than 16 significant digits would not fit in 64 bits.
        if count == 0 || significant > 16 {
            return None;
        }
        self.at += count;
        self.end_field()?;
        Some(value)
    }

    /// A decimal integer, optionally negative.
    fn int(&mut self) -> Option<i64> {
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let start = self.at;
        let mut value: i64 = 0;
        while let Some(&b) = self.bytes.get(self.at) {
            if !b.is_ascii_digit() {
                break;
            }
            value = value.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
            self.at += 1;
        }
        if self.at == start {
            return None;
        }
        self.end_field()?;
        Some(if negative { -value } else { value })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> Option<(Tick, Vec<u64>)> {
        let mut addrs = Vec::new();
        let tick = parse_tick(line.strip_prefix("tick,")?.as_bytes(), &mut addrs)?;
        Some((tick, addrs))
    }

    #[test]
    fn ticks() {
        let (t, frames) = one("tick,0x13a39b1,43045,1,0xc73370,5,0xf51800,0x7fa8d00044d6").unwrap();
        assert_eq!((t.pc, t.time_us, t.external, t.tos, t.state), (0x013a_39b1, 43045, true, 0x00c7_3370, 5));
        assert_eq!(frames, vec![0x00f5_1800, 0x7fa8_d000_44d6]);
        assert_eq!(t.hash, hash_of(&frames));
        let (t, _) = one("tick,0x000000000000000000012,1,0,0x0,0").unwrap();
        assert_eq!(t.pc, 0x12);
        let (t, frames) = one("tick,0x10,-5,0,0x0,0").unwrap();
        assert_eq!((t.time_us, frames.len()), (-5, 0));
        // Relative frames and overflow markers.
        let (_, frames) = one("tick,0x100,1,0,0x0,0,+10,-8,overflow,0x5").unwrap();
        assert_eq!(frames, vec![0x110, 0x108, 0x5]);
        // The pre-2013 form: stack pointer instead of time, tos as a bare 0.
        let (t, frames) = one("tick,0x8123b5c,0xffdff1a0,0,0,0,0xf541d1a1,0xf541ceea").unwrap();
        assert_eq!((t.pc, t.timed, t.time_us, t.tos, t.state), (0x0812_3b5c, false, 0, 0, 0));
        assert_eq!(frames, vec![0xf541_d1a1, 0xf541_ceea]);
        assert!(one("tick,0x1,2,0,0x0,0").unwrap().0.timed);
        // 2012: a time after the stack pointer.
        let (t, frames) = one("tick,0x424284,0xbfffeea0,7,0,0x480600,0,0x2aaaa5").unwrap();
        assert_eq!((t.pc, t.timed, t.old, t.time_us, t.tos, t.state), (0x0042_4284, true, true, 7, 0x0048_0600, 0));
        assert_eq!(frames, vec![0x002a_aaa5]);
        let (t, _) = one("tick,0x1,0xbfff,1,0xcb,4,0x5").unwrap();
        assert_eq!((t.timed, t.external, t.tos, t.state), (false, true, 0xcb, 4));
    }

    #[test]
    fn malformed_ticks_are_rejected() {
        for line in [
            "tick,",
            "tick,0x1",
            "tick,0x1,2,3,0x0,0",
            "tick,0x1,2,0,0x0,0,0xZZ",
            "tick,0x1,2,0,0x0,0,0x",
            "tick,0x11112222333344445,2,0,0x0,0",
            "tick,0x1,2,0,0x0,0,0x10000000000000000",
            "tick,0x1,99999999999999999999,0,0x0,0",
            "tick,0x1,2,0,0x0,300",
            "tick,0x1,2,0,0x0,0,0x7f12 ",
        ] {
            assert!(one(line).is_none(), "{line}");
        }
    }

    #[test]
    fn chunks_split_on_lines_and_strip_cr() {
        let text = "v8-version,11\r\ntick,0x1,2,0,0x0,0,0x3\n\ncode-move,0x1,0x2\n";
        let batches = parse_chunk(text.as_bytes());
        let items: Vec<Item> = batches.iter().flat_map(|b| b.items.iter().copied()).collect();
        assert_eq!(items.len(), 4);
        assert!(matches!(items[0], Item::Other(0, 13)));
        assert!(matches!(items[1], Item::Tick(_)));
        assert!(matches!(items[2], Item::Other(a, b) if a == b));
        assert_eq!(batches.iter().map(|b| b.crlf).sum::<u64>(), 1);
    }
}
