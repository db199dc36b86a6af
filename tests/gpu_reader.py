#!/usr/bin/env python3
"""An independent reader of GPU device code, for tests/gpu.rs.

Written from the formats in docs/rocm-runtime.md ("Reading GPU code out of
ELF files"), not from nixcut's code: it walks one store path's files and prints, as
JSON, per base architecture (xnack/sramecc variants grouped) the bytes of
per-architecture files (`file_bytes`: bare AMDGPU code objects and cubins, bundle files
for one architecture, whole) and of code objects inside fat binaries (`elf_bytes`:
`.hip_fatbin` offload-bundle entries, `.nv_fatbin` entries with their entry headers,
and the entries of bundle files for several architectures).

Usage: gpu_reader.py STORE_PATH_DIR
       gpu_reader.py --files DIR

With --files it prints, for every regular file below DIR (by its path relative to DIR),
what the file's bytes are, for tests/classes.rs: `code-object` (an AMDGPU ELF file:
`targets`, its target id with the xnack and sramecc modes of e_flags), `bundle` (an
offload bundle file: `targets`, its device entries), `host` (any other ELF file:
`targets`, the device entries of its `.hip_fatbin` bundles) or `data` (anything else:
`processors`, every `gfx…` word in its bytes, as a master index names the processors it
has kernels for). Files are mapped, not read whole.
Compressed (CCOB) bundles are not read here (no zstd in Python's standard library);
tests/gpu.rs checks those against the uncompressed bundles they were made from.
"""

import json
import mmap
import os
import re
import struct
import sys

BUNDLE = b"__CLANG_OFFLOAD_BUNDLE__"
AMDGPU_MACH = {
    0x2A: "gfx803", 0x2C: "gfx900", 0x2F: "gfx906", 0x30: "gfx908", 0x33: "gfx1010",
    0x35: "gfx1012", 0x36: "gfx1030", 0x37: "gfx1031", 0x3F: "gfx90a", 0x40: "gfx940",
    0x41: "gfx1100", 0x4C: "gfx942", 0x46: "gfx1101", 0x47: "gfx1102", 0x4B: "gfx941",
    0x43: "gfx1150", 0x48: "gfx1200", 0x4E: "gfx1201", 0x4F: "gfx950",
}


def sections(data):
    """(name, offset, size) of every section of a little-endian ELF64 file."""
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    raw = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = raw[shstrndx][4]
    out = []
    for name, _typ, _flags, _addr, off, size in raw:
        end = data.find(b"\0", strtab + name)
        out.append((data[strtab + name:end].decode(), off, size))
    return out


def bundle_entries(data, start):
    """(target, size) of the device entries of the offload bundle at `start`."""
    assert data[start:start + 24] == BUNDLE
    (count,) = struct.unpack_from("<Q", data, start + 24)
    pos = start + 32
    out = []
    for _ in range(count):
        _off, size, idlen = struct.unpack_from("<QQQ", data, pos)
        ident = data[pos + 24:pos + 24 + idlen].decode()
        pos += 24 + idlen
        if ident.startswith("host-"):
            continue
        out.append((ident.split("--", 1)[1], size))
    return out


def base(target):
    return target.split(":")[0]


def add(acc, arch, key, n):
    a = acc.setdefault(arch, {"file_bytes": 0, "elf_bytes": 0})
    a[key] += n


def read_file(path, acc):
    with open(path, "rb") as f:
        data = f.read()
    size = len(data)
    if data.startswith(BUNDLE):
        entries = bundle_entries(data, 0)
        archs = {base(t) for t, _ in entries}
        if len(archs) == 1:
            add(acc, archs.pop(), "file_bytes", size)
        else:
            for t, n in entries:
                add(acc, base(t), "elf_bytes", n)
        return
    if not data.startswith(b"\x7fELF"):
        return
    (machine,) = struct.unpack_from("<H", data, 18)
    (flags,) = struct.unpack_from("<I", data, 48)
    if machine == 224:
        add(acc, AMDGPU_MACH[flags & 0xFF], "file_bytes", size)
        return
    for name, off, length in sections(data):
        if name == ".hip_fatbin":
            # One bundle per code object group; hipcc writes one.
            pos = off
            while pos < off + length:
                i = data.find(BUNDLE, pos, off + length)
                if i < 0:
                    break
                for t, n in bundle_entries(data, i):
                    add(acc, base(t), "elf_bytes", n)
                pos = i + 24
        elif name == ".nv_fatbin":
            pos = off
            while pos + 16 <= off + length:
                magic, _ver, hsize, body = struct.unpack_from("<IHHQ", data, pos)
                if magic != 0xBA55ED50:
                    break
                e = pos + hsize
                end = e + body
                while e < end:
                    ehsize, payload = struct.unpack_from("<IQ", data, e + 4)
                    (sm,) = struct.unpack_from("<I", data, e + 28)
                    add(acc, "sm_%d" % sm, "elf_bytes", ehsize + payload)
                    e += ehsize + payload
                pos = end


def target_id(flags):
    """The target id of an AMDGPU code object's e_flags (code object v4 and later)."""
    t = AMDGPU_MACH.get(flags & 0xFF, "mach-0x%x" % (flags & 0xFF))
    for shift, feature in ((10, "sramecc"), (8, "xnack")):
        mode = (flags >> shift) & 3
        if mode >= 2:
            t += ":%s%s" % (feature, "+" if mode == 3 else "-")
    return t


def describe(path):
    """What one file's bytes are (see --files above)."""
    if os.path.getsize(path) == 0:
        return {"kind": "data", "processors": []}
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        if data[:24] == BUNDLE:
            return {"kind": "bundle", "targets": sorted(t for t, _ in bundle_entries(data, 0))}
        if data[:4] == b"\x7fELF":
            (machine,) = struct.unpack_from("<H", data, 18)
            if machine == 224:
                (flags,) = struct.unpack_from("<I", data, 48)
                return {"kind": "code-object", "targets": [target_id(flags)]}
            targets = set()
            for name, off, length in sections(data):
                if name != ".hip_fatbin":
                    continue
                pos = off
                while pos < off + length:
                    i = data.find(BUNDLE, pos, off + length)
                    if i < 0:
                        break
                    targets.update(t for t, _ in bundle_entries(data, i))
                    pos = i + 24
            return {"kind": "host", "targets": sorted(targets)}
        words = {m.decode() for m in re.findall(rb"gfx[0-9a-f]+", data)}
        return {"kind": "data", "processors": sorted(words)}


def per_file(top):
    out = {}
    for dirpath, _dirs, names in os.walk(top):
        for name in names:
            p = os.path.join(dirpath, name)
            if os.path.isfile(p) and not os.path.islink(p):
                out[os.path.relpath(p, top)] = describe(p)
    json.dump(out, sys.stdout, sort_keys=True)


def main():
    if sys.argv[1] == "--files":
        per_file(sys.argv[2])
        return
    top = sys.argv[1]
    acc = {}
    for dirpath, _dirs, files in os.walk(top):
        for name in sorted(files):
            p = os.path.join(dirpath, name)
            if os.path.islink(p):
                continue
            read_file(p, acc)
    json.dump(acc, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
