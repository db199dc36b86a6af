//! Property tests of the GPU code reader (issue 11): clang offload bundles, `CCOB`
//! compressed bundles (versions 1–3, zlib and zstd), chains of bundles in one section,
//! and CUDA fatbin containers are built well formed, then truncated at any byte, given
//! absurd counts and sizes, mutated in their header bytes, given bad magics, garbage
//! compressed data, overlapping or nested entries, and sections that run past the file.
//!
//! Whatever the input: no panic, and never more bytes claimed than exist (the sum of
//! the objects' `stored` is at most the bytes of the section that the file holds, or the
//! file's length for a bundle file); a container cut short while its magic is still
//! whole says so in a warning; a well-formed seed reads back exactly. The same inputs,
//! as ELF files in a store tree, go through `nixcut gpu`: exit 0 and JSON whose parts
//! add up to the closure.
//!
//! Case counts are modest (1024 reader cases per property, about a second in all; 8
//! binary runs over six mutated store paths each, one per family, and two fixed runs);
//! `PROPTEST_CASES` raises them.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

use common::*;
use nixcut::elf::{ElfFacts, GpuCode, Section, SectionKind};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::Config;

const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
const NV_MAGIC: u32 = 0xBA55_ED50;
const HOST: &str = "host-x86_64-unknown-linux-gnu-";
const TARGETS: &[&str] = &[
    "gfx900",
    "gfx906",
    "gfx908",
    "gfx90a:xnack+",
    "gfx90a:xnack-",
    "gfx942",
    "gfx1030",
    "gfx1100",
];
const SMS: &[u32] = &[50, 61, 70, 75, 80, 86, 89, 90];

fn cases(n: u32) -> Config {
    proptest_config(n, 256)
}

/// Pseudo-random bytes (xorshift), so payloads are not zeros.
fn noise(seed: u64, n: usize) -> Vec<u8> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect()
}

/// A header field of a container, for targeted mutations.
#[derive(Debug, Clone, Copy)]
struct Field {
    at: usize,
    width: usize,
}

/// One container inside a [`Built`]: where it lies and whether its header records its
/// extent (a version 1 `CCOB` does not: it runs to the section's end).
#[derive(Debug, Clone)]
struct Extent {
    range: Range<usize>,
    magic_len: usize,
    length_known: bool,
}

/// A well-formed section's contents and what a reader must find in it.
#[derive(Clone, Default)]
struct Built {
    bytes: Vec<u8>,
    /// `.hip_fatbin` (bundles) or `.nv_fatbin`.
    hip: bool,
    extents: Vec<Extent>,
    /// Header fields (counts, offsets, sizes, id lengths, versions, methods).
    fields: Vec<Field>,
    /// Header bytes, for random byte mutations.
    headers: Vec<Range<usize>>,
    /// Where the offset fields of uncompressed bundles' entries lie.
    entry_offsets: Vec<usize>,
    /// Compressed data of `CCOB`s.
    compressed: Vec<Range<usize>>,
    /// (target, stored, code) of every device object, in file order.
    want: Vec<(String, u64, u64)>,
}

impl std::fmt::Debug for Built {
    /// Short: the bytes as hex (long runs elided), the containers and the objects.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hex = |r: Range<usize>| -> String {
            self.bytes[r].iter().map(|b| format!("{b:02x}")).collect()
        };
        let headers: Vec<String> = self
            .headers
            .iter()
            .map(|r| format!("{}..{}: {}", r.start, r.end, hex(r.clone())))
            .collect();
        f.debug_struct("Built")
            .field("len", &self.bytes.len())
            .field("hip", &self.hip)
            .field(
                "extents",
                &self.extents.iter().map(|e| &e.range).collect::<Vec<_>>(),
            )
            .field("headers", &headers)
            .field("want", &self.want)
            .finish()
    }
}

impl Built {
    /// Append `other` at the current end (after `pad` zero bytes).
    fn append(&mut self, other: Built, pad: usize) {
        self.bytes.resize(self.bytes.len() + pad, 0);
        let base = self.bytes.len();
        let shift = |r: &Range<usize>| r.start + base..r.end + base;
        self.bytes.extend_from_slice(&other.bytes);
        self.extents.extend(other.extents.iter().map(|e| Extent {
            range: shift(&e.range),
            ..e.clone()
        }));
        self.fields.extend(other.fields.iter().map(|f| Field {
            at: f.at + base,
            width: f.width,
        }));
        self.headers.extend(other.headers.iter().map(shift));
        self.entry_offsets
            .extend(other.entry_offsets.iter().map(|f| f + base));
        self.compressed.extend(other.compressed.iter().map(shift));
        self.want.extend(other.want);
        self.hip = other.hip;
    }
}

