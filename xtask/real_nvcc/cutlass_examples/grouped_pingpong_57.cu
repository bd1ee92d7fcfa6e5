// CUTLASS v4.7.0 examples/57_hopper_grouped_gemm/57_hopper_grouped_gemm.cu: grouped GEMM, ping-pong.
// Kernel: cutlass::device_kernel<GemmPingpong::GemmKernel>.
#include "57_hopper_grouped_gemm/57_hopper_grouped_gemm.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<GemmPingpong::GemmKernel>);
}
