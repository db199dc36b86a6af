/* rocm-llvm-clang: bin/clang (does nothing). */
int main(void) { return 0; }
