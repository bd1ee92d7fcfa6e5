// bf16, D = relu(alpha*acc + beta*C + per-row bias).
// A bf16 (RowMajor), B bf16 (ColumnMajor), accumulator f32, C bf16, D bf16 (RowMajor);
// tile 128x256x64, cluster 2x1x1; mainloop KernelTmaWarpSpecializedCooperative, epilogue TmaWarpSpecializedCooperative.
#include "ori_gemm.cuh"
using namespace ori;
using G = Gemm<cutlass::bfloat16_t, RowMajor, cutlass::bfloat16_t, ColumnMajor, float,
               cutlass::bfloat16_t, RowMajor, cutlass::bfloat16_t, RowMajor,
               Shape<_128, _256, _64>, Shape<_2, _1, _1>,
               cutlass::gemm::KernelTmaWarpSpecializedCooperative,
               cutlass::epilogue::TmaWarpSpecializedCooperative,
               cutlass::epilogue::fusion::LinCombPerRowBiasEltAct<cutlass::epilogue::thread::ReLu, cutlass::bfloat16_t, float, cutlass::bfloat16_t, cutlass::bfloat16_t>,
               void,
               Shape<int, int, int, int>,
               cutlass::arch::OpClassTensorOp,
               cutlass::arch::OpClassTensorOp,
               float>;
ORI_EMIT(G)
