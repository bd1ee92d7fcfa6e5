// e4m3 x e4m3 -> bf16, f32 acc with 2-level promotion.
// A e4m3 (RowMajor), B e4m3 (ColumnMajor), accumulator f32, C bf16, D bf16 (RowMajor);
// tile 128x128x128, cluster 1x1x1; mainloop KernelTmaWarpSpecializedCooperative, epilogue TmaWarpSpecializedCooperative.
#include "ori_gemm.cuh"
using namespace ori;
using G = Gemm<cutlass::float_e4m3_t, RowMajor, cutlass::float_e4m3_t, ColumnMajor, float,
               cutlass::bfloat16_t, RowMajor, cutlass::bfloat16_t, RowMajor,
               Shape<_128, _128, _128>, Shape<_1, _1, _1>,
               cutlass::gemm::KernelTmaWarpSpecializedCooperative,
               cutlass::epilogue::TmaWarpSpecializedCooperative,
               LinComb<cutlass::bfloat16_t, cutlass::bfloat16_t>,
               void,
               Shape<int, int, int, int>,
               cutlass::arch::OpClassTensorOp,
               cutlass::arch::OpClassTensorOp,
               float>;
ORI_EMIT(G)
