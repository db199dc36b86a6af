# A package whose build installs exactly the files of `orig` (a package of a test world
# built without the stdenv model, or unpacked from Debian packages), built with the
# stdenv model so that a split's code runs under stdenv's hooks: the install copies
# `orig` and points its self references at $out (same name, same length).
{ orig, tag ? "" }:
(import ./. { inherit tag; }).mkDerivation {
  name = orig.name;
  inherit orig;
  rewrite = ../split/rewrite.py;
  installPhase = ''
    mkdir -p "$out"
    cp -a "$orig"/. "$out"/
    chmod -R u+w "$out"
    python3 "$rewrite" "$out" "$orig" "$out"
  '';
}
