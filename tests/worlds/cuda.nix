# A small CUDA-like closure built by real Nix: the baseline that llama-cpp-rocm is
# compared with (issue #276846: 985.6M vs 10.6G). Root: llama-cpp-cuda.
#
#   nix-build tests/worlds/cuda.nix -A llama-cpp-cuda --no-out-link
#   (or tests/worlds/build.sh cuda)
#
# glibc-2.36 and gcc-12.2.0-lib come from lib.nix, so with the same `tag` they are the
# very same store paths as in rocm.nix.
{ tag ? "" }:
let
  lib = import ./lib.nix { inherit tag; };
  inherit (lib) mkDerivation gpubin glibc gcc-lib bash;

  libdirs = ps: builtins.concatStringsSep ":" (map (p: "${p}/lib") ps);
  rpath = ps: "$LDNEW -Wl,-rpath,${libdirs ps}";

  cuda_cudart = mkDerivation {
    name = "cuda_cudart-12.2.140";
    src = ./src/cudart.c;
    buildCommand = ''
      cp $src cudart.c
      mkdir -p $out/lib $out/include
      # elf-needed: RUNPATH gcc-lib/lib supplies NEEDED libhelper.so.
      gcc $CFLAGS -shared -Wl,-soname,libcudart.so.12 -o $out/lib/libcudart.so.12 cudart.c \
        -L${gcc-lib}/lib -lhelper ${rpath [ gcc-lib glibc ]}
      ln -s libcudart.so.12 $out/lib/libcudart.so
      printf 'int cudaGetDeviceCount(int *n);\n' > $out/include/cuda_runtime_api.h
    '';
  };

  libcublas = mkDerivation {
    name = "libcublas-12.2.5.6";
    src = ./src/cublas.c;
    buildCommand = ''
      cp $src cublas.c
      mkdir -p $out/lib
      # Device code: a fatbin container (magic 0xBA55ED50) with sm_80/sm_86/sm_90 cubins
      # and PTX in .nv_fatbin, its wrapper in .nvFatBinSegment.
      python3 ${gpubin} nv-fatbin-c 80 86 90 > fatbin.c
      gcc $CFLAGS -shared -Wl,-soname,libcublas.so.12 -o $out/lib/libcublas.so.12 cublas.c fatbin.c \
        -L${cuda_cudart}/lib -lcudart ${rpath [ cuda_cudart glibc ]}
      ln -s libcublas.so.12 $out/lib/libcublas.so
    '';
  };

  llama-cpp-cuda = mkDerivation {
    name = "llama-cpp-cuda-0.0.0";
    src = ./src/llama-server.c;
    buildCommand = ''
      cp $src llama-server.c
      mkdir -p $out/bin
      # elf-interpreter: PT_INTERP = glibc-2.36/lib/ld-linux-x86-64.so.2.
      gcc $CFLAGS -Wl,--dynamic-linker=${glibc}/lib/ld-linux-x86-64.so.2 \
        -o $out/bin/llama-server llama-server.c \
        -L${libcublas}/lib -L${cuda_cudart}/lib -lcublas -lcudart \
        ${rpath [ libcublas cuda_cudart glibc ]}
    '';
  };
in
{
  inherit glibc gcc-lib bash cuda_cudart libcublas llama-cpp-cuda;
}
