#include "tally/comm/context.h"

#include <algorithm>
#include <string>

#include "tally/comm/collectives.h"
#include "tally/base/error.h"

namespace tally::context {

namespace {

constexpr std::int64_t kMaxSeq = std::int64_t{1} << 24;

// Causal pairs scored by queries [lo, hi): query q sees keys 0..q, so q + 1 of them.
double pairs_in(std::int64_t lo, std::int64_t hi) {
    const double a = static_cast<double>(lo), b = static_cast<double>(hi);
    return (b * (b + 1) - a * (a + 1)) / 2;
}

}  // namespace

RankWork causal_work(std::int64_t seq, std::int64_t cp, bool balanced) {
    require_range("seq", seq, 1, kMaxSeq);
    require_range("cp", cp, 1, seq);
    const std::int64_t chunks = balanced ? 2 * cp : cp;
    if (seq % chunks != 0)
        throw InputError("cp", std::string("cp must ") + (balanced ? "satisfy 2·cp | seq" : "divide seq") + " (seq " +
                                   std::to_string(seq) + "), got " + std::to_string(cp));
    const std::int64_t c = seq / chunks;
    RankWork w;
    w.pairs.assign(static_cast<std::size_t>(cp), 0);
    for (std::int64_t r = 0; r < cp; ++r) {
        double& p = w.pairs[static_cast<std::size_t>(r)];
        p = pairs_in(r * c, (r + 1) * c);
        if (balanced) p += pairs_in((chunks - 1 - r) * c, (chunks - r) * c);
    }
    double total = 0, most = 0;
    for (const double p : w.pairs) {
        total += p;
        most = std::max(most, p);
    }
    w.max_over_mean = most / (total / static_cast<double>(cp));
    return w;
}

RingStep ring_step(const ModelConfig& c, const Hardware& hw, std::int64_t seq, std::int64_t cp, double element_bytes) {
    require_range("seq", seq, 1, kMaxSeq);
    require_range("cp", cp, 2, seq);
    if (seq % cp != 0)
        throw InputError("cp", "cp must divide seq (" + std::to_string(seq) + "), got " + std::to_string(cp));
    const collectives::Links links = collectives::links_of(hw, collectives::kDefaultLinkEfficiency);
    RingStep r;
    r.block_tokens = seq / cp;
    const double blk = static_cast<double>(r.block_tokens), a = static_cast<double>(c.num_heads);
    const double d = static_cast<double>(c.head_dim), kv = static_cast<double>(c.num_kv_heads);
    r.block_flops = 4 * blk * blk * a * d;
    r.kv_block_bytes = 2 * blk * kv * d * element_bytes;
    // The hop is one send/recv among the cp ranks placed as `collective` places them (its seconds, latency included).
    const collectives::Cost hop =
        collectives::cost(collectives::Kind::SendRecv, collectives::Algorithm::Ring, std::max(r.kv_block_bytes, 1.0),
                          collectives::placement_of(cp, links), links);
    r.link_bytes_per_s = hop.bottleneck_bytes_per_s;
    const double peak = hw.peak("bf16");
    r.compute_seconds = r.block_flops / peak;
    r.transfer_seconds = hop.seconds;
    r.hidden = r.transfer_seconds <= r.compute_seconds;
    r.min_block_tokens = 2 * kv * element_bytes * peak / (4 * a * r.link_bytes_per_s);
    return r;
}

}  // namespace tally::context
