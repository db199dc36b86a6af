# A small ROCm-like closure built by real Nix, modelled on nixpkgs' rocmPackages_5 and
# issue #276846 (llama-cpp-rocm 10.6G vs llama-cpp-cuda 985.6M). Root: llama-cpp-rocm.
#
#   nix-build tests/worlds/rocm.nix -A llama-cpp-rocm --no-out-link
#   (or tests/worlds/build.sh rocm [--arg heavy true] [--argstr version 6.0.0])
#
# Every spot that plants a piece of evidence for nixcut's scanner says which evidence
# kind (SPEC.md, "Evidence kinds") it is for. README.md has the full table.
#
#   version  suffix of tensile/rocblas/rocsparse/rocsolver/hipblas names; a 6.x version
#            uses the rocBLAS 6.2.2 Tensile file names, code object v5 and has no gfx80 group
#   heavy    adds big-blob-1.0 (2 MiB) to llama-cpp-rocm's closure (CI growth gate tests)
#   tag      mixed into every derivation to force distinct store paths
{ version ? "5.7.1", heavy ? false, tag ? "" }:
let
  lib = import ./lib.nix { inherit tag; };
  inherit (lib) mkDerivation gpubin glibc gcc-lib bash;

  major = builtins.head (builtins.splitVersion version);
  series = if major == "5" then "5.7.1" else "6.2.2"; # tensile-lists/<series>/
  codeObjectAbi = if major == "5" then "2" else "3"; # EI_ABIVERSION: v4 = 2, v5 = 3

  libdirs = ps: builtins.concatStringsSep ":" (map (p: "${p}/lib") ps);
  # -Wl,-rpath with --enable-new-dtags ($LDNEW in builder.sh) gives DT_RUNPATH.
  rpath = ps: "$LDNEW -Wl,-rpath,${libdirs ps}";

  # ---- build-only and data leaves -------------------------------------------------

  cmake = mkDerivation {
    name = "cmake-3.27.7";
    buildCommand = ''
      mkdir -p $out/bin $out/share/cmake-3.27/Modules
      printf '#!/bin/sh\necho "cmake version 3.27.7"\n' > $out/bin/cmake
      chmod +x $out/bin/cmake
      printf 'set(HIP_FOUND TRUE)\n' > $out/share/cmake-3.27/Modules/FindHIP.cmake
    '';
  };

  rocm-cmake = mkDerivation {
    name = "rocm-cmake-5.7.1";
    buildCommand = ''
      mkdir -p $out/share/rocm/cmake
      printf 'include(ROCMInstallTargets)\ninclude(ROCMPackageConfigHelpers)\n' \
        > $out/share/rocm/cmake/ROCMConfig.cmake
    '';
  };

  libdrm = mkDerivation {
    name = "libdrm-2.4.118";
    buildCommand = ''
      mkdir -p $out/share/libdrm
      printf '# List of AMDGPU IDs\n1.0.0\n738C,\t01,\tAMD Instinct MI100\n740F,\t02,\tAMD Instinct MI210\n' \
        > $out/share/libdrm/amdgpu.ids
    '';
  };

  zstd = mkDerivation {
    name = "zstd-1.5.5";
    src = ./src/zstd.c;
    buildCommand = ''
      cp $src zstd.c
      mkdir -p $out/lib
      gcc $CFLAGS -shared -Wl,-soname,libzstd.so.1 ${rpath [ glibc ]} -o $out/lib/libzstd.so.1 zstd.c
      ln -s libzstd.so.1 $out/lib/libzstd.so
    '';
  };

  rocm-device-libs = mkDerivation {
    name = "rocm-device-libs-5.7.1";
    buildCommand = ''
      mkdir -p $out/amdgcn/bitcode
      head -c 12288 /dev/zero > $out/amdgcn/bitcode/ocml.bc
      head -c 8192 /dev/zero > $out/amdgcn/bitcode/ockl.bc
    '';
  };

  # The compiler-like path. Nothing NEEDs lib/libLLVM.so, but rocm-runtime's RUNPATH
  # points into this lib/ (elf-runpath-unused).
  rocm-llvm = mkDerivation {
    name = "rocm-llvm-clang-5.7.1";
    llvm = ./src/llvm.c;
    clang = ./src/clang.c;
    buildCommand = ''
      cp $llvm llvm.c; cp $clang clang.c
      mkdir -p $out/lib $out/bin
      gcc $CFLAGS -shared -Wl,-soname,libLLVM.so ${rpath [ glibc ]} -o $out/lib/libLLVM.so llvm.c
      gcc $CFLAGS -Wl,--dynamic-linker=${glibc}/lib/ld-linux-x86-64.so.2 ${rpath [ glibc ]} \
        -o $out/bin/clang clang.c
    '';
  };

  # ---- runtime stack --------------------------------------------------------------

  rocm-runtime = mkDerivation {
    name = "rocm-runtime-5.7.1";
    src = ./src/hsa.c;
    buildCommand = ''
      cp $src hsa.c
      mkdir -p $out/lib
      # elf-needed: RUNPATH gcc-lib/lib supplies NEEDED libhelper.so, glibc/lib libc.so.6.
      # elf-runpath-unused: RUNPATH rocm-llvm-clang/lib supplies no NEEDED library.
      # elf-string: AMDGPU_IDS puts "<libdrm>/share/libdrm/amdgpu.ids" in .rodata.
      gcc $CFLAGS -shared -Wl,-soname,libhsa-runtime64.so.1 \
        -DAMDGPU_IDS='"${libdrm}/share/libdrm/amdgpu.ids"' \
        -o $out/lib/libhsa-runtime64.so.1.11.0 hsa.c \
        -L${gcc-lib}/lib -lhelper ${rpath [ gcc-lib glibc rocm-llvm ]}
      # Relative soname symlinks inside the package (not references).
      ln -s libhsa-runtime64.so.1.11.0 $out/lib/libhsa-runtime64.so.1
      ln -s libhsa-runtime64.so.1 $out/lib/libhsa-runtime64.so
    '';
  };

  # The code object manager: loaded only with dlopen (see clr).
  rocm-comgr = mkDerivation {
    name = "rocm-comgr-5.7.1";
    src = ./src/comgr.c;
    buildCommand = ''
      cp $src comgr.c
      mkdir -p $out/lib
      gcc $CFLAGS -shared -Wl,-soname,libamd_comgr.so.2 ${rpath [ glibc ]} \
        -o $out/lib/libamd_comgr.so.2 comgr.c
    '';
  };

  clr = mkDerivation {
    name = "clr-5.7.1";
    src = ./src/amdhip.c;
    buildCommand = ''
      cp $src amdhip.c
      mkdir -p $out/lib $out/include/hip $out/bin
      # elf-needed: NEEDED libhsa-runtime64.so.1 through RUNPATH rocm-runtime/lib.
      # elf-runpath-dlopen: RUNPATH rocm-comgr/lib supplies no NEEDED library, but the
      # libamd_comgr.so.2 that libamdhip64.so names for dlopen.
      gcc $CFLAGS -shared -Wl,-soname,libamdhip64.so -o $out/lib/libamdhip64.so amdhip.c \
        -L${rocm-runtime}/lib -lhsa-runtime64 ${rpath [ rocm-runtime rocm-comgr glibc ]}
      printf 'int hipInit(unsigned flags);\n' > $out/include/hip/hip_runtime_api.h
      # script: the compiler driver, a build tool that runs the LLVM clang. A consumer
      # that only loads libamdhip64.so never runs it, so clr -> rocm-llvm is not
      # runtime for that consumer (it is for clr on its own).
      printf '#!%s/bin/sh\nexec %s/bin/clang "$@"\n' "${bash}" "${rocm-llvm}" > $out/bin/hipcc
      chmod +x $out/bin/hipcc
    '';
  };

  # ---- Tensile ------------------------------------------------------------------------

  # Source-like package: the header whose path ends up in librocblas (elf-source-path),
  # plus a Python package and logic YAML to give it some weight, like the real one.
  tensile = mkDerivation {
    name = "tensile-${version}";
    header = ./src/Tensile.hpp;
    buildCommand = ''
      mkdir -p $out/include/tensile $out/lib/python3.11/site-packages/Tensile $out/share/tensile/logic
      cp $header $out/include/tensile/Tensile.hpp
      printf '__version__ = "%s"\n' "${version}" > $out/lib/python3.11/site-packages/Tensile/__init__.py
      printf '#!/usr/bin/env python3\ndef main():\n    pass\n' \
        > $out/lib/python3.11/site-packages/Tensile/TensileCreateLibrary.py
      for arch in gfx90a gfx942 gfx1030 gfx1100; do
        seq 1 6000 | awk -v a=$arch '{printf "- [%s, %d, %d, %d, 1, %d]\n", a, $1*64, 128, 256, $1%7}' \
          > $out/share/tensile/logic/aldebaran_$arch.yaml
      done
    '';
  };

  # One per-architecture Tensile kernel rebuild, like nixpkgs' rocblas-tensile-gfxNN.
  # `unit` scales the file sizes so each group has a distinguishable size.
  tensileGroup = group: unit: mkDerivation {
    name = "rocblas-tensile-${group}-${version}";
    list = ./tensile-lists + "/${series}/${group}.txt";
    buildCommand = ''
      mkdir -p $out/lib/rocblas/library
      python3 ${gpubin} tensile $list $out/lib/rocblas/library ${toString unit} ${codeObjectAbi}
    '';
  };
  groups =
    (if series == "5.7.1" then { rocblas-tensile-gfx80 = tensileGroup "gfx80" 2048; } else { }) // {
      rocblas-tensile-gfx90 = tensileGroup "gfx90" 12288;
      rocblas-tensile-gfx94 = tensileGroup "gfx94" 8192;
      rocblas-tensile-gfx10 = tensileGroup "gfx10" 4096;
      rocblas-tensile-gfx11 = tensileGroup "gfx11" 6144;
      rocblas-tensile-fallbacks = tensileGroup "fallbacks" 4096;
    };
  groupPaths = builtins.concatStringsSep " " (map toString (builtins.attrValues groups));
  inherit (groups) rocblas-tensile-gfx94 rocblas-tensile-fallbacks;

  # ---- rocblas: one of every evidence kind that is not ELF-specific -------------------

  rocblas = mkDerivation {
    name = "rocblas-${version}";
    src = ./src/rocblas.c;
    buildCommand = ''
      cp $src rocblas.c
      lib=$out/lib/rocblas/library
      mkdir -p $out/lib/cmake/rocblas $out/lib/pkgconfig $out/include $out/bin $lib \
        $out/share/rocblas $out/share/doc/rocblas $out/nix-support

      # elf-source-path: -I<tensile>/include turns __FILE__ in Tensile.hpp into
      #   "Error in <tensile>/include/tensile/Tensile.hpp" in .rodata.
      # elf-needed: RUNPATH clr/lib supplies NEEDED libamdhip64.so.
      gcc $CFLAGS -shared -Wl,-soname,librocblas.so -I${tensile}/include \
        -o $out/lib/librocblas.so rocblas.c -L${clr}/lib -lamdhip64 ${rpath [ clr glibc ]}

      # symlink: every file of every Tensile group, as nixpkgs did:
      #   for path in ''${gfx80} ''${gfx90} ...; do ln -s $path/lib/rocblas/library/* ...
      for path in ${groupPaths}; do
        ln -s $path/lib/rocblas/library/* $lib/
      done

      # manifest: build paths of every library file, plus one store path of a group.
      for f in $lib/*; do
        echo "/build/source/build/Tensile/library/''${f##*/}"
      done > TensileManifest.txt
      echo "${rocblas-tensile-gfx94}/lib/rocblas/library/$(ls ${rocblas-tensile-gfx94}/lib/rocblas/library | head -n 1)" \
        >> TensileManifest.txt
      mv TensileManifest.txt $lib/

      # build-config: CMake package config naming tensile, clr and rocm-cmake.
      cat > $out/lib/cmake/rocblas/rocblas-config.cmake <<'EOF'
      # Generated by rocm-cmake
      set(rocblas_VERSION ${version})
      set(rocblas_INCLUDE_DIR "@out@/include")
      set(Tensile_ROOT "${tensile}")
      list(APPEND CMAKE_MODULE_PATH "${rocm-cmake}/share/rocm/cmake")
      include(CMakeFindDependencyMacro)
      find_dependency(hip PATHS "${clr}/lib/cmake/hip")
      add_library(roc::rocblas SHARED IMPORTED)
      set_target_properties(roc::rocblas PROPERTIES IMPORTED_LOCATION "@out@/lib/librocblas.so")
      EOF
      # build-config: pkg-config file (only self references).
      cat > $out/lib/pkgconfig/rocblas.pc <<'EOF'
      prefix=@out@
      exec_prefix=''${prefix}
      libdir=''${exec_prefix}/lib
      includedir=''${prefix}/include

      Name: rocblas
      Description: Radeon Open Compute BLAS library
      Version: ${version}
      Libs: -L''${libdir} -lrocblas
      Cflags: -I''${includedir}
      EOF
      # build-config: libtool archive naming clr.
      cat > $out/lib/librocblas.la <<'EOF'
      # librocblas.la - a libtool library file
      dlname='librocblas.so'
      library_names='librocblas.so'
      old_library='''
      dependency_libs=' -L${clr}/lib -lamdhip64'
      installed=yes
      libdir='@out@/lib'
      EOF
      # build-config: nix-support (rocm-cmake is referenced only by build-config files).
      echo "${rocm-cmake} ${clr}" > $out/nix-support/propagated-build-inputs
      sed -i "s|@out@|$out|g" \
        $out/lib/cmake/rocblas/rocblas-config.cmake $out/lib/pkgconfig/rocblas.pc $out/lib/librocblas.la

      printf '#pragma once\nint rocblas_initialize(void);\nconst char *rocblas_status_string(int);\n' \
        > $out/include/rocblas.h

      # doc: the only mention of cmake in rocblas.
      printf 'rocBLAS %s\nConfigured with %s/bin/cmake -DCMAKE_BUILD_TYPE=Release\n' \
        "${version}" "${cmake}" > $out/share/doc/rocblas/BUILD-INFO

      # script: store-path shebang (bash-5.2p15 is referenced only here).
      printf '#!%s/bin/sh\necho "rocblas-bench lives in a separate output"\n' "${bash}" \
        > $out/bin/rocblas-bench-wrapper
      chmod +x $out/bin/rocblas-bench-wrapper

      # file-name: the fallbacks group's hash in a file name; the contents hold no hash.
      echo "tensile fallbacks installed" > $out/share/rocblas/$(hashof ${rocblas-tensile-fallbacks})-tensile.stamp

      # binary: zstd's hash starts at byte 65520, straddling the 64 KiB boundary; the
      # file is NUL-rich pseudo-random bytes and holds the hash nowhere else.
      python3 ${gpubin} blob $out/share/rocblas/blob.bin 131072 65520 "${zstd}"

      # symlink (dangling): target inside tensile that does not exist.
      ln -s ${tensile}/does-not-exist $out/share/rocblas/tensile-dangling

      # text: the only mention of rocm-runtime in rocblas.
      echo "rocBLAS ${version} was tested against the HSA runtime in ${rocm-runtime}" \
        > $out/share/rocblas/notes.txt
    '';
  };

  # ---- the rest of the stack ----------------------------------------------------------

  rocsparse-src = mkDerivation {
    name = "rocsparse-src-${version}";
    src = ./src/rocsparse.c;
    buildCommand = ''
      mkdir -p $out/library/src
      cp $src $out/library/src/rocsparse.c
    '';
  };

  rocsparse = mkDerivation {
    name = "rocsparse-${version}";
    buildCommand = ''
      mkdir -p $out/lib
      # Device code in .hip_fatbin: an uncompressed clang offload bundle.
      python3 ${gpubin} hip-fatbin-c gfx90a:xnack- gfx942 gfx1030 gfx1100 > fatbin.c
      gcc $CFLAGS -c fatbin.c -o fatbin.o
      # elf-debug: compiled with -g from the rocsparse-src store path, not stripped, so
      # that path is in .debug_info/.debug_line/.debug_str only.
      # elf-runpath-unused: RUNPATH rocm-comgr/lib supplies nothing, and librocsparse.so
      # names no comgr soname (the same entry is elf-runpath-dlopen in clr).
      gcc $CFLAGS -g -c ${rocsparse-src}/library/src/rocsparse.c -o rocsparse.o
      gcc $CFLAGS -shared -Wl,-soname,librocsparse.so -o $out/lib/librocsparse.so \
        rocsparse.o fatbin.o -L${clr}/lib -lamdhip64 ${rpath [ clr rocm-comgr glibc ]}
    '';
  };

  rocsolver = mkDerivation {
    name = "rocsolver-${version}";
    src = ./src/rocsolver.c;
    buildCommand = ''
      cp $src rocsolver.c
      mkdir -p $out/lib
      gcc $CFLAGS -shared -Wl,-soname,librocsolver.so -o librocsolver.so rocsolver.c \
        -L${rocblas}/lib -L${rocsparse}/lib -L${clr}/lib -lrocblas -lrocsparse -lamdhip64 \
        ${rpath [ rocblas rocsparse clr glibc ]}
      # elf-other: an ELF note section (not data, not debug) holding the only mention of
      # rocm-device-libs: namesz 7, descsz, type 1, "nixcut\0" + pad, store path + pad.
      python3 -c 'import struct,sys; d=sys.argv[1].encode()+b"\0"; d+=b"\0"*(-len(d)%4)
      sys.stdout.buffer.write(struct.pack("<III",7,len(d),1)+b"nixcut\0\0"+d)' \
        "${rocm-device-libs}/amdgcn/bitcode" > note.bin
      objcopy --add-section .note.nixcut=note.bin librocsolver.so $out/lib/librocsolver.so
    '';
  };

  hipblas = mkDerivation {
    name = "hipblas-${version}";
    src = ./src/hipblas.c;
    buildCommand = ''
      cp $src hipblas.c
      mkdir -p $out/lib $out/share/hipblas
      gcc $CFLAGS -shared -Wl,-soname,libhipblas.so -o $out/lib/libhipblas.so hipblas.c \
        -L${rocblas}/lib -L${rocsolver}/lib -L${clr}/lib -lrocblas -lrocsolver -lamdhip64 \
        ${rpath [ rocblas rocsolver clr glibc ]}
      # NOT a reference: cmake's hash upper-cased. cmake is an input of this derivation,
      # yet Nix does not register it (matching is case-sensitive); nixcut must agree.
      echo "cmake build id: $(hashof ${cmake} | tr a-z A-Z)" > $out/share/hipblas/build-tools.txt
    '';
  };

  big-blob = mkDerivation {
    name = "big-blob-1.0";
    buildCommand = ''
      mkdir -p $out/share/models
      python3 -c 'import hashlib,sys; sys.stdout.buffer.write(hashlib.shake_256(b"big-blob").digest(2097152))' \
        > $out/share/models/model.gguf
    '';
  };

  llama-cpp-rocm = mkDerivation {
    name = "llama-cpp-rocm-0.0.0";
    src = ./src/llama-server.c;
    buildCommand = ''
      cp $src llama-server.c
      mkdir -p $out/bin
      # elf-interpreter: PT_INTERP = glibc-2.36/lib/ld-linux-x86-64.so.2.
      # elf-needed: hipblas, rocblas, clr and glibc through RUNPATH.
      gcc $CFLAGS -DLLAMA_ROCM -Wl,--dynamic-linker=${glibc}/lib/ld-linux-x86-64.so.2 \
        -o $out/bin/llama-server llama-server.c \
        -L${hipblas}/lib -L${rocblas}/lib -L${clr}/lib -lhipblas -lrocblas -lamdhip64 \
        ${rpath [ hipblas rocblas clr glibc ]}
    '' + (if heavy then ''
      # heavy = true: a 2 MiB model reached through a symlink (symlink).
      mkdir -p $out/share/llama-cpp/models
      ln -s ${big-blob}/share/models/model.gguf $out/share/llama-cpp/models/default.gguf
    '' else "");
  };
in
groups // {
  inherit glibc gcc-lib bash cmake rocm-cmake libdrm zstd rocm-device-libs rocm-llvm
    rocm-runtime rocm-comgr clr tensile rocblas rocsparse-src rocsparse rocsolver hipblas
    llama-cpp-rocm;
} // (if heavy then { inherit big-blob; } else { })
