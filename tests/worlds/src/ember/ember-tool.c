#include <stdio.h>
#include "ember.h"
int main(void) { printf("%d\n", ember_add(2, 3)); return 0; }
