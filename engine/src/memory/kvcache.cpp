#include "tally/memory/kvcache.h"

#include <algorithm>

#include "tally/base/error.h"
#include "tally/model/params.h"

namespace tally {

std::uint64_t mamba_state_values(const ModelConfig& c) {
    if (c.num_mamba_layers == 0) return 0;
    const std::uint64_t conv = static_cast<std::uint64_t>(c.mamba_conv_dim()),
                        window = static_cast<std::uint64_t>(c.mamba_conv_kernel - 1);
    // Mamba-2: H·P·N; Mamba-1: d_inner·N (one state row per channel).
    const std::uint64_t ssm = checked_mul("kv_cache", static_cast<std::uint64_t>(c.mamba_d_inner()),
                                          static_cast<std::uint64_t>(c.mamba_d_state));
    return checked_add("kv_cache", checked_mul("kv_cache", conv, window), ssm);
}

std::uint64_t linear_state_values(const ModelConfig& c) {
    if (c.num_linear_layers == 0) return 0;
    const std::uint64_t conv = static_cast<std::uint64_t>(c.linear_conv_dim()),
                        window = static_cast<std::uint64_t>(c.linear_conv_kernel - 1);
    const std::uint64_t ssm = checked_mul(
        "kv_cache",
        static_cast<std::uint64_t>(c.linear_value_heads) * static_cast<std::uint64_t>(c.linear_key_head_dim),
        static_cast<std::uint64_t>(c.linear_value_head_dim));
    return checked_add("kv_cache", checked_mul("kv_cache", conv, window), ssm);
}

std::uint64_t indexer_key_bytes(const ModelConfig& c) {
    if (!c.has_indexer()) return 0;
    const std::uint64_t d = static_cast<std::uint64_t>(c.index_head_dim);
    return d + 4 * ((d + 127) / 128);  // 1 byte per FP8 value, a 4-byte scale per block of 128
}

KvCache kv_cache(const ModelConfig& c, std::int64_t context, std::int64_t batch, DType kv_dtype, DType weights_dtype,
                 std::int64_t encoder_context) {
    validate(c);
    if (c.architecture == Architecture::Encoder)
        throw InputError("model",
                         "an encoder (architecture encoder, e.g. BERT) reads its whole input at once and "
                         "never decodes token by token, so it has no KV cache; give a decoder or an "
                         "encoder-decoder");
    if (context < 1 || context > (std::int64_t{1} << 40))
        throw InputError("context", "context must be a whole number in [1, 2^40], got " + std::to_string(context));
    if (batch < 1 || batch > 1'000'000'000)
        throw InputError("batch", "batch must be a whole number in [1, 1000000000], got " + std::to_string(batch));
    if (kv_dtype == DType::None) throw InputError("kv_dtype", "kv_dtype must be a storage type, not none");
    if (weights_dtype == DType::None)
        throw InputError("weights_dtype", "weights_dtype must be a storage type, not none");
    if (!c.is_encoder_decoder() && encoder_context != 0)
        throw InputError("encoder_context",
                         "encoder_context applies to an encoder-decoder (architecture "
                         "encoder_decoder) only");
    if (encoder_context < 0 || encoder_context > (std::int64_t{1} << 40))
        throw InputError("encoder_context", "encoder_context must be a whole number in [1, 2^40] (0: context), got " +
                                                std::to_string(encoder_context));
    KvCache k;
    // Layers that decode: all of a decoder's, only the decoder stack of an encoder-decoder.
    // A hybrid's linear-attention and Mamba-2 layers hold a state instead (added below).
    const std::uint64_t layers =
        static_cast<std::uint64_t>(c.is_encoder_decoder() ? c.num_decoder_layers : c.num_attention_layers());
    const std::uint64_t windowed = static_cast<std::uint64_t>(c.num_sliding_layers);
    // Values one layer caches per token: K and V of n_kv heads (GQA shrinks n_kv), or MLA's latent and RoPE key.
    const std::uint64_t per_layer =
        c.is_mla() ? static_cast<std::uint64_t>(c.kv_lora_rank + c.qk_rope_head_dim)
                   : static_cast<std::uint64_t>(c.kv_dim()) + static_cast<std::uint64_t>(c.v_dim());
    const std::uint64_t mha_per_layer =
        static_cast<std::uint64_t>(c.num_heads) * static_cast<std::uint64_t>(c.head_dim + c.v_dim_per_head());
    k.index_key_bytes_per_token = checked_mul("kv_cache", layers, indexer_key_bytes(c));
    k.bytes_per_token =
        checked_add("kv_cache", dtype_storage_bytes("kv_cache", checked_mul("kv_cache", layers, per_layer), kv_dtype),
                    k.index_key_bytes_per_token);
    // An indexer excludes windows (validate), so its keys are all global.
    k.global_bytes_per_token = checked_add(
        "kv_cache", dtype_storage_bytes("kv_cache", checked_mul("kv_cache", layers - windowed, per_layer), kv_dtype),
        k.index_key_bytes_per_token);
    k.sliding_window = c.sliding_window;
    if (c.is_encoder_decoder()) {
        k.cross_tokens = static_cast<std::uint64_t>(encoder_context > 0 ? encoder_context : context);
        k.cross_bytes_per_sequence = checked_mul("kv_cache", k.bytes_per_token, k.cross_tokens);
    }
    const std::uint64_t state_values = checked_add(
        "kv_cache", checked_mul("kv_cache", static_cast<std::uint64_t>(c.num_mamba_layers), mamba_state_values(c)),
        checked_mul("kv_cache", static_cast<std::uint64_t>(c.num_linear_layers), linear_state_values(c)));
    k.state_bytes_per_sequence = dtype_storage_bytes("kv_cache", state_values, weights_dtype);
    k.kv_cache_bytes = checked_mul("kv_cache", k.bytes_per_sequence(context), static_cast<std::uint64_t>(batch));
    k.weights_bytes = dtype_storage_bytes("weights", count_params(c).total, weights_dtype);
    k.total_bytes = checked_add("kv_cache", k.kv_cache_bytes, k.weights_bytes);
    KvCache mha = k;  // the same windows and context, every head's own K and V
    mha.bytes_per_token = dtype_storage_bytes("kv_cache", checked_mul("kv_cache", layers, mha_per_layer), kv_dtype);
    mha.global_bytes_per_token =
        dtype_storage_bytes("kv_cache", checked_mul("kv_cache", layers - windowed, mha_per_layer), kv_dtype);
    mha.cross_bytes_per_sequence =
        c.is_encoder_decoder()
            ? checked_mul("kv_cache", mha.bytes_per_token,
                          static_cast<std::uint64_t>(encoder_context > 0 ? encoder_context : context))
            : 0;
    k.mha_kv_cache_bytes = checked_mul("kv_cache", mha.bytes_per_sequence(context), static_cast<std::uint64_t>(batch));
    return k;
}

std::uint64_t KvCache::bytes_per_sequence(std::int64_t context) const {
    const std::uint64_t tokens = static_cast<std::uint64_t>(context);
    const std::uint64_t windowed_tokens =
        sliding_window > 0 ? std::min(tokens, static_cast<std::uint64_t>(sliding_window)) : tokens;
    const std::uint64_t global = checked_mul("kv_cache", global_bytes_per_token, tokens);
    const std::uint64_t windowed = checked_mul("kv_cache", bytes_per_token - global_bytes_per_token, windowed_tokens);
    return checked_add("kv_cache",
                       checked_add("kv_cache", checked_add("kv_cache", global, windowed), cross_bytes_per_sequence),
                       state_bytes_per_sequence);
}

std::vector<KvLayerGroup> kv_layer_groups(const ModelConfig& c, const KvCache& k, std::int64_t context, DType kv_dtype,
                                          DType weights_dtype) {
    const std::int64_t layers = c.is_encoder_decoder() ? c.num_decoder_layers : c.num_attention_layers();
    const std::uint64_t tokens = static_cast<std::uint64_t>(context);
    KvLayerGroup base;
    base.latent = c.is_mla();
    base.key_values = static_cast<std::uint64_t>(c.is_mla() ? c.qk_rope_head_dim : c.kv_dim());
    base.value_values = static_cast<std::uint64_t>(c.is_mla() ? c.kv_lora_rank : c.v_dim());
    base.mha_values =
        static_cast<std::uint64_t>(c.num_heads) * static_cast<std::uint64_t>(c.head_dim + c.v_dim_per_head());
    base.index_key_bytes = indexer_key_bytes(c);
    base.bytes_per_layer_token =
        dtype_storage_bytes("kv_cache", base.key_values + base.value_values, kv_dtype) + base.index_key_bytes;
    std::vector<KvLayerGroup> groups;
    // Each group's bytes per token is the difference kv_cache made, so the groups add up to its totals exactly.
    auto add = [&](const char* kind, std::int64_t n, std::uint64_t bytes_per_token, std::uint64_t held) {
        if (n == 0) return;
        KvLayerGroup g = base;
        g.kind = kind;
        g.layers = n;
        g.bytes_per_token = bytes_per_token;
        g.tokens = held;
        g.bytes_per_sequence = checked_mul("kv_cache", bytes_per_token, held);
        groups.push_back(g);
    };
    add("full", layers - c.num_sliding_layers, k.global_bytes_per_token, tokens);
    add("windowed", c.num_sliding_layers, k.bytes_per_token - k.global_bytes_per_token,
        std::min(tokens, static_cast<std::uint64_t>(k.sliding_window)));
    if (k.cross_tokens > 0) add("cross", layers, k.bytes_per_token, k.cross_tokens);
    // A hybrid's recurrent layers: a fixed state per sequence, whatever the context.
    auto add_state = [&](const char* kind, std::int64_t n, std::uint64_t values) {
        if (n == 0) return;
        KvLayerGroup g;
        g.kind = kind;
        g.layers = n;
        g.recurrent = true;
        g.state_values = values;
        g.bytes_per_sequence = dtype_storage_bytes(
            "kv_cache", checked_mul("kv_cache", static_cast<std::uint64_t>(n), values), weights_dtype);
        groups.push_back(g);
    };
    add_state("linear_attention", c.num_linear_layers, linear_state_values(c));
    add_state("mamba", c.num_mamba_layers, mamba_state_values(c));
    return groups;
}

KvCapacity kv_capacity(const KvCache& k, std::int64_t context, std::int64_t batch, std::uint64_t usable) {
    KvCapacity out;
    out.fits = k.total_bytes <= usable;
    const std::uint64_t per_sequence = k.bytes_per_sequence(context);
    out.max_batch = k.weights_bytes >= usable ? 0 : (usable - k.weights_bytes) / per_sequence;
    // Generated tokens that fit beside the weights and the batch's fixed cross-attention K/V.
    const std::uint64_t b = static_cast<std::uint64_t>(batch);
    // Fixed per sequence: cross-attention K/V and a hybrid's recurrent state.
    const std::uint64_t fixed = k.weights_bytes + (k.cross_bytes_per_sequence + k.state_bytes_per_sequence) * b;
    if (fixed >= usable) return out;
    const std::uint64_t room = usable - fixed;
    const std::uint64_t window = static_cast<std::uint64_t>(k.sliding_window);
    // Up to the window every layer grows; past it only the global layers do (none: the cache stops growing).
    if (k.bytes_per_token == 0) {
        out.max_context = std::uint64_t{1} << 40;  // state only (no attention layer): no context limit
    } else if (window == 0 || room / b < k.bytes_per_token * window) {
        out.max_context = room / (k.bytes_per_token * b);
    } else if (k.global_bytes_per_token == 0) {
        out.max_context = std::uint64_t{1} << 40;  // the longest context the API accepts
    } else {
        const std::uint64_t past = (room - k.bytes_per_token * window * b) / (k.global_bytes_per_token * b);
        out.max_context = std::min(window + past, std::uint64_t{1} << 40);
    }
    return out;
}

DecodeBound decode_bound(const KvCache& k, std::int64_t batch, double bandwidth_bytes_per_s) {
    DecodeBound out;
    out.bytes_per_step = k.total_bytes;
    out.tokens_per_s = bandwidth_bytes_per_s / static_cast<double>(k.total_bytes);
    out.batch_tokens_per_s = out.tokens_per_s * static_cast<double>(batch);
    return out;
}

}  // namespace tally
