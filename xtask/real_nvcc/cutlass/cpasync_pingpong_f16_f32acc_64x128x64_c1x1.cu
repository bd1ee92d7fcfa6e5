// cp.async pingpong f16.
// A f16 (RowMajor), B f16 (ColumnMajor), accumulator f32, C f16, D f16 (RowMajor);
// tile 64x128x64, cluster 1x1x1; mainloop KernelCpAsyncWarpSpecializedPingpong, epilogue NoSmemWarpSpecialized.
#include "ori_gemm.cuh"
using namespace ori;
using G = Gemm<cutlass::half_t, RowMajor, cutlass::half_t, ColumnMajor, float,
               cutlass::half_t, RowMajor, cutlass::half_t, RowMajor,
               Shape<_64, _128, _64>, Shape<_1, _1, _1>,
               cutlass::gemm::KernelCpAsyncWarpSpecializedPingpong,
               cutlass::epilogue::NoSmemWarpSpecialized,
               LinComb<cutlass::half_t, cutlass::half_t>,
               void,
               Shape<int, int, int, int>,
               cutlass::arch::OpClassTensorOp,
               cutlass::arch::OpClassTensorOp,
               float>;
ORI_EMIT(G)
