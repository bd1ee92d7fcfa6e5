// ThunderKittens 0b55588d2769 kernels/attention/mha_h100/mha_h100.cu: MHA backward prologue (O.dO row sums), head dim 64.
// Kernel: bwd_attend_prep_ker<64>.
#include "attention/mha_h100/mha_h100.kernels.cuh"
void *ori_kernel_entry() { return reinterpret_cast<void *>(&bwd_attend_prep_ker<64>); }
