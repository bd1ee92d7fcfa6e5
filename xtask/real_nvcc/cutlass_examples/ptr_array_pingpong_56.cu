// CUTLASS v4.7.0 examples/56_hopper_ptr_array_batched_gemm/56_hopper_ptr_array_batched_gemm.cu: ptr-array batched GEMM, ping-pong.
// Kernel: cutlass::device_kernel<GemmPingpong::GemmKernel>.
#include "56_hopper_ptr_array_batched_gemm/56_hopper_ptr_array_batched_gemm.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<GemmPingpong::GemmKernel>);
}
