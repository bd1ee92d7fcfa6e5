// CUTLASS v4.7.0 examples/54_hopper_fp8_warp_specialized_gemm/54_hopper_fp8_warp_specialized_gemm.cu: fp8 e4m3 GEMM with scaled, amax and aux output epilogue.
// Kernel: cutlass::device_kernel<Gemm::GemmKernel>.
#include "54_hopper_fp8_warp_specialized_gemm/54_hopper_fp8_warp_specialized_gemm.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<Gemm::GemmKernel>);
}
