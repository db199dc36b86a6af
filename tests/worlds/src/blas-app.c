/* blas-app: the consumer; loads libfastblas.so through its RUNPATH. */
int fastblas_init(const char *arch, char *out, unsigned long n);
int main(void) {
  char buf[512];
  return fastblas_init("gfx90a", buf, sizeof buf) > 0 ? 0 : 1;
}
