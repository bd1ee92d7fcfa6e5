// tf32 TN, 128x256 tile, 2x1 cluster.
// A tf32 (RowMajor), B tf32 (ColumnMajor), accumulator f32, C f32, D f32 (RowMajor);
// tile 128x256x32, cluster 2x1x1; mainloop KernelTmaWarpSpecializedCooperative, epilogue TmaWarpSpecializedCooperative.
#include "ori_gemm.cuh"
using namespace ori;
using G = Gemm<float, RowMajor, float, ColumnMajor, float,
               float, RowMajor, float, RowMajor,
               Shape<_128, _256, _32>, Shape<_2, _1, _1>,
               cutlass::gemm::KernelTmaWarpSpecializedCooperative,
               cutlass::epilogue::TmaWarpSpecializedCooperative,
               LinComb<float, float>,
               void,
               Shape<int, int, int, int>,
               cutlass::arch::OpClassTensorOp,
               cutlass::arch::OpClassTensorOp,
               float>;
ORI_EMIT(G)
