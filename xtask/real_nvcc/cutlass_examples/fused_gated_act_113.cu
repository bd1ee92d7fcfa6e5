// CUTLASS v4.7.0 examples/113_hopper_gemm_activation_fusion/113_hopper_gemm_fused_gated_act.cu: GEMM + gated activation (SwiGLU-style).
// Kernel: cutlass::device_kernel<Gemm::GemmKernel>.
#include "113_hopper_gemm_activation_fusion/113_hopper_gemm_fused_gated_act.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<Gemm::GemmKernel>);
}
