# The cmake world: a library built by Debian's real cmake as nixpkgs builds one in a
# single output, its consumer, and two builds against it (a CMake user and a pkg-config
# user), for `nixcut split`'s rebuild tests (tests/split.rs).
#
# - ember-2.1.0 (src/ember/), built with the stdenv model (stdenv/: nixpkgs' phases,
#   multiple-outputs hooks and cmake hook, so CMAKE_INSTALL_{BIN,INCLUDE,LIB}DIR are the
#   outputs' absolute directories): libember.so.2.1.0 and libember.a, include/ember.h,
#   bin/ember-tool, lib/cmake/ember/ (install(EXPORT): absolute paths to those
#   directories), lib/pkgconfig/ember.pc (includedir=${prefix}/include, libdir the
#   absolute lib directory), and the data the shared library opens beside itself:
#   lib/ember/kernels-<variant>.dat for gfx1030 and gfx90a.
# - ember-fixed-2.1.0: the same built as `fixed` says, without the hook's directories
#   (relative DESTINATIONs: install(EXPORT) writes paths from _IMPORT_PREFIX).
# - ember-app-1.0: the consumer, a program linked against libember.so that opens one
#   data variant (`ember-app gfx1030`).
# - cmakeUser / pkgconfigUser DEV: builds that get only DEV (find_package(ember CONFIG
#   REQUIRED), `pkg-config --cflags --libs ember`), run what they built, and keep it.
# - with `plan` (a `nixcut split` report as JSON): `split` is ember split by the report's
#   actions (split/split-package.nix) and `app` the consumer rebuilt against split.out.
#
#   nix-build tests/worlds/cmake.nix -A ember-app
#   nix-build tests/worlds/cmake.nix --argstr plan report.json -A split.dev
#   nix-build tests/worlds/cmake.nix --arg code ./split.nix -A code.dev
#                                    # the generated Nix code applied under the stdenv model
#   nix-build tests/worlds/cmake.nix --arg fixed true …   # the same with ember-fixed
{ plan ? null, code ? null, fixed ? false }:
let
  lib = import ./lib.nix { };
  inherit (lib) glibc mkDerivation;
  stdenv = import ./stdenv { };

  # With `fixed`, the build ignores the hook's directories (as a CMakeLists.txt that
  # hard-codes `lib`, `include` and `bin` would). Like nixpkgs' ROCm packages it takes
  # `gpuTargets` (the kernels it writes); `override` changes the arguments.
  emberWith = { fixedDirs, gpuTargets ? [ "gfx1030" "gfx90a" ] }: (stdenv.mkDerivation {
    name = if fixedDirs then "ember-fixed-2.1.0" else "ember-2.1.0";
    src = ./src/ember;
    gpuTargets = builtins.concatStringsSep " " gpuTargets;
    installPhase = ''
      cp -r $src src && chmod -R u+w src
      if [ ${if fixedDirs then "1" else "0"} = 1 ]; then
        cmakeFlags="-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$out"
      fi
      cmake -S src -B build $cmakeFlags \
        -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_SHARED_LINKER_FLAGS="$LDNEW" \
        -DCMAKE_EXE_LINKER_FLAGS="$LDNEW" -DCMAKE_INSTALL_RPATH="$out/lib;${glibc}/lib" \
        >&2
      cmake --build build -j1 >&2
      cmake --install build >&2
      mkdir -p $out/lib/ember
      for t in $gpuTargets; do
        case $t in
          gfx1030) echo 1030 > $out/lib/ember/kernels-gfx1030.dat ;;
          gfx90a) echo 90 > $out/lib/ember/kernels-gfx90a.dat ;;
        esac
      done
    '';
  }) // { override = a: emberWith ({ inherit fixedDirs gpuTargets; } // a); };
  ember = emberWith { fixedDirs = fixed; };

  # The consumer, linked against `pkg`'s out (the package, or its split out).
  app = pkg: mkDerivation {
    name = "ember-app-1.0";
    src = ./src/ember-users/app.c;
    inherit pkg;
    headers = ./src/ember;
    buildCommand = ''
      mkdir -p $out/bin
      gcc $CFLAGS -I$headers $src -L$pkg/lib -lember $LDNEW \
        -Wl,-rpath,$pkg/lib:${glibc}/lib -o $out/bin/ember-app
    '';
  };

  # A consumer that opens ember's include directory at run time (src/ember-users/jit.c).
  jit = mkDerivation {
    name = "ember-jit-1.0";
    src = ./src/ember-users/jit.c;
    headers = ./src/ember;
    buildCommand = ''
      mkdir -p $out/bin
      gcc $CFLAGS -I$headers -DEMBER_INCLUDE="\"${ember}/include\"" $src -L${ember}/lib -lember \
        $LDNEW -Wl,-rpath,${ember}/lib:${glibc}/lib -o $out/bin/ember-jit
    '';
  };

  # The inputs a build against `dev` gets (lib.nix).
  inputsOf = lib.inputsOfDev;

  cmakeUser = dev: mkDerivation {
    name = "ember-cmake-user-1.0";
    inherit dev;
    src = ./src/ember-users;
    buildCommand = ''
      ${inputsOf}
      prefixes=$(echo $inputs | tr ' ' ';')
      cmake -S $src -B build -DCMAKE_PREFIX_PATH="$prefixes" -DCMAKE_C_FLAGS="$CFLAGS" >&2
      cmake --build build >&2
      ./build/user && ./build/user-static
      mkdir -p $out/bin && cp build/user build/user-static $out/bin/
    '';
  };

  pkgconfigUser = dev: mkDerivation {
    name = "ember-pkgconfig-user-1.0";
    inherit dev;
    src = ./src/ember-users/user.c;
    buildCommand = ''
      ${inputsOf}
      PKG_CONFIG_PATH=
      for p in $inputs; do PKG_CONFIG_PATH=$PKG_CONFIG_PATH''${PKG_CONFIG_PATH:+:}$p/lib/pkgconfig; done
      export PKG_CONFIG_PATH
      gcc $CFLAGS $src $(pkg-config --cflags --libs ember) \
        -Wl,-rpath,$(pkg-config --variable=libdir ember) -o user
      ./user
      mkdir -p $out/bin && cp user $out/bin/
    '';
  };

  rewritten = orig: pairs: mkDerivation {
    name = orig.name;
    inherit orig;
    rewrite = ./split/rewrite.py;
    buildCommand = ''
      mkdir -p $out && cp -a $orig/. $out/ && chmod -R u+w $out
      python3 $rewrite $out ${builtins.concatStringsSep " " (map toString pairs)}
    '';
  };

  applied = if code == null then null
    else import ./stdenv/apply-code.nix { inherit code; package = ember; };

  split = if plan == null then null
    else import ./split/split-package.nix { inherit plan; orig = ember; };
in
{
  inherit ember glibc cmakeUser pkgconfigUser split;
  ember-jit = jit;
  ember-app = app ember;
  cmake-user = cmakeUser ember;
  pkgconfig-user = pkgconfigUser ember;
  # The consumer against the split package: the original with ember's hash rewritten
  # (same name, same length), as a rebuild against split.out would link it.
  app = if plan == null then null else rewritten (app ember) [ ember split.out ];
  code = applied;
  # The consumer against the code's out (as `app` for the plan).
  code-app = if code == null then null else rewritten (app ember) [ ember applied.out ];
  code-users = if code == null then null else {
    cmake = cmakeUser applied.dev;
    pkgconfig = pkgconfigUser applied.dev;
  };
  # The users built against the split dev output alone.
  users = if plan == null then null else {
    cmake = cmakeUser split.dev;
    pkgconfig = pkgconfigUser split.dev;
  };
}
