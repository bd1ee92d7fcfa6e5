// f16 TN, pingpong 128x128, 2x1 cluster.
// A f16 (RowMajor), B f16 (ColumnMajor), accumulator f32, C f16, D f16 (RowMajor);
// tile 128x128x64, cluster 2x1x1; mainloop KernelTmaWarpSpecializedPingpong, epilogue TmaWarpSpecialized.
#include "ori_gemm.cuh"
using namespace ori;
using G = Gemm<cutlass::half_t, RowMajor, cutlass::half_t, ColumnMajor, float,
               cutlass::half_t, RowMajor, cutlass::half_t, RowMajor,
               Shape<_128, _128, _64>, Shape<_2, _1, _1>,
               cutlass::gemm::KernelTmaWarpSpecializedPingpong,
               cutlass::epilogue::TmaWarpSpecialized,
               LinComb<cutlass::half_t, cutlass::half_t>,
               void,
               Shape<int, int, int, int>,
               cutlass::arch::OpClassTensorOp,
               cutlass::arch::OpClassTensorOp,
               float>;
ORI_EMIT(G)
