"""Apply a `nixcut split` report's actions to a copy of the package, the way the
nixpkgs verbs would, and write what a multi-output build writes: each output's own
path where the package named a sub-path that now lives in that output.

Usage (inside the builder): python3 apply.py ORIG OLD_HASH  (env: outputs, $out, …,
actions = the report's actions as JSON). Prints the shell script to run."""
import json, os, shlex, sys

orig, pkg = sys.argv[1], sys.argv[2]
actions = json.loads(os.environ["actions"])
q = shlex.quote
lines = []


def word(s):
    """`$OUTPUT/rest` as a shell word expanding the output; other text quoted."""
    if len(s) > 1 and s[0] == "$" and (s[1].isalnum() or s[1] == "_"):
        name = s[1:].split("/", 1)[0]
        rest = s[1 + len(name):]
        return f'"${name}"' + (q(rest) if rest else "")
    return q(s)


for a in actions:
    kind = a["action"]
    if kind == "delete":
        lines.append(f'rm "$out"/{q(a["path"])}')
    elif kind == "remove-references":
        files = " ".join(f'"$out"/{q(f)}' for f in a["files"])
        lines.append(f'remove_references_to -t {q(a["target"])} {files}')
    elif kind == "shrink-rpath":
        kept = a["kept"].replace(pkg, "$out")
        for f in a["files"]:
            lines.append(f'patchelf --set-rpath "{kept}" "$out"/{q(f)}')
    elif kind == "move":
        lines.append(f'moveToOutput {q(a["path"])} "${a["to"]}"')
    elif kind == "rewrite":
        lines.append(
            f'substituteInPlace "${a["output"]}"/{q(a["file"])} --replace-fail {word(a["from"])} {word(a["to"])}'
        )
    elif kind == "drop-gpu-arch":
        for p in a["paths"]:
            lines.append(f'rm -r "$out"/{q(p)}')
    else:
        sys.exit(f"unknown action {kind}")
print("\n".join(lines))
