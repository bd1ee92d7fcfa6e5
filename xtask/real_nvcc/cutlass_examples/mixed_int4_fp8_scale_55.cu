// CUTLASS v4.7.0 examples/55_hopper_mixed_dtype_gemm/55_hopper_int4_fp8_gemm.cu: int4 x fp8 e4m3, group scales (lookup-table convert).
// Kernel: cutlass::device_kernel<GemmScaleOnly::GemmKernel>.
#include "55_hopper_mixed_dtype_gemm/55_hopper_int4_fp8_gemm.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<GemmScaleOnly::GemmKernel>);
}
