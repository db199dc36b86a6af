//! Tensile's index files and manifests: what an index `*.dat` (MessagePack) names
//! for loading, and what a `TensileManifest.txt` lists.
//!
//! A master library is a map `{version, solutions, library}`; `library` nests
//! selection rows, each a map with a `type`. A lazy master's rows end in placeholders,
//! `{"type": "Placeholder", "value": "<prefix>"}`: on first use of that problem type the
//! library loads `<prefix>.dat` from the master's own directory (the directory it was
//! opened in) and its code object `<prefix>.co`, `<prefix>[-xnack±].hsaco` or
//! `<prefix>_<target>.hsaco`. Any string of the index naming a `.co` or `.hsaco` file is
//! taken as a code object it loads. The manifest is a build inventory, one absolute
//! build path per line (`/build/source/build/Tensile/library/<file>`), read by no
//! library at run time.
//!
//! Names come back as patterns relative to the index's directory, with `%s` standing
//! for one or more characters other than `/` (the reachability walk's pattern syntax).

/// Largest index file decoded.
pub const MAX_INDEX: u64 = 64 << 20;
/// Most names kept per index file.
const MAX_LOADS: usize = 65_536;
/// Most MessagePack values visited per index file (a hostile file cannot loop).
const MAX_VALUES: usize = 4_000_000;

/// The files a MessagePack index names for loading, as patterns relative to its
/// directory, sorted; `None` when the bytes are not a MessagePack map (not an index).
pub fn index_loads(bytes: &[u8]) -> Option<Vec<String>> {
    use rmpv::Value;
    let mut rd = bytes;
    let v = rmpv::decode::read_value_with_max_depth(&mut rd, 256).ok()?;
    if !v.is_map() {
        return None;
    }
    let mut out: Vec<String> = Vec::new();
    let mut stack: Vec<&Value> = vec![&v];
    let mut visited = 0usize;
    let plain = |s: &str| !s.is_empty() && !s.contains('%') && !s.contains('\0');
    while let Some(v) = stack.pop() {
        visited += 1;
        if visited > MAX_VALUES || out.len() > MAX_LOADS {
            break;
        }
        match v {
            Value::Map(entries) => {
                let get = |k: &str| {
                    entries
                        .iter()
                        .find(|(key, _)| key.as_str() == Some(k))
                        .and_then(|(_, v)| v.as_str())
                };
                if let (Some("Placeholder"), Some(prefix)) = (get("type"), get("value")) {
                    if plain(prefix) && !prefix.contains('/') {
                        out.push(format!("{prefix}.dat"));
                        out.push(format!("{prefix}.co"));
                        out.push(format!("{prefix}.hsaco"));
                        out.push(format!("{prefix}-%s.hsaco"));
                        out.push(format!("{prefix}_%s.hsaco"));
                    }
                }
                for (k, v) in entries {
                    stack.push(k);
                    stack.push(v);
                }
            }
            Value::Array(items) => stack.extend(items.iter()),
            Value::String(s) => {
                if let Some(s) = s.as_str() {
                    let name = s.rsplit('/').next().unwrap_or(s);
                    if plain(name) && (name.ends_with(".co") || name.ends_with(".hsaco")) {
                        out.push(name.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    out.sort();
    out.dedup();
    out.truncate(MAX_LOADS);
    Some(out)
}

/// The file names a manifest lists (the last component of each line), sorted.
pub fn manifest_names(text: &[u8]) -> Vec<String> {
    let mut out: Vec<String> = text
        .split(|&b| b == b'\n')
        .filter_map(|l| {
            let l = l.strip_suffix(b"\r").unwrap_or(l);
            let name = l.rsplit(|&b| b == b'/').next()?;
            let s = std::str::from_utf8(name).ok()?.trim();
            (!s.is_empty()).then(|| s.to_string())
        })
        .take(MAX_LOADS)
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmpv::Value;

    fn write(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        rmpv::encode::write_value(&mut out, v).unwrap();
        out
    }

    #[test]
    fn placeholders_and_code_object_strings() {
        let s = |x: &str| Value::from(x);
        let row = |p: &str| Value::Map(vec![(s("type"), s("Placeholder")), (s("value"), s(p))]);
        let master = Value::Map(vec![
            (s("version"), s("4.33.0")),
            (s("solutions"), Value::Array(vec![])),
            (
                s("library"),
                Value::Map(vec![
                    (s("type"), s("Hardware")),
                    (
                        s("rows"),
                        Value::Array(vec![row("T_gfx90a"), s("x/K_gfx90a.co")]),
                    ),
                ]),
            ),
        ]);
        let loads = index_loads(&write(&master)).unwrap();
        assert!(loads.contains(&"T_gfx90a.dat".to_string()), "{loads:?}");
        assert!(loads.contains(&"T_gfx90a.co".to_string()));
        assert!(loads.contains(&"T_gfx90a-%s.hsaco".to_string()));
        assert!(loads.contains(&"K_gfx90a.co".to_string()));
        // Not an index: an array, garbage, a truncated map.
        assert_eq!(index_loads(&write(&Value::Array(vec![]))), None);
        assert_eq!(index_loads(b"\xc1\xc1"), None);
        let mut cut = write(&master);
        cut.truncate(cut.len() / 2);
        assert_eq!(index_loads(&cut), None);
    }

    #[test]
    fn manifest_lines() {
        assert_eq!(
            manifest_names(b"/build/source/build/Tensile/library/b.co\n/build/x/a.dat\r\n\n"),
            ["a.dat", "b.co"]
        );
    }
}

#[cfg(test)]
mod hostile {
    use super::*;

    #[test]
    fn huge_lengths_and_deep_nesting_are_refused_without_allocating() {
        // A map claiming 4G entries, an array claiming 4G, a string claiming 4 GiB.
        for bytes in [
            &b"\xdf\xff\xff\xff\xff"[..],
            b"\x81\xa1k\xdd\xff\xff\xff\xff",
            b"\x81\xa1k\xdb\xff\xff\xff\xff",
        ] {
            assert_eq!(index_loads(bytes), None);
        }
        let deep: Vec<u8> = std::iter::once(0x81)
            .chain((0..100_000).flat_map(|_| [0xa1, b'k', 0x81]))
            .collect();
        assert_eq!(index_loads(&deep), None);
    }
}
