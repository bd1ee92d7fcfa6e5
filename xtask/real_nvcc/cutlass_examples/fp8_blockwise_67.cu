// CUTLASS v4.7.0 examples/67_hopper_fp8_warp_specialized_gemm_with_blockwise_scaling/67_hopper_fp8_warp_specialized_gemm_with_blockwise_scaling.cu: fp8 GEMM, blockwise scaling.
// Kernel: cutlass::device_kernel<Gemm::GemmKernel>.
#include "67_hopper_fp8_warp_specialized_gemm_with_blockwise_scaling/67_hopper_fp8_warp_specialized_gemm_with_blockwise_scaling.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<Gemm::GemmKernel>);
}
