"""What a build for fewer GPU targets does not write, for the stdenv model's packages:
remove every file or directory under DIR whose name holds an AMD architecture
(`gfx` and digits, an optional letter: gfx90a, gfx1030) other than TARGETS, then the
directories that removal left empty.

Usage: python3 drop_archs.py DIR TARGET…  (a TARGET `all` keeps everything)."""
import os, re, shutil, sys

root, targets = sys.argv[1], set(sys.argv[2:])
if "all" in targets:
    sys.exit(0)
token = re.compile(r"gfx[0-9]+[a-z]?(?![0-9a-z])")
emptied = set()
for dirpath, dirs, files in os.walk(root, topdown=True):
    for name in list(dirs) + files:
        archs = set(token.findall(name))
        if archs and not archs & targets:
            p = os.path.join(dirpath, name)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
                dirs.remove(name)
            else:
                os.remove(p)
            emptied.add(dirpath)
for d in sorted(emptied, key=len, reverse=True):
    while d != root and os.path.isdir(d) and not os.listdir(d):
        os.rmdir(d)
        d = os.path.dirname(d)
