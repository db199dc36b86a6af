#!/usr/bin/env python3
"""Write a binary cache of N generated store paths (default 20,000) for benches/http/run.sh.

    gen.py DIR [N]

DIR gets nix-cache-info, one <hash>.narinfo per path and an uncompressed NAR per path
under nar/ (one regular file naming the path's references, so evidence scans find
them). The reference graph is a random recursive tree (each path i > 0 is referenced
by a path chosen uniformly among 0..i-1, depth about e·ln N, like real closures) plus
two forward references per path; path 0 is the root and its closure is every path.
Prints the root's store path. Deterministic (fixed seed).
"""
import hashlib
import os
import random
import struct
import sys

ALPHABET = "0123456789abcdfghijklmnpqrsvwxyz"


def nar_string(b):
    return struct.pack("<Q", len(b)) + b + b"\0" * ((8 - len(b) % 8) % 8)


def nar_regular(contents):
    return b"".join(
        nar_string(x)
        for x in (b"nix-archive-1", b"(", b"type", b"regular", b"contents")
    ) + nar_string(contents) + nar_string(b")")


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    rng = random.Random(13)
    hashes = set()
    while len(hashes) < n:
        hashes.add("".join(rng.choice(ALPHABET) for _ in range(32)))
    hashes = sorted(hashes, key=lambda _: rng.random())
    names = [f"{hashes[i]}-pkg{i}-1.{i % 7}" for i in range(n)]
    refs = [set() for _ in range(n)]
    for i in range(1, n):
        refs[rng.randrange(0, i)].add(i)
    for i in range(n - 1):
        for _ in range(2):
            refs[i].add(rng.randrange(i + 1, n))
    os.makedirs(os.path.join(out, "nar"), exist_ok=True)
    with open(os.path.join(out, "nix-cache-info"), "w") as f:
        f.write("StoreDir: /nix/store\nWantMassQuery: 1\nPriority: 40\n")
    for i in range(n):
        rs = sorted(names[j] for j in refs[i])
        body = "".join(f"/nix/store/{r}/lib\n" for r in rs).encode() + b"x" * (i % 4096)
        nar = nar_regular(body)
        digest = hashlib.sha256(nar).hexdigest()
        with open(os.path.join(out, "nar", f"{digest}.nar"), "wb") as f:
            f.write(nar)
        with open(os.path.join(out, f"{hashes[i]}.narinfo"), "w") as f:
            f.write(
                f"StorePath: /nix/store/{names[i]}\n"
                f"URL: nar/{digest}.nar\n"
                "Compression: none\n"
                f"FileHash: sha256:{digest}\n"
                f"FileSize: {len(nar)}\n"
                f"NarHash: sha256:{digest}\n"
                f"NarSize: {len(nar)}\n"
                f"References: {' '.join(rs)}\n"
                f"Deriver: {hashes[i]}-pkg{i}-1.drv\n"
            )
    print(f"/nix/store/{names[0]}")


if __name__ == "__main__":
    main()
