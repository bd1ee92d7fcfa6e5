// FlashInfer fb28d7242b35 sm90 (fa3) single prefill, f16, head dim 128, mask causal.
// Config: csrc/single_prefill_sm90_customize_config.jinja rendered into target/flashinfer-gen/single_f16_d128_causal/; variant DefaultAttention<false>.
#include <flashinfer/attention/hopper/prefill_sm90.cuh>
#include "single_f16_d128_causal/single_prefill_sm90_config.inc"
using namespace flashinfer;
namespace flashinfer {
template cudaError_t SinglePrefillWithKVCacheDispatched
    <128, 128, MaskMode::kCausal, /*USE_SLIDING_WINDOW=*/false, DefaultAttention<false>, Params>(
    Params& params, cudaStream_t stream);
}  // namespace flashinfer
