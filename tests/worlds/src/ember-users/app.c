/* The consumer: runs one data variant (argv[1]) through libember. */
#include <stdio.h>
#include "ember.h"
int main(int argc, char **argv) {
  if (argc < 2) return 2;
  int n = ember_kernels(argv[1]);
  if (n < 0) return 1;
  printf("%s %d\n", argv[1], n);
  return 0;
}
