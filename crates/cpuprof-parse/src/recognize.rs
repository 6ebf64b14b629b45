//! Files that are recognisably not a profile cpuprof reads, told apart by their first bytes so
//! that the error says what they are (and what to give cpuprof instead) rather than failing
//! in whichever reader the bytes would otherwise reach: a zip archive would be read as pprof
//! (`PK` is a valid protobuf tag), a legacy pprof file is not recognised at all.
//!
//! JSON documents that are not V8 CPU profiles (heap profiles, Firefox and speedscope files)
//! are told apart by their keys, which the `.cpuprofile` reader sees ([`crate::v8_cpuprofile`]).

/// What a legacy (pre-protobuf) pprof profile is refused with.
const LEGACY_PPROF: &str = "this is a legacy pprof CPU profile (gperftools' or a Java agent's binary format, before \
     profile.proto), which cpuprof does not read; convert it with `go tool pprof -proto FILE > FILE.pb.gz`";
const LEGACY_PPROF_TEXT: &str = "this is a legacy text pprof profile (`--- ` sections, before profile.proto), which \
     cpuprof does not read; convert it with `go tool pprof -proto FILE > FILE.pb.gz`";
const ZIP: &str = "this is a zip archive; unzip it and give cpuprof the profile inside";

/// First lines of google/pprof's legacy text formats.
const TEXT_HEADERS: [&[u8]; 7] =
    [b"--- symbol", b"--- contention", b"--- threadz", b"--- heapz", b"--- profile", b"heap profile:", b"heap_v2/"];

/// What the input is, when its first bytes show it is something cpuprof does not read.
pub(crate) fn not_a_profile(prefix: &[u8]) -> Option<&'static str> {
    if prefix.starts_with(b"PK\x03\x04") || prefix.starts_with(b"PK\x05\x06") {
        return Some(ZIP);
    }
    if legacy_binary_pprof(prefix) {
        return Some(LEGACY_PPROF);
    }
    if TEXT_HEADERS.iter().any(|h| prefix.starts_with(h)) {
        return Some(LEGACY_PPROF_TEXT);
    }
    None
}

/// gperftools' CPU profile header: the words 0 (header count), 3 (header words), the format
/// version (0; Java agents write 1), the sampling period, 0 (padding), in 64-bit words (64-bit
/// gperftools) or 32-bit ones (32-bit builds, Java), of either byte order. A protobuf message
/// never starts with a zero byte, so this cannot take a pprof file.
fn legacy_binary_pprof(prefix: &[u8]) -> bool {
    fn words<const N: usize>(prefix: &[u8], big_endian: bool) -> Option<[u64; 5]> {
        let mut out = [0u64; 5];
        for (i, slot) in out.iter_mut().enumerate() {
            let bytes: [u8; N] = prefix.get(i * N..(i + 1) * N)?.try_into().ok()?;
            let mut value = 0u64;
            for k in 0..N {
                let b = if big_endian { bytes[k] } else { bytes[N - 1 - k] };
                value = (value << 8) | u64::from(b);
            }
            *slot = value;
        }
        Some(out)
    }
    let header = |w: Option<[u64; 5]>| matches!(w, Some([0, 3, 0 | 1, period, 0]) if period > 0);
    [false, true].into_iter().any(|be| header(words::<8>(prefix, be)) || header(words::<4>(prefix, be)))
}

#[cfg(test)]
mod tests {
    use super::not_a_profile;

    #[test]
    fn legacy_pprof_headers_and_archives_are_named() {
        let mut gperf64 = Vec::new();
        for w in [0u64, 3, 0, 10_000, 0, 1, 0x40_0000] {
            gperf64.extend_from_slice(&w.to_le_bytes());
        }
        let mut java32 = Vec::new();
        for w in [0u32, 3, 1, 10_000, 0, 1, 2] {
            java32.extend_from_slice(&w.to_be_bytes());
        }
        assert!(not_a_profile(&gperf64).unwrap().contains("legacy pprof CPU profile"));
        assert!(not_a_profile(&java32).unwrap().contains("legacy pprof CPU profile"));
        assert!(not_a_profile(b"--- symbol\nbinary=/x\n").unwrap().contains("legacy text pprof"));
        assert!(not_a_profile(b"PK\x03\x04\x14\x00").unwrap().contains("zip archive"));
        // Not these: a pprof message, zeros without the header, a folded line.
        assert_eq!(not_a_profile(b"\x0a\x07samples"), None);
        assert_eq!(not_a_profile(&[0u8; 64]), None);
        assert_eq!(not_a_profile(b"--- a;b 3\n"), None);
        let mut no_period = gperf64.clone();
        no_period[24..32].copy_from_slice(&0u64.to_le_bytes());
        assert_eq!(not_a_profile(&no_period), None);
    }
}
