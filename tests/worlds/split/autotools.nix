# The autotools-like world: spark-1.0 (../src/spark: a configure script and a Makefile
# that write the configured directories, absolute, into its pkg-config file and its
# spark-config script), built with the stdenv model so that with several outputs
# stdenv's configure flags (--bindir, --includedir, --libdir, --mandir, --docdir) put
# each part in its output; its consumer, and builds against its dev output through
# pkg-config and through spark-config. With `code` (a `nixcut split` report's Nix code)
# the same, spark split by that code (../stdenv/apply-code.nix).
#
#   nix-build tests/worlds/split/autotools.nix -A spark            # or -A spark-app
#   nix-build tests/worlds/split/autotools.nix --arg code ./split.nix -A code.dev
{ code ? null }:
let
  lib = import ../lib.nix { };
  inherit (lib) glibc mkDerivation;
  stdenv = import ../stdenv { };

  spark = stdenv.mkDerivation {
    name = "spark-1.0";
    src = ../src/spark;
    installPhase = ''
      cp -r $src src && chmod -R u+w src && cd src
      ./configure $configureFlags
      make CFLAGS="$CFLAGS" LDNEW="$LDNEW -Wl,-rpath,${glibc}/lib" $installFlags install >&2
    '';
  };

  # The consumer, linked against `pkg`'s out (`dev` for its header).
  app = pkg: dev: mkDerivation {
    name = "spark-app-1.0";
    src = ../src/spark/app.c;
    inherit pkg dev;
    buildCommand = ''
      mkdir -p $out/bin
      gcc $CFLAGS -I$dev/include $src -L$pkg/lib -lspark $LDNEW \
        -Wl,-rpath,$pkg/lib:${glibc}/lib -o $out/bin/spark-app
    '';
  };

  # Builds given only `dev` (and what its propagated-build-inputs names, as stdenv
  # does): through pkg-config, and through spark-config found on PATH.
  user = dev: mkDerivation {
    name = "spark-user-1.0";
    src = ../src/spark/app.c;
    inherit dev;
    buildCommand = ''
      ${lib.inputsOfDev}
      PKG_CONFIG_PATH= PATH_ADD=
      for p in $inputs; do
        PKG_CONFIG_PATH=$PKG_CONFIG_PATH''${PKG_CONFIG_PATH:+:}$p/lib/pkgconfig
        PATH_ADD=$PATH_ADD''${PATH_ADD:+:}$p/bin
      done
      export PKG_CONFIG_PATH
      gcc $CFLAGS $src $(pkg-config --cflags --libs spark) \
        -Wl,-rpath,$(pkg-config --variable=libdir spark):${glibc}/lib -o user-pc
      ./user-pc
      config=$(PATH=$PATH_ADD:$PATH command -v spark-config)
      gcc $CFLAGS $src $($config --cflags) $($config --libs) \
        -Wl,-rpath,$($config --libdir):${glibc}/lib -o user-config
      ./user-config
      mkdir -p $out/bin && cp user-pc user-config $out/bin/
    '';
  };

  applied = if code == null then null
    else import ../stdenv/apply-code.nix { inherit code; package = spark; };
in
{
  inherit spark;
  spark-app = app spark spark;
  spark-user = user spark;
  code = applied;
  code-app = if code == null then null else app applied.out applied.dev;
  code-user = if code == null then null else user applied.dev;
}
