//! UTF-16 text with a byte-order mark (what Windows tools such as PowerShell's `>` write),
//! decoded to UTF-8 while reading, so that every text reader sees UTF-8.

use std::io::{self, Read};

/// The byte-order mark at the start of `prefix`: `Some(true)` for big-endian, `Some(false)`
/// for little-endian UTF-16, `None` for anything else.
pub(crate) fn bom(prefix: &[u8]) -> Option<bool> {
    match prefix {
        [0xfe, 0xff, ..] => Some(true),
        // UTF-32 little-endian starts with `ff fe 00 00`: not UTF-16.
        [0xff, 0xfe, 0, 0, ..] => None,
        [0xff, 0xfe, ..] => Some(false),
        _ => None,
    }
}

/// Reads UTF-16 (the byte-order mark included, which becomes UTF-8's) from `inner` as UTF-8.
/// An unpaired surrogate or an odd last byte becomes U+FFFD, as `String::from_utf16_lossy`
/// does.
pub(crate) struct Utf16Reader<R> {
    inner: R,
    big_endian: bool,
    /// Bytes read but not yet decoded (an odd byte, or a high surrogate waiting for its pair).
    raw: Vec<u8>,
    /// Decoded UTF-8 not yet returned, from `start`.
    out: Vec<u8>,
    start: usize,
    done: bool,
}

impl<R: Read> Utf16Reader<R> {
    pub(crate) fn new(inner: R, big_endian: bool) -> Self {
        Utf16Reader { inner, big_endian, raw: Vec::new(), out: Vec::new(), start: 0, done: false }
    }

    /// Decodes the next chunk into `out`; false at the end.
    fn fill(&mut self) -> io::Result<bool> {
        self.out.clear();
        self.start = 0;
        while self.out.is_empty() {
            if self.done {
                return Ok(false);
            }
            let mut chunk = [0u8; 1 << 14];
            let n = self.inner.read(&mut chunk)?;
            self.raw.extend_from_slice(chunk.get(..n).unwrap_or_default());
            if n == 0 {
                self.done = true;
            }
            let unit = |pair: &[u8]| match pair {
                [a, b] if self.big_endian => u16::from_be_bytes([*a, *b]),
                [a, b] => u16::from_le_bytes([*a, *b]),
                _ => 0xfffd,
            };
            let mut units: Vec<u16> = self.raw.chunks_exact(2).map(unit).collect();
            let mut keep = self.raw.len() % 2;
            // A high surrogate at the end of the chunk waits for its pair, unless the input ends.
            if !self.done && units.last().is_some_and(|u| (0xd800..0xdc00).contains(u)) {
                units.pop();
                keep += 2;
            }
            if self.done && keep == 1 {
                units.push(0xfffd);
                keep = 0;
            }
            let mut buf = [0u8; 4];
            for c in char::decode_utf16(units.iter().copied()) {
                let c = c.unwrap_or(char::REPLACEMENT_CHARACTER);
                self.out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
            let used = self.raw.len() - keep;
            self.raw.drain(..used);
        }
        Ok(true)
    }
}

impl<R: Read> Read for Utf16Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.start == self.out.len() && !self.fill()? {
            return Ok(0);
        }
        let rest = self.out.get(self.start..).unwrap_or_default();
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.start += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One byte at a time, so that pairs and surrogates straddle reads.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let Some((first, rest)) = self.0.split_first() else { return Ok(0) };
            buf[0] = *first;
            self.0 = rest;
            Ok(1)
        }
    }

    fn decode(bytes: &[u8], big_endian: bool) -> String {
        let mut out = String::new();
        Utf16Reader::new(Trickle(bytes), big_endian).read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn both_byte_orders_decode_with_surrogates_and_damage() {
        let text = "\u{feff}a;b 1\r\nä;\u{1f600} 2\n";
        let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(bom(&le), Some(false));
        assert_eq!(bom(&be), Some(true));
        assert_eq!(decode(&le, false), text);
        assert_eq!(decode(&be, true), text);
        // A lone high surrogate, then an odd last byte.
        assert_eq!(decode(&[0x61, 0, 0x3d, 0xd8, 0x62, 0, 0x63], false), "a\u{fffd}b\u{fffd}");
        assert_eq!(bom(b"\xff\xfe\0\0"), None);
        assert_eq!(bom(b"ab"), None);
    }
}
