/* cuda_cudart: libcudart.so.12. NEEDED libhelper.so (gcc-lib). */
int helper_add(int a, int b);
int cudaGetDeviceCount(int *n) { *n = helper_add(0, 1); return 0; }
