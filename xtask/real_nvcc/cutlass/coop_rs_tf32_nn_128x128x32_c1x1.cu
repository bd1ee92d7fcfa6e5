// tf32 with M-major A: A staged through registers (RS wgmma).
// A tf32 (ColumnMajor), B tf32 (ColumnMajor), accumulator f32, C f32, D f32 (RowMajor);
// tile 128x128x32, cluster 1x1x1; mainloop KernelTmaWarpSpecializedCooperative, epilogue TmaWarpSpecializedCooperative.
#include "ori_gemm.cuh"
using namespace ori;
using G = Gemm<float, ColumnMajor, float, ColumnMajor, float,
               float, RowMajor, float, RowMajor,
               Shape<_128, _128, _32>, Shape<_1, _1, _1>,
               cutlass::gemm::KernelTmaWarpSpecializedCooperative,
               cutlass::epilogue::TmaWarpSpecializedCooperative,
               LinComb<float, float>,
               void,
               Shape<int, int, int, int>,
               cutlass::arch::OpClassTensorOp,
               cutlass::arch::OpClassTensorOp,
               float>;
ORI_EMIT(G)
