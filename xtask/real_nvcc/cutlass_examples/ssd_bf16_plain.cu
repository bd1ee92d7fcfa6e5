// CUTLASS v4.7.0 examples/111_hopper_ssd: Mamba-2 SSD chunk kernel, bf16, no D, no Z.
// Sm90SsdBuilder<bf16, float, float, bf16, (L, D, N) = (128, 64, 128), HAS_D false, D_HAS_HDIM false, HAS_Z false> as the example's TestBed builds it.
#include "ori_ssd111.cuh"
ORI_EMIT(ori::Ssd<cutlass::bfloat16_t, 128, 64, 128, false, false, false>)
