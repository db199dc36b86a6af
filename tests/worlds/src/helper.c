/* gcc-12.2.0-lib: libhelper.so, the gcc-libs-like leaf. Every library of the worlds calls
 * getenv so that it NEEDs libc.so.6 and its RUNPATH entry into glibc is used. */
char *getenv(const char *); /* libc: makes NEEDED libc.so.6, as in every real library */
int helper_add(int a, int b) { return a + b + (getenv("GCC_HELPER") != 0); }
