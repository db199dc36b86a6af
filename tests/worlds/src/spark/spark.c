#include "spark.h"
int spark_answer(void) { return 42; }
