"""Write the `nixcut gpu` benchmark store: a store-like tree under OUT/nix/store and the
`nix path-info --json` file describing it (OUT/closure.json), plus what was written
(OUT/expected.json: per target and per base architecture, the bytes of code objects
in the fat binary).

  llama-cpp-rocm-bench-1.0   lib/libggml-hip.so: a host x86-64 ELF whose .hip_fatbin
                             holds one uncompressed clang offload bundle (a host entry
                             and 8 device targets of ~128 MiB of pseudo-random bytes
                             each: ~1 GiB on disk); bin/llama-cli, share/doc/README
  rocblas-bench-1.0          lib/librocblas.so (host code only), a small bundle file
                             (gfx1030, gfx90a:xnack-: 64 KiB each)
  glibc-bench-2.40           lib/libc.so.6 (host code only)

usage: gen.py OUT [MIB_PER_TARGET]   (default 128)
"""
import json
import os
import random
import struct
import sys

out = sys.argv[1]
mib = int(sys.argv[2]) if len(sys.argv) > 2 else 128
rng = random.Random(11)
TARGETS = ["gfx900", "gfx906", "gfx908", "gfx90a:xnack+", "gfx90a:xnack-",
           "gfx942", "gfx1030", "gfx1100"]
NIX32 = "0123456789abcdfghijklmnpqrsvwxyz"
CHUNK = 8 << 20


def store_hash(i):
    r = random.Random(1000 + i)
    return "".join(r.choice(NIX32) for _ in range(32))


def noise_to(f, n, seed):
    """n pseudo-random bytes (not sparse: the file really takes the disk)."""
    r = random.Random(seed)
    while n > 0:
        k = min(n, CHUNK)
        f.write(r.randbytes(k))
        n -= k


def bundle_header(entries):
    """An offload bundle header for [(id, offset, size)] (offsets from the bundle's
    start)."""
    h = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", len(entries))
    for id_, off, size in entries:
        h += struct.pack("<QQQ", off, size, len(id_)) + id_.encode()
    return h


def header_len(ids):
    return 32 + sum(24 + len(i) for i in ids)


def write_fat_elf(path, sizes):
    """A host ELF: .text (64 KiB), .hip_fatbin (the bundle, 4096-aligned entries),
    .shstrtab, section headers. Returns {target: bytes}."""
    ids = ["host-x86_64-unknown-linux-gnu-"] + [
        "hipv4-amdgcn-amd-amdhsa--" + t for t in TARGETS]
    hlen = header_len(ids)
    off = (hlen + 4095) // 4096 * 4096
    entries = [(ids[0], off, 0)]
    for id_, size in zip(ids[1:], sizes):
        entries.append((id_, off, size))
        off = (off + size + 4095) // 4096 * 4096
    last = entries[-1]
    bundle_len = last[1] + last[2]
    text_off, text_len = 0x1000, 64 << 10
    fat_off = text_off + text_len
    strtab = b"\0.text\0.hip_fatbin\0.shstrtab\0"
    str_off = fat_off + bundle_len
    sh_off = (str_off + len(strtab) + 7) // 8 * 8
    ehdr = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    ehdr += struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, sh_off, 0, 64, 56, 0, 64, 4, 3)
    assert len(ehdr) == 64

    def shdr(name, ty, flags, off, size, align):
        return struct.pack("<IIQQQQIIQQ", name, ty, flags, 0, off, size, 0, 0, align, 0)

    with open(path, "wb") as f:
        f.write(ehdr)
        f.write(bytes(text_off - 64))
        noise_to(f, text_len, 1)
        h = bundle_header(entries)
        f.write(h)
        pos = len(h)
        for i, (_, eoff, size) in enumerate(entries):
            if size == 0:
                continue
            f.write(bytes(eoff - pos))
            noise_to(f, size, 100 + i)
            pos = eoff + size
        assert pos == bundle_len
        f.write(strtab)
        f.write(bytes(sh_off - (str_off + len(strtab))))
        f.write(bytes(64))
        f.write(shdr(1, 1, 6, text_off, text_len, 16))
        f.write(shdr(7, 1, 2, fat_off, bundle_len, 4096))
        f.write(shdr(19, 3, 0, str_off, len(strtab), 1))
    os.chmod(path, 0o555)
    return {t: s for t, s in zip(TARGETS, sizes)}