/// An uncompressed offload bundle: header, then each entry's payload (8-aligned), no
/// trailing padding. `entries`: (index into [`TARGETS`], or `None` for the host; payload
/// length ≥ 1).
fn offload(entries: &[(Option<usize>, usize)], seed: u64) -> Built {
    let ids: Vec<String> = entries
        .iter()
        .map(|(t, _)| match t {
            Some(i) => format!("hipv4-amdgcn-amd-amdhsa--{}", TARGETS[*i]),
            None => HOST.to_string(),
        })
        .collect();
    let header_len = 32 + ids.iter().map(|id| 24 + id.len()).sum::<usize>();
    let mut b = Built {
        hip: true,
        ..Built::default()
    };
    let mut h = BUNDLE_MAGIC.to_vec();
    h.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    b.fields.push(Field { at: 24, width: 8 });
    let mut off = header_len.next_multiple_of(8);
    let mut payloads = Vec::new();
    for (i, ((t, len), id)) in entries.iter().zip(&ids).enumerate() {
        b.entry_offsets.push(h.len());
        for k in 0..3 {
            b.fields.push(Field {
                at: h.len() + 8 * k,
                width: 8,
            });
        }
        h.extend_from_slice(&(off as u64).to_le_bytes());
        h.extend_from_slice(&(*len as u64).to_le_bytes());
        h.extend_from_slice(&(id.len() as u64).to_le_bytes());
        h.extend_from_slice(id.as_bytes());
        payloads.push((off, noise(seed ^ i as u64, *len)));
        if let Some(t) = t {
            b.want
                .push((TARGETS[*t].to_string(), *len as u64, *len as u64));
        }
        off = (off + len).next_multiple_of(8);
    }
    assert_eq!(h.len(), header_len);
    b.headers.push(0..header_len);
    b.bytes = h;
    for (at, p) in payloads {
        b.bytes.resize(at, 0);
        b.bytes.extend_from_slice(&p);
    }
    b.extents.push(Extent {
        range: 0..b.bytes.len(),
        magic_len: 24,
        length_known: true,
    });
    b
}

fn compress(method: u16, data: &[u8]) -> Vec<u8> {
    if method == 0 {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    } else {
        zstd::bulk::compress(data, 3).unwrap()
    }
}

/// A `CCOB` compressed bundle around the offload bundle `inner` (v1: u32 uncompressed
/// size; v2: u32 total, u32 uncompressed; v3: u64 total, u64 uncompressed; then a u64
/// hash and the data). Its objects' `stored` is their share of the whole compressed
/// bundle, in proportion to their uncompressed size.
fn ccob(version: u16, method: u16, inner: &Built) -> Built {
    let data = compress(method, &inner.bytes);
    let header_len = match version {
        1 => 20,
        2 => 24,
        _ => 32,
    };
    let total = header_len + data.len();
    let mut h = b"CCOB".to_vec();
    h.extend_from_slice(&version.to_le_bytes());
    h.extend_from_slice(&method.to_le_bytes());
    let mut fields = vec![Field { at: 4, width: 2 }, Field { at: 6, width: 2 }];
    match version {
        1 => {
            fields.push(Field { at: 8, width: 4 });
            h.extend_from_slice(&(inner.bytes.len() as u32).to_le_bytes());
        }
        2 => {
            fields.push(Field { at: 8, width: 4 });
            fields.push(Field { at: 12, width: 4 });
            h.extend_from_slice(&(total as u32).to_le_bytes());
            h.extend_from_slice(&(inner.bytes.len() as u32).to_le_bytes());
        }
        _ => {
            fields.push(Field { at: 8, width: 8 });
            fields.push(Field { at: 16, width: 8 });
            h.extend_from_slice(&(total as u64).to_le_bytes());
            h.extend_from_slice(&(inner.bytes.len() as u64).to_le_bytes());
        }
    }
    h.extend_from_slice(&0x0123_4567_89ab_cdefu64.to_le_bytes());
    assert_eq!(h.len(), header_len);
    h.extend_from_slice(&data);
    let whole = inner.bytes.len() as u128;
    Built {
        bytes: h,
        hip: true,
        extents: vec![Extent {
            range: 0..total,
            magic_len: 4,
            length_known: version >= 2,
        }],
        fields,
        headers: vec![Range {
            start: 0,
            end: header_len,
        }],
        entry_offsets: Vec::new(),
        compressed: vec![Range {
            start: header_len,
            end: total,
        }],
        want: inner
            .want
            .iter()
            .map(|(t, _, code)| {
                let stored = (total as u128 * u128::from(*code) / whole) as u64;
                (t.clone(), stored, *code)
            })
            .collect(),
    }
}

/// A CUDA fatbin container: 16-byte header (magic, version, header size, body size),
/// then entries of a 64-byte header (kind, header size, payload size, sm at 28, flags at
/// 40, uncompressed size at 56) and a payload. `entries`: (kind 1 PTX or 2 cubin, index
/// into [`SMS`], payload length ≥ 1, compressed).
fn fatbin(entries: &[(u16, usize, usize, bool)], seed: u64) -> Built {
    let mut b = Built::default();
    let mut body = Vec::new();
    for (i, &(kind, sm, len, compressed)) in entries.iter().enumerate() {
        let at = 16 + body.len();
        let mut e = vec![0u8; 64];
        e[0..2].copy_from_slice(&kind.to_le_bytes());
        e[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
        e[4..8].copy_from_slice(&64u32.to_le_bytes());
        e[8..16].copy_from_slice(&(len as u64).to_le_bytes());
        e[28..32].copy_from_slice(&SMS[sm].to_le_bytes());
        let full = if compressed { 4 * len as u64 } else { 0 };
        if compressed {
            e[40..48].copy_from_slice(&0x2000u64.to_le_bytes());
        }
        e[56..64].copy_from_slice(&full.to_le_bytes());
        for (off, width) in [(0, 2), (4, 4), (8, 8), (28, 4), (40, 8), (56, 8)] {
            b.fields.push(Field {
                at: at + off,
                width,
            });
        }
        b.headers.push(at..at + 64);
        body.extend_from_slice(&e);
        body.extend_from_slice(&noise(seed ^ (i as u64) << 8, len));
        let code = if compressed { full } else { len as u64 };
        b.want
            .push((format!("sm_{}", SMS[sm]), 64 + len as u64, code));
    }
    let mut h = NV_MAGIC.to_le_bytes().to_vec();
    h.extend_from_slice(&1u16.to_le_bytes());
    h.extend_from_slice(&16u16.to_le_bytes());
    h.extend_from_slice(&(body.len() as u64).to_le_bytes());
    b.fields.push(Field { at: 6, width: 2 });
    b.fields.push(Field { at: 8, width: 8 });
    b.headers.push(0..16);
    h.extend_from_slice(&body);
    b.extents.push(Extent {
        range: 0..h.len(),
        magic_len: 4,
        length_known: true,
    });
    b.bytes = h;
    b
}

/// Which kind of well-formed seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Offload,
    Ccob {
        version: u16,
        method: u16,
    },
    /// Offload bundle, `CCOB` v2 (zstd), `CCOB` v3 (zlib), offload bundle, padded apart.
    Chain,
    Fatbin,
}

