# Real GPU device code in store paths, built by real Nix with Debian's hipcc (clang 15,
# ROCm 5.2 device libraries; `apt-get install -y hipcc`), for the file-class tests
# (tests/classes.rs). No GPU is needed to build it.
#
#   nix-build tests/worlds/gpu.nix -A rocblas-gpu --no-out-link
#   nix-build tests/worlds/gpu.nix -A miopen-gpu --no-out-link
#
# rocblas-gpu: a fat binary (host ELF whose .hip_fatbin holds gfx900, gfx90a:xnack+ and
# gfx1030 code) and a Tensile-style lib/rocblas/library: bare code objects per target,
# a one-target bundle as a fallback .hsaco, a bundle for two targets, msgpack master
# indexes (per arch and generic), TensileManifest.txt, and a symlink named for an arch.
# rocblas-links: symlinks to every rocblas-gpu Tensile file and a cmake file naming it.
# miopen-gpu: share/miopen/db with SQLite perf and kernel dbs, find dbs and models whose
# names carry the CU count in decimal (gfx900_56) and in hex above 64 (gfx90a68).
#
# gpu-acct: for `nixcut gpu` (tests/gpu.rs): a fat binary for five targets (xnack+ and
# xnack- of gfx90a among them), bare code objects, a bundle for two targets and one for
# one, and a host-only library.
# cuda-wheel: PyPI's nvidia-nvjpeg-cu12 wheel unpacked (real CUDA fat binary; pass
# `--arg nvjpegWheel /path/to/the.whl`, which tests/common fetches with pip).
#
# The expected class of every file is listed in tests/classes.rs.
{ tag ? "", nvjpegWheel ? null }:
let
  lib = import ./lib.nix { inherit tag; };
  inherit (lib) mkDerivation;
