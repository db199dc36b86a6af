//! Tests of the path-info reader: every shape, every Nix version's quirks, errors
//! with positions, and the parallel parse against the whole one.

use super::array::{array_entry, path_first};
use super::keyed::entry_key;
use super::raw::{RawEntry, Text, CHUNK};
use super::wrapper::wrapper_parts;
use super::*;
use crate::store::{LoadWarning, PathInfo, StoreDir};

const APP: &str = "cb57q9mwx8761wyzrb6ypijgajriigag-app-1.0";
const FOO: &str = "x71ahacbysflg2pf8638mdh69871353b-libfoo-3.2";

fn load_str(text: &str) -> Result<Closure, LoadError> {
    parse(text, Path::new("test.json"), &LoadOptions::default())
}

fn fixture(name: &str) -> Closure {
    let p = format!("{}/tests/fixtures/load/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&p).unwrap();
    parse(&text, Path::new(&p), &LoadOptions::default()).unwrap()
}

fn get<'c>(c: &'c Closure, base: &str) -> &'c PathInfo {
    c.paths
        .get(&crate::store::StorePath::from_base_name(base).unwrap())
        .unwrap()
}

#[test]
fn nix_2_8_record() {
    let c = fixture("path-info-2.8.json");
    assert_eq!(c.paths.len(), 5);
    assert!(c.invalid.is_empty() && c.warnings.is_empty(), "{c:?}");
    let app = get(&c, APP);
    assert_eq!(app.nar_size, Some(664));
    assert_eq!(app.reported_closure_size, Some(2248));
    assert_eq!(app.references.len(), 4);
    assert!(app.references.contains(&app.path), "self reference kept");
    assert_eq!(
        app.nar_hash.as_ref().unwrap().to_sri(),
        "sha256-W7rwo1QpAHct59ExSj3QANi4iT2r6WPx7ay3JlTv0pM="
    );
    assert_eq!(
        app.deriver.as_ref().unwrap().to_string(),
        "2zl23q18sdi6niv97kjkw43is5zjzy0n-app-1.0.drv"
    );
    assert_eq!(app.registration_time, Some(1796034524));
    assert_eq!(app.ultimate, Some(true));
}

#[test]
fn every_shape_reads_the_same_closure() {
    let want = fixture("path-info-2.8.json");
    for name in [
        "path-info-2.3.json",
        "path-info-2.15.json",
        "path-info-2.19.json",
        "path-info-2.23.json",
        "path-info-2.33-format1.json",
        "path-info-format2.json",
        "path-info-format3.json",
    ] {
        let c = fixture(name);
        assert_eq!(c.paths.len(), 5, "{name}");
        for (p, w) in &want.paths {
            let g = &c.paths[p];
            assert_eq!(g.nar_hash, w.nar_hash, "{name} {p}");
            assert_eq!(g.nar_size, w.nar_size, "{name} {p}");
            assert_eq!(g.references, w.references, "{name} {p}");
            assert_eq!(g.reported_closure_size, w.reported_closure_size, "{name}");
        }
        assert_eq!(c.invalid.len(), 1, "{name}");
        assert!(c.invalid[0].path.contains("gone-1.0"), "{name}");
        assert!(
            c.warnings
                .iter()
                .any(|w| w.to_string().contains("gone-1.0")),
            "{name}: {:?}",
            c.warnings
        );
    }
}

#[test]
fn nulls_and_signatures() {
    let c = fixture("path-info-2.23.json");
    let data = get(&c, "ap98wcl04q5cxhfmpi4222jir16qbcrl-data-2.1");
    assert_eq!(data.deriver, None);
    assert_eq!(data.registration_time, None);
    assert_eq!(data.ca, None);
    for name in ["path-info-format2.json", "path-info-format3.json"] {
        let c = fixture(name);
        let app = get(&c, APP);
        assert_eq!(app.signatures.len(), 1, "{name}");
        assert!(
            app.signatures[0].starts_with("cache.example.org-1:AAAA"),
            "{name}: {:?}",
            app.signatures
        );
        assert_eq!(
            app.deriver.as_ref().unwrap().name(),
            "app-1.0.drv",
            "{name}"
        );
    }
}

