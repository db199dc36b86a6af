//! NAR hashes in every spelling Nix has printed: SRI `sha256-<base64>`,
//! `sha256:<nix32>`, `sha256:<base16>` and bare base16 (`nix-store --dump-db`).

use base64::Engine as _;
use std::fmt;

use super::nix32::{decode_nix32, encode_nix32};
use super::text::is_terminal_hazard;

/// A NAR hash. SHA-256 digests are normalised so that the same hash read from any
/// format compares equal; anything else keeps its original text (control characters
/// and bidirectional overrides replaced by `?`).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NarHash {
    /// A SHA-256 digest.
    Sha256([u8; 32]),
    /// A hash this tool does not decode (other algorithm or unknown spelling).
    Other(String),
}

impl NarHash {
    /// Parse any spelling seen in Nix output; unrecognised text is kept as `Other`.
    pub fn parse(s: &str) -> NarHash {
        let s = s.trim();
        if let Some(rest) = s.strip_prefix("sha256-") {
            // Decoded on the stack: a path-info document has one per path, and a
            // vector for each was an allocation per entry.
            let mut buf = [0u8; 36];
            let n = base64::engine::general_purpose::STANDARD.decode_slice(rest, &mut buf);
            return match n {
                Ok(32) => NarHash::Sha256(std::array::from_fn(|i| buf[i])),
                _ => NarHash::other(s),
            };
        }
        let rest = s.strip_prefix("sha256:").unwrap_or(s);
        let digest = match rest.len() {
            52 => decode_nix32(rest, 32).ok(),
            64 => decode_hex(rest),
            _ => None,
        };
        match digest {
            Some(d) => {
                let mut a = [0u8; 32];
                a.copy_from_slice(&d);
                NarHash::Sha256(a)
            }
            None => NarHash::other(s),
        }
    }

    /// A hash kept as text for comparison and display, but never with characters that
    /// would act on a terminal (control characters, bidirectional overrides): no hash
    /// spelling has them, and this text reaches reports and snapshots verbatim.
    fn other(s: &str) -> NarHash {
        NarHash::Other(
            s.chars()
                .map(|c| if is_terminal_hazard(c) { '?' } else { c })
                .collect(),
        )
    }

    /// SRI form (`sha256-<base64>`), the spelling of current Nix.
    pub fn to_sri(&self) -> String {
        match self {
            NarHash::Sha256(d) => format!(
                "sha256-{}",
                base64::engine::general_purpose::STANDARD.encode(d)
            ),
            NarHash::Other(s) => s.clone(),
        }
    }

    /// `sha256:<nix32>` form, as closureInfo and narinfo files write it.
    pub fn to_nix32(&self) -> String {
        match self {
            NarHash::Sha256(d) => format!("sha256:{}", encode_nix32(d)),
            NarHash::Other(s) => s.clone(),
        }
    }

    /// Bare base16, as `nix-store --dump-db` writes it.
    pub fn to_base16(&self) -> String {
        match self {
            NarHash::Sha256(d) => d.iter().map(|b| format!("{b:02x}")).collect(),
            NarHash::Other(s) => s.clone(),
        }
    }
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

impl fmt::Display for NarHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_sri())
    }
}

impl fmt::Debug for NarHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NarHash({})", self.to_sri())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_spellings_agree() {
        let sri = "sha256-GOhJmAjL8yFgJXWKEpkPj5V67NYxCO1Ycaq6DNTeyk8=";
        let h = NarHash::parse(sri);
        assert!(matches!(h, NarHash::Sha256(_)));
        assert_eq!(h.to_sri(), sri);
        assert_eq!(NarHash::parse(&h.to_nix32()), h);
        assert_eq!(NarHash::parse(&h.to_base16()), h);
        assert_eq!(NarHash::parse(&format!("sha256:{}", h.to_base16())), h);
    }

    #[test]
    fn unknown_is_kept() {
        let h = NarHash::parse("md5:abc");
        assert_eq!(h, NarHash::Other("md5:abc".into()));
        assert_eq!(h.to_sri(), "md5:abc");
        assert!(matches!(NarHash::parse("sha256-!!"), NarHash::Other(_)));
        // A digest of another length under the sha256 label is not a SHA-256 digest.
        for len in [31, 33, 64] {
            let b64 = base64::engine::general_purpose::STANDARD.encode(vec![7u8; len]);
            let text = format!("sha256-{b64}");
            assert_eq!(NarHash::parse(&text), NarHash::Other(text), "{len} bytes");
        }
        let h = NarHash::parse("sha1:\u{1b}[2J\u{202e}x\u{85}y");
        assert_eq!(h.to_sri(), "sha1:?[2J?x?y");
    }
}
