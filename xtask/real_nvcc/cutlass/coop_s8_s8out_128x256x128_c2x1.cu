// int8 x int8 -> int8 (s32 acc, float epilogue).
// A s8 (RowMajor), B s8 (ColumnMajor), accumulator s32, C s8, D s8 (RowMajor);
// tile 128x256x128, cluster 2x1x1; mainloop KernelTmaWarpSpecializedCooperative, epilogue TmaWarpSpecializedCooperative.
#include "ori_gemm.cuh"
using namespace ori;
using G = Gemm<int8_t, RowMajor, int8_t, ColumnMajor, int32_t,
               int8_t, RowMajor, int8_t, RowMajor,
               Shape<_128, _256, _128>, Shape<_2, _1, _1>,
               cutlass::gemm::KernelTmaWarpSpecializedCooperative,
               cutlass::epilogue::TmaWarpSpecializedCooperative,
               LinComb<int8_t, int8_t>,
               void,
               Shape<int, int, int, int>,
               cutlass::arch::OpClassTensorOp,
               cutlass::arch::OpClassTensorOp,
               float>;
ORI_EMIT(G)
