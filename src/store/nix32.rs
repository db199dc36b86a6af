//! Nix's base-32 encoding ("nix32"): the alphabet of store-path hashes and of
//! `sha256:<52 chars>` NAR hashes.
//!
//! Written here rather than taken from a crate because the only crate for it
//! (`nix-base32`) has no decoder with error positions; the format is 20 lines.

/// The 32 characters Nix uses, in value order (no `e`, `o`, `u`, `t`).
pub const NIX32_ALPHABET: &[u8; 32] = b"0123456789abcdfghijklmnpqrsvwxyz";

const fn build_table() -> [u8; 256] {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 32 {
        t[NIX32_ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    t
}

/// Value of each byte in the alphabet, 0xff when the byte is not in it.
pub(crate) static NIX32_VALUE: [u8; 256] = build_table();

/// Whether `b` may appear in a store-path hash.
#[inline]
pub fn is_nix32_byte(b: u8) -> bool {
    NIX32_VALUE[b as usize] != 0xff
}

/// Encode bytes the way Nix prints hashes in base 32 (last byte first).
pub fn encode_nix32(bytes: &[u8]) -> String {
    let len = (bytes.len() * 8).div_ceil(5);
    let mut out = String::with_capacity(len);
    for n in (0..len).rev() {
        let b = n * 5;
        let i = b / 8;
        let j = b % 8;
        let lo = bytes[i] as u32 >> j;
        let hi = if i + 1 < bytes.len() {
            (bytes[i + 1] as u32) << (8 - j)
        } else {
            0
        };
        out.push(NIX32_ALPHABET[((lo | hi) & 0x1f) as usize] as char);
    }
    out
}

/// Decode a nix32 string into `out_len` bytes. Returns the index of the first bad
/// character, or `usize::MAX` when the length does not fit `out_len`.
pub fn decode_nix32(s: &str, out_len: usize) -> Result<Vec<u8>, usize> {
    if s.len() != (out_len * 8).div_ceil(5) {
        return Err(usize::MAX);
    }
    let mut out = vec![0u8; out_len];
    for (pos, c) in s.bytes().enumerate() {
        let digit = NIX32_VALUE[c as usize];
        if digit == 0xff {
            return Err(pos);
        }
        let n = s.len() - 1 - pos;
        let b = n * 5;
        let i = b / 8;
        let j = b % 8;
        out[i] |= digit << j;
        let carry = (digit as u32) >> (8 - j);
        if i + 1 < out_len {
            out[i + 1] |= carry as u8;
        } else if carry != 0 {
            return Err(pos);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_sha256_of_empty_string() {
        // `nix hash to-base32 sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=`
        let digest = [
            0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f,
            0xb9, 0x24, 0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b,
            0x78, 0x52, 0xb8, 0x55,
        ];
        let s = encode_nix32(&digest);
        assert_eq!(s, "0mdqa9w1p6cmli6976v4wi0sw9r4p5prkj7lzfd1877wk11c9c73");
        assert_eq!(decode_nix32(&s, 32).unwrap(), digest);
    }

    #[test]
    fn rejects_bad_chars_and_lengths() {
        assert_eq!(decode_nix32("e", 1), Err(usize::MAX));
        let mut s = encode_nix32(&[7u8; 32]);
        s.replace_range(3..4, "e");
        assert_eq!(decode_nix32(&s, 32), Err(3));
    }

    proptest! {
        #[test]
        fn roundtrip(bytes in proptest::collection::vec(any::<u8>(), 1..64)) {
            let s = encode_nix32(&bytes);
            prop_assert_eq!(decode_nix32(&s, bytes.len()).unwrap(), bytes);
        }
    }
}