def write_file(path, data, mode=0o444):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


def nar_size(p):
    """The NAR serialisation's size: strings are a u64 length and bytes padded to 8."""
    return 24 + node_size(p)  # "nix-archive-1"


def node_size(p):
    s = lambda n: 8 + (n + 7) // 8 * 8
    st = os.lstat(p)
    n = s(1) + s(4)
    if os.path.islink(p):
        n += s(7) + s(6) + s(len(os.readlink(p)))
    elif os.path.isdir(p):
        n += s(9)
        for name in sorted(os.listdir(p)):
            n += s(5) + s(1) + s(4) + s(len(name.encode())) + s(4) + node_size(os.path.join(p, name)) + s(1)
    else:
        n += s(7)
        if st.st_mode & 0o111:
            n += s(10) + s(0)
        n += s(8) + s(st.st_size)
    return n + s(1)


store = os.path.join(out, "nix", "store")
os.makedirs(store, exist_ok=True)
names = ["llama-cpp-rocm-bench-1.0", "rocblas-bench-1.0", "glibc-bench-2.40"]
bases = [f"{store_hash(i)}-{n}" for i, n in enumerate(names)]
dirs = [os.path.join(store, b) for b in bases]

# The big one: sizes differ a little per target, so a swapped pair would show.
sizes = [(mib << 20) - 4096 * i for i in range(len(TARGETS))]
os.makedirs(os.path.join(dirs[0], "lib"), exist_ok=True)
written = write_fat_elf(os.path.join(dirs[0], "lib", "libggml-hip.so"), sizes)
write_file(os.path.join(dirs[0], "bin", "llama-cli"), rng.randbytes(200 << 10), 0o555)
write_file(os.path.join(dirs[0], "share", "doc", "README"),
           ("llama.cpp with HIP for " + ", ".join(TARGETS) + "\n").encode() * 40)
write_file(os.path.join(dirs[1], "lib", "librocblas.so"), rng.randbytes(3 << 20), 0o555)
# A standalone bundle file (what Tensile installs as .co): header, then two code objects.
co_ids = ["hipv4-amdgcn-amd-amdhsa--gfx1030", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"]
co_off = (header_len(co_ids) + 4095) // 4096 * 4096
co = bundle_header([(co_ids[0], co_off, 64 << 10), (co_ids[1], co_off + (64 << 10), 64 << 10)])
write_file(os.path.join(dirs[1], "lib", "rocblas", "library", "Kernels.co"),
           co + bytes(co_off - len(co)) + rng.randbytes(128 << 10))
write_file(os.path.join(dirs[2], "lib", "libc.so.6"), rng.randbytes(2 << 20), 0o555)
for d in dirs:
    os.chmod(d, 0o555)

info = {}
for i, (b, d) in enumerate(zip(bases, dirs)):
    refs = ["/nix/store/" + x for x in (bases if i == 0 else [b])]
    info["/nix/store/" + b] = {"narSize": nar_size(d), "references": sorted(refs)}
with open(os.path.join(out, "closure.json"), "w") as f:
    json.dump(info, f, indent=1)

per_arch = {}
for t, s in written.items():
    per_arch.setdefault(t.split(":")[0], 0)
    per_arch[t.split(":")[0]] += s
with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump({"fat_binary": "/nix/store/" + bases[0] + "/lib/libggml-hip.so",
               "targets": written, "archs": per_arch,
               "closure_size": sum(v["narSize"] for v in info.values())}, f, indent=1)
