#include "tally/fit.h"

#include "tally/error.h"

namespace tally {

std::int64_t min_gpus(const ModelConfig& config, TrainingSetup setup, std::uint64_t capacity, std::int64_t max_gpus) {
    // Per-GPU memory never grows with dp (ZeRO shards shrink, activations stay), so search dp by
    // doubling and then bisection. global_batch is dropped: the pipeline is assumed full.
    setup.global_batch = 0;
    const std::int64_t mp = setup.tp * setup.pp;
    if (mp < 1) throw InputError("tp", "tp and pp must be >= 1");
    const std::int64_t max_dp = max_gpus / mp;
    if (max_dp < 1) return 0;
    auto fits = [&](std::int64_t dp) {
        setup.gpus = dp * mp;
        return memory_budget(config, setup).bytes.total <= capacity;
    };
    if (fits(1)) return mp;
    std::int64_t lo = 1, hi = 2;  // fits(lo) false
    while (true) {
        if (hi > max_dp) hi = max_dp;
        if (fits(hi)) break;
        if (hi == max_dp) return 0;
        lo = hi;
        hi *= 2;
    }
    while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        if (fits(mid)) hi = mid;
        else lo = mid;
    }
    return hi * mp;
}

std::uint64_t largest_model_params(std::uint64_t capacity_total, const Precision& precision) {
    validate(precision);
    const std::uint64_t bpp = bytes_per_param_256(precision).total();  // in 1/256 byte
    // floor(capacity · 256 / bpp) without overflowing the product.
    const std::uint64_t q = capacity_total / bpp, r = capacity_total % bpp;
    return checked_add("capacity_bytes", checked_mul("capacity_bytes", q, 256), r * 256 / bpp);
}

}  // namespace tally
