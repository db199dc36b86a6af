//! Byte sizes: binary-unit rendering for tables and parsing of user-given limits.

/// Render bytes in binary units with one decimal (`1.8 GiB`, `512 B`).
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// Why a size string did not parse. Each variant carries the string as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeParseError {
    /// Not a number with an optional unit.
    #[error(
        "`{0}` is not a size: use bytes or a number with a unit (500M, 1.5GiB, 2GB, 800kB; \
         K/M/G/T/P/E and KiB … EiB are powers of 1024, kB/KB … EB powers of 1000)"
    )]
    Malformed(String),
    /// A negative number.
    #[error("`{0}` is negative: a size is zero or more bytes")]
    Negative(String),
    /// More bytes than 2^64 - 1.
    #[error(
        "`{0}` is out of range: sizes go up to 18446744073709551615 bytes (16 EiB minus one byte)"
    )]
    OutOfRange(String),
}

/// The multiplier of a unit (case-insensitive except that a bare letter and `…iB` are
/// binary and `…B` with a prefix is decimal): `None` for an unknown unit.
fn unit_multiplier(unit: &str) -> Option<u128> {
    const PREFIXES: &str = "kmgtpe";
    let u = unit.to_ascii_lowercase();
    if u.is_empty() || u == "b" {
        return Some(1);
    }
    let mut chars = u.chars();
    let prefix = chars.next()?;
    let power = PREFIXES.find(prefix)? as u32 + 1;
    match chars.as_str() {
        // A bare letter is binary, as `nix path-info -h` and `du -h` print it.
        "" | "ib" => Some(1u128 << (10 * power)),
        "b" => Some(1000u128.pow(power)),
        _ => None,
    }
}

/// Parse a size: plain bytes (`123`), or a number (decimals allowed) with a unit:
/// `KiB`, `MiB`, `GiB`, `TiB`, `PiB`, `EiB` and the bare `K` … `E` are powers of 1024;
/// `kB`/`KB`, `MB`, `GB`, `TB`, `PB`, `EB` are powers of 1000 (SI), as written. The
/// result is exact (decimal arithmetic, rounded to the nearest byte); anything above
/// 2^64 - 1 bytes is [`SizeParseError::OutOfRange`], never saturated.
pub fn parse_size(s: &str) -> Result<u64, SizeParseError> {
    let malformed = || SizeParseError::Malformed(s.to_string());
    let t = s.trim();
    if let Some(rest) = t.strip_prefix('-') {
        if rest.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            return Err(SizeParseError::Negative(s.to_string()));
        }
        return Err(malformed());
    }
    let t = t.strip_prefix('+').unwrap_or(t);
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult = unit_multiplier(unit.trim()).ok_or_else(malformed)?;
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
        return Err(malformed());
    }
    let out_of_range = || SizeParseError::OutOfRange(s.to_string());
    // Integer part: exact, in u128 so that the multiplication cannot overflow unseen.
    let mut whole: u128 = 0;
    for d in int.bytes() {
        whole = whole
            .checked_mul(10)
            .and_then(|w| w.checked_add(u128::from(d - b'0')))
            .ok_or_else(out_of_range)?;
    }
    let mut bytes = whole.checked_mul(mult).ok_or_else(out_of_range)?;
    // Fraction: 18 digits are finer than a byte of an EiB; more are ignored.
    let digits = &frac[..frac.len().min(18)];
    if !digits.is_empty() {
        let scale = 10u128.pow(digits.len() as u32);
        let f: u128 = digits.parse().map_err(|_| malformed())?;
        // f < 10^18 and mult <= 2^60: the product fits in a u128.
        bytes = bytes
            .checked_add((f * mult + scale / 2) / scale)
            .ok_or_else(out_of_range)?;
    }
    u64::try_from(bytes).map_err(|_| out_of_range())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(format_size(0), "0 B");
        assert_eq!(format_size(1023), "1023 B");
        assert_eq!(format_size(1024), "1.0 KiB");
        assert_eq!(format_size(1_932_735_283), "1.8 GiB");
    }

    #[test]
    fn parses() {
        assert_eq!(parse_size("123").unwrap(), 123);
        assert_eq!(parse_size("1K").unwrap(), 1024);
        assert_eq!(parse_size("1.5GiB").unwrap(), 1_610_612_736);
        assert_eq!(parse_size(" 2 M ").unwrap(), 2 << 20);
        assert!(parse_size("12Q").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("-1").is_err());
    }

    #[test]
    fn si_and_iec_units_are_taken_as_written() {
        assert_eq!(parse_size("20GB").unwrap(), 20_000_000_000);
        assert_eq!(parse_size("20gb").unwrap(), 20_000_000_000);
        assert_eq!(parse_size("20GiB").unwrap(), 20 << 30);
        assert_eq!(parse_size("20G").unwrap(), 20 << 30);
        assert_eq!(parse_size("800kB").unwrap(), 800_000);
        assert_eq!(parse_size("800KB").unwrap(), 800_000);
        assert_eq!(parse_size("1PiB").unwrap(), 1 << 50);
        assert_eq!(parse_size("1PB").unwrap(), 10u64.pow(15));
        assert_eq!(parse_size("1EiB").unwrap(), 1 << 60);
        assert_eq!(parse_size("1EB").unwrap(), 10u64.pow(18));
        assert_eq!(parse_size("15.99EiB").unwrap(), 18_435_214_858_663_483_146);
        assert_eq!(parse_size("18446744073709551615").unwrap(), u64::MAX);
        assert_eq!(parse_size("0.5").unwrap(), 1, "rounded to the nearest byte");
        assert_eq!(parse_size(".5KiB").unwrap(), 512);
        assert_eq!(parse_size("1.").unwrap(), 1);
    }

    #[test]
    fn out_of_range_negative_and_malformed_are_told_apart() {
        let kind = |s: &str| match parse_size(s) {
            Err(SizeParseError::OutOfRange(_)) => "range",
            Err(SizeParseError::Negative(_)) => "negative",
            Err(SizeParseError::Malformed(_)) => "malformed",
            Ok(_) => "ok",
        };
        assert_eq!(kind("18446744073709551616"), "range");
        assert_eq!(kind("16EiB"), "range");
        assert_eq!(kind("19EB"), "range");
        assert_eq!(kind(&"9".repeat(60)), "range");
        assert_eq!(kind("-5GB"), "negative");
        assert_eq!(kind("-0.5"), "negative");
        assert_eq!(kind("1e999"), "malformed");
        assert_eq!(kind("1.2.3G"), "malformed");
        assert_eq!(kind("."), "malformed");
        assert_eq!(kind("G"), "malformed");
        assert_eq!(kind("5ZiB"), "malformed");
        assert_eq!(kind("5 GiBs"), "malformed");
        assert_eq!(kind("--5"), "malformed");
        let e = parse_size("18446744073709551616").unwrap_err().to_string();
        assert!(e.contains("`18446744073709551616` is out of range"), "{e}");
    }
}
