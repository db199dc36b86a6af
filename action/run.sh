#!/usr/bin/env bash
# The steps of nixcut's GitHub Action (action.yml), one subcommand each, so that tests
# run them directly:
#
#   run.sh check     resolve BASE and HEAD, run `nixcut check`, write the JSON report,
#                    the comment and the job summary; record the verdict (exits 0
#                    unless it cannot run at all)
#   run.sh comment   post or update the pull-request comment (action/comment.py); a
#                    refusal (a read-only token) is a warning, never the verdict
#   run.sh verdict   exit with the check's code: 0 pass, 1 over budget, 2 error
#   run.sh all       the three in order
#
# Inputs come from the environment (action.yml maps its inputs there):
#   NIXCUT_BASE, NIXCUT_HEAD   a store path, a flake attribute (`.#hello`,
#                              `github:o/r/REV#hello`), or a file nixcut reads (a
#                              `store-paths` file of roots, a path-info JSON, a snapshot)
#   NIXCUT_BASE_REF            when NIXCUT_BASE is empty and NIXCUT_HEAD is a flake
#                              attribute of this repository (`.#attr`): the revision to
#                              build it at (default: the pull request's base SHA)
#   NIXCUT_MAX_GROWTH, NIXCUT_MAX_TOTAL_GROWTH, NIXCUT_MAX_NEW_ROOT_SIZE, NIXCUT_MAX_SIZE
#   NIXCUT_COMMENT (true/false), NIXCUT_COMMENT_ID, NIXCUT_ARTIFACT_URL, GITHUB_TOKEN
#   NIXCUT (the binary, default `nixcut`), NIXCUT_OUT (where the files go, default
#   $RUNNER_TEMP/nixcut)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nixcut=${NIXCUT:-nixcut}
out=${NIXCUT_OUT:-${RUNNER_TEMP:-/tmp}/nixcut}
report="$out/report.json"
comment="$out/comment.md"
state="$out/exit-code"

say() { printf 'nixcut-action: %s\n' "$*" >&2; }

output() {
    if [ -n "${GITHUB_OUTPUT:-}" ]; then
        printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
    fi
}

# The pull request's base SHA, from the event file.
event_base_sha() {
    [ -n "${GITHUB_EVENT_PATH:-}" ] && [ -f "$GITHUB_EVENT_PATH" ] || return 0
    python3 -c 'import json,sys
e = json.load(open(sys.argv[1]))
print(((e.get("pull_request") or {}).get("base") or {}).get("sha") or "")' "$GITHUB_EVENT_PATH"
}

