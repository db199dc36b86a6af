# The package `orig` split as a `nixcut split` report (JSON file `plan`) says: a plain
# derivation with the report's `outputs`, whose builder (apply.sh) copies `orig`, runs
# the report's actions with shell equivalents of the nixpkgs verbs (verbs.sh), nothing
# else but what stdenv adds to a dev output.
{ plan, orig }:
let
  report = builtins.fromJSON (builtins.readFile plan);
in
builtins.derivation {
  name = orig.name;
  system = builtins.currentSystem;
  builder = "/bin/sh";
  args = [ ./apply.sh ];
  PATH = "/usr/bin:/bin";
  outputs = map (o: o.name) report.outputs;
  inherit orig;
  actions = builtins.toJSON report.actions;
  verbs = ./verbs.sh;
  apply = ./apply.py;
  rewrite = ./rewrite.py;
}
