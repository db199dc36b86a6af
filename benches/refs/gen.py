"""Write one benchmark package: files of mixed sizes, half random bytes, half text,
with the given store paths' hashes planted at random offsets.

usage: gen.py OUT MIB SEED [STORE_PATH...]
"""
import os
import random
import sys

out, mib, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3]
refs = [os.path.basename(p)[:32] for p in sys.argv[4:]]
rng = random.Random(seed)
words = [
    "kernel", "library", "symbol", "section", "runtime", "tensile", "gfx", "dat",
    "object", "loader", "path", "index", "manifest", "config", "build", "share",
]
os.makedirs(os.path.join(out, "lib", "data"), exist_ok=True)
budget = mib * 1024 * 1024
i = 0
while budget > 0:
    size = min(budget, rng.choice([4096, 65536, 1 << 20, 8 << 20, 32 << 20]))
    budget -= size
    if i % 2 == 0:
        data = bytearray(rng.randbytes(size))
    else:
        line = (" ".join(rng.choice(words) for _ in range(12)) + "\n").encode()
        data = bytearray((line * (size // len(line) + 1))[:size])
    for r in refs:
        for _ in range(rng.randint(0, 3)):
            off = rng.randrange(0, max(1, size - 32))
            data[off:off + 32] = r.encode()
    # Every file names every reference at least once, at a random place, so Nix
    # registers the whole chain.
    if size > 64:
        for r in refs:
            off = rng.randrange(0, size - 32)
            data[off:off + 32] = r.encode()
    with open(os.path.join(out, "lib", "data", f"f{i:04d}.bin"), "wb") as f:
        f.write(data)
    i += 1
