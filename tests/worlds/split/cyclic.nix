# A package whose split would make its outputs refer to each other (issue 21, point 2):
# bin/cyc-config prints -I$out/include (headers go to dev), and the CMake targets file
# names ${_IMPORT_PREFIX}/bin/cyc-tool (programs go to bin); dev also propagates bin.
# `nixcut split` must propose outputs without the cycle.
#
#   nix-build tests/worlds/split/cyclic.nix -A cyclic
#   nix-build … --argstr plan report.json -A split.dev
{ plan ? null }:
let
  lib = import ../lib.nix { };
  cyclic = lib.mkDerivation {
    name = "cyclic-1.0";
    buildCommand = ''
      mkdir -p $out/bin $out/include $out/lib/cmake/cyc
      printf '#!/bin/sh\necho -I%s/include\n' "$out" > $out/bin/cyc-config
      printf '#!/bin/sh\necho tool\n' > $out/bin/cyc-tool
      chmod +x $out/bin/*
      echo '#define CYC 1' > $out/include/cyc.h
      cat > $out/lib/cmake/cyc/cycTargets.cmake <<'CMAKE'
      get_filename_component(_IMPORT_PREFIX "''${CMAKE_CURRENT_LIST_FILE}" PATH)
      get_filename_component(_IMPORT_PREFIX "''${_IMPORT_PREFIX}" PATH)
      get_filename_component(_IMPORT_PREFIX "''${_IMPORT_PREFIX}" PATH)
      get_filename_component(_IMPORT_PREFIX "''${_IMPORT_PREFIX}" PATH)
      add_executable(cyc::tool IMPORTED)
      set_target_properties(cyc::tool PROPERTIES IMPORTED_LOCATION "''${_IMPORT_PREFIX}/bin/cyc-tool")
      set_target_properties(cyc::headers PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "''${_IMPORT_PREFIX}/include")
      CMAKE
    '';
  };
in
{
  inherit cyclic;
  split = if plan == null then null else import ./split-package.nix { inherit plan; orig = cyclic; };
}
