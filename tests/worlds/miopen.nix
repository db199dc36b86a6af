# MIOpen's per-architecture databases, laid out as rocmPackages.miopen installs them,
# for tests/miopen.rs (built by real Nix; no GPU or ROCm needed):
#
#   nix-build tests/worlds/miopen.nix -A miopen-app --no-out-link
#
# miopen: lib/libMIOpen.so.1.0.60200 (a real shared library, soname libMIOpen.so.1, with
# the libMIOpen.so.1 and libMIOpen.so symlinks) and share/miopen/db beside it, which
# MIOpen opens next to the real path of the library at run time (MIOPEN_SYSTEM_DB_PATH
# moves it). The library's strings do not name the directory: only the GPU library
# table's MIOpen row says it is opened. The databases are real SQLite files named as
# MIOpen ships them, the processor then its CU count (decimal after `_` up to 64 CUs,
# hex glued on above): kernel caches `*.kdb` (506-711 MB each in nixpkgs, see
# nixpkgs#484006; a few hundred KiB here), perf dbs `*.db`, find dbs `*.HIP.fdb.txt`,
# a tuning model `*.tn.model`. Every architecture gets a different size, so the
# per-architecture bytes tell them apart.
# miopen-app: a program that links libMIOpen.so.1 through RUNPATH (the consumer).
{ tag ? "" }:
let
  lib = import ./lib.nix { inherit tag; };
  inherit (lib) mkDerivation glibc;
in
rec {
  inherit glibc;

  miopen = mkDerivation {
    name = "miopen-6.2.2";
    buildCommand = ''
      mkdir -p $out/lib $out/share/miopen/db $out/share/doc/miopen
      cat > miopen.c <<'EOF'
      int miopenCreate(void **handle) { *handle = 0; return 0; }
      EOF
      gcc $CFLAGS -shared -Wl,-soname,libMIOpen.so.1 $LDNEW -Wl,-rpath,${glibc}/lib \
        -o $out/lib/libMIOpen.so.1.0.60200 miopen.c
      ln -s libMIOpen.so.1.0.60200 $out/lib/libMIOpen.so.1
      ln -s libMIOpen.so.1 $out/lib/libMIOpen.so
      python3 - $out/share/miopen/db <<'EOF'
      import sqlite3, sys
      db = sys.argv[1]
      # name -> KiB of kernel blobs (deterministic bytes).
      for name, kib in [
          ("gfx90a68.kdb", 192), ("gfx90a6e.kdb", 160), ("gfx942130.kdb", 256),
          ("gfx1030_36.kdb", 96), ("gfx900_56.kdb", 64),
          ("gfx90a68.db", 24), ("gfx942130.db", 32), ("gfx1030_36.db", 16),
      ]:
          c = sqlite3.connect(db + "/" + name)
          c.execute("PRAGMA page_size = 4096")
          c.execute("CREATE TABLE kern_db (id INTEGER PRIMARY KEY, kernel_name TEXT, kernel_blob BLOB)")
          blob = bytes((i * 7 + len(name)) % 251 for i in range(kib * 1024))
          c.execute("INSERT INTO kern_db (kernel_name, kernel_blob) VALUES (?, ?)", ("k.o", blob))
          c.commit()
          c.close()
      EOF
      printf 'ConvBinWinogradRxSf2x3:1x1-3-3\n' > $out/share/miopen/db/gfx90a68.HIP.fdb.txt
      printf 'ConvBinWinogradRxSf2x3:1x1-3-3,ConvOclDirectFwd:2\n' \
        > $out/share/miopen/db/gfx942130.HIP.fdb.txt
      printf '{"model": "tuna"}\n' > $out/share/miopen/db/gfx908.tn.model
      printf 'MIOpen\n' > $out/share/doc/miopen/README
    '';
  };

  miopen-app = mkDerivation {
    name = "miopen-app-1.0";
    buildCommand = ''
      mkdir -p $out/bin
      cat > app.c <<'EOF'
      int miopenCreate(void **handle);
      int main(void) { void *h; return miopenCreate(&h); }
      EOF
      gcc $CFLAGS -Wl,--dynamic-linker=${glibc}/lib/ld-linux-x86-64.so.2 -o $out/bin/app app.c \
        -L${miopen}/lib -lMIOpen $LDNEW -Wl,-rpath,${miopen}/lib:${glibc}/lib
    '';
  };
}
