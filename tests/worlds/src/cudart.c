/* cuda_cudart: libcudart.so.12. NEEDED libhelper.so (gcc-lib). */
int helper_add(int a, int b);
char *getenv(const char *);
int cudaGetDeviceCount(int *n) { *n = helper_add(0, getenv("CUDA_VISIBLE_DEVICES") != 0); return 0; }
