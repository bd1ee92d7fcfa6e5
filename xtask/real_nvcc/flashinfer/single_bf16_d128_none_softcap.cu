// FlashInfer fb28d7242b35 sm90 (fa3) single prefill, bf16, head dim 128, mask none, logits soft cap.
// Config: csrc/single_prefill_sm90_customize_config.jinja rendered into target/flashinfer-gen/single_bf16_d128_none_softcap/; variant DefaultAttention<true>.
#include <flashinfer/attention/hopper/prefill_sm90.cuh>
#include "single_bf16_d128_none_softcap/single_prefill_sm90_config.inc"
using namespace flashinfer;
namespace flashinfer {
template cudaError_t SinglePrefillWithKVCacheDispatched
    <128, 128, MaskMode::kNone, /*USE_SLIDING_WINDOW=*/false, DefaultAttention<true>, Params>(
    Params& params, cudaStream_t stream);
}  // namespace flashinfer
