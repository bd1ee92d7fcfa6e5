// f16 TN, f16 accumulators, pingpong.
// A f16 (RowMajor), B f16 (ColumnMajor), accumulator f16, C f16, D f16 (RowMajor);
// tile 128x128x64, cluster 1x1x1; mainloop KernelTmaWarpSpecializedPingpong, epilogue TmaWarpSpecialized.
#include "ori_gemm.cuh"
using namespace ori;
using G = Gemm<cutlass::half_t, RowMajor, cutlass::half_t, ColumnMajor, cutlass::half_t,
               cutlass::half_t, RowMajor, cutlass::half_t, RowMajor,
               Shape<_128, _128, _64>, Shape<_1, _1, _1>,
               cutlass::gemm::KernelTmaWarpSpecializedPingpong,
               cutlass::epilogue::TmaWarpSpecialized,
               cutlass::epilogue::fusion::LinearCombination<cutlass::half_t, cutlass::half_t, cutlass::half_t, cutlass::half_t>,
               void,
               Shape<int, int, int, int>,
               cutlass::arch::OpClassTensorOp,
               cutlass::arch::OpClassTensorOp,
               cutlass::half_t>;
ORI_EMIT(G)
