// FlashInfer fb28d7242b35 sm90 (fa3) ragged-KV batch prefill, f16, head dim 64, mask none.
// Config: csrc/batch_prefill_sm90_customize_config.jinja rendered into target/flashinfer-gen/ragged_f16_d64_none/; variant DefaultAttention<false>.
#include <flashinfer/attention/hopper/prefill_sm90.cuh>
#include "ragged_f16_d64_none/batch_prefill_sm90_config.inc"
using namespace flashinfer;
namespace flashinfer {
template cudaError_t BatchPrefillWithRaggedKVCacheDispatched
    <64, 64, MaskMode::kNone, /*USE_SLIDING_WINDOW=*/false,
     /*SAME_SCHEDULER_FOR_ALL_HEADS=*/true, DefaultAttention<false>, RaggedParams>(
    RaggedParams& params, bool enable_pdl, cudaStream_t stream);
}  // namespace flashinfer
