#include "tally/kvcache.h"

#include "tally/error.h"
#include "tally/params.h"

namespace tally {

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
    const std::uint64_t layers =
        static_cast<std::uint64_t>(c.is_encoder_decoder() ? c.num_decoder_layers : c.num_layers);
    // K and V (2) per layer, n_kv heads of d values each, per token (GQA shrinks n_kv).
    k.bytes_per_token = checked_mul(
        "kv_cache", checked_mul("kv_cache", 2 * layers, static_cast<std::uint64_t>(c.kv_dim())), dtype_bytes(kv_dtype));
    if (c.is_encoder_decoder())
        k.cross_bytes_per_sequence = checked_mul(
            "kv_cache", k.bytes_per_token, static_cast<std::uint64_t>(encoder_context > 0 ? encoder_context : context));
    const std::uint64_t per_sequence =
        checked_add("kv_cache", checked_mul("kv_cache", k.bytes_per_token, static_cast<std::uint64_t>(context)),
                    k.cross_bytes_per_sequence);
    k.kv_cache_bytes = checked_mul("kv_cache", per_sequence, static_cast<std::uint64_t>(batch));
    k.weights_bytes = checked_mul("weights", count_params(c).total, dtype_bytes(weights_dtype));
    k.total_bytes = checked_add("kv_cache", k.kv_cache_bytes, k.weights_bytes);
    k.mha_kv_cache_bytes = checked_mul("kv_cache", k.kv_cache_bytes / static_cast<std::uint64_t>(c.num_kv_heads),
                                       static_cast<std::uint64_t>(c.num_heads));
    return k;
}

KvCapacity kv_capacity(const KvCache& k, std::int64_t context, std::int64_t batch, std::uint64_t usable) {
    KvCapacity out;
    out.fits = k.total_bytes <= usable;
    const std::uint64_t per_sequence =
        k.bytes_per_token * static_cast<std::uint64_t>(context) + k.cross_bytes_per_sequence;
    out.max_batch = k.weights_bytes >= usable ? 0 : (usable - k.weights_bytes) / per_sequence;
    // Generated tokens that fit beside the weights and the batch's fixed cross-attention K/V.
    const std::uint64_t fixed = k.weights_bytes + k.cross_bytes_per_sequence * static_cast<std::uint64_t>(batch);
    out.max_context = fixed >= usable ? 0 : (usable - fixed) / (k.bytes_per_token * static_cast<std::uint64_t>(batch));
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
