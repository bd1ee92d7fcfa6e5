// FlashInfer fb28d7242b35 sm90 (fa3) single prefill, bf16, head dim 64, mask causal.
// Config: csrc/single_prefill_sm90_customize_config.jinja rendered into target/flashinfer-gen/single_bf16_d64_causal/; variant DefaultAttention<false>.
#include <flashinfer/attention/hopper/prefill_sm90.cuh>
#include "single_bf16_d64_causal/single_prefill_sm90_config.inc"
using namespace flashinfer;
namespace flashinfer {
template cudaError_t SinglePrefillWithKVCacheDispatched
    <64, 64, MaskMode::kCausal, /*USE_SLIDING_WINDOW=*/false, DefaultAttention<false>, Params>(
    Params& params, cudaStream_t stream);
}  // namespace flashinfer