#[test]
fn format_2_ca_object_and_store_dir() {
    let text = format!(
        r#"{{"version":2,"storeDir":"/gnu/store","info":{{"{FOO}":{{
            "narHash":"sha256-W7rwo1QpAHct59ExSj3QANi4iT2r6WPx7ay3JlTv0pM=",
            "narSize":10,"references":["{FOO}"],
            "ca":{{"method":"nar","hash":"sha256-EMIJ+giQ/gLIWoxmPKjno3zHZrxbGymgzGGyZvZBIdM="}},
            "deriver":null,"somethingNew":[1,2,3]}}}}}}"#
    );
    let c = load_str(&text).unwrap();
    assert_eq!(c.store_dir.as_str(), "/gnu/store");
    let foo = get(&c, FOO);
    assert!(foo.ca.as_deref().unwrap().contains("\"method\":\"nar\""));
    assert_eq!(foo.references, vec![foo.path.clone()]);
}

#[test]
fn wrapper_in_any_key_order_with_duplicates_and_unknown_keys() {
    let entry = r#"{"narSize":10,"references":[]}"#;
    let text = format!(
        r#"{{"info":{{"{FOO}":{entry},"{APP}":{entry},"{FOO}":{{"narSize":11}}}},
            "later":[1,{{"x":2}}],"storeDir":"/nix/store","version":2}}"#
    );
    assert_eq!(quick_shape(&text), Some(PathInfoShape::Wrapper));
    let c = load_str(&text).unwrap();
    assert_eq!(c.paths.len(), 2);
    assert_eq!(get(&c, FOO).nar_size, Some(11), "the last duplicate wins");
    assert!(
        c.warnings
            .iter()
            .any(|w| w.to_string().contains("listed twice")),
        "{:?}",
        c.warnings
    );
    // Without `version` it is no wrapper: the message says what was seen.
    let e = load_str(&format!(r#"{{"info":{{"{FOO}":{entry}}}}}"#)).unwrap_err();
    assert!(e.to_string().contains("keys [info]"), "{e}");
    // A wrong value in the wrapper still has its position.
    let text = format!("{{\"version\":2,\n\"info\":{{\"{FOO}\":{{\"narSize\":\"x\"}}}}}}");
    match load_str(&text).unwrap_err() {
        LoadError::Json { line, .. } => assert_eq!(line, 2),
        other => panic!("{other}"),
    }
}

/// A base name whose hash encodes `i`.
fn base(i: usize) -> String {
    let h: String = (0..32)
        .map(|k| crate::store::NIX32_ALPHABET[(i >> (5 * (k % 4))) % 32] as char)
        .collect();
    format!("{h}-p{i}")
}

#[test]
fn references_share_the_name_of_the_entry_they_name() {
    let keyed = format!(
        r#"{{"/nix/store/{APP}":{{"narSize":1,"references":["/nix/store/{FOO}"]}},
            "/nix/store/{FOO}":{{"narSize":2,"references":["/nix/store/{FOO}"]}}}}"#
    );
    let array = format!(
        r#"[{{"path":"/nix/store/{APP}","narSize":1,"references":["/nix/store/{FOO}"]}},
            {{"path":"/nix/store/{FOO}","narSize":2,"references":["/nix/store/{FOO}"]}}]"#
    );
    let wrapper = format!(
        r#"{{"version":2,"info":{{"{APP}":{{"narSize":1,"references":["{FOO}"]}},
            "{FOO}":{{"narSize":2,"references":["{FOO}"]}}}}}}"#
    );
    for text in [keyed, array, wrapper] {
        shares_names(&text);
    }
}

fn shares_names(text: &str) {
    let c = load_str(text).unwrap();
    let foo = &get(&c, FOO).path;
    let (key, _) = c.paths.get_key_value(foo).unwrap();
    for r in get(&c, APP)
        .references
        .iter()
        .chain(&get(&c, FOO).references)
    {
        assert_eq!(r, foo);
        assert!(std::ptr::eq(r.name(), foo.name()), "one allocation");
        assert!(std::ptr::eq(key.name(), foo.name()));
    }
}

