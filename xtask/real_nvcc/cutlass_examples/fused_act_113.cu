// CUTLASS v4.7.0 examples/113_hopper_gemm_activation_fusion/113_hopper_gemm_fused_act.cu: GEMM + scaled activation epilogue.
// Kernel: cutlass::device_kernel<Gemm::GemmKernel>.
#include "113_hopper_gemm_activation_fusion/113_hopper_gemm_fused_act.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<Gemm::GemmKernel>);
}
