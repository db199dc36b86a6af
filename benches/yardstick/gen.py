#!/usr/bin/env python3
"""Generate the yardstick inputs: one N-path closure in the three `nix path-info --json`
shapes, and a mass rebuild of it.

    gen.py DIR [N] [SHAPE]

writes DIR/array.json (Nix <= 2.18: a list of objects with `path`), DIR/object.json
(2.19+: keyed by full store path), DIR/versioned.json (2.33+ format 2: `{version,
storeDir, info}` keyed by base name) and DIR/rebuild.json (the object shape after a mass
rebuild: every hash changed, a tenth of the NAR sizes changed, same names and
references). All four describe the same graph.

SHAPE picks the graph (every shape: 4 to 12 references a path, mean 8; one root
references every path nothing else does):

- `shallow` (default): the graph of benches/why.rs (same generator, same seed): path i
  references earlier paths biased towards the first 64 (basic libraries) and its 200
  predecessors (its own family). Most closures are small.
- `layered`: 40 layers of N/40 paths; a path references paths of every lower layer,
  uniformly, so references spread over the whole depth and most paths have large
  closures (issue 24).
- `chain`: path i references path i-1 (one chain through all N paths) and earlier
  paths spread uniformly over the whole graph: the deepest shape, every closure large.
Names model packages with several outputs, scattered through the graph at random: the
N paths are N/5 packages of five outputs (`pkgK-1.J`, `-dev`, `-lib`, `-bin`, `-doc`),
the diff worst case of issue 14.
"""

import os
import sys

ALPHABET = "0123456789abcdfghijklmnpqrsvwxyz"
M64 = (1 << 64) - 1
OUTPUTS = ["", "-dev", "-lib", "-bin", "-doc"]
NAR_HASH = "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="


class Rng:
    def __init__(self, seed):
        self.s = seed

    def next(self):
        s = self.s
        s ^= (s << 13) & M64
        s ^= s >> 7
        s ^= (s << 17) & M64
        self.s = s
        return s

    def below(self, n):
        return self.next() % max(n, 1)


def hashes(n, salt):
    out = []
    for i in range(n):
        x = ((i * 0x9E3779B97F4A7C15) & M64) ^ 0xDEADBEEF ^ salt
        h = []
        for _ in range(32):
            x = (x * 6364136223846793005 + 1442695040888963407) & M64
            h.append(ALPHABET[x >> 59])
        out.append("".join(h))
    return out


LAYERS = 40


def pick(rng, i, n, shape):
    """One reference of path i (> 0) to an earlier path, or None (layered: layer 0)."""
    if shape == "layered":
        lower = (i // max(n // LAYERS, 1)) * max(n // LAYERS, 1)
        return rng.below(lower) if lower > 0 else None
    if shape == "chain":
        return rng.below(i)
    kind = rng.below(3)
    if kind == 0:
        return rng.below(min(64, i))
    if kind == 1:
        return i - 1 - rng.below(min(200, i))
    return rng.below(i)


def generate(n, seed, shape="shallow"):
    rng = Rng(seed)
    sizes, refs = [], []
    for i in range(n):
        magnitude = 10 + rng.below(14)
        sizes.append(1024 + rng.below(1 << magnitude))
        r = set()
        if i > 0:
            for _ in range(4 + rng.below(9)):
                j = pick(rng, i, n, shape)
                if j is not None:
                    r.add(j)
            if shape == "chain":
                r.add(i - 1)
        refs.append(sorted(r))
    referenced = [False] * n
    for r in refs:
        for j in r:
            referenced[j] = True
    refs[n - 1] = sorted(set(refs[n - 1]) | {j for j in range(n - 1) if not referenced[j]})
    return sizes, refs


def names(n, seed):
    rng = Rng(seed)
    perm = list(range(n))
    for i in range(n - 1, 0, -1):  # Fisher-Yates
        j = rng.below(i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return [f"pkg{p // 5}-1.{(p // 5) % 7}{OUTPUTS[p % 5]}" for p in perm]


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    shape = sys.argv[3] if len(sys.argv) > 3 else "shallow"
    if shape not in ("shallow", "layered", "chain"):
        sys.exit(f"gen.py: unknown shape {shape!r} (shallow, layered, chain)")
    os.makedirs(out, exist_ok=True)
    sizes, refs = generate(n, 7, shape)
    nm = names(n, 99)
    for label, salt, sz in [("", 0, sizes), ("rebuild", 0x5EED, None)]:
        hs = hashes(n, salt)
        if sz is None:
            rng = Rng(1234)
            sz = [s + 4096 * (1 + rng.below(64)) if rng.below(10) == 0 else s for s in sizes]
        base = [f"{hs[i]}-{nm[i]}" for i in range(n)]
        full = ["/nix/store/" + b for b in base]
        order = sorted(range(n), key=lambda i: base[i])

        def body(i, refnames, deriver):
            rl = ",".join('"%s"' % refnames[j] for j in refs[i])
            return (
                '"deriver":"%s","narHash":"%s","narSize":%d,"references":[%s],'
                '"registrationTime":1700000000,"signatures":[],"ultimate":false'
                % (deriver, NAR_HASH, sz[i], rl)
            )

        drv = lambda i: "/nix/store/" + hs[i][::-1] + "-" + nm[i] + ".drv"
        if label == "rebuild":
            write(
                os.path.join(out, "rebuild.json"),
                "{" + ",".join('"%s":{%s}' % (full[i], body(i, full, drv(i))) for i in order) + "}",
            )
            continue
        write(
            os.path.join(out, "object.json"),
            "{" + ",".join('"%s":{%s}' % (full[i], body(i, full, drv(i))) for i in order) + "}",
        )
        write(
            os.path.join(out, "array.json"),
            "["
            + ",".join('{"path":"%s",%s,"valid":true}' % (full[i], body(i, full, drv(i))) for i in order)
            + "]",
        )
        write(
            os.path.join(out, "versioned.json"),
            '{"version":2,"storeDir":"/nix/store","info":{'
            + ",".join(
                '"%s":{%s,"ca":null}' % (base[i], body(i, base, drv(i)[len("/nix/store/"):]))
                for i in order
            )
            + "}}",
        )


if __name__ == "__main__":
    main()
