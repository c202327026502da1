#include "tally/parallel/moe.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "tally/base/error.h"

namespace tally {

namespace {

void require(bool ok, const char* field, const std::string& message) {
    if (!ok) throw InputError(field, message);
}

}  // namespace

MoeLayer moe_layer(const ModelConfig& c, const MoeSetup& st) {
    validate(c);
    require(c.is_moe(), "ep",
            "expert parallelism and capacity_factor need a mixture-of-experts model (num_experts > 0)");
    require(st.ep >= 1 && st.ep <= c.num_experts && c.num_experts % st.ep == 0, "ep",
            "ep must divide num_experts (" + std::to_string(c.num_experts) + "), got " + std::to_string(st.ep));
    require(st.capacity_factor == 0 || (st.capacity_factor > 0 && st.capacity_factor <= 64), "capacity_factor",
            "capacity_factor must be 0 (no limit) or in (0, 64]");
    require(st.seq >= 1 && st.micro_batch >= 1 && st.tp >= 1, "seq", "seq, micro_batch and tp must be >= 1");
    MoeLayer m;
    const double E = static_cast<double>(c.num_experts), k = static_cast<double>(c.experts_per_token);
    const double ep = static_cast<double>(st.ep), h = static_cast<double>(c.hidden_size);
    const double e = static_cast<double>(st.activation_bytes);
    m.local_experts = c.num_experts / st.ep;
    m.tokens_per_gpu = static_cast<double>(st.seq) * static_cast<double>(st.micro_batch);
    m.assignments_per_gpu = k * m.tokens_per_gpu;
    // Each expert receives from the ep GPUs of its group.
    m.tokens_per_expert = m.assignments_per_gpu * ep / E;
    if (st.capacity_factor > 0) {
        m.expert_capacity = std::ceil(st.capacity_factor * m.tokens_per_expert);
        m.expert_slots_per_gpu = m.expert_capacity * static_cast<double>(m.local_experts);
        m.dropped_fraction_balanced = st.capacity_factor < 1 ? 1 - st.capacity_factor : 0;
    } else {
        m.expert_slots_per_gpu = m.assignments_per_gpu;
    }
    m.expert_compute_factor = m.expert_slots_per_gpu / m.tokens_per_gpu;
    // Each GPU sends the full h-wide hidden state of every row it dispatches (padded slots included when
    // capacity is fixed, as GShard's dispatch tensor [E, C, h] is).
    const double leaving = (ep - 1) / ep;
    const double sent_rows = st.capacity_factor > 0 ? m.expert_slots_per_gpu : m.assignments_per_gpu;
    m.all_to_all_bytes_forward = 2 * sent_rows * h * e * leaving;
    m.all_to_all_bytes_per_step_layer = 2 * m.all_to_all_bytes_forward;
    m.router_params_per_layer = static_cast<std::uint64_t>(c.num_experts) * static_cast<std::uint64_t>(c.hidden_size);
    m.router_flops_per_token_forward = 2 * h * E;
    const std::uint64_t sb = static_cast<std::uint64_t>(st.seq) * static_cast<std::uint64_t>(st.micro_batch);
    m.router_activation_bytes =
        checked_add("moe", checked_mul("moe", checked_mul("moe", sb, 4), static_cast<std::uint64_t>(c.num_experts)),
                    checked_mul("moe", checked_mul("moe", sb, 8), static_cast<std::uint64_t>(c.experts_per_token)));
    return m;
}

RandomRouting random_routing(double tokens, std::int64_t experts, std::int64_t top_k, double capacity_factor) {
    require(tokens >= 1 && tokens <= 2147483648.0 && tokens == std::floor(tokens), "tokens",
            "tokens must be a whole number from 1 to 2^31, got " + format_number(tokens));
    require(experts >= 1 && experts <= 65536, "experts",
            "experts must be from 1 to 65536, got " + std::to_string(experts));
    require(top_k >= 1 && top_k <= experts, "top_k",
            "top_k must be from 1 to experts (" + std::to_string(experts) + "), got " + std::to_string(top_k));
    require(capacity_factor > 0 && capacity_factor <= 64, "capacity_factor",
            "capacity_factor must be in (0, 64], got " + format_number(capacity_factor));
    RandomRouting r;
    const double n = tokens, p = static_cast<double>(top_k) / static_cast<double>(experts);
    r.mean_load = n * p;
    r.load_stddev = std::sqrt(n * p * (1 - p));
    r.capacity = std::ceil(capacity_factor * r.mean_load);
    if (p >= 1) return r;  // every token visits every expert: the load is exactly n <= capacity
    // E[max(0, X - C)] summed directly over the tail x > C (no cancellation against the mean), from the pmf at
    // C + 1 by lgamma, walked up by the ratio of successive terms until 40 standard deviations past the mean.
    double x = r.capacity + 1;
    if (x > n) return r;
    const double log_ratio = std::log(p) - std::log1p(-p);
    double log_pmf =
        std::lgamma(n + 1) - std::lgamma(x + 1) - std::lgamma(n - x + 1) + x * std::log(p) + (n - x) * std::log1p(-p);
    const double stop = std::min(n, std::max(x, r.mean_load + 40 * r.load_stddev + 10));
    double over = 0, tail = 0;
    for (; x <= stop; x += 1) {
        const double pmf = std::exp(log_pmf);
        over += (x - r.capacity) * pmf;
        tail += pmf;
        log_pmf += std::log(n - x) - std::log(x + 1) + log_ratio;
    }
    r.expected_dropped_fraction = over / r.mean_load;
    r.overflow_probability = tail;
    return r;
}

}  // namespace tally
