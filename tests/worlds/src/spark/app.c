#include <stdio.h>
#include "spark.h"
int main(void) { printf("spark %d\n", spark_answer()); return spark_answer() == 42 ? 0 : 1; }
