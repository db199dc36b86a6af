/* hipblas: libhipblas.so. NEEDED librocblas.so, librocsolver.so, libamdhip64.so. */
int rocblas_initialize(void);
int rocsolver_create(void);
int hipInit(unsigned flags);
int hipblasCreate(void) { return rocblas_initialize() + rocsolver_create() + hipInit(4); }
