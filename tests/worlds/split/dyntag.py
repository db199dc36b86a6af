"""Change every dynamic entry of tag FROM into tag TO in a little-endian ELF64 file:
python3 dyntag.py FILE FROM TO (tags as integers, 0x… allowed)."""
import struct, sys

path, old, new = sys.argv[1], int(sys.argv[2], 0), int(sys.argv[3], 0)
data = bytearray(open(path, "rb").read())
assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "ELF64 LE expected"
phoff, = struct.unpack_from("<Q", data, 0x20)
phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
changed = 0
for i in range(phnum):
    p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
    if p_type != 2:  # PT_DYNAMIC
        continue
    for at in range(p_offset, p_offset + p_filesz, 16):
        tag, = struct.unpack_from("<q", data, at)
        if tag == old:
            struct.pack_into("<q", data, at, new)
            changed += 1
        if tag == 0:
            break
assert changed, f"no dynamic entry of tag {old:#x}"
open(path, "wb").write(data)
