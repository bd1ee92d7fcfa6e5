// CUTLASS v4.7.0 examples/62_hopper_sparse_gemm/62_hopper_sparse_gemm.cu: 2:4 structured-sparse GEMM.
// Kernel: cutlass::device_kernel<Gemm::GemmKernel>.
#include "62_hopper_sparse_gemm/62_hopper_sparse_gemm.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<Gemm::GemmKernel>);
}
