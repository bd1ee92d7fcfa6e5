// CUTLASS v4.7.0 examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu: warp-specialized GEMM (example 48).
// Kernel: cutlass::device_kernel<Gemm::GemmKernel>.
#include "48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<Gemm::GemmKernel>);
}