#[test]
fn hashes_sharing_a_prefix_and_keys_in_both_forms() {
    // Three paths whose hashes agree in their first 8 characters, one of them
    // keyed by its base name; references in both forms.
    let a = "x71ahacbysflg2pf8638mdh69871353b-a-1";
    let b = "x71ahacbaaaaaaaaaaaaaaaaaaaaaaaa-b-1";
    let c = "x71ahacbysflg2pf8638mdh69871353b-c-1";
    let text = format!(
        r#"{{"/nix/store/{a}":{{"narSize":1,"references":["/nix/store/{b}","{c}","/nix/store/{c}"]}},
            "/nix/store/{b}":{{"narSize":2,"references":["{a}"]}},
            "{c}":{{"narSize":3,"references":["/nix/store/{a}"]}}}}"#
    );
    let cl = load_str(&text).unwrap();
    assert_eq!(cl.paths.len(), 3);
    let refs = |x: &str| -> Vec<String> {
        get(&cl, x)
            .references
            .iter()
            .map(|r| r.to_string())
            .collect()
    };
    assert_eq!(refs(a), vec![b.to_string(), c.to_string()]);
    assert_eq!(refs(b), vec![a.to_string()]);
    assert_eq!(refs(c), vec![a.to_string()]);
    assert!(cl.missing_references().is_empty());
}

#[test]
fn empty_documents_are_empty_closures() {
    for text in ["[]", "{}", r#"{"version":2,"info":{}}"#, " \n{ } "] {
        let c = load_str(text).unwrap();
        assert!(c.paths.is_empty() && c.invalid.is_empty(), "{text}");
    }
}

#[test]
fn many_entries_across_chunks_duplicates_unsorted_and_escaped() {
    // More entries than one conversion chunk; the first path is listed again at
    // the end (the last entry wins, with a warning); one key and one reference are
    // spelled with a JSON escape (not interned, same path); out of order.
    let n = 2 * CHUNK + 5;
    let mut entries: Vec<String> = (0..n)
        .rev()
        .map(|i| {
            let r = if i + 1 < n {
                format!(r#""/nix/store/{}""#, base(i + 1))
            } else {
                String::new()
            };
            format!(
                r#""/nix/store/{}":{{"narSize":{i},"references":[{r}]}}"#,
                base(i)
            )
        })
        .collect();
    entries.push(format!(
        r#""/nix/store/{}":{{"narSize":77,"references":[]}}"#,
        base(0)
    ));
    let escaped = base(7).replacen("-p", "-\\u0070", 1);
    entries[1] = entries[1].replace(&base(n - 1), &base(n - 1).replacen("-p", "-\\u0070", 1));
    entries.push(format!(
        r#""/nix/store/{escaped}":{{"narSize":7,"references":["/nix/store/{}"]}}"#,
        base(8)
    ));
    let text = format!("{{{}}}", entries.join(","));
    let c = load_str(&text).unwrap();
    assert_eq!(c.paths.len(), n);
    assert_eq!(get(&c, &base(0)).nar_size, Some(77));
    let twice: Vec<&LoadWarning> = c
        .warnings
        .iter()
        .filter(|w| matches!(w, LoadWarning::ListedTwice { record: false, .. }))
        .collect();
    assert_eq!(twice.len(), 2, "{:?}", c.warnings);
    let p = get(&c, &base(n - 2));
    assert_eq!(p.references, vec![get(&c, &base(n - 1)).path.clone()]);
    assert!(c.missing_references().is_empty());
    let g = crate::graph::ClosureGraph::new(&c, &[]);
    assert_eq!(
        g.roots.len(),
        2,
        "p0 (replaced by an entry without references) and p1 (its only referrer was that entry)"
    );
}

#[test]
fn structured_hash_objects() {
    let text = format!(
        r#"{{"version":2,"storeDir":"/nix/store","info":{{"{FOO}":{{
            "narHash":{{"algorithm":"sha256","format":"base64",
                        "hash":"W7rwo1QpAHct59ExSj3QANi4iT2r6WPx7ay3JlTv0pM="}},
            "narSize":10,"references":[]}}}}}}"#
    );
    let c = load_str(&text).unwrap();
    assert_eq!(
        get(&c, FOO).nar_hash.as_ref().unwrap().to_sri(),
        "sha256-W7rwo1QpAHct59ExSj3QANi4iT2r6WPx7ay3JlTv0pM="
    );
}

