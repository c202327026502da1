#include "tally/memory/fit.h"

#include <algorithm>
#include <numeric>

#include "tally/base/error.h"

namespace tally {

namespace {

// Bisection: the smallest x in (lo, hi] with pred(x), given !pred(lo), pred(hi) and pred monotone.
template <class Pred>
std::int64_t first_true(std::int64_t lo, std::int64_t hi, Pred pred) {
    while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        (pred(mid) ? hi : lo) = mid;
    }
    return hi;
}

}  // namespace

std::int64_t min_gpus(const ModelConfig& config, TrainingSetup setup, std::uint64_t capacity, std::int64_t max_gpus) {
    // Per-GPU memory never grows with dp (ZeRO shards shrink, activations stay), so search dp by
    // doubling and then bisection. global_batch is dropped: the pipeline is assumed full.
    setup.global_batch = 0;
    if (setup.tp < 1 || setup.pp < 1 || setup.cp < 1) throw InputError("tp", "tp, pp and cp must be >= 1");
    // dp runs over multiples of `unit`, the smallest dp whose layout divides: ep·etp | tp·cp·dp, shard_group | dp·cp.
    const std::int64_t experts = setup.ep * setup.etp_or_tp(), ranks = setup.tp * setup.cp;
    std::int64_t unit = experts / std::gcd(experts, ranks);
    if (setup.shard_group > 0) unit = std::lcm(unit, setup.shard_group / std::gcd(setup.shard_group, setup.cp));
    const std::int64_t mp = setup.tp * setup.pp * setup.cp * unit;
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
    return first_true(lo, hi, fits) * mp;
}

std::uint64_t largest_model_params(std::uint64_t capacity_total, const Recipe& recipe) {
    validate(recipe);
    const std::uint64_t bpp = bytes_per_param_256(recipe).total();  // in 1/256 byte
    // floor(capacity · 256 / bpp) without overflowing the product.
    const std::uint64_t q = capacity_total / bpp, r = capacity_total % bpp;
    return checked_add("capacity_bytes", checked_mul("capacity_bytes", q, 256), r * 256 / bpp);
}

std::uint64_t largest_model_params_sharded(std::uint64_t capacity_total, std::int64_t gpus, int zero, std::int64_t tp,
                                           std::int64_t pp, const Recipe& recipe) {
    validate(recipe);
    if (zero < 0 || zero > 3)
        throw InputError("zero", "zero must be a whole number in [0, 3], got " + std::to_string(zero));
    if (gpus < 1) throw InputError("gpus", "gpus must be >= 1");
    if (tp < 1) throw InputError("tp", "tp must be >= 1");
    if (pp < 1) throw InputError("pp", "pp must be >= 1");
    if (gpus % (tp * pp) != 0)
        throw InputError(
            "gpus", "gpus (" + std::to_string(gpus) + ") must be a multiple of tp·pp = " + std::to_string(tp * pp));
    const std::uint64_t dp = static_cast<std::uint64_t>(gpus / (tp * pp));
    const BytesPerParam256 b = bytes_per_param_256(recipe);
    // Bytes per parameter of the whole model, in 1/256 byte, times dp: a class not sharded by ZeRO
    // costs dp times more per GPU-share than one that is.
    auto scaled = [&](std::uint64_t bytes256, bool sharded) { return checked_mul("gpus", bytes256, sharded ? 1 : dp); };
    std::uint64_t cost = scaled(b.weights, zero >= 3);
    cost = checked_add("gpus", cost, scaled(b.gradients, zero >= 2));
    cost = checked_add("gpus", cost, scaled(b.master_weights + b.optimizer_states + b.grad_accum, zero >= 1));
    // N <= capacity_total · 256 / cost (the tp·pp split cancels: each GPU holds 1/(tp·pp) of N).
    const std::uint64_t q = capacity_total / cost, r = capacity_total % cost;
    return checked_add("capacity_bytes", checked_mul("capacity_bytes", q, 256),
                       static_cast<std::uint64_t>((static_cast<unsigned __int128>(r) * 256) / cost));
}

std::int64_t largest_model_layers(const ModelConfig& config, const TrainingSetup& setup, std::uint64_t capacity) {
    ModelConfig c = config;
    auto fits = [&](std::int64_t layers) {
        c.num_layers = layers;
        return memory_budget(c, setup).bytes.total <= capacity;
    };
    std::int64_t lo = setup.pp;  // a pipeline needs at least one layer per stage
    if (lo < 1 || lo > kMaxLayers) throw InputError("pp", "pp must be in [1, " + std::to_string(kMaxLayers) + "]");
    if (!fits(lo)) return 0;
    std::int64_t hi = lo;  // fits(lo) true; find the first depth that does not fit
    while (true) {
        hi = std::min<std::int64_t>(hi * 2, kMaxLayers);
        if (!fits(hi)) break;
        if (hi == kMaxLayers) return hi;
        lo = hi;
    }
    return first_true(lo, hi, [&](std::int64_t layers) { return !fits(layers); }) - 1;
}

std::uint64_t after_reserve(std::uint64_t bytes, double reserve_fraction) {
    const std::uint64_t reserved =
        reserve_fraction == 0 ? 0 : static_cast<std::uint64_t>(static_cast<double>(bytes) * reserve_fraction) + 1;
    return bytes - std::min(bytes, reserved);
}

}  // namespace tally
