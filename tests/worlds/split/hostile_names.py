"""Create the hostile-named package of hostile-names.nix under $out: a runtime library
and static archives whose names attack the generated Nix code (antiquotations, '''),
the shell (quotes, command substitution) and nixpkgs' moveToOutput (spaces, globs,
newlines: `libfoo.so .a` word-splits into the runtime `libfoo.so`), plus CR, bidi and
zero-width characters that no generated line may show."""
import os

out = os.environ["out"]
NAMES = [
    '${builtins.trace "antiquotation in a name" "x"}.a',
    '\'${builtins.trace "quote then antiquotation" "y"}.a',
    "it'''s.a",
    "'$(touch pwned-by-a-name)'.a",
    "$(touch pwned-unquoted).a",
    "with space.a",
    "libfoo.so .a",
    "star*.a",
    "what?.a",
    "[ab].a",
    "new\nline.a",
    "carriage\rreturn.a",
    "bidi\u202eevil.a",
    "zero\u200bwidth.a",
    "back\\slash.a",
]
lib = os.path.join(out, "lib")
os.makedirs(lib)
for n in NAMES:
    with open(os.path.join(lib, n), "w") as f:
        f.write("!<arch>\n")
# What globs and word splitting would catch: the runtime library and archives named
# like the patterns' expansions.
for n in ["libfoo.so", "a.a", "b.a", "what1.a", "starry.a"]:
    with open(os.path.join(lib, n), "w") as f:
        f.write("runtime\n" if n.endswith(".so") else "!<arch>\n")
