// e4m3 fast accum, pingpong, 2x1 cluster.
// A e4m3 (RowMajor), B e4m3 (ColumnMajor), accumulator f32, C f16, D f16 (RowMajor);
// tile 128x128x128, cluster 2x1x1; mainloop KernelTmaWarpSpecializedPingpongFP8FastAccum, epilogue TmaWarpSpecialized.
#include "ori_gemm.cuh"
using namespace ori;
using G = Gemm<cutlass::float_e4m3_t, RowMajor, cutlass::float_e4m3_t, ColumnMajor, float,
               cutlass::half_t, RowMajor, cutlass::half_t, RowMajor,
               Shape<_128, _128, _128>, Shape<_2, _1, _1>,
               cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum,
               cutlass::epilogue::TmaWarpSpecialized,
               LinComb<cutlass::half_t, cutlass::half_t>,
               void,
               Shape<int, int, int, int>,
               cutlass::arch::OpClassTensorOp,
               cutlass::arch::OpClassTensorOp,
               float>;
ORI_EMIT(G)
