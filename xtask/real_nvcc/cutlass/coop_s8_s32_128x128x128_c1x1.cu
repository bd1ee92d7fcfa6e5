// int8 x int8 -> int32 (s32 acc).
// A s8 (RowMajor), B s8 (ColumnMajor), accumulator s32, C s32, D s32 (RowMajor);
// tile 128x128x128, cluster 1x1x1; mainloop KernelTmaWarpSpecializedCooperative, epilogue TmaWarpSpecializedCooperative.
#include "ori_gemm.cuh"
using namespace ori;
using G = Gemm<int8_t, RowMajor, int8_t, ColumnMajor, int32_t,
               int32_t, RowMajor, int32_t, RowMajor,
               Shape<_128, _128, _128>, Shape<_1, _1, _1>,
               cutlass::gemm::KernelTmaWarpSpecializedCooperative,
               cutlass::epilogue::TmaWarpSpecializedCooperative,
               LinComb<int32_t, int32_t>,
               void,
               Shape<int, int, int, int>,
               cutlass::arch::OpClassTensorOp,
               cutlass::arch::OpClassTensorOp,
               float>;
ORI_EMIT(G)
