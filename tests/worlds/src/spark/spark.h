#ifndef SPARK_H
#define SPARK_H
int spark_answer(void);
#endif
