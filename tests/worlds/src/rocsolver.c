/* rocsolver: librocsolver.so. NEEDED librocblas.so, librocsparse.so, libamdhip64.so.
 * The build adds a .note.nixcut section holding a store path (elf-other). */
int rocblas_initialize(void);
int rocsparse_create_handle(void);
int hipInit(unsigned flags);
char *getenv(const char *);
int rocsolver_create(void) {
  return rocblas_initialize() + rocsparse_create_handle() + hipInit(3) + (getenv("ROCSOLVER_LAYER") != 0);
}
