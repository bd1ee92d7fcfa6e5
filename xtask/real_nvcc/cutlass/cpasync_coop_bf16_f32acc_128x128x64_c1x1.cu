// cp.async cooperative bf16.
// A bf16 (RowMajor), B bf16 (ColumnMajor), accumulator f32, C bf16, D bf16 (RowMajor);
// tile 128x128x64, cluster 1x1x1; mainloop KernelCpAsyncWarpSpecializedCooperative, epilogue NoSmemWarpSpecialized.
#include "ori_gemm.cuh"
using namespace ori;
using G = Gemm<cutlass::bfloat16_t, RowMajor, cutlass::bfloat16_t, ColumnMajor, float,
               cutlass::bfloat16_t, RowMajor, cutlass::bfloat16_t, RowMajor,
               Shape<_128, _128, _64>, Shape<_1, _1, _1>,
               cutlass::gemm::KernelCpAsyncWarpSpecializedCooperative,
               cutlass::epilogue::NoSmemWarpSpecialized,
               LinComb<cutlass::bfloat16_t, cutlass::bfloat16_t>,
               void,
               Shape<int, int, int, int>,
               cutlass::arch::OpClassTensorOp,
               cutlass::arch::OpClassTensorOp,
               float>;
ORI_EMIT(G)
