/* zstd: lib/libzstd.so, a leaf that rocblas reaches only through a hash in a binary blob. */
int ZSTD_versionNumber(void) { return 10505; }
