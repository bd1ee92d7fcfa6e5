// e5m2 x e5m2 fast accum, 64x256.
// A e5m2 (RowMajor), B e5m2 (ColumnMajor), accumulator f32, C bf16, D bf16 (RowMajor);
// tile 64x256x128, cluster 1x1x1; mainloop KernelTmaWarpSpecializedPingpongFP8FastAccum, epilogue TmaWarpSpecialized.
#include "ori_gemm.cuh"
using namespace ori;
using G = Gemm<cutlass::float_e5m2_t, RowMajor, cutlass::float_e5m2_t, ColumnMajor, float,
               cutlass::bfloat16_t, RowMajor, cutlass::bfloat16_t, RowMajor,
               Shape<_64, _256, _128>, Shape<_1, _1, _1>,
               cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum,
               cutlass::epilogue::TmaWarpSpecialized,
               LinComb<cutlass::bfloat16_t, cutlass::bfloat16_t>,
               void,
               Shape<int, int, int, int>,
               cutlass::arch::OpClassTensorOp,
               cutlass::arch::OpClassTensorOp,
               float>;
ORI_EMIT(G)
