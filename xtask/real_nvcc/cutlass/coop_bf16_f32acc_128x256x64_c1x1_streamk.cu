// bf16 128x256 with StreamKScheduler.
// A bf16 (RowMajor), B bf16 (ColumnMajor), accumulator f32, C bf16, D bf16 (RowMajor);
// tile 128x256x64, cluster 1x1x1; mainloop KernelTmaWarpSpecializedCooperative, epilogue TmaWarpSpecializedCooperative.
#include "ori_gemm.cuh"
using namespace ori;
using G = Gemm<cutlass::bfloat16_t, RowMajor, cutlass::bfloat16_t, ColumnMajor, float,
               cutlass::bfloat16_t, RowMajor, cutlass::bfloat16_t, RowMajor,
               Shape<_128, _256, _64>, Shape<_1, _1, _1>,
               cutlass::gemm::KernelTmaWarpSpecializedCooperative,
               cutlass::epilogue::TmaWarpSpecializedCooperative,
               LinComb<cutlass::bfloat16_t, cutlass::bfloat16_t>,
               cutlass::gemm::StreamKScheduler,
               Shape<int, int, int, int>,
               cutlass::arch::OpClassTensorOp,
               cutlass::arch::OpClassTensorOp,
               float>;
ORI_EMIT(G)
