// ThunderKittens 0b55588d2769 kernels/attention/mha_h100/mha_h100.cu: MHA backward dQ/dK/dV, head dim 64, non-causal (attention_backward dispatch).
// Kernel: bwd_attend_ker<64, false>.
#include "attention/mha_h100/mha_h100.kernels.cuh"
void *ori_kernel_entry() { return reinterpret_cast<void *>(&bwd_attend_ker<64, false>); }
