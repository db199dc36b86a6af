// A llama.cpp-like HIP consumer: its own device kernel, hipBLAS for matrix products
// (hipBLAS -> rocBLAS -> Tensile), rocRAND and RCCL.
#include <hip/hip_runtime.h>
#include <hipblas/hipblas.h>
#include <rocrand/rocrand.h>
#include <rccl/rccl.h>
#include <cstdio>

__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

int main(int argc, char** argv) {
  if (argc > 1 && argv[1][0] == '-') { std::puts("llama-server (hip)"); return 0; }
  hipblasHandle_t h;
  if (hipblasCreate(&h) != HIPBLAS_STATUS_SUCCESS) { std::puts("no GPU"); return 1; }
  rocrand_generator g;
  rocrand_create_generator(&g, ROCRAND_RNG_PSEUDO_DEFAULT);
  int n = 0;
  ncclGetVersion(&n);
  float* x = nullptr;
  hipMalloc(&x, 64 * sizeof(float));
  hipLaunchKernelGGL(scale, dim3(1), dim3(64), 0, 0, x, 2.0f, 64);
  float alpha = 1, beta = 0;
  hipblasSgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_N, 8, 8, 8, &alpha, x, 8, x, 8, &beta, x, 8);
  hipblasDestroy(h);
  return 0;
}
