// FlashInfer fb28d7242b35 sm90 (fa3) ragged-KV batch prefill, bf16, head dim 128, mask causal.
// Config: csrc/batch_prefill_sm90_customize_config.jinja rendered into target/flashinfer-gen/ragged_bf16_d128_causal/; variant DefaultAttention<false>.
#include <flashinfer/attention/hopper/prefill_sm90.cuh>
#include "ragged_bf16_d128_causal/batch_prefill_sm90_config.inc"
using namespace flashinfer;
namespace flashinfer {
template cudaError_t BatchPrefillWithRaggedKVCacheDispatched
    <128, 128, MaskMode::kCausal, /*USE_SLIDING_WINDOW=*/false,
     /*SAME_SCHEDULER_FOR_ALL_HEADS=*/true, DefaultAttention<false>, RaggedParams>(
    RaggedParams& params, bool enable_pdl, cudaStream_t stream);
}  // namespace flashinfer
