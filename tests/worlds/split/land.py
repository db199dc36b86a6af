"""After the moves: in every non-ELF file and symlink of every output, a path
`$out/SUB` whose SUB is no longer in out but in another output is rewritten to that
output's path, as a multi-output build would have written it.
Usage: python3 land.py (env: outputs and one variable per output)."""
import os, re

names = os.environ["outputs"].split()
paths = {n: os.environ[n] for n in names}
out = paths["out"].encode()
pat = re.compile(re.escape(out) + rb"(/[A-Za-z0-9+._?=/,@~-]*)?")


def land(m):
    sub = (m.group(1) or b"").rstrip(b"/")
    if not sub or os.path.lexists(out + sub):
        return m.group(0)
    for n in names:
        if n != "out" and os.path.lexists(paths[n].encode() + sub):
            return paths[n].encode() + m.group(1)
    return m.group(0)


for n in names:
    for dirpath, dirs, files in os.walk(paths[n]):
        for f in files:
            p = os.path.join(dirpath, f)
            if os.path.islink(p):
                t = os.readlink(p).encode()
                nt = pat.sub(land, t)
                if nt != t:
                    os.unlink(p)
                    os.symlink(nt, p)
                continue
            with open(p, "rb") as fh:
                data = fh.read()
            if data[:4] == b"\x7fELF":
                continue
            nd = pat.sub(land, data)
            if nd != data:
                mode = os.stat(p).st_mode
                os.chmod(p, mode | 0o200)
                with open(p, "wb") as fh:
                    fh.write(nd)
                os.chmod(p, mode)
