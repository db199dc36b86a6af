"""Copy-and-rewrite: replace each OLD store path's hash by its NEW one (same length) in
every file and symlink target under DIR. Usage: python3 rewrite.py DIR OLD NEW [OLD NEW…]"""
import os, sys

root, pairs = sys.argv[1], sys.argv[2:]
subs = []
for old, new in zip(pairs[::2], pairs[1::2]):
    o, n = os.path.basename(old), os.path.basename(new)
    assert len(o) == len(n), (old, new)
    subs.append((o.encode(), n.encode()))


def sub(b):
    for o, n in subs:
        b = b.replace(o, n)
    return b


for dirpath, dirs, files in os.walk(root):
    for f in files:
        p = os.path.join(dirpath, f)
        if os.path.islink(p):
            t = os.readlink(p).encode()
            if sub(t) != t:
                os.unlink(p)
                os.symlink(sub(t), p)
            continue
        with open(p, "rb") as fh:
            data = fh.read()
        nd = sub(data)
        if nd != data:
            mode = os.stat(p).st_mode
            os.chmod(p, mode | 0o200)
            with open(p, "wb") as fh:
                fh.write(nd)
            os.chmod(p, mode)
