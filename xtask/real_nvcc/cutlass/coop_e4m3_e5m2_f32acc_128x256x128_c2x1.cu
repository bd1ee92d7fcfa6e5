// e4m3 x e5m2 -> f16, 2x1 cluster.
// A e4m3 (RowMajor), B e5m2 (ColumnMajor), accumulator f32, C f16, D f16 (RowMajor);
// tile 128x256x128, cluster 2x1x1; mainloop KernelTmaWarpSpecializedCooperative, epilogue TmaWarpSpecializedCooperative.
#include "ori_gemm.cuh"
using namespace ori;
using G = Gemm<cutlass::float_e4m3_t, RowMajor, cutlass::float_e5m2_t, ColumnMajor, float,
               cutlass::half_t, RowMajor, cutlass::half_t, RowMajor,
               Shape<_128, _256, _128>, Shape<_2, _1, _1>,
               cutlass::gemm::KernelTmaWarpSpecializedCooperative,
               cutlass::epilogue::TmaWarpSpecializedCooperative,
               LinComb<cutlass::half_t, cutlass::half_t>,
               void,
               Shape<int, int, int, int>,
               cutlass::arch::OpClassTensorOp,
               cutlass::arch::OpClassTensorOp,
               float>;
ORI_EMIT(G)