in
rec {
  rocblas-gpu = mkDerivation {
    name = "rocblas-gpu-5.7.1";
    src = ../fixtures/hip/scale.hip;
    buildCommand = ''
      export HOME=$NIX_BUILD_TOP
      cp $src scale.hip
      lib=$out/lib/rocblas/library
      mkdir -p $lib $out/include bare
      t=TensileLibrary_Type_SS_Contraction_l_Ailk_Bjlk_Cijk_Dijk

      # Fat binary: one uncompressed bundle in .hip_fatbin, one code object per target.
      hipcc --offload-arch=gfx900 --offload-arch=gfx90a:xnack+ --offload-arch=gfx1030 \
        -shared -fPIC -Wl,-soname,librocblas.so.3 -o $out/lib/librocblas.so.3 scale.hip
      ln -s librocblas.so.3 $out/lib/librocblas.so

      # Bare code objects (what Tensile's .co files are). The link step fails for lack
      # of main, after writing scale-hip-amdgcn-amd-amdhsa-<target>.out per target.
      cp scale.hip bare/
      (cd bare && hipcc -x hip --cuda-device-only --no-gpu-bundle-output \
        --offload-arch=gfx803 --offload-arch=gfx906:xnack- --offload-arch=gfx90a:xnack+ \
        --offload-arch=gfx1030 scale.hip >/dev/null 2>&1) || true
      cp bare/scale-hip-amdgcn-amd-amdhsa-gfx803.out "$lib/''${t}_gfx803.co"
      cp "bare/scale-hip-amdgcn-amd-amdhsa-gfx906:xnack-.out" "$lib/''${t}_gfx906-xnack-.co"
      cp "bare/scale-hip-amdgcn-amd-amdhsa-gfx90a:xnack+.out" "$lib/''${t}_gfx90a-xnack+.co"
      cp bare/scale-hip-amdgcn-amd-amdhsa-gfx1030.out "$lib/''${t}_gfx1030.co"

      # Source kernels: a bundle for one target, and one bundle for two.
      hipcc -x hip --offload-arch=gfx1030 --cuda-device-only -c \
        -o "$lib/''${t}_fallback_gfx1030.hsaco" scale.hip
      hipcc -x hip --offload-arch=gfx900 --offload-arch=gfx1030 --cuda-device-only -c \
        -o $lib/Kernels.co scale.hip

      # msgpack master indexes ({"solutions": []}), the fallback placeholder, the manifest.
      printf '\201\251solutions\220' > $lib/TensileLibrary_lazy_gfx90a.dat
      printf '\201\251solutions\220' > $lib/TensileLibrary.dat
      printf '\201\251solutions\220' > "$lib/''${t}_fallback.dat"
      printf '/build/source/build/Tensile/library/%s\n' Kernels.co TensileLibrary.dat \
        > $lib/TensileManifest.txt
      # A symlink named for one arch (Kernels.so-000-<gfx>.hsaco), to a code object.
      ln -s "''${t}_gfx1030.co" $lib/Kernels.so-000-gfx1030.hsaco

      printf 'int rocblas_create_handle(void **h);\n' > $out/include/rocblas.h
    '';
  };

  # What nixpkgs' outer rocblas does (rocm-runtime.md): symlink every Tensile file of
  # another store path into its own lib/rocblas/library, plus a cmake file naming it.
  rocblas-links = mkDerivation {
    name = "rocblas-links-5.7.1";
    buildCommand = ''
      lib=$out/lib/rocblas/library
      mkdir -p $lib $out/lib/cmake/rocblas
      for f in ${rocblas-gpu}/lib/rocblas/library/*; do ln -s "$f" $lib/; done
      printf 'set(ROCBLAS_LIBRARY_DIR ${rocblas-gpu}/lib)\n' \
        > $out/lib/cmake/rocblas/rocblas-config.cmake
    '';
  };

  miopen-gpu = mkDerivation {
    name = "miopen-gpu-5.7.1";
    buildCommand = ''
      db=$out/share/miopen/db
      mkdir -p $db $out/share/doc/miopen
      # Real SQLite databases (MIOpen's perf db and kernel cache are SQLite).
      python3 - "$db" <<'EOF'
      import sqlite3, sys
      for name in ["gfx900_56.db", "gfx90a68.db", "gfx90a68.kdb", "gfx942130.kdb", "gfx1030_36.db"]:
          c = sqlite3.connect(sys.argv[1] + "/" + name)
          c.execute("CREATE TABLE config (id INTEGER PRIMARY KEY, layout TEXT)")
          c.execute("INSERT INTO config (layout) VALUES ('NCHW')")
          c.commit()
          c.close()
      EOF
      printf 'ConvBinWinogradRxSf2x3:1x1-3-3\n' > $db/gfx90a68.HIP.fdb.txt
      printf 'ConvBinWinogradRxSf2x3:1x1-3-3\n' > $db/gfx1030_36.HIP.fdb.txt
      printf '1-1-1-3x3=ConvOclDirectFwd:1,2,3\n' > $db/gfx900_56.db.txt
      printf '{"model": "tuna"}\n' > $db/gfx908.tn.model
      printf '{"model": "tuna"}\n' > $db/gfx90a_metadata.tn.model
      printf 'MIOpen\n' > $out/share/doc/miopen/README
    '';
  };

  gpu-acct = mkDerivation {
    name = "gpu-acct-1.0";
    src = ../fixtures/hip/scale.hip;
    buildCommand = ''
      export HOME=$NIX_BUILD_TOP
      cp $src scale.hip
      mkdir -p $out/lib/kernels bare
      hipcc --offload-arch=gfx803 --offload-arch=gfx906 --offload-arch=gfx90a:xnack+ \
        --offload-arch=gfx90a:xnack- --offload-arch=gfx1030 \
        -shared -fPIC -Wl,-soname,libkern.so.1 -o $out/lib/libkern.so.1 scale.hip
      cp scale.hip bare/
      (cd bare && hipcc -x hip --cuda-device-only --no-gpu-bundle-output \
        --offload-arch=gfx908 --offload-arch=gfx1031 scale.hip >/dev/null 2>&1) || true
      cp bare/scale-hip-amdgcn-amd-amdhsa-gfx908.out $out/lib/kernels/k_gfx908.co
      cp bare/scale-hip-amdgcn-amd-amdhsa-gfx1031.out $out/lib/kernels/k_gfx1031.co
      hipcc -x hip --offload-arch=gfx900 --offload-arch=gfx1030 --cuda-device-only -c \
        -o $out/lib/kernels/pair.co scale.hip
      hipcc -x hip --offload-arch=gfx1010 --cuda-device-only -c \
        -o $out/lib/kernels/one.hsaco scale.hip
      printf 'int host_only(void) { return 1; }\n' > host.c
      gcc -shared -fPIC -o $out/lib/libhost.so host.c
    '';
  };

  cuda-wheel =
    if nvjpegWheel == null then
      throw "cuda-wheel needs --arg nvjpegWheel /path/to/nvidia_nvjpeg_cu12-*.whl"
    else
      mkDerivation {
        name = "libnvjpeg-12.4.0.76";
        src = nvjpegWheel;
        buildCommand = ''
          python3 -m zipfile -e $src wheel
          mkdir -p $out/lib
          cp wheel/nvidia/nvjpeg/lib/libnvjpeg.so.12 $out/lib/
          ln -s libnvjpeg.so.12 $out/lib/libnvjpeg.so
        '';
      };
}
