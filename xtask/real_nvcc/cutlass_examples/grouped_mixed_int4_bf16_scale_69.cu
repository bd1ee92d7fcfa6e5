// CUTLASS v4.7.0 examples/69_hopper_mixed_dtype_grouped_gemm/69_hopper_int4_bf16_grouped_gemm.cu: grouped int4 x bf16, group scales.
// Kernel: cutlass::device_kernel<GemmScaleOnly::GemmKernel>.
#include "69_hopper_mixed_dtype_grouped_gemm/69_hopper_int4_bf16_grouped_gemm.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<GemmScaleOnly::GemmKernel>);
}
