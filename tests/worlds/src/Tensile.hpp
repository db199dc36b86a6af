// tensile: include/tensile/Tensile.hpp. Included by rocblas through -I<tensile>/include,
// so __FILE__ below expands to "<tensile store path>/include/tensile/Tensile.hpp" and
// lands in librocblas.so's .rodata: the "elf-source-path" evidence (the nixpkgs case of
// "Error in /nix/store/...-tensile-.../...hpp").
#pragma once
static inline const char *tensile_error_prefix(void) { return "Error in " __FILE__; }
