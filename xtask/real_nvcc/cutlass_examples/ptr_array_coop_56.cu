// CUTLASS v4.7.0 examples/56_hopper_ptr_array_batched_gemm/56_hopper_ptr_array_batched_gemm.cu: ptr-array batched GEMM, cooperative.
// Kernel: cutlass::device_kernel<Gemm::GemmKernel>.
#include "56_hopper_ptr_array_batched_gemm/56_hopper_ptr_array_batched_gemm.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<Gemm::GemmKernel>);
}
