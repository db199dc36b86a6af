#!/usr/bin/env python3
"""Tiny but structurally valid GPU binaries for the test worlds. Deterministic.

  gpubin.py tensile LIST OUTDIR UNIT ABI   write a Tensile library directory
  gpubin.py hip-fatbin-c TARGET...         C header: a clang offload bundle (.hip_fatbin)
  gpubin.py nv-fatbin-c SM...              C header: a CUDA fatbin container (.nv_fatbin)
  gpubin.py blob FILE SIZE OFFSET PATH     binary file holding store PATH so that its 32-char
                                           hash starts at byte OFFSET; elsewhere NUL-rich
                                           pseudo-random bytes (no nix32 runs)

LIST lines are `<file name>\t<target>` (see ../tensile-lists). File kinds:
  *.co, Kernels.so-000-*.hsaco   AMDGPU ELF (e_machine 224, EI_OSABI 64, e_flags = mach|xnack)
  *_fallback_<target>.hsaco      CCOB v2 (zlib) around an offload bundle around an AMDGPU ELF
  other *.hsaco                  uncompressed offload bundle (__CLANG_OFFLOAD_BUNDLE__)
  *.dat                          msgpack map {name, target, blob}
Sizes: UNIT * (1 + sha256(name)[0] % 4) bytes of payload per file.
"""
import hashlib, os, struct, sys, zlib

# e_flags & 0xff (EF_AMDGPU_MACH_*), from LLVM's ELF.h
MACH = {
    "gfx803": 0x2a, "gfx900": 0x2c, "gfx906": 0x2f, "gfx908": 0x30, "gfx90a": 0x3f,
    "gfx940": 0x40, "gfx941": 0x4b, "gfx942": 0x4c, "gfx1010": 0x33, "gfx1012": 0x35,
    "gfx1030": 0x36, "gfx1100": 0x41, "gfx1101": 0x46, "gfx1102": 0x47,
}
XNACK_CAPABLE = {"gfx900", "gfx906", "gfx908", "gfx90a", "gfx940", "gfx941", "gfx942",
                 "gfx1010", "gfx1012"}


def prng(seed, n):
    """n deterministic pseudo-random bytes. Never 32 nix32 chars in a row (p ~ 1e-29)."""
    return hashlib.shake_256(seed.encode()).digest(n)


def parse_target(t):
    """'gfx90a-xnack+' or 'gfx90a:xnack+' -> ('gfx90a', '+')."""
    t = t.replace(":", "-")
    arch, _, rest = t.partition("-")
    xnack = None
    if rest.startswith("xnack"):
        xnack = rest[5:6]
    return arch, xnack


def e_flags(target):
    arch, xnack = parse_target(target)
    flags = MACH[arch]
    if xnack == "+":
        flags |= 0x300
    elif xnack == "-":
        flags |= 0x200
    elif arch in XNACK_CAPABLE:
        flags |= 0x100  # xnack "any"
    return flags


def amdgpu_elf(target, size, seed, abiversion=2):
    """ELF64 ET_DYN for AMDGPU: null, .text (random), .shstrtab sections."""
    text = prng(seed, max(size, 16))
    shstr = b"\0.text\0.shstrtab\0"
    off_text = 64
    off_shstr = off_text + len(text)
    off_sh = (off_shstr + len(shstr) + 7) & ~7
    ident = b"\x7fELF" + bytes([2, 1, 1, 64, abiversion]) + b"\0" * 7
    hdr = ident + struct.pack("<HHIQQQIHHHHHH", 3, 224, 1, 0, 0, off_sh,
                              e_flags(target), 64, 0, 0, 64, 3, 2)
    sh = b"\0" * 64
    sh += struct.pack("<IIQQQQIIQQ", 1, 1, 6, 0, off_text, len(text), 0, 0, 256, 0)
    sh += struct.pack("<IIQQQQIIQQ", 7, 3, 0, 0, off_shstr, len(shstr), 0, 0, 1, 0)
    body = hdr + text + shstr
    return body + b"\0" * (off_sh - len(body)) + sh


def offload_bundle(entries, align=4096):
    """entries: list of (id, bytes). Layout as written by clang-offload-bundler."""
    head = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", len(entries))
    hlen = len(head) + sum(24 + len(i.encode()) for i, _ in entries)
    offs, pos = [], hlen
    for _, data in entries:
        if data:
            pos = (pos + align - 1) // align * align
        offs.append(pos)
        pos += len(data)
    for (ident, data), off in zip(entries, offs):
        head += struct.pack("<QQQ", off, len(data), len(ident)) + ident.encode()
    out = bytearray(head)
    for (_, data), off in zip(entries, offs):
        out += b"\0" * (off - len(out)) + data
    return bytes(out)


def hip_bundle(target, size, seed):
    t = target.replace("-xnack", ":xnack")
    return offload_bundle([("host-x86_64-unknown-linux-gnu-", b""),
                           ("hipv4-amdgcn-amd-amdhsa--" + t, amdgpu_elf(target, size, seed))])


