/* A program that loads a driver by a formatted name, as Mesa's loader does with
   "%s_dri.so": the RUNPATH directory that supplies it supplies no DT_NEEDED library. */
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
  char name[256];
  snprintf(name, sizeof name, "%s_dri.so", argc > 1 ? argv[1] : "radeon");
  void *h = dlopen(name, RTLD_NOW);
  if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  puts("driver loaded");
  return 0;
}
