// CUTLASS v4.7.0 examples/63_hopper_gemm_with_weight_prefetch/63_hopper_gemm_with_weight_prefetch.cu: fp8 GEMM with weight prefetch.
// Kernel: cutlass::device_kernel<Gemm::GemmKernel>.
#include "63_hopper_gemm_with_weight_prefetch/63_hopper_gemm_with_weight_prefetch.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<Gemm::GemmKernel>);
}
