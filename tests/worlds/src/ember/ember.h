#ifndef EMBER_H
#define EMBER_H
#define EMBER_VERSION_MAJOR 2
/* Opens lib/ember/kernels-<variant>.dat beside the shared library and returns the
   number of its first line, or -1 when the file cannot be read. */
int ember_kernels(const char *variant);
int ember_add(int a, int b);
#endif
