// CUTLASS v4.7.0 examples/49_hopper_gemm_with_collective_builder/49_collective_builder.cu: collective builder, cooperative + stream-K.
// Kernel: cutlass::device_kernel<ExampleRunner<cutlass::gemm::KernelTmaWarpSpecializedCooperative, cutlass::epilogue::TmaWarpSpecializedCooperative, cutlass::gemm::collective::StageCountAuto, cutlass::gemm::StreamKScheduler>::GemmKernel>.
#include "49_hopper_gemm_with_collective_builder/49_collective_builder.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<ExampleRunner<cutlass::gemm::KernelTmaWarpSpecializedCooperative, cutlass::epilogue::TmaWarpSpecializedCooperative, cutlass::gemm::collective::StageCountAuto, cutlass::gemm::StreamKScheduler>::GemmKernel>);
}
