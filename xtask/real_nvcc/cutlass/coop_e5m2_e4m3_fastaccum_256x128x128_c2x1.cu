// e5m2 x e4m3 fast accum, 256x128, 2x1 cluster, e4m3 output.
// A e5m2 (RowMajor), B e4m3 (ColumnMajor), accumulator f32, C void, D e4m3 (RowMajor);
// tile 256x128x128, cluster 2x1x1; mainloop KernelTmaWarpSpecializedCooperativeFP8FastAccum, epilogue TmaWarpSpecializedCooperative.
#include "ori_gemm.cuh"
using namespace ori;
using G = Gemm<cutlass::float_e5m2_t, RowMajor, cutlass::float_e4m3_t, ColumnMajor, float,
               void, RowMajor, cutlass::float_e4m3_t, RowMajor,
               Shape<_256, _128, _128>, Shape<_2, _1, _1>,
               cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum,
               cutlass::epilogue::TmaWarpSpecializedCooperative,
               LinComb<cutlass::float_e4m3_t, void>,
               void,
               Shape<int, int, int, int>,
               cutlass::arch::OpClassTensorOp,
               cutlass::arch::OpClassTensorOp,
               float>;
ORI_EMIT(G)
