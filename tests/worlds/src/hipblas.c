/* hipblas: libhipblas.so. NEEDED librocblas.so, librocsolver.so, libamdhip64.so. */
int rocblas_initialize(void);
int rocsolver_create(void);
int hipInit(unsigned flags);
char *getenv(const char *);
int hipblasCreate(void) {
  return rocblas_initialize() + rocsolver_create() + hipInit(4) + (getenv("HIPBLAS_LAYER") != 0);
}