# Build a flake attribute; print what nixcut reads: the one output path, or a file of
# the output paths (a package set) when there are several.
build_flake() {
    local spec=$1 name=$2 json paths
    # `--json` rather than `--print-out-paths` (Nix 2.9 and later): the same paths,
    # from every Nix with flakes.
    if ! json=$(nix build --no-link --json "$spec"); then
        say "cannot build $spec"
        return 2
    fi
    if ! paths=$(printf '%s' "$json" | python3 -c 'import json, sys
for d in json.load(sys.stdin):
    for p in (d.get("outputs") or {}).values():
        print(p)'); then
        say "nix build --json $spec printed no list of outputs"
        return 2
    fi
    if [ -z "$paths" ]; then
        say "$spec built no output path"
        return 2
    fi
    if [ "$(printf '%s\n' "$paths" | wc -l)" -eq 1 ]; then
        printf '%s\n' "$paths"
    else
        printf '%s\n' "$paths" >"$out/$name.store-paths"
        printf '%s\n' "$out/$name.store-paths"
    fi
}

# What nixcut is given for BASE or HEAD ($1: the input, $2: base or head).
resolve() {
    local spec=$1 name=$2
    if [ -z "$spec" ]; then
        say "the $name input is empty"
        return 2
    elif [ -e "$spec" ]; then
        # A store path, ./result, or a file nixcut reads: given as it is.
        printf '%s\n' "$spec"
    elif [[ "$spec" == *'#'* ]]; then
        build_flake "$spec" "$name"
    else
        say "$name \`$spec\` is neither a file, a store path nor a flake attribute (REF#ATTR)"
        return 2
    fi
}

# BASE when only a revision is given: HEAD's flake attribute (`.#attr`, `./sub#attr`)
# at that revision, from a worktree of this repository.
base_at_ref() {
    local ref=$1 head=$2 flake attr src
    flake=${head%%#*}
    attr=${head#*#}
    case "$flake" in
    . | ./* | "") ;;
    *)
        say "base-ref works with a flake attribute of this repository (\`.#attr\`); give base for \`$head\`"
        return 2
        ;;
    esac
    src="$out/base-src"
    rm -rf "$src"
    git fetch --quiet --depth=1 origin "$ref" 2>/dev/null || true
    if ! git worktree add --quiet --detach "$src" "$ref"; then
        say "cannot check out the base revision $ref"
        return 2
    fi
    build_flake "$src/${flake#.}#$attr" base
}

do_check() {
    mkdir -p "$out"
    rm -f "$report" "$comment" "$state"
    local base head code=0
    if [ -z "${NIXCUT_BASE:-}" ]; then
        local ref=${NIXCUT_BASE_REF:-$(event_base_sha)}
        if [ -z "$ref" ] || [[ "${NIXCUT_HEAD:-}" != *'#'* ]]; then
            say "give base (a store path, flake attribute or file), or head as a flake attribute with base-ref (default: the pull request's base)"
            code=2
        else
            base=$(base_at_ref "$ref" "$NIXCUT_HEAD") || code=2
        fi
    else
        base=$(resolve "$NIXCUT_BASE" base) || code=2
    fi
    if [ "$code" -eq 0 ]; then
        head=$(resolve "${NIXCUT_HEAD:-}" head) || code=2
    fi
    if [ "$code" -eq 0 ]; then
        local args=(check "$head" --baseline "$base" --format json)
        [ -n "${NIXCUT_MAX_GROWTH:-}" ] && args+=(--max-growth "$NIXCUT_MAX_GROWTH")
        [ -n "${NIXCUT_MAX_TOTAL_GROWTH:-}" ] && args+=(--max-total-growth "$NIXCUT_MAX_TOTAL_GROWTH")
        [ -n "${NIXCUT_MAX_NEW_ROOT_SIZE:-}" ] && args+=(--max-new-root-size "$NIXCUT_MAX_NEW_ROOT_SIZE")
        [ -n "${NIXCUT_MAX_SIZE:-}" ] && args+=(--max-size "$NIXCUT_MAX_SIZE")
        args+=(--summary "$comment" --comment --comment-id "${NIXCUT_COMMENT_ID:-closure-size}")
        [ -n "${NIXCUT_ARTIFACT_URL:-}" ] && args+=(--artifact-url "$NIXCUT_ARTIFACT_URL")
        say "$nixcut ${args[*]}"
        "$nixcut" "${args[@]}" >"$report"
        code=$?
        case "$code" in 0 | 1) ;; *) code=2 ;; esac
    fi
    if [ -s "$comment" ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
        cat "$comment" >>"$GITHUB_STEP_SUMMARY"
    elif [ "$code" -eq 2 ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
        printf '### nixcut: the closure size check could not run\n\nSee the log of this step.\n' >>"$GITHUB_STEP_SUMMARY"
    fi
    local verdict=error
    case "$code" in 0) verdict=pass ;; 1) verdict=fail ;; esac
    printf '%s\n' "$code" >"$state"
    output verdict "$verdict"
    output exit-code "$code"
    output report "$report"
    output comment "$comment"
    say "verdict: $verdict (exit $code)"
}

do_comment() {
    if [ "${NIXCUT_COMMENT:-true}" != true ]; then
        say "comment: false: no comment posted"
        return 0
    fi
    if [ ! -s "$comment" ]; then
        say "no comment to post (the check did not run)"
        output comment-posted false
        return 0
    fi
    if python3 "$here/comment.py" "$comment"; then
        output comment-posted true
    else
        output comment-posted false
    fi
    return 0
}

do_verdict() {
    local code
    code=$(cat "$state" 2>/dev/null) || code=2
    case "$code" in 0 | 1 | 2) exit "$code" ;; *) exit 2 ;; esac
}

case "${1:-}" in
check) do_check ;;
comment) do_comment ;;
verdict) do_verdict ;;
all)
    do_check
    do_comment
    do_verdict
    ;;
*)
    say "usage: run.sh check|comment|verdict|all"
    exit 2
    ;;
esac
