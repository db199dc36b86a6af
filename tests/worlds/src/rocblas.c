/* rocblas: librocblas.so. NEEDED libamdhip64.so (clr). */
#include <tensile/Tensile.hpp>
int hipInit(unsigned flags);
const char *rocblas_status_string(int status) {
  return status ? tensile_error_prefix() : "rocblas_status_success";
}
/* Name fragments (not references), as in the real librocblas. */
const char *rocblas_tensile_suffixes[] = { ".hsaco", ".co", "Kernels.so-000-",
                                           "TensileLibrary_lazy_", "rocblas/library" };
char *getenv(const char *);
int rocblas_initialize(void) { return hipInit(0) + (getenv("ROCBLAS_TENSILE_LIBPATH") != 0); }
