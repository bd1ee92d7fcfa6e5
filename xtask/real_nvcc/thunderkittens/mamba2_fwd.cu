// ThunderKittens 0b55588d2769 kernels/mamba2/mamba2.cu: Mamba-2 SSD chunked scan forward (load-compute-store-finish template).
// Kernel: kittens::prototype::lcsf::kernel<mamba2_fwd_template>.
#include "mamba2/mamba2.kernels.cuh"
void *ori_kernel_entry() { return reinterpret_cast<void *>(&kittens::prototype::lcsf::kernel<mamba2_fwd_template>); }
