// bf16 in, f32 out, no C source (ElementC=void).
// A bf16 (RowMajor), B bf16 (ColumnMajor), accumulator f32, C void, D f32 (RowMajor);
// tile 128x128x64, cluster 1x1x1; mainloop KernelTmaWarpSpecializedCooperative, epilogue TmaWarpSpecializedCooperative.
#include "ori_gemm.cuh"
using namespace ori;
using G = Gemm<cutlass::bfloat16_t, RowMajor, cutlass::bfloat16_t, ColumnMajor, float,
               void, RowMajor, float, RowMajor,
               Shape<_128, _128, _64>, Shape<_1, _1, _1>,
               cutlass::gemm::KernelTmaWarpSpecializedCooperative,
               cutlass::epilogue::TmaWarpSpecializedCooperative,
               LinComb<float, void>,
               void,
               Shape<int, int, int, int>,
               cutlass::arch::OpClassTensorOp,
               cutlass::arch::OpClassTensorOp,
               float>;
ORI_EMIT(G)
