// CUTLASS v4.7.0 examples/55_hopper_mixed_dtype_gemm/55_hopper_int4_bf16_gemm.cu: int4 x bf16, group scales.
// Kernel: cutlass::device_kernel<GemmScaleOnly::GemmKernel>.
#include "55_hopper_mixed_dtype_gemm/55_hopper_int4_bf16_gemm.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<GemmScaleOnly::GemmKernel>);
}