def ccob_v2(data):
    comp = zlib.compress(data, 9)
    h = hashlib.md5(data).digest()[:8]
    total = 24 + len(comp)
    return b"CCOB" + struct.pack("<HHII", 2, 0, total, len(data)) + h + comp


def msgpack_str(s):
    b = s.encode()
    if len(b) < 32:
        return bytes([0xa0 | len(b)]) + b
    return b"\xd9" + bytes([len(b)]) + b if len(b) < 256 else b"\xda" + struct.pack(">H", len(b)) + b


def dat(name, target, size, seed):
    blob = prng(seed, size)
    return (b"\x83" + msgpack_str("name") + msgpack_str(name) + msgpack_str("target")
            + msgpack_str(target) + msgpack_str("blob") + b"\xc6" + struct.pack(">I", len(blob)) + blob)


def tensile(listfile, outdir, unit, abi):
    os.makedirs(outdir, exist_ok=True)
    for line in open(listfile):
        name, target = line.rstrip("\n").split("\t")
        size = unit * (1 + hashlib.sha256(name.encode()).digest()[0] % 4)
        seed = f"{abi}:{name}"
        if name.endswith(".dat"):
            data = dat(name, target, size, seed)
        elif name.endswith(".co") or name.startswith("Kernels.so-"):
            data = amdgpu_elf(target, size, seed, abi)
        elif "_fallback_" in name:
            data = ccob_v2(hip_bundle(target, size, seed))
        else:
            data = hip_bundle(target, size, seed)
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(data)


def c_array(name, section, data):
    lines = [f'__attribute__((used, section("{section}"), aligned(4096)))',
             f"const unsigned char {name}[{len(data)}] = {{"]
    for i in range(0, len(data), 16):
        lines.append("  " + ", ".join(f"0x{b:02x}" for b in data[i:i + 16]) + ",")
    lines.append("};")
    return "\n".join(lines) + "\n"


def wrapper(section, magic, array):
    """The {magic, version, data pointer, unused} struct that the runtime registers."""
    return (f"struct fatbin_wrapper {{ unsigned magic, version; const void *data, *unused; }};\n"
            f'__attribute__((used, section("{section}"), aligned(8)))\n'
            f"const struct fatbin_wrapper {array}_wrapper = {{ 0x{magic:08x}u, 1, {array}, 0 }};\n")


def hip_fatbin_c(targets):
    entries = [("host-x86_64-unknown-linux-gnu-", b"")]
    for t in targets:
        entries.append(("hipv4-amdgcn-amd-amdhsa--" + t, amdgpu_elf(t, 512, "fatbin:" + t)))
    return (c_array("__hip_fatbin", ".hip_fatbin", offload_bundle(entries))
            + wrapper(".hipFatBinSegment", 0x48495046, "__hip_fatbin"))  # "HIPF"


def nv_fatbin_c(sms):
    """Fatbin container: u32 magic 0xBA55ED50, u16 version 1, u16 header size 16, u64 size;
    then entries with a 64-byte header (u16 kind 1=PTX 2=cubin, u16, u32 header size,
    u64 payload size, u32, u32, u16 minor, u16 major, u32 sm, u32, u32, u64, u64, u64)."""
    body = b""
    for sm in sms:
        for kind in (2, 1):
            if kind == 2:  # cubin: ELF64 e_machine 190 (EM_CUDA)
                payload = (b"\x7fELF" + bytes([2, 1, 1, 0x33, 7]) + b"\0" * 7
                           + struct.pack("<HHI", 2, 190, 1) + prng(f"cubin:{sm}", 240))
            else:
                payload = (f"//\n// Generated by NVIDIA NVVM Compiler\n.version 8.2\n"
                           f".target sm_{sm}\n.address_size 64\n").encode()
                payload += b"\0" * (-len(payload) % 8)
            body += struct.pack("<HHIQIIHHIIIQQQ", kind, 0x0101, 64, len(payload), 0, 0,
                                2, 12, sm, 0, 0, 0x11, 0, 0) + payload
    data = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body
    return (c_array("__nv_fatbin", ".nv_fatbin", data)
            + wrapper(".nvFatBinSegment", 0x466243b1, "__nv_fatbin"))


def blob(path, size, hash_offset, store_path):
    """Binary (NUL-rich) file of SIZE bytes holding STORE_PATH once, its hash at HASH_OFFSET."""
    rnd = prng("blob:" + path.rsplit("/", 1)[-1], size)
    data = bytearray(b if i % 3 else 0 for i, b in enumerate(rnd))
    t = store_path.encode()
    start = hash_offset - (t.rindex(b"/") + 1)
    data[start:start + len(t)] = t
    with open(path, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "tensile":
        tensile(args[0], args[1], int(args[2]), int(args[3]))
    elif cmd == "hip-fatbin-c":
        sys.stdout.write(hip_fatbin_c(args))
    elif cmd == "nv-fatbin-c":
        sys.stdout.write(nv_fatbin_c([int(a) for a in args]))
    elif cmd == "blob":
        blob(args[0], int(args[1]), int(args[2]), args[3])
    else:
        sys.exit(f"unknown command {cmd}")
