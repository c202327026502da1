#include "tally/inference/inference.h"

#include <algorithm>
#include <cmath>

#include "tally/base/error.h"
#include "tally/compute/flops.h"

namespace tally {

DecodeStep decode_step(double weights_bytes, double kv_per_sequence, double flops_per_token, std::int64_t batch,
                       double bandwidth_bytes_per_s, double peak_flops_per_s) {
    DecodeStep s;
    s.batch = batch;
    const double b = static_cast<double>(batch);
    s.memory_seconds = (weights_bytes + b * kv_per_sequence) / bandwidth_bytes_per_s;
    s.compute_seconds = b * flops_per_token / peak_flops_per_s;
    s.memory_bound = s.memory_seconds >= s.compute_seconds;
    s.step_seconds = std::max(s.memory_seconds, s.compute_seconds);
    s.tokens_per_s = b / s.step_seconds;
    s.per_sequence_tokens_per_s = 1.0 / s.step_seconds;
    return s;
}

InferenceResult inference(const ModelConfig& c, const InferenceInput& in, const Hardware& hw) {
    InferenceResult r;
    // The decode model is a decoder's: an encoder never decodes (kv_cache says so), and an encoder-decoder's
    // step runs only its decoder over a fixed encoder output, which this model does not split out.
    if (c.is_encoder_decoder())
        throw InputError("model",
                         "inference models a decoder-only model; for an encoder-decoder (T5) use kv_cache "
                         "(with encoder_context) for its serving memory");
    r.memory = kv_cache(c, in.context, in.batch, in.kv_dtype, in.weights_dtype);  // validates context, batch
    const double peak = hw.peak(in.compute_dtype);                                // InputError "dtype" if missing
    const double bandwidth = hw.memory_bandwidth_bytes_per_s;
    r.kv_per_sequence = r.memory.bytes_per_sequence(in.context);  // windowed layers capped at W

    // A decoded token at position `context` attends to the whole cache: full (unmasked) attention at s = context.
    FlopsInput decode;
    decode.seq = in.context;
    decode.attention = AttentionFlops::Full;
    r.decode_flops_per_token = count_flops(c, decode).forward_per_token;
    // Prefill runs the prompt through once with a causal mask: token i attends to i earlier tokens.
    FlopsInput prefill = decode;
    prefill.attention = AttentionFlops::Causal;
    r.prefill_flops_per_token = count_flops(c, prefill).forward_per_token;
    r.prefill_tokens_per_s = peak / r.prefill_flops_per_token;
    r.prefill_seconds = static_cast<double>(in.context) / r.prefill_tokens_per_s;

    const double weights = static_cast<double>(r.memory.weights_bytes);
    const double kv = static_cast<double>(r.kv_per_sequence);
    r.at_batch = decode_step(weights, kv, r.decode_flops_per_token, in.batch, bandwidth, peak);

    // Compute time b·F/peak catches up with memory time (W + b·kv)/bw at b = (W/bw) / (F/peak − kv/bw).
    const double per_sequence_gap = r.decode_flops_per_token / peak - kv / bandwidth;
    if (per_sequence_gap > 0) r.crossover_batch = (weights / bandwidth) / per_sequence_gap;
    // One capacity rule for every verdict: the usable bytes, as kv_cache and the training budget use.
    r.usable_bytes = preset_usable_capacity(hw).usable_bytes;
    const KvCapacity capacity = kv_capacity(r.memory, in.context, in.batch, r.usable_bytes);
    r.fits = capacity.fits;
    r.max_batch = static_cast<std::int64_t>(capacity.max_batch);

    // Powers of two below the largest batch that fits, then that batch: the curve ends where memory does.
    const std::int64_t last = std::min(r.max_batch, std::int64_t{1} << 20);
    for (std::int64_t b = 1; b < last; b *= 2)
        r.sweep.push_back(decode_step(weights, kv, r.decode_flops_per_token, b, bandwidth, peak));
    if (last > 0) r.sweep.push_back(decode_step(weights, kv, r.decode_flops_per_token, last, bandwidth, peak));
    return r;
}

}  // namespace tally
