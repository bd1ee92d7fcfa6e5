// e4m3 x e4m3 -> bf16 with per-block (1x128 A, 128x128 B) FP32 scale factors, KernelTmaWarpSpecializedPingpongFP8Blockwise.
// A e4m3 (RowMajor), B e4m3 (ColumnMajor), accumulator f32, C bf16, D bf16 (RowMajor); tile 64x128x128, cluster 1x1x1; epilogue TmaWarpSpecialized.
#include "ori_gemm.cuh"
using namespace ori;
using TileMNK = Shape<_64, _128, _128>;
using ScaleConfig = cutlass::detail::Sm90BlockwiseScaleConfig<1, 128, 128>;
using LayoutSFA = decltype(ScaleConfig::deduce_layoutSFA());
using LayoutSFB = decltype(ScaleConfig::deduce_layoutSFB());
using G = Gemm<cutlass::float_e4m3_t, cute::tuple<RowMajor, LayoutSFA>, cutlass::float_e4m3_t, cute::tuple<ColumnMajor, LayoutSFB>, float,
               cutlass::bfloat16_t, RowMajor, cutlass::bfloat16_t, RowMajor,
               TileMNK, Shape<_1, _1, _1>,
               cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8Blockwise,
               cutlass::epilogue::TmaWarpSpecialized>;
ORI_EMIT(G)
