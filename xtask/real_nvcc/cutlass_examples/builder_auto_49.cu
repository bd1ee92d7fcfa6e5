// CUTLASS v4.7.0 examples/49_hopper_gemm_with_collective_builder/49_collective_builder.cu: collective builder, auto schedule and stages.
// Kernel: cutlass::device_kernel<ExampleRunner<>::GemmKernel>.
#include "49_hopper_gemm_with_collective_builder/49_collective_builder.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<ExampleRunner<>::GemmKernel>);
}
