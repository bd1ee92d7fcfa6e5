// e4m3 fast accum, KernelTmaWarpSpecialized.
// A e4m3 (RowMajor), B e4m3 (ColumnMajor), accumulator f32, C bf16, D bf16 (RowMajor);
// tile 64x128x128, cluster 1x1x1; mainloop KernelTmaWarpSpecializedFP8FastAccum, epilogue TmaWarpSpecialized.
#include "ori_gemm.cuh"
using namespace ori;
using G = Gemm<cutlass::float_e4m3_t, RowMajor, cutlass::float_e4m3_t, ColumnMajor, float,
               cutlass::bfloat16_t, RowMajor, cutlass::bfloat16_t, RowMajor,
               Shape<_64, _128, _128>, Shape<_1, _1, _1>,
               cutlass::gemm::KernelTmaWarpSpecializedFP8FastAccum,
               cutlass::epilogue::TmaWarpSpecialized,
               LinComb<cutlass::bfloat16_t, cutlass::bfloat16_t>,
               void,
               Shape<int, int, int, int>,
               cutlass::arch::OpClassTensorOp,
               cutlass::arch::OpClassTensorOp,
               float>;
ORI_EMIT(G)
