# Shell equivalents of the nixpkgs verbs a `nixcut split` plan uses (stdenv's
# multiple-outputs.sh and the remove-references-to / patchelf tools), for plain
# builtins.derivation builds without nixpkgs. Sourced by apply.sh; $outputs lists the
# output names, each a variable holding its path.

# moveToOutput PATTERN DST: move what PATTERN matches in every other output into DST,
# merging directories, then remove parents left empty (multiple-outputs.sh); DST
# `REMOVE` removes it.
moveToOutput() {
    patt=$1 dstOut=$2
    for output in $outputs; do
        eval "srcOut=\$$output"
        [ "$srcOut" = "$dstOut" ] && continue
        for srcPath in "$srcOut"/$patt; do
            [ -e "$srcPath" ] || [ -L "$srcPath" ] || continue
            dstPath="$dstOut${srcPath#"$srcOut"}"
            if [ "$dstOut" = REMOVE ]; then
                rm -r "$srcPath"
            elif [ -d "$dstPath" ] && [ -d "$srcPath" ]; then
                rmdir "$srcPath" --ignore-fail-on-non-empty
                if [ -d "$srcPath" ]; then
                    mv -t "$dstPath" "$srcPath"/*
                    rmdir "$srcPath"
                fi
            else
                mkdir -p "$(readlink -m "$dstPath/..")"
                mv "$srcPath" "$dstPath"
            fi
            srcParent=$(readlink -m "$srcPath/..")
            if [ -n "$(find "$srcParent" -maxdepth 0 -type d -empty 2>/dev/null)" ]; then
                rmdir -p --ignore-fail-on-non-empty "$srcParent" 2>/dev/null || true
            fi
        done
    done
}

# remove-references-to -t TARGET FILES…: replace TARGET's hash with 32 `e`s (same length).
remove_references_to() {
    [ "$1" = -t ] || { echo "remove-references-to: -t TARGET expected" >&2; return 1; }
    target=$2; shift 2
    hash=$(basename "$target" | cut -c1-32)
    for f in "$@"; do
        sed -i "s|$hash|eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee|g" "$f"
    done
}

# substituteInPlace FILE --replace-fail FROM TO…: replace every occurrence, failing when
# FROM is not in the file; --replace-quiet and --replace-warn replace what is there
# (the latter saying so when nothing is) (nixpkgs' substitute).
substituteInPlace() {
    python3 - "$@" <<'PY'
import sys
f, args = sys.argv[1], sys.argv[2:]
data = open(f, "rb").read()
while args:
    flag, old, new, args = args[0], args[1].encode(), args[2].encode(), args[3:]
    if flag not in ("--replace-fail", "--replace-quiet", "--replace-warn"):
        sys.exit(f"substituteInPlace: {flag} is not supported here")
    if old not in data:
        if flag == "--replace-fail":
            sys.exit(f"substituteInPlace: pattern {old!r} does not match anything in {f}")
        if flag == "--replace-warn":
            print(f"substituteInPlace: pattern {old!r} does not match anything in {f}", file=sys.stderr)
    data = data.replace(old, new)
open(f, "wb").write(data)
PY
}

# stdenv's _multioutPropagateDev: with a dev output, $dev/nix-support/propagated-build-inputs
# names the outputs of $outputBin and $outputLib other than dev.
propagateDev() {
    case " $outputs " in *" dev "*) ;; *) return 0 ;; esac
    ob=out ol=out
    case " $outputs " in *" bin "*) ob=bin ;; esac
    case " $outputs " in *" lib "*) ol=lib ;; esac
    po=$(echo "$ob $ol" | tr -s ' ' '\n' | grep -v -F dev | sort -u | tr '\n' ' ')
    [ -n "$po" ] || return 0
    mkdir -p "$dev"/nix-support
    for o in $po; do
        eval "p=\$$o"
        printf ' %s' "$p" >> "$dev"/nix-support/propagated-build-inputs
    done
}
