// CUTLASS v4.7.0 examples/111_hopper_ssd: Mamba-2 SSD chunk kernel, bf16, with D (per head dim) and Z gating (the example's options).
// Sm90SsdBuilder<bf16, float, float, bf16, (L, D, N) = (128, 64, 128), HAS_D true, D_HAS_HDIM true, HAS_Z true> as the example's TestBed builds it.
#include "ori_ssd111.cuh"
ORI_EMIT(ori::Ssd<cutlass::bfloat16_t, 128, 64, 128, true, true, true>)
