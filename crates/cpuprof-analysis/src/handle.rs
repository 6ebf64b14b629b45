//! Stable handles of functions: what an agent passes back instead of a name that may hold any
//! character, the same across runs, formats and round trips that keep a function's identity.

use sha2::{Digest, Sha256};

/// What a handle starts with.
const PREFIX: &str = "fn:";

/// Hex digits of the hash a handle keeps (its first 64 bits), so that two of a profile's
/// functions sharing one is out of reach.
const DIGITS: usize = 16;

/// The handle of the function reports show as `name` in `file` at `line`:`column`: `fn:` and
/// 16 hex digits of the SHA-256 of the four (a missing one distinct from any value).
pub fn function_handle(name: &str, file: Option<&str>, line: Option<u32>, column: Option<u32>) -> String {
    let mut hash = Sha256::new();
    for part in [Some(name), file] {
        match part {
            Some(text) => {
                hash.update([1]);
                hash.update((text.len() as u64).to_le_bytes());
                hash.update(text.as_bytes());
            }
            None => hash.update([0]),
        }
    }
    for number in [line, column] {
        match number {
            Some(n) => {
                hash.update([1]);
                hash.update(n.to_le_bytes());
            }
            None => hash.update([0]),
        }
    }
    let digest = hash.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    format!("{PREFIX}{:016x}", u64::from_be_bytes(first))
}

/// Whether `text` has the shape of a handle.
pub(crate) fn is_handle(text: &str) -> bool {
    text.strip_prefix(PREFIX).is_some_and(|hex| hex.len() == DIGITS && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_tell_every_part_apart_and_stay_the_same() {
        let a = function_handle("f", Some("a.js"), Some(1), Some(2));
        assert!(is_handle(&a), "{a}");
        assert_eq!(a, function_handle("f", Some("a.js"), Some(1), Some(2)));
        let others = [
            function_handle("g", Some("a.js"), Some(1), Some(2)),
            function_handle("f", Some("b.js"), Some(1), Some(2)),
            function_handle("f", None, Some(1), Some(2)),
            function_handle("f", Some(""), Some(1), Some(2)),
            function_handle("f", Some("a.js"), None, Some(2)),
            function_handle("f", Some("a.js"), Some(2), Some(1)),
            function_handle("f", Some("a.js"), Some(1), None),
            // Boundaries between parts are kept: no shift of text from one to the other.
            function_handle("fa", Some(".js"), Some(1), Some(2)),
        ];
        for other in &others {
            assert_ne!(&a, other);
        }
        // Pinned: handles must not change between versions of cpuprof (an agent may keep them).
        // The oracle: `printf '\x01\x01\0\0\0\0\0\0\0f\x01\x04\0\0\0\0\0\0\0a.js\x01\x01\0\0\0\x01\x02\0\0\0' | sha256sum`.
        assert_eq!(a, "fn:e6a2cb24d8e1610a");
    }
}
