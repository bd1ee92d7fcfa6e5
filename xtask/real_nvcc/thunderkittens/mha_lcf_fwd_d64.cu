// ThunderKittens 0b55588d2769 kernels/attention/mha_h100_lcf/mha_h100_lcf.cu: MHA forward on the load-compute-finish template, head dim 64, 3 consumer warpgroups.
// Kernel: kittens::prototype::lcf::kernel<attn_fwd_template<64>>.
#include "attention/mha_h100_lcf/mha_h100_lcf.kernels.cuh"
void *ori_kernel_entry() { return reinterpret_cast<void *>(&kittens::prototype::lcf::kernel<attn_fwd_template<64>>); }
