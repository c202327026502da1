#include "tally/inference/serving.h"

#include <algorithm>
#include <string>

#include "tally/base/error.h"
#include "tally/comm/collectives.h"
#include "tally/compute/flops.h"
#include "tally/memory/kvcache.h"

namespace tally {

namespace {

// Forward FLOPs of one new token attending to `context` cached tokens (as inference.cpp counts a decode step).
double decode_flops(const ModelConfig& c, std::int64_t context) {
    FlopsInput f;
    f.seq = context;
    f.attention = AttentionFlops::Full;
    return count_flops(c, f).forward_per_token;
}

std::int64_t sequences_beside(std::uint64_t usable, std::uint64_t weights, std::uint64_t per_sequence) {
    return weights >= usable || per_sequence == 0 ? 0 : static_cast<std::int64_t>((usable - weights) / per_sequence);
}

// α^n by repeated multiplication: exact to the last bit on native and wasm alike (no std::pow).
double power(double base, std::int64_t n) {
    double out = 1;
    for (std::int64_t i = 0; i < n; ++i) out *= base;
    return out;
}

}  // namespace

// ---------------------------------------------------------------- paged KV cache

PagedKv paged_kv(const ModelConfig& c, const PagedKvInput& in, const Hardware& hw) {
    if (in.reserved_context < 1)
        throw InputError("reserved_context",
                         "reserved_context must be at least 1 token, got " + std::to_string(in.reserved_context));
    if (in.mean_context < 1 || in.mean_context > in.reserved_context)
        throw InputError("mean_context", "mean_context must be from 1 to reserved_context (" +
                                             std::to_string(in.reserved_context) + "), got " +
                                             std::to_string(in.mean_context));
    if (in.block_tokens < 1 || in.block_tokens > in.reserved_context)
        throw InputError("block_tokens", "block_tokens must be from 1 to reserved_context (" +
                                             std::to_string(in.reserved_context) + "), got " +
                                             std::to_string(in.block_tokens));
    PagedKv r;
    const KvCache k = kv_cache(c, in.reserved_context, 1, in.kv_dtype, in.weights_dtype);  // validates the model
    r.usable_bytes = preset_usable_capacity(hw).usable_bytes;
    r.weights_bytes = k.weights_bytes;
    r.used_bytes_per_sequence = k.bytes_per_sequence(in.mean_context);
    r.reserved_bytes_per_sequence = k.bytes_per_sequence(in.reserved_context);
    // Whole blocks: the last one part-empty (at most block − 1 tokens wasted), capped at the reservation.
    r.blocks_per_sequence = (in.mean_context + in.block_tokens - 1) / in.block_tokens;
    r.paged_tokens_per_sequence = std::min(r.blocks_per_sequence * in.block_tokens, in.reserved_context);
    r.paged_bytes_per_sequence = k.bytes_per_sequence(r.paged_tokens_per_sequence);
    r.reserved_used_fraction =
        static_cast<double>(r.used_bytes_per_sequence) / static_cast<double>(r.reserved_bytes_per_sequence);
    r.paged_used_fraction =
        static_cast<double>(r.used_bytes_per_sequence) / static_cast<double>(r.paged_bytes_per_sequence);
    r.reserved_sequences = sequences_beside(r.usable_bytes, r.weights_bytes, r.reserved_bytes_per_sequence);
    r.paged_sequences = sequences_beside(r.usable_bytes, r.weights_bytes, r.paged_bytes_per_sequence);

    const double flops = decode_flops(c, in.mean_context);
    const double peak = hw.peak(in.compute_dtype);
    const double weights = static_cast<double>(r.weights_bytes), used = static_cast<double>(r.used_bytes_per_sequence);
    const double bw = hw.memory_bandwidth_bytes_per_s;
    if (r.reserved_sequences > 0) r.reserved_step = decode_step(weights, used, flops, r.reserved_sequences, bw, peak);
    if (r.paged_sequences > 0) r.paged_step = decode_step(weights, used, flops, r.paged_sequences, bw, peak);
    if (r.reserved_sequences > 0) {
        r.sequences_ratio = static_cast<double>(r.paged_sequences) / static_cast<double>(r.reserved_sequences);
        r.throughput_ratio = r.paged_step.tokens_per_s / r.reserved_step.tokens_per_s;
    }
    return r;
}

// ---------------------------------------------------------------- speculative decoding

double expected_tokens_per_step(double alpha, std::int64_t gamma) {
    if (!(alpha >= 0 && alpha <= 1))
        throw InputError("acceptance_rate", "acceptance_rate must be in [0, 1], got " + format_number(alpha));
    if (gamma < 1 || gamma > 64)
        throw InputError("draft_tokens", "draft_tokens must be from 1 to 64, got " + std::to_string(gamma));
    // At α = 1 every draft is accepted and the target adds one: γ + 1 (the limit of the geometric sum).
    if (alpha == 1) return static_cast<double>(gamma + 1);
    return (1 - power(alpha, gamma + 1)) / (1 - alpha);
}

Speculative speculative_decoding(const ModelConfig& target, const ModelConfig& draft, const SpeculativeInput& in,
                                 const Hardware& hw) {
    Speculative r;
    r.expected_tokens = expected_tokens_per_step(in.acceptance_rate, in.draft_tokens);
    InferenceInput one;
    one.context = in.context;
    one.batch = 1;
    one.kv_dtype = in.kv_dtype;
    one.weights_dtype = in.weights_dtype;
    one.compute_dtype = in.compute_dtype;
    const InferenceResult t = inference(target, one, hw);  // validates context and dtypes
    InferenceResult d;
    try {
        d = inference(draft, one, hw);
    } catch (const InputError& e) {
        throw InputError(e.field() == "model" ? "draft_model" : e.field(), e.what());
    }
    if (draft.vocab_size != target.vocab_size)
        throw InputError("draft_model", "the draft must share the target's vocabulary: vocab_size " +
                                            std::to_string(draft.vocab_size) + " against the target's " +
                                            std::to_string(target.vocab_size));
    r.target_step = t.at_batch;
    r.draft_step = d.at_batch;
    // Verification scores γ + 1 positions in one pass: one read of the weights and the cache, γ + 1 tokens' FLOPs.
    const double peak = hw.peak(in.compute_dtype);
    const double verify_compute = static_cast<double>(in.draft_tokens + 1) * t.decode_flops_per_token / peak;
    r.verify_seconds = std::max(t.at_batch.memory_seconds, verify_compute);
    r.cost_ratio = r.draft_step.step_seconds / r.target_step.step_seconds;
    r.round_seconds = static_cast<double>(in.draft_tokens) * r.draft_step.step_seconds + r.verify_seconds;
    r.tokens_per_s = r.expected_tokens / r.round_seconds;
    r.baseline_tokens_per_s = r.target_step.tokens_per_s;
    r.speedup = r.tokens_per_s / r.baseline_tokens_per_s;
    r.speedup_closed_form = r.expected_tokens / (static_cast<double>(in.draft_tokens) * r.cost_ratio + 1);
    // Both models sit on the same GPU here: the draft's weights and cache come out of the target's memory.
    r.total_bytes = checked_add("total_bytes", t.memory.total_bytes, d.memory.total_bytes);
    r.usable_bytes = t.usable_bytes;
    r.fits = r.total_bytes <= r.usable_bytes;
    return r;
}

// ---------------------------------------------------------------- tensor-parallel decoding

TpServing tp_decode(const ModelConfig& c, const TpServingInput& in, const Hardware& hw) {
    if (in.tp < 1 || in.tp > 1024)
        throw InputError("tp", "tp must be from 1 to 1024 GPUs, got " + std::to_string(in.tp));
    if (c.num_heads < 1 || c.num_kv_heads < 1)
        throw InputError("model", "tensor-parallel serving splits attention heads; this model has none to split");
    // Megatron-LM splits the attention heads and the MLP columns over the tp GPUs (Shoeybi et al. 2019, sec. 3).
    if (c.num_heads % in.tp != 0)
        throw InputError("tp", "tp must divide the model's " + std::to_string(c.num_heads) + " attention heads, got " +
                                   std::to_string(in.tp));
    // Each GPU holds whole KV heads, or one head shared by t / n_kv GPUs (MLA's latent has no heads to split).
    if (!c.is_mla() && c.num_kv_heads % in.tp != 0 && in.tp % c.num_kv_heads != 0)
        throw InputError("tp", "tp must divide the model's " + std::to_string(c.num_kv_heads) +
                                   " KV heads or be a multiple of them, got " + std::to_string(in.tp));
    InferenceInput base;
    base.context = in.context;
    base.batch = in.batch;
    base.kv_dtype = in.kv_dtype;
    base.weights_dtype = in.weights_dtype;
    base.compute_dtype = in.compute_dtype;
    const InferenceResult one = inference(c, base, hw);  // validates context, batch, dtypes; one GPU's arithmetic

    TpServing r;
    const std::uint64_t t = static_cast<std::uint64_t>(in.tp);
    r.usable_bytes = preset_usable_capacity(hw).usable_bytes;
    r.weights_bytes_per_gpu = (one.memory.weights_bytes + t - 1) / t;
    // Each GPU keeps the K and V of its own KV heads; with more GPUs than KV heads each head sits on t / n_kv GPUs.
    // MLA's latent is shared by every head, so every GPU holds all of it.
    if (c.is_mla()) {
        r.kv_heads_per_gpu = 0;
        r.kv_bytes_per_sequence_per_gpu = one.kv_per_sequence;
    } else {
        const std::int64_t kv_heads = c.num_kv_heads;
        const std::int64_t share = std::min<std::int64_t>(in.tp, kv_heads);
        r.kv_heads_per_gpu = std::max<std::int64_t>(1, kv_heads / in.tp);
        r.kv_bytes_per_sequence_per_gpu =
            (one.kv_per_sequence + static_cast<std::uint64_t>(share) - 1) / static_cast<std::uint64_t>(share);
    }
    r.max_batch = sequences_beside(r.usable_bytes, r.weights_bytes_per_gpu, r.kv_bytes_per_sequence_per_gpu);
    r.fits = in.batch <= r.max_batch;

    const double b = static_cast<double>(in.batch);
    const double bw = hw.memory_bandwidth_bytes_per_s, peak = hw.peak(in.compute_dtype);
    r.memory_seconds =
        (static_cast<double>(r.weights_bytes_per_gpu) + b * static_cast<double>(r.kv_bytes_per_sequence_per_gpu)) / bw;
    r.compute_seconds = b * one.decode_flops_per_token / static_cast<double>(in.tp) / peak;
    r.memory_bound = r.memory_seconds >= r.compute_seconds;
    // Two all-reduces per layer in the forward pass, after attention and after the MLP (Shoeybi et al. 2019, Fig. 4),
    // each of the batch's new hidden states in bf16; decode waits on each before the next layer starts.
    if (in.tp > 1) {
        r.all_reduces_per_step = 2 * c.num_layers;
        r.all_reduce_bytes = b * static_cast<double>(c.hidden_size) * 2;
        const collectives::Links links = collectives::links_of(hw, collectives::kDefaultLinkEfficiency);
        const collectives::Placement placement = collectives::placement_of(in.tp, links);
        r.all_reduce_seconds = collectives::cost(collectives::Kind::AllReduce, collectives::Algorithm::Ring,
                                                 r.all_reduce_bytes, placement, links)
                                   .seconds;
        r.comm_seconds = static_cast<double>(r.all_reduces_per_step) * r.all_reduce_seconds;
    }
    r.step_seconds = std::max(r.memory_seconds, r.compute_seconds) + r.comm_seconds;
    r.tokens_per_s = b / r.step_seconds;
    r.per_sequence_tokens_per_s = 1 / r.step_seconds;
    r.comm_fraction = r.comm_seconds / r.step_seconds;
    return r;
}

// ---------------------------------------------------------------- quantized weights

WeightQuant weight_quantization(const ModelConfig& c, const WeightQuantInput& in, const Hardware& hw) {
    if (in.quantized_dtype == DType::None)
        throw InputError("quantized_dtype",
                         "quantized_dtype must store the weights (fp8, int8, nvfp4, mxfp8, mxfp4, ...), not none");
    InferenceInput base;
    base.context = in.context;
    base.batch = in.batch;
    base.kv_dtype = in.kv_dtype;
    base.weights_dtype = DType::BF16;
    base.compute_dtype = in.compute_dtype;
    InferenceInput quant = base;
    quant.weights_dtype = in.quantized_dtype;
    const InferenceResult a = inference(c, base, hw);
    const InferenceResult q = inference(c, quant, hw);
    WeightQuant r;
    r.weights_bytes = a.memory.weights_bytes;
    r.quantized_weights_bytes = q.memory.weights_bytes;
    r.kv_bytes = a.memory.kv_cache_bytes;
    r.weights_share = static_cast<double>(r.weights_bytes) / static_cast<double>(r.weights_bytes + r.kv_bytes);
    r.baseline = a.at_batch;
    r.quantized = q.at_batch;
    r.speedup = a.at_batch.step_seconds / q.at_batch.step_seconds;
    r.ideal_speedup = static_cast<double>(r.weights_bytes) / static_cast<double>(r.quantized_weights_bytes);
    r.max_batch = a.max_batch;
    r.quantized_max_batch = q.max_batch;
    return r;
}

}  // namespace tally
