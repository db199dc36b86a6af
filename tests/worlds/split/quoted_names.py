"""Create the package of quoted-names.nix under $out: include directories and static
archives named with the characters a split's rewrites must carry through pkg-config,
CMake, the shell and Nix (a quote, `$out`, `${x}`, a backtick), each named by the
package's own build-configuration files as they write such names:

- lib/pkgconfig/qN.pc: `includedir=${prefix}/include/NAME` (`${` written `$${`, as
  freedesktop pkg-config reads it; pkgconf has no way to write it);
- lib/cmake/q/qTargets.cmake: `_IMPORT_PREFIX` computed from the file's own place, as
  CMake's exports do, and `Q_LIB_N "${_IMPORT_PREFIX}/lib/libNAME.a"` (`${` written
  `\\${`), `Q_INCLUDE_DIRS` the include directories;
- bin/q-config: prints `$out/include/NAME` for each name, the absolute path."""
import os

out = os.environ["out"]
NAMES = ["foo'x", "foo$out", "foo${x}", "foo`x"]
for d in ["include", "lib/pkgconfig", "lib/cmake/q", "bin"]:
    os.makedirs(os.path.join(out, d), exist_ok=True)
for n in NAMES:
    os.makedirs(os.path.join(out, "include", n))
    with open(os.path.join(out, "include", n, "q.h"), "w") as f:
        f.write("int q;\n")
    with open(os.path.join(out, "lib", f"lib{n}.a"), "w") as f:
        f.write("!<arch>\n")


def cmake(s):
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("${", "\\${")


for i, n in enumerate(NAMES):
    with open(os.path.join(out, "lib/pkgconfig", f"q{i}.pc"), "w") as f:
        f.write(
            f"prefix={out}\nincludedir=${{prefix}}/include/{n.replace('${', '$${')}\n"
            "Name: q\nDescription: quoted names\nVersion: 1\nCflags: -I${includedir}\n"
        )
with open(os.path.join(out, "lib/cmake/q/qTargets.cmake"), "w") as f:
    f.write('get_filename_component(_IMPORT_PREFIX "${CMAKE_CURRENT_LIST_FILE}" PATH)\n')
    for _ in range(3):
        f.write('get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)\n')
    dirs = ";".join("${_IMPORT_PREFIX}/include/" + cmake(n) for n in NAMES)
    f.write(f'set(Q_INCLUDE_DIRS "{dirs}")\n')
    for i, n in enumerate(NAMES):
        f.write(f'set(Q_LIB_{i} "${{_IMPORT_PREFIX}}/lib/lib{cmake(n)}.a")\n')
with open(os.path.join(out, "bin/q-config"), "w") as f:
    f.write("#!/bin/sh\n")
    for n in NAMES:
        # Double quotes keep the quote; single quotes keep `$` and the backtick.
        q = f'"{out}/include/{n}"' if "'" in n else f"'{out}/include/{n}'"
        f.write(f"echo {q}\n")
os.chmod(os.path.join(out, "bin/q-config"), 0o755)