fn family() -> impl Strategy<Value = Family> {
    prop_oneof![
        2 => Just(Family::Offload),
        1 => Just(Family::Ccob { version: 1, method: 0 }),
        1 => Just(Family::Ccob { version: 1, method: 1 }),
        1 => Just(Family::Ccob { version: 2, method: 0 }),
        1 => Just(Family::Ccob { version: 2, method: 1 }),
        1 => Just(Family::Ccob { version: 3, method: 0 }),
        1 => Just(Family::Ccob { version: 3, method: 1 }),
        2 => Just(Family::Chain),
        2 => Just(Family::Fatbin),
    ]
}

/// The entries of an offload bundle: a host entry first or not, then 1–8 device
/// targets.
fn offload_entries() -> impl Strategy<Value = Vec<(Option<usize>, usize)>> {
    (
        any::<bool>(),
        prop::collection::vec((0..TARGETS.len(), 1usize..3000), 1..8),
    )
        .prop_map(|(host, dev)| {
            let mut v: Vec<(Option<usize>, usize)> = Vec::new();
            if host {
                v.push((None, 16));
            }
            v.extend(dev.into_iter().map(|(t, l)| (Some(t), l)));
            v
        })
}

fn fatbin_entries() -> impl Strategy<Value = Vec<(u16, usize, usize, bool)>> {
    prop::collection::vec((1u16..=2, 0..SMS.len(), 1usize..3000, any::<bool>()), 2..=3)
}

/// A well-formed seed of `family`.
fn seed_of(f: Family) -> impl Strategy<Value = Built> {
    (
        offload_entries(),
        offload_entries(),
        fatbin_entries(),
        fatbin_entries(),
        any::<bool>(),
        (0usize..300, 0usize..300, 0usize..300),
        any::<u64>(),
    )
        .prop_map(move |(o1, o2, f1, f2, two, pads, seed)| match f {
            Family::Offload => offload(&o1, seed),
            Family::Ccob { version, method } => ccob(version, method, &offload(&o1, seed)),
            Family::Chain => {
                let mut b = offload(&o1, seed);
                b.append(ccob(2, 1, &offload(&o2, seed ^ 1)), pads.0);
                b.append(ccob(3, 0, &offload(&o2[..1], seed ^ 2)), pads.1);
                b.append(offload(&o1[..1], seed ^ 3), pads.2);
                b
            }
            Family::Fatbin => {
                let mut b = fatbin(&f1, seed);
                if two {
                    b.append(fatbin(&f2, seed ^ 5), 0);
                }
                b
            }
        })
}

/// An absurd (or merely wrong) value for a header field.
#[derive(Debug, Clone, Copy)]
enum Absurd {
    Zero,
    One,
    Len,
    LenPlusOne,
    Max32,
    Pow32,
    Pow63,
    Max64,
    Any(u64),
}

fn absurd() -> impl Strategy<Value = Absurd> {
    prop_oneof![
        Just(Absurd::Zero),
        Just(Absurd::One),
        Just(Absurd::Len),
        Just(Absurd::LenPlusOne),
        Just(Absurd::Max32),
        Just(Absurd::Pow32),
        Just(Absurd::Pow63),
        Just(Absurd::Max64),
        any::<u64>().prop_map(Absurd::Any),
    ]
}

/// One change to a well-formed seed.
#[derive(Debug, Clone)]
enum Mutation {
    /// Cut the bytes at this index (any byte).
    Truncate(Index),
    /// Set a header field to an absurd value.
    SetField(Index, Absurd),
    /// Overwrite header bytes.
    Bytes(Vec<(Index, u8)>),
    /// Break one container's magic.
    BadMagic(Index, Index, u8),
    /// Replace a `CCOB`'s compressed data with noise (or, with `true`, with a valid
    /// stream of something that is not a bundle).
    Garbage(Index, bool, u64),
    /// Every entry of every uncompressed bundle at the same offset.
    Overlap(u16),
    /// Every entry at offset 0: entries covering their bundle's header (and each other).
    Nest,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => any::<Index>().prop_map(Mutation::Truncate),
        3 => (any::<Index>(), absurd()).prop_map(|(i, a)| Mutation::SetField(i, a)),
        2 => prop::collection::vec((any::<Index>(), any::<u8>()), 1..6).prop_map(Mutation::Bytes),
        1 => (any::<Index>(), any::<Index>(), 1u8..).prop_map(|(c, i, x)| Mutation::BadMagic(c, i, x)),
        1 => (any::<Index>(), any::<bool>(), any::<u64>()).prop_map(|(i, v, s)| Mutation::Garbage(i, v, s)),
        1 => any::<u16>().prop_map(Mutation::Overlap),
        1 => Just(Mutation::Nest),
    ]
}

