/* rocm-llvm-clang: lib/libLLVM.so. No library of the world NEEDs it; rocm-runtime has
 * a RUNPATH entry into its lib/ anyway (elf-runpath-unused). */
char *getenv(const char *);
int llvm_version(void) { return 17 + (getenv("LLVM_PROFILE_FILE") != 0); }
