// FlashInfer fb28d7242b35 sm90 (fa3) paged-KV batch prefill, bf16, head dim 64, mask causal, logits soft cap.
// Config: csrc/batch_prefill_sm90_customize_config.jinja rendered into target/flashinfer-gen/paged_bf16_d64_causal_softcap/; variant DefaultAttention<true>.
#include <flashinfer/attention/hopper/prefill_sm90.cuh>
#include "paged_bf16_d64_causal_softcap/batch_prefill_sm90_config.inc"
using namespace flashinfer;
namespace flashinfer {
template cudaError_t BatchPrefillWithPagedKVCacheDispatched
    <64, 64, MaskMode::kCausal, /*USE_SLIDING_WINDOW=*/false,
     /*SAME_SCHEDULER_FOR_ALL_HEADS=*/true, DefaultAttention<true>, PagedParams>(
    PagedParams& params, bool enable_pdl, cudaStream_t stream);
}  // namespace flashinfer