fn put(b: &mut [u8], f: Field, v: u64) {
    if let Some(dst) = b.get_mut(f.at..f.at + f.width) {
        dst.copy_from_slice(&v.to_le_bytes()[..f.width]);
    }
}

fn apply(b: &Built, muts: &[Mutation]) -> Vec<u8> {
    let mut out = b.bytes.clone();
    for m in muts {
        match m {
            Mutation::Truncate(i) => out.truncate(i.index(out.len() + 1)),
            Mutation::SetField(i, a) => {
                let f = b.fields[i.index(b.fields.len())];
                let len = out.len() as u64;
                let v = match a {
                    Absurd::Zero => 0,
                    Absurd::One => 1,
                    Absurd::Len => len,
                    Absurd::LenPlusOne => len + 1,
                    Absurd::Max32 => u64::from(u32::MAX),
                    Absurd::Pow32 => 1 << 32,
                    Absurd::Pow63 => 1 << 63,
                    Absurd::Max64 => u64::MAX,
                    Absurd::Any(v) => *v,
                };
                put(&mut out, f, v);
            }
            Mutation::Bytes(v) => {
                let header: Vec<usize> = b.headers.iter().flat_map(|r| r.clone()).collect();
                for (i, x) in v {
                    let at = header[i.index(header.len())];
                    if let Some(byte) = out.get_mut(at) {
                        *byte = *x;
                    }
                }
            }
            Mutation::BadMagic(c, i, x) => {
                let e = &b.extents[c.index(b.extents.len())];
                let at = e.range.start + i.index(e.magic_len);
                if let Some(byte) = out.get_mut(at) {
                    *byte ^= x;
                }
            }
            Mutation::Garbage(i, valid, seed) => {
                if b.compressed.is_empty() {
                    continue;
                }
                let r = b.compressed[i.index(b.compressed.len())].clone();
                let r = r.start.min(out.len())..r.end.min(out.len());
                let junk = if *valid {
                    let mut j = compress(*seed as u16 & 1, &noise(*seed, 5000));
                    j.resize(r.len(), 0);
                    j
                } else {
                    noise(*seed, r.len())
                };
                out[r].copy_from_slice(&junk);
            }
            Mutation::Overlap(at) => {
                for &f in &b.entry_offsets {
                    put(&mut out, Field { at: f, width: 8 }, u64::from(*at));
                }
            }
            Mutation::Nest => {
                for &f in &b.entry_offsets {
                    put(&mut out, Field { at: f, width: 8 }, 0);
                }
            }
        }
    }
    out
}

/// Where the section lies in its file.
#[derive(Debug, Clone, Copy)]
enum Declared {
    /// Exactly over the (mutated) bytes.
    Exact,
    /// Over the bytes before any truncation (past the file's end when cut).
    Original,
    /// This much past the bytes.
    Past(u64),
    /// Starting past the file's end.
    Beyond(u64),
}

fn declared() -> impl Strategy<Value = Declared> {
    prop_oneof![
        4 => Just(Declared::Exact),
        2 => Just(Declared::Original),
        1 => prop_oneof![1u64..64, Just(1u64 << 40), Just(1u64 << 62)].prop_map(Declared::Past),
        1 => (0u64..1 << 20).prop_map(Declared::Beyond),
    ]
}

/// A file holding `data` after `pre` bytes of noise and before `post` bytes of noise;
/// the section range the declaration gives.
fn place(
    data: &[u8],
    original: usize,
    pre: usize,
    post: usize,
    d: Declared,
) -> (Vec<u8>, Range<u64>) {
    let mut file = noise(7, pre);
    file.extend_from_slice(data);
    file.extend(noise(11, post));
    let start = pre as u64;
    let range = match d {
        Declared::Exact => start..start + data.len() as u64,
        Declared::Original => start..start + original as u64,
        Declared::Past(x) => start..start + data.len() as u64 + x,
        Declared::Beyond(x) => {
            let s = file.len() as u64 + x;
            s..s + 4096
        }
    };
    (file, range)
}

fn stored_sum(g: &GpuCode) -> u128 {
    g.objects.iter().map(|o| u128::from(o.stored)).sum()
}

/// The bytes of `range` that `len` bytes of file hold.
fn present(range: &Range<u64>, len: u64) -> u64 {
    range.end.min(len).saturating_sub(range.start)
}

fn section(hip: bool, range: Range<u64>) -> Section {
    Section {
        name: if hip { ".hip_fatbin" } else { ".nv_fatbin" }.into(),
        range,
        kind: SectionKind::Gpu,
    }
}

