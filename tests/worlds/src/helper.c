/* gcc-12.2.0-lib: libhelper.so, the gcc-libs-like leaf. */
int helper_add(int a, int b) { return a + b; }
