/* A build against ember's headers and library (CMake and pkg-config users). */
#include <stdio.h>
#include <ember.h>
int main(void) {
  if (ember_add(40, 2) != 42 || EMBER_VERSION_MAJOR != 2) return 1;
  puts("ember user ok");
  return 0;
}
