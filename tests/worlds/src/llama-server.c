/* llama-cpp-{rocm,cuda}: bin/llama-server. PT_INTERP is glibc-2.36's loader. */
#ifdef LLAMA_ROCM
int hipblasCreate(void);
int rocblas_initialize(void);
int hipInit(unsigned flags);
static int backend(void) { return hipblasCreate() + rocblas_initialize() + hipInit(0); }
#else
int cublasCreate_v2(void);
int cudaGetDeviceCount(int *n);
static int backend(void) { int n; return cublasCreate_v2() + cudaGetDeviceCount(&n); }
#endif
int main(void) { return backend() == 12345; }
