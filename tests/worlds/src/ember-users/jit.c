/* A consumer that hands ember's include directory to a compiler at run time, as a JIT
   does (`-I<ember>/include`): it needs the output holding the headers. */
#include <stdio.h>
#include "ember.h"
int main(void) {
  printf("-I%s %d\n", EMBER_INCLUDE, ember_add(1, 1));
  return 0;
}
