/* fastblas: a BLAS-like library that is not librocblas. It keeps its Tensile-style
   kernels in lib/fastblas/library and says so in its strings: the directory, relative
   to the directory it was loaded from, and the pattern of its master index. */
#include <stdio.h>
char *getenv(const char *);
static const char *fastblas_dir = "fastblas/library";
static const char *fastblas_index = "TensileLibrary_lazy_%s.dat";
int fastblas_init(const char *arch, char *out, unsigned long n) {
  char name[256];
  snprintf(name, sizeof name, fastblas_index, arch);
  return snprintf(out, n, "%s/%s", fastblas_dir, name) + (getenv("FASTBLAS_PATH") != 0);
}
