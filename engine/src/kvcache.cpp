#include "tally/kvcache.h"

#include "tally/error.h"
#include "tally/params.h"

namespace tally {

KvCache kv_cache(const ModelConfig& c, std::int64_t context, std::int64_t batch, DType kv_dtype, DType weights_dtype) {
    validate(c);
    if (context < 1 || context > (std::int64_t{1} << 40))
        throw InputError("context", "context must be a whole number in [1, 2^40], got " + std::to_string(context));
    if (batch < 1 || batch > 1'000'000'000)
        throw InputError("batch", "batch must be a whole number in [1, 1000000000], got " + std::to_string(batch));
    if (kv_dtype == DType::None) throw InputError("kv_dtype", "kv_dtype must be a storage type, not none");
    if (weights_dtype == DType::None) throw InputError("weights_dtype", "weights_dtype must be a storage type, not none");
    KvCache k;
    // K and V (2) per layer, n_kv heads of d values each, per token (GQA shrinks n_kv).
    k.bytes_per_token = checked_mul("kv_cache", checked_mul("kv_cache", 2 * static_cast<std::uint64_t>(c.num_layers),
                                                            static_cast<std::uint64_t>(c.kv_dim())),
                                    dtype_bytes(kv_dtype));
    k.kv_cache_bytes = checked_mul("kv_cache", checked_mul("kv_cache", k.bytes_per_token, static_cast<std::uint64_t>(context)),
                                   static_cast<std::uint64_t>(batch));
    k.weights_bytes = checked_mul("weights", count_params(c).total, dtype_bytes(weights_dtype));
    k.total_bytes = checked_add("kv_cache", k.kv_cache_bytes, k.weights_bytes);
    k.mha_kv_cache_bytes = checked_mul("kv_cache", k.kv_cache_bytes / static_cast<std::uint64_t>(c.num_kv_heads),
                                       static_cast<std::uint64_t>(c.num_heads));
    return k;
}

KvCapacity kv_capacity(const KvCache& k, std::int64_t context, std::int64_t batch, std::uint64_t usable) {
    KvCapacity out;
    out.fits = k.total_bytes <= usable;
    const std::uint64_t per_sequence = k.bytes_per_token * static_cast<std::uint64_t>(context);
    out.max_batch = k.weights_bytes >= usable ? 0 : (usable - k.weights_bytes) / per_sequence;
    out.max_context =
        k.weights_bytes >= usable ? 0 : (usable - k.weights_bytes) / (k.bytes_per_token * static_cast<std::uint64_t>(batch));
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