/// A minimal x86-64 ELF shared object: header, `data` as the contents of the GPU
/// section (at offset 64, with `sh_size` of `declared`), `.shstrtab`, then the section
/// headers [null, GPU section, .shstrtab].
fn elf(hip: bool, data: &[u8], declared: u64, machine: u16) -> Vec<u8> {
    let name: &[u8] = if hip { b".hip_fatbin" } else { b".nv_fatbin" };
    let mut strtab = vec![0u8];
    strtab.extend_from_slice(name);
    strtab.push(0);
    let shstrtab_name = strtab.len();
    strtab.extend_from_slice(b".shstrtab\0");
    let data_off = 64usize;
    let str_off = data_off + data.len();
    let sh_off = (str_off + strtab.len()).next_multiple_of(8);
    let mut f = vec![0u8; 64];
    f[0..4].copy_from_slice(b"\x7fELF");
    f[4] = 2; // ELFCLASS64
    f[5] = 1; // little endian
    f[6] = 1; // EV_CURRENT
    f[16..18].copy_from_slice(&3u16.to_le_bytes()); // ET_DYN
    f[18..20].copy_from_slice(&machine.to_le_bytes());
    f[20..24].copy_from_slice(&1u32.to_le_bytes());
    f[40..48].copy_from_slice(&(sh_off as u64).to_le_bytes());
    f[52..54].copy_from_slice(&64u16.to_le_bytes()); // e_ehsize
    f[58..60].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize
    f[60..62].copy_from_slice(&3u16.to_le_bytes()); // e_shnum
    f[62..64].copy_from_slice(&2u16.to_le_bytes()); // e_shstrndx
    f.extend_from_slice(data);
    f.extend_from_slice(&strtab);
    f.resize(sh_off, 0);
    let shdr = |name: u32, ty: u32, flags: u64, off: u64, size: u64, align: u64| {
        let mut s = vec![0u8; 64];
        s[0..4].copy_from_slice(&name.to_le_bytes());
        s[4..8].copy_from_slice(&ty.to_le_bytes());
        s[8..16].copy_from_slice(&flags.to_le_bytes());
        s[24..32].copy_from_slice(&off.to_le_bytes());
        s[32..40].copy_from_slice(&size.to_le_bytes());
        s[48..56].copy_from_slice(&align.to_le_bytes());
        s
    };
    f.extend(vec![0u8; 64]);
    f.extend(shdr(1, 1, 2, data_off as u64, declared, 8));
    f.extend(shdr(
        shstrtab_name as u32,
        3,
        0,
        str_off as u64,
        strtab.len() as u64,
        1,
    ));
    f
}

/// One generated case: a seed, its mutations, and where its section lies.
#[derive(Debug, Clone)]
struct Case {
    seed: Built,
    muts: Vec<Mutation>,
    pre: usize,
    post: usize,
    declared: Declared,
    machine: u16,
}

fn case() -> impl Strategy<Value = Case> {
    (
        family().prop_flat_map(seed_of),
        prop::collection::vec(mutation(), 0..4),
        0usize..100,
        prop_oneof![Just(0usize), 1usize..100],
        declared(),
        prop_oneof![8 => Just(62u16), 1 => Just(224u16), 1 => Just(190u16)],
    )
        .prop_map(|(seed, muts, pre, post, declared, machine)| Case {
            seed,
            muts,
            pre,
            post,
            declared,
            machine,
        })
}

/// Every check on one input: the section reader, the bundle-file reader and the ELF
/// reader neither panic nor claim more bytes than there are.
fn check_reader(c: &Case) -> Result<(), TestCaseError> {
    let data = apply(&c.seed, &c.muts);
    let (file, range) = place(&data, c.seed.bytes.len(), c.pre, c.post, c.declared);
    let have = present(&range, file.len() as u64);
    let g = GpuCode::detect(&file[..], &[section(c.seed.hip, range.clone())], 62, 0);
    prop_assert!(
        stored_sum(&g) <= u128::from(have),
        "{} bytes claimed in a section of {have} bytes in the file: {:?}",
        stored_sum(&g),
        g.objects
    );
    for o in &g.objects {
        prop_assert!(o.stored <= have, "{o:?}");
        prop_assert!(!o.target.is_empty(), "{o:?}");
    }
    prop_assert!(g.warnings.len() <= 8, "{:?}", g.warnings);

    if c.seed.hip {
        let g = GpuCode::detect_bundle_file(&data[..]);
        prop_assert!(
            stored_sum(&g) <= data.len() as u128,
            "bundle file of {} bytes: {} claimed: {:?}",
            data.len(),
            stored_sum(&g),
            g.objects
        );
    }

    let declared = range.end - range.start;
    let e = elf(c.seed.hip, &data, declared, c.machine);
    if let Ok(f) = ElfFacts::parse(&e[..], Some("/nix/store/x-y/lib")) {
        prop_assert!(
            stored_sum(&f.gpu) <= e.len() as u128,
            "ELF of {} bytes (e_machine {}): {} claimed: {:?}",
            e.len(),
            c.machine,
            stored_sum(&f.gpu),
            f.gpu.objects
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(1024))]

    #[test]
    fn malformed_containers_never_panic_nor_claim_more_than_there_is(c in case()) {
        check_reader(&c)?;
    }

    /// Cut anywhere after a container's magic and before its end, with the section
    /// ending at the cut or still at the old end (past the file's): at least one warning.
    #[test]
    fn a_container_cut_short_says_so(
        seed in family().prop_flat_map(seed_of),
        at in any::<Index>(),
        which in any::<Index>(),
        original in any::<bool>(),
        post in prop_oneof![Just(0usize), 1usize..100],
    ) {
        let known: Vec<&Extent> = seed.extents.iter().filter(|e| e.length_known).collect();
        prop_assume!(!known.is_empty());
        let e = known[which.index(known.len())];
        let from = e.range.start + e.magic_len;
        let cut = from + at.index(e.range.end - from);
        let data = &seed.bytes[..cut];
        // The section ends at the cut (noise may follow it in the file), or still at the
        // old end, past the file's (which then ends at the cut).
        let (d, post) = if original { (Declared::Original, 0) } else { (Declared::Exact, post) };
        let (file, range) = place(data, seed.bytes.len(), 16, post, d);
        let g = GpuCode::detect(&file[..], &[section(seed.hip, range.clone())], 62, 0);
        prop_assert!(
            !g.warnings.is_empty(),
            "cut at byte {cut} of {} (container {:?}), section {range:?}: no warning; objects {:?}",
            seed.bytes.len(), e.range, g.objects
        );
        prop_assert!(stored_sum(&g) <= u128::from(present(&range, file.len() as u64)));
        if seed.hip {
            let g = GpuCode::detect_bundle_file(data);
            prop_assert!(!g.warnings.is_empty(), "bundle file cut at {cut}: no warning");
            prop_assert!(stored_sum(&g) <= cut as u128);
        }
    }

    /// The seeds themselves read back exactly, in a section and as a bundle file.
    #[test]
    fn well_formed_seeds_read_back_exactly(
        seed in family().prop_flat_map(seed_of),
        pre in 0usize..64,
        post in 0usize..64,
    ) {
        let (file, range) = place(&seed.bytes, seed.bytes.len(), pre, post, Declared::Exact);
        let g = GpuCode::detect(&file[..], &[section(seed.hip, range)], 62, 0);
        prop_assert!(g.warnings.is_empty(), "{:?}", g.warnings);
        let got: Vec<(String, u64, u64)> =
            g.objects.iter().map(|o| (o.target.clone(), o.stored, o.code)).collect();
        prop_assert_eq!(&got, &seed.want);
        if seed.hip {
            let g = GpuCode::detect_bundle_file(&seed.bytes[..]);
            prop_assert!(g.warnings.is_empty(), "{:?}", g.warnings);
            let got: Vec<(String, u64, u64)> =
                g.objects.iter().map(|o| (o.target.clone(), o.stored, o.code)).collect();
            prop_assert_eq!(&got, &seed.want);
        }
        let e = elf(seed.hip, &seed.bytes, seed.bytes.len() as u64, 62);
        let f = ElfFacts::parse(&e[..], None).expect("a valid ELF");
        let got: Vec<(String, u64, u64)> =
            f.gpu.objects.iter().map(|o| (o.target.clone(), o.stored, o.code)).collect();
        prop_assert_eq!(&got, &seed.want);
    }
}

