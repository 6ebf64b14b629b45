//! Reading: the log cut into chunks of whole lines, their tick lines parsed in parallel.

use std::io::Read;

use super::lines::{self, Batch};
use super::{CHUNK, MAX_LINE};
use crate::{Origin, ParseError, ParseErrorKind, Span};

/// The bytes of whole lines, and their lines parsed.
pub(super) type Chunk = (Vec<u8>, Vec<Batch>);

/// Stands in for a line too long to keep: an unknown record, so the replay ignores it but
/// still counts the line.
pub(super) const LONG_LINE: &[u8] = b"\x01long line\n";

/// The input, cut into chunks of whole lines.
pub(super) struct Input<R> {
    pub(super) reader: R,
    /// The start of a line the last chunk did not finish.
    pub(super) carry: Vec<u8>,
    pub(super) read: u64,
    /// Inside a line longer than [`MAX_LINE`], dropping it.
    pub(super) skipping: bool,
    pub(super) long_lines: u64,
    /// Why reading stopped early (a damaged or cut-off gzip stream), after `read` bytes.
    pub(super) damaged: Option<String>,
}

impl<R: Read> Input<R> {
    /// About [`CHUNK`] bytes of whole lines, their ticks parsed; `None` at the end.
    pub(super) fn chunk(&mut self, origin: &Origin) -> Result<Option<Chunk>, ParseError> {
        let mut chunk = std::mem::take(&mut self.carry);
        chunk.reserve(CHUNK);
        let mut searched = 0;
        loop {
            let before = chunk.len();
            let eof = self.damaged.is_some() || self.fill(&mut chunk, origin)? == 0;
            if self.skipping {
                if let Some(nl) = memchr::memchr(b'\n', &chunk) {
                    chunk.drain(..=nl);
                    chunk.splice(0..0, LONG_LINE.iter().copied());
                    self.skipping = false;
                    searched = 0;
                } else {
                    chunk.clear();
                    if eof {
                        return Ok(None);
                    }
                    continue;
                }
            }
            if let Some(last_nl) = memchr::memrchr(b'\n', &chunk[searched..]).map(|i| searched + i) {
                if chunk.len() >= CHUNK || eof {
                    self.carry = chunk.split_off(last_nl + 1);
                    let batches = lines::parse_chunk(&chunk);
                    return Ok(Some((chunk, batches)));
                }
            } else if chunk.len() > MAX_LINE {
                // A line no tick log needs (a huge `script-source`): skip it, not the log.
                self.long_lines += 1;
                self.skipping = true;
                chunk.clear();
                searched = 0;
                continue;
            } else {
                searched = before.min(chunk.len());
            }
            if eof {
                self.carry = chunk;
                return Ok(None);
            }
        }
    }

    /// Reads up to [`CHUNK`] more bytes; 0 at the end. A stream that turns out damaged after
    /// some good bytes (a gzip file cut short) ends there, with a warning.
    pub(super) fn fill(&mut self, chunk: &mut Vec<u8>, origin: &Origin) -> Result<usize, ParseError> {
        let before = chunk.len();
        match (&mut self.reader).take(CHUNK as u64).read_to_end(chunk) {
            Ok(n) => {
                self.read += n as u64;
                Ok(n)
            }
            Err(e) if self.read + (chunk.len() - before) as u64 > 0 => {
                let n = chunk.len() - before;
                self.read += n as u64;
                self.damaged = Some(e.to_string());
                Ok(n)
            }
            Err(e) => Err(ParseErrorKind::Io(e).at(origin, Span::None)),
        }
    }
}
