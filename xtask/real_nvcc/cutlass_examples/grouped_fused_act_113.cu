// CUTLASS v4.7.0 examples/113_hopper_gemm_activation_fusion/113_hopper_grouped_gemm_fused_act.cu: grouped GEMM + activation.
// Kernel: cutlass::device_kernel<Gemm::GemmKernel>.
#include "113_hopper_gemm_activation_fusion/113_hopper_grouped_gemm_fused_act.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<Gemm::GemmKernel>);
}
