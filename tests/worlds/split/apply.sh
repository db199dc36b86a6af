# Builder of the split package (apply.nix): copy the original, point its self
# references at $out (same name, same length), run the plan's actions with the verbs
# (the rewrites among them write each moved sub-path's new output where the package
# named it), then what stdenv adds to a dev output.
set -eu
. "$verbs"
mkdir -p "$out"
cp -a "$orig"/. "$out"/
chmod -R u+w "$out"
python3 "$rewrite" "$out" "$orig" "$out"
python3 "$apply" "$orig" "$orig" > actions.sh
. ./actions.sh
for o in $outputs; do eval "mkdir -p \"\$$o\""; done
propagateDev
