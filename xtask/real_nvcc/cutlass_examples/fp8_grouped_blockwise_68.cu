// CUTLASS v4.7.0 examples/68_hopper_fp8_warp_specialized_grouped_gemm_with_blockwise_scaling/68_hopper_fp8_warp_specialized_grouped_gemm_with_blockwise_scaling.cu: grouped fp8 GEMM, blockwise scaling.
// Kernel: cutlass::device_kernel<Gemm::GemmKernel>.
#include "68_hopper_fp8_warp_specialized_grouped_gemm_with_blockwise_scaling/68_hopper_fp8_warp_specialized_grouped_gemm_with_blockwise_scaling.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<Gemm::GemmKernel>);
}