// ---- Through the binary: `nixcut gpu` over a store tree ----

const NIX32: &[u8] = b"0123456789abcdfghijklmnpqrsvwxyz";

fn store_hash(i: usize) -> String {
    (0..32)
        .map(|k| NIX32[(i * 11 + k * 5 + k * k) % 32] as char)
        .collect()
}

/// The NAR serialisation's size of `p` (strings are a u64 length and the bytes padded
/// to 8), written independently of nixcut's.
fn nar_size(p: &Path) -> u64 {
    fn s(n: u64) -> u64 {
        8 + n.div_ceil(8) * 8
    }
    fn node(p: &Path) -> u64 {
        let m = std::fs::symlink_metadata(p).unwrap();
        let mut n = s(1) + s(4); // "(" "type"
        if m.file_type().is_symlink() {
            let t = std::fs::read_link(p).unwrap();
            n += s(7) + s(6) + s(t.as_os_str().len() as u64);
        } else if m.is_dir() {
            n += s(9);
            let mut names: Vec<_> = std::fs::read_dir(p)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            names.sort();
            for name in names {
                // "entry" "(" "name" NAME "node" NODE ")"
                n += s(5) + s(1) + s(4) + s(name.len() as u64) + s(4) + node(&p.join(&name)) + s(1);
            }
        } else {
            use std::os::unix::fs::PermissionsExt;
            n += s(7);
            if m.permissions().mode() & 0o111 != 0 {
                n += s(10) + s(0);
            }
            n += s(8) + s(m.len());
        }
        n + s(1) // ")"
    }
    s(13) + node(p)
}