#[test]
fn store_dir_from_options_and_document() {
    let text = format!(r#"[{{"path":"/gnu/store/{FOO}","narSize":1,"references":[]}}]"#);
    let e = load_str(&text).unwrap_err();
    assert!(e.to_string().contains("--store-dir"), "{e}");
    let opts = LoadOptions {
        store_dir: Some(StoreDir::new("/gnu/store")),
        ..LoadOptions::default()
    };
    let c = parse(&text, Path::new("t.json"), &opts).unwrap();
    assert_eq!(c.store_dir.as_str(), "/gnu/store");
    // A document's storeDir wins over the options, with a warning.
    let text = format!(
        r#"{{"/nix/store/{FOO}":{{"version":1,"storeDir":"/nix/store","narSize":1,"references":[]}}}}"#
    );
    let c = parse(&text, Path::new("t.json"), &opts).unwrap();
    assert_eq!(c.store_dir.as_str(), "/nix/store");
    assert!(c
        .warnings
        .iter()
        .any(|w| w.to_string().contains("/gnu/store")));
}

#[test]
fn type_errors_have_positions() {
    let text = format!("[\n {{\"path\": \"/nix/store/{FOO}\",\n  \"narSize\": \"big\"}}\n]");
    match load_str(&text).unwrap_err() {
        LoadError::Json { line, message, .. } => {
            assert_eq!(line, 3, "{message}");
            assert!(message.contains("string"), "{message}");
        }
        other => panic!("{other}"),
    }
}

#[test]
fn bad_store_paths_are_located() {
    let text = format!(
        "{{\n\"/nix/store/{FOO}\": {{\n  \"narSize\": 1,\n  \"references\": [\"/nix/store/not-a-path\"]\n}}}}"
    );
    match load_str(&text).unwrap_err() {
        LoadError::Json {
            line,
            column,
            message,
            ..
        } => {
            assert_eq!((line, column), (4, 18), "{message}");
            assert!(message.contains("not-a-path"), "{message}");
        }
        other => panic!("{other}"),
    }
    let e = load_str(r#"[{"narSize": 1}]"#).unwrap_err();
    assert!(
        matches!(e, LoadError::JsonEntry { ref entry, .. } if entry == "[0]"),
        "{e}"
    );
}

#[test]
fn missing_sizes_warn_and_bad_derivers_are_ignored() {
    let text = format!(r#"[{{"path":"/nix/store/{FOO}","deriver":"???"}}]"#);
    let c = load_str(&text).unwrap();
    assert_eq!(get(&c, FOO).nar_size, None);
    assert!(c
        .warnings
        .iter()
        .any(|w| w.to_string().contains("no narSize")));
    assert!(c.warnings.iter().any(|w| w.to_string().contains("deriver")));
}

#[test]
fn invalid_entries_without_a_path_are_still_reported() {
    let c = load_str(r#"[{"valid": false}]"#).unwrap();
    assert_eq!(c.invalid.len(), 1);
    assert_eq!(c.invalid[0].path, "[0]");
}

#[test]
fn classification() {
    let shape = |s: &str| classify(&serde_json::from_str(s).unwrap());
    assert_eq!(shape("[]"), JsonShape::PathInfo(PathInfoShape::Array));
    assert_eq!(shape("{}"), JsonShape::PathInfo(PathInfoShape::Keyed));
    assert_eq!(
        shape(r#"{"version":2,"storeDir":"/x","info":{}}"#),
        JsonShape::PathInfo(PathInfoShape::Wrapper)
    );
    assert_eq!(
        shape(r#"{"closure":[{"path":"/nix/store/x","narSize":1}]}"#),
        JsonShape::StructuredAttrs
    );
    assert_eq!(shape(r#"{"kind":"nixcut-snapshot"}"#), JsonShape::Snapshot);
    assert!(matches!(shape("[1]"), JsonShape::Unknown(_)));
    assert!(matches!(shape("\"x\""), JsonShape::Unknown(_)));
}

/// A document of every shape, over 4 MiB, with what makes entries differ: invalid
/// entries, a duplicate, escapes, an entry with its own store dir, structured hashes
/// and `ca` objects (whose `},"` look like an entry's end), missing references.
fn varied(shape: &str, n: usize) -> String {
    let h = |i: usize| {
        format!(
            "{:0>32}",
            crate::store::encode_nix32(&(i as u64).to_le_bytes())
        )
        .chars()
        .rev()
        .take(32)
        .collect::<String>()
    };
    let mut entries = Vec::new();
    for i in 0..n {
        let base = format!("{}-p{i}", h(i));
        let refs: Vec<String> = (1..4)
            .map(|k| format!("{}-p{}", h((i * 7 + k) % (n + 3)), (i * 7 + k) % (n + 3)))
            .collect();
        let full = |b: &str| format!("/nix/store/{b}");
        let mut e = serde_json::json!({
            "narHash": if i % 5 == 0 {
                serde_json::json!({"algorithm": "sha256", "format": "base64",
                    "hash": "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="})
            } else {
                serde_json::json!("sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
            },
            "narSize": i * 13,
            "ca": if i % 3 == 0 { serde_json::json!({"method": "nar", "hash": "x"}) } else { serde_json::Value::Null },
            "signatures": [format!("k:{i}")],
            "valid": i % 97 != 5,
        });
        let key = if shape == "versioned" {
            base.clone()
        } else {
            full(&base)
        };
        let refs: Vec<String> = if shape == "versioned" {
            refs
        } else {
            refs.iter().map(|r| full(r)).collect()
        };
        e["references"] = serde_json::json!(refs);
        if i % 1000 == 7 {
            e["storeDir"] = serde_json::json!("/nix/store");
        }
        entries.push((key, e));
    }
    // A duplicate (the last one kept).
    let dup = entries[10].clone();
    entries.insert(20, dup);
    let mut text = match shape {
        "array" => {
            let items: Vec<String> = entries
                .iter()
                .map(|(k, e)| {
                    let body = serde_json::to_string(e).unwrap();
                    format!(
                        "{{\"path\":{},{}",
                        serde_json::to_string(k).unwrap(),
                        &body[1..]
                    )
                })
                .collect();
            format!("[{}]", items.join(",\n"))
        }
        _ => {
            let items: Vec<String> = entries
                .iter()
                .enumerate()
                .map(|(i, (k, e))| {
                    let v = if i % 89 == 3 {
                        "null".to_string()
                    } else {
                        e.to_string()
                    };
                    format!("{}: {v}", serde_json::to_string(k).unwrap())
                })
                .collect();
            let body = format!("{{{}}}", items.join(", "));
            if shape == "versioned" {
                format!("{{\"version\":2,\"storeDir\":\"/nix/store\",\"info\":{body},\"x\":[1]}}\n")
            } else {
                body
            }
        }
    };
    // An escaped character in one key and one reference.
    text = text.replacen("-p1234\"", "\\u002dp1234\"", 2);
    text
}

#[test]
fn a_pathless_invalid_entry_still_names_the_store_dir() {
    let text = format!(
        r#"[{{"valid":false,"storeDir":"/gnu/store"}},{{"path":"/gnu/store/{APP}","narSize":1,"references":[]}}]"#
    );
    let c = load_str(&text).unwrap();
    assert_eq!(c.store_dir.as_str(), "/gnu/store");
    assert_eq!(c.paths.len(), 1);
    assert_eq!(c.invalid.len(), 1);
    assert_eq!(c.invalid[0].path, "[0]");
}

#[test]
fn a_document_parsed_on_every_core_reads_like_a_whole_one() {
    let opts = LoadOptions::default();
    for (shape, kind) in [
        ("array", PathInfoShape::Array),
        ("object", PathInfoShape::Keyed),
        ("versioned", PathInfoShape::Wrapper),
    ] {
        let text = varied(shape, 22_000);
        assert!(text.len() > PARALLEL_BYTES, "{shape}: {}", text.len());
        let p = Path::new("big.json");
        // Split indeed (a wrong guess would fall back to the whole-document read).
        let open = json_parts::skip_ws(&text, 0);
        let parts = match kind {
            PathInfoShape::Array => {
                json_parts::parse_array::<RawEntry, _>(&text, open, CHUNK, path_first, array_entry)
                    .map(|(c, _)| c.len())
            }
            PathInfoShape::Keyed => {
                json_parts::parse_map::<Text, Option<RawEntry>>(&text, open, CHUNK, entry_key)
                    .map(|(c, _)| c.len())
            }
            PathInfoShape::Wrapper => wrapper_parts(&text, open).map(|w| w.info.len()),
        };
        assert!(parts.is_some_and(|n| n > 1), "{shape}");
        let split = parse_shape_split(&text, p, &opts, kind, 0)
            .unwrap()
            .finish();
        let whole = parse_shape_split(&text, p, &opts, kind, usize::MAX)
            .unwrap()
            .finish();
        assert!(split.paths.len() > 20_000, "{shape}");
        assert!(split.paths.iter().eq(whole.paths.iter()), "{shape}");
        assert_eq!(split.invalid, whole.invalid, "{shape}");
        assert_eq!(split.warnings, whole.warnings, "{shape}");
        assert!(
            split
                .warnings
                .iter()
                .any(|w| w.to_string().contains("listed twice")),
            "{shape}"
        );
        // Broken documents: the same error either way.
        for cut in [text.len() / 2, text.len() - 2] {
            let broken = format!("{}]}}x", &text[..cut]);
            let a = parse_shape_split(&broken, p, &opts, kind, 0).err().unwrap();
            let b = parse_shape_split(&broken, p, &opts, kind, usize::MAX)
                .err()
                .unwrap();
            assert_eq!(a.to_string(), b.to_string(), "{shape}");
        }
    }
}

/// Chunks each in path order but not across them (the same path ends one chunk and
/// starts the next): the order across chunks is checked too, so the repeat is warned
/// about and the last entry kept, as in a read of one chunk.
#[test]
fn a_path_repeated_across_a_chunk_boundary_is_found() {
    let a = format!("/nix/store/{}", FOO);
    let b = format!("/nix/store/{}", APP);
    let (first, second) = (
        format!(r#"[["{b}", {{"narSize": 1}}], ["{a}", {{"narSize": 2}}]]"#),
        format!(r#"[["{a}", {{"narSize": 3}}]]"#),
    );
    fn chunk(t: &str) -> crate::load::json_parts::Chunk<(Text<'_>, Option<RawEntry<'_>>)> {
        crate::load::json_parts::Chunk::new(serde_json::from_str(t).unwrap())
    }
    let p = Path::new("chunks.json");
    let timings = crate::timing::Timings::off();
    for chunks in [
        vec![chunk(&first), chunk(&second)],
        vec![crate::load::json_parts::Chunk::new(
            chunk(&first).into_iter().chain(chunk(&second)).collect(),
        )],
    ] {
        let c = convert::Builder::new(&first, p, &timings)
            .add_all(chunks)
            .unwrap()
            .finish();
        assert_eq!(c.paths.len(), 2);
        let foo = c
            .paths
            .values()
            .find(|i| i.path.name() == "libfoo-3.2")
            .unwrap();
        assert_eq!(foo.nar_size, Some(3), "the last entry is kept");
        assert_eq!(
            c.warnings
                .iter()
                .filter(|w| w.to_string().contains("listed twice"))
                .count(),
            1,
            "{:?}",
            c.warnings
        );
    }
}

/// Chunks read on any thread, outside the pool or by a thread the pool does not have:
/// each is converted once, and the results come back in chunk order.
#[test]
fn chunks_are_taken_once_each_in_order_whoever_read_them() {
    use crate::load::json_parts::Chunk;
    let readers = [Some(0), Some(1), None, Some(99), Some(0), Some(1), None];
    for threads in [1, 2, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let work: Vec<(Chunk<u32>, usize)> = readers
            .iter()
            .enumerate()
            .map(|(i, &reader)| {
                let items = (0..=i as u32).collect();
                (Chunk { items, reader }, i * 10)
            })
            .collect();
        let got = pool
            .install(|| convert::on_readers(work, |c, with| (c.items.iter().sum::<u32>(), with)));
        let want: Vec<(u32, usize)> = (0..readers.len())
            .map(|i| ((0..=i as u32).sum(), i * 10))
            .collect();
        assert_eq!(got, want, "{threads} threads");
    }
}
