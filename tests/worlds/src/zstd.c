/* zstd: lib/libzstd.so, a leaf that rocblas reaches only through a hash in a binary blob. */
char *getenv(const char *);
int ZSTD_versionNumber(void) { return 10505 + (getenv("ZSTD_CLEVEL") != 0); }