/// A store path's name and its files (relative path, contents).
type StorePathFiles = (String, Vec<(&'static str, Vec<u8>)>);

/// A store tree under a temporary root: each `(name, files)` becomes
/// `<root>/nix/store/<hash>-<name>` holding `files`, and one root path refers to all
/// of them; plus the `nix path-info --json` file describing it.
struct Store {
    dir: tempfile::TempDir,
    json: PathBuf,
    root: String,
}

fn store(paths: &[StorePathFiles]) -> Store {
    let dir = tempfile::tempdir().unwrap();
    let sd = dir.path().join("nix/store");
    std::fs::create_dir_all(&sd).unwrap();
    let mut info = serde_json::Map::new();
    let mut refs = Vec::new();
    for (i, (name, files)) in paths.iter().enumerate() {
        let base = format!("{}-{name}", store_hash(i + 1));
        let p = sd.join(&base);
        for (rel, bytes) in files {
            let f = p.join(rel);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(&f, bytes).unwrap();
        }
        let logical = format!("/nix/store/{base}");
        info.insert(
            logical.clone(),
            serde_json::json!({ "narSize": nar_size(&p), "references": [] }),
        );
        refs.push(logical);
    }
    let root_base = format!("{}-gpu-app-1.0", store_hash(0));
    let rp = sd.join(&root_base);
    std::fs::create_dir_all(rp.join("share")).unwrap();
    std::fs::write(rp.join("share/deps"), refs.join("\n")).unwrap();
    let root = format!("/nix/store/{root_base}");
    info.insert(
        root.clone(),
        serde_json::json!({ "narSize": nar_size(&rp), "references": refs }),
    );
    let json = dir.path().join("closure.json");
    std::fs::write(&json, serde_json::Value::Object(info).to_string()).unwrap();
    Store { dir, json, root }
}

/// `nixcut gpu` over the store: exit 0, valid JSON, and the parts add up (to the
/// closure, per path, and over the architectures). Returns the report.
fn run_gpu(st: &Store) -> Result<serde_json::Value, TestCaseError> {
    let cache = tempfile::tempdir().unwrap();
    let out = nixcut()
        .args(["gpu", st.json.to_str().unwrap(), "--store-root"])
        .arg(st.dir.path())
        .args(["--format", "json"])
        .env("XDG_CACHE_HOME", cache.path())
        .output()
        .expect("run nixcut");
    let (code, stdout, stderr) = decode(out);
    prop_assert_eq!(code, 0, "nixcut gpu failed: {}", stderr);
    let v: serde_json::Value = serde_json::from_str(&stdout)
        .map_err(|e| TestCaseError::fail(format!("bad JSON ({e}): {stdout}")))?;
    let n = |v: &serde_json::Value, k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"));
    let closure = n(&v, "closure_size");
    prop_assert_eq!(
        u128::from(n(&v, "gpu_bytes"))
            + u128::from(n(&v, "generic_bytes"))
            + u128::from(n(&v, "host_bytes"))
            + u128::from(n(&v, "unscanned_bytes")),
        u128::from(closure),
        "parts do not add up: {}",
        v
    );
    prop_assert_eq!(n(&v, "unscanned_bytes"), 0, "{}", v);
    let archs: u128 = v["archs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| u128::from(n(a, "bytes")))
        .sum();
    prop_assert_eq!(
        archs,
        u128::from(n(&v, "gpu_bytes")),
        "architectures: {}",
        v
    );
    for p in v["paths"].as_array().unwrap() {
        prop_assert_eq!(
            n(p, "gpu_bytes") + n(p, "generic_bytes") + n(p, "host_bytes"),
            n(p, "size"),
            "{}",
            p
        );
    }
    let total: u64 = std::fs::read_to_string(&st.json)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|j| {
            j.as_object()
                .map(|o| o.values().map(|e| e["narSize"].as_u64().unwrap()).sum())
        })
        .unwrap();
    prop_assert_eq!(closure, total);
    prop_assert!(v["root"].as_str() == Some(st.root.as_str()), "{}", v);
    Ok(v)
}

/// The files a case becomes in a store path: the ELF, and for bundles also the bytes
/// as a standalone bundle file.
fn files_of(c: &Case) -> Vec<(&'static str, Vec<u8>)> {
    let data = apply(&c.seed, &c.muts);
    let declared = match c.declared {
        Declared::Exact | Declared::Beyond(_) => data.len() as u64,
        Declared::Original => c.seed.bytes.len() as u64,
        Declared::Past(x) => data.len() as u64 + x,
    };
    let mut files = vec![("lib/libx.so", elf(c.seed.hip, &data, declared, c.machine))];
    if c.seed.hip {
        files.push(("lib/kernels.co", data));
    }
    files
}

fn family_case(f: Family) -> impl Strategy<Value = Case> {
    (
        seed_of(f),
        prop::collection::vec(mutation(), 0..4),
        declared(),
    )
        .prop_map(|(seed, muts, declared)| Case {
            seed,
            muts,
            pre: 0,
            post: 0,
            declared,
            machine: 62,
        })
}

proptest! {
    #![proptest_config(cases(8))]

    /// Each run holds one mutated input of every family, each in its own store path.
    #[test]
    fn nixcut_gpu_on_malformed_fat_binaries_adds_up(
        cs in (
            family_case(Family::Offload),
            family_case(Family::Ccob { version: 2, method: 1 }),
            family_case(Family::Ccob { version: 3, method: 0 }),
            family_case(Family::Ccob { version: 1, method: 0 }),
            family_case(Family::Chain),
            family_case(Family::Fatbin),
        )
    ) {
        let all = [cs.0, cs.1, cs.2, cs.3, cs.4, cs.5];
        let paths: Vec<StorePathFiles> = all
            .iter()
            .enumerate()
            .map(|(i, c)| (format!("fat{i}-1.0"), files_of(c)))
            .collect();
        let st = store(&paths);
        run_gpu(&st)?;
    }
}

/// Well-formed fat binaries of every family through the binary: each architecture's
/// bytes are what was written, and the parts add up.
#[test]
fn nixcut_gpu_reads_every_family_exactly() {
    let o = offload(
        &[
            (None, 16),
            (Some(3), 1000), // gfx90a:xnack+
            (Some(4), 700),  // gfx90a:xnack-
            (Some(6), 333),  // gfx1030
        ],
        1,
    );
    let v2 = ccob(2, 1, &offload(&[(Some(0), 5000), (Some(7), 3000)], 2));
    let v3 = ccob(3, 0, &offload(&[(Some(5), 4000)], 3));
    let mut chain = offload(&[(Some(1), 900)], 4);
    chain.append(ccob(2, 0, &offload(&[(Some(2), 2000)], 5)), 100);
    let fb = fatbin(&[(2, 4, 1500, false), (1, 7, 800, true)], 6);
    let seeds = [o, v2, v3, chain, fb];
    // Per base architecture: (bytes of code objects in fat binaries and bundle files).
    let mut want: BTreeMap<String, u64> = BTreeMap::new();
    let mut add = |s: &Built| {
        for (t, stored, _) in &s.want {
            let base = t.split(':').next().unwrap().to_string();
            *want.entry(base).or_default() += stored;
        }
    };
    let mut paths = Vec::new();
    for (i, s) in seeds.iter().enumerate() {
        add(s);
        paths.push((
            format!("fat{i}-1.0"),
            vec![(
                "lib/libx.so",
                elf(s.hip, &s.bytes, s.bytes.len() as u64, 62),
            )],
        ));
    }
    // Standalone bundle files (what Tensile and MIOpen install as `.co`): several
    // targets each, uncompressed and compressed.
    let file = offload(&[(None, 16), (Some(0), 1200), (Some(7), 800)], 7);
    let zfile = ccob(3, 1, &offload(&[(Some(1), 1111), (Some(5), 2222)], 8));
    add(&file);
    add(&zfile);
    paths.push((
        "kernels-1.0".into(),
        vec![
            ("lib/kernels.co", file.bytes.clone()),
            ("lib/kernels-z.co", zfile.bytes.clone()),
        ],
    ));
    // Cut short: the section ends 100 bytes into the last entry's payload (gfx1030's);
    // still exit 0, the parts add up, what is there is counted, and a warning names the
    // GPU code.
    let cut = &seeds[0].bytes[..seeds[0].bytes.len() - 100];
    paths.push((
        "cut-1.0".into(),
        vec![("lib/libx.so", elf(true, cut, cut.len() as u64, 62))],
    ));
    *want.get_mut("gfx90a").unwrap() += 1000 + 700;
    *want.get_mut("gfx1030").unwrap() += 333 - 100;
    let st = store(&paths);
    if std::process::Command::new("nix-store")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        // The NAR sizes written match Nix's own.
        for e in std::fs::read_dir(st.dir.path().join("nix/store")).unwrap() {
            let p = e.unwrap().path();
            let out = nix_cmd("nix-store").arg("--dump").arg(&p).output().unwrap();
            assert!(out.status.success());
            assert_eq!(out.stdout.len() as u64, nar_size(&p), "{}", p.display());
        }
    }
    let v = run_gpu(&st).unwrap_or_else(|e| panic!("{e}"));
    let got: BTreeMap<String, u64> = v["archs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["arch"].as_str().unwrap().to_string(),
                a["elf_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, want, "{v}");
    // The bundle files' headers are generic: every architecture needs them.
    let bundles = (file.bytes.len() + zfile.bytes.len()) as u64;
    let in_bundles: u64 = file.want.iter().chain(&zfile.want).map(|w| w.1).sum();
    assert_eq!(
        v["generic_bytes"].as_u64(),
        Some(bundles - in_bundles),
        "{v}"
    );
    let warnings = v["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("cut-1.0")
                && w.as_str().unwrap().contains("GPU code")),
        "no warning about the cut fat binary: {warnings:?}"
    );
}

/// Uncompressed sizes are untrusted header values: a compressed fatbin entry saying
/// 2^64 − 1 bytes beside another entry of its architecture, and a v3 `CCOB` saying
/// 2^64 − 1 bytes whose inner entries say 2^62 bytes each, made `nixcut gpu` panic with
/// `attempt to add with overflow` where it sums an architecture's code bytes (debug
/// builds; release builds wrapped around). Now: a warning, and the sizes the file holds.
#[test]
fn absurd_uncompressed_sizes_do_not_overflow_the_sums() {
    let mut fb = fatbin(&[(2, 4, 100, true), (2, 4, 100, false)], 9);
    put(
        &mut fb.bytes,
        Field {
            at: 16 + 56,
            width: 8,
        },
        u64::MAX,
    );
    let mut inner = offload(
        &[(Some(3), 10), (Some(4), 10), (Some(3), 10), (Some(4), 10)],
        10,
    );
    // The size field of each entry: after its offset field.
    for f in inner.entry_offsets.clone() {
        put(
            &mut inner.bytes,
            Field {
                at: f + 8,
                width: 8,
            },
            1 << 62,
        );
    }
    let mut z = ccob(3, 1, &inner);
    put(&mut z.bytes, Field { at: 16, width: 8 }, u64::MAX);
    for (name, b) in [(".nv_fatbin", &fb.bytes), (".hip_fatbin", &z.bytes)] {
        let g = GpuCode::detect(
            &b[..],
            &[section(name == ".hip_fatbin", 0..b.len() as u64)],
            62,
            0,
        );
        assert!(!g.warnings.is_empty(), "{name}: {:?}", g.objects);
        assert!(
            g.objects.iter().all(|o| o.code < 1 << 40),
            "{name}: {:?}",
            g.objects
        );
    }
    let st = store(&[
        (
            "cuda-1.0".into(),
            vec![(
                "lib/libx.so",
                elf(false, &fb.bytes, fb.bytes.len() as u64, 62),
            )],
        ),
        (
            "rocm-1.0".into(),
            vec![
                ("lib/libx.so", elf(true, &z.bytes, z.bytes.len() as u64, 62)),
                ("lib/kernels.co", z.bytes.clone()),
            ],
        ),
    ]);
    let v = run_gpu(&st).unwrap_or_else(|e| panic!("{e}"));
    assert!(!v["warnings"].as_array().unwrap().is_empty(), "{v}");
}
