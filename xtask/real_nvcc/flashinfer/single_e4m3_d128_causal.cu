// FlashInfer fb28d7242b35 sm90 (fa3) single prefill, e4m3, head dim 128, mask causal.
// Config: csrc/single_prefill_sm90_customize_config.jinja rendered into target/flashinfer-gen/single_e4m3_d128_causal/; variant DefaultFP8Attention.
#include <flashinfer/attention/hopper/quantization/prefill_sm90.cuh>
#include "single_e4m3_d128_causal/single_prefill_sm90_config.inc"
using namespace flashinfer;
namespace flashinfer {
template cudaError_t SingleFP8PrefillWithKVCacheDispatched
    <128, MaskMode::kCausal, /*USE_SLIDING_WINDOW=*/false, DefaultFP8Attention, Params>(
    Params& params, cudaStream_t stream);
}  // namespace flashinfer
