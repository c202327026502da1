#include "tally/plan/plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "tally/base/error.h"

namespace tally {

namespace {

std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t limit) {
    std::vector<std::int64_t> out;
    for (std::int64_t k = 1; k <= n && k <= limit; ++k)
        if (n % k == 0) out.push_back(k);
    return out;
}

// Model chunks per pipeline stage the planner tries (the interleaved schedule, Narayanan et al. 2021, sec. 2.2.2).
constexpr std::int64_t kInterleaves[] = {1, 2, 3, 4, 6, 8};

// Whether v chunks per stage is a layout Megatron-LM runs: plain pipelines may split layers unevenly (step_time's
// stage_layers charges the busiest stage), but interleaving needs every stage's layers divisible by v, so layers
// must divide by p·v (Megatron-LM's arguments.py refuses "number of layers per pipeline stage" not divisible);
// with the embedding and output layer as chunks of their own, layers + 2 must.
bool interleave_allowed(std::int64_t layers, std::int64_t pp, std::int64_t v, bool embedding_chunks) {
    return v == 1 || (pp > 1 && (layers + (embedding_chunks ? 2 : 0)) % (pp * v) == 0);
}

// Context-parallel degrees tried: the given cp, else 1 and, from seq 32768 on (where a sequence's activations rather
// than the weights fill memory; Llama 3 used cp 16 at 131k, sec. 3.3.2), 2, 4, 8 and 16 where the balanced 2·cp
// chunks divide seq. Ring attention needs FlashAttention's blockwise softmax (memory.cpp).
std::vector<std::int64_t> cp_choices(const TrainingSetup& base) {
    if (base.cp > 1) return {base.cp};
    std::vector<std::int64_t> out{1};
    if (base.seq >= 32768 && base.flash_attention)
        for (std::int64_t cp : {2, 4, 8, 16})
            if (base.seq % (2 * cp) == 0) out.push_back(cp);
    return out;
}

// (pp, cp) pairs over n GPUs (gpus / tp), cp outer: with cp 1 alone the order is the pipeline depths'.
std::vector<std::pair<std::int64_t, std::int64_t>> pp_cp_pairs(std::int64_t n, std::int64_t layers,
                                                               const std::vector<std::int64_t>& cps) {
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    for (std::int64_t cp : cps)
        if (n % cp == 0)
            for (std::int64_t pp : divisors(n / cp, std::min<std::int64_t>(layers, 128))) out.emplace_back(pp, cp);
    return out;
}

}  // namespace

PlanResult plan_layouts(const ModelConfig& c, const Hardware& hw, const PlanInput& in) {
    validate(c);
    if (in.top < 1 || in.top > 100) throw InputError("top", "top must be a whole number in [1, 100]");
    const TrainingSetup& base = in.base.setup;
    const std::int64_t gpus = base.gpus;
    const std::int64_t node = in.base.gpus_per_node > 0 ? in.base.gpus_per_node : hw.interconnect.gpus_per_node;
    if (gpus < 1 || gpus > kMaxPlanGpus)
        throw InputError("gpus", "gpus must be a whole number in [1, " + std::to_string(kMaxPlanGpus) + "]");
    PlanResult out;
    std::vector<PlanEntry> fits;
    PlanLoser memory;
    memory.reason = "memory";
    std::uint64_t closest = UINT64_MAX;
    // Why layouts were refused other than for memory: an argument no layout can use (a dense model's ep, an unknown
    // precision) is refused by every one, so its error names it; kept for when nothing fits.
    std::optional<InputError> shape_error, step_error;

    // FLOP counts depend on seq, recomputation and FlashAttention only: one set per recomputation choice for
    // the whole search (the per-layout cost is then the memory budget and the step model's arithmetic).
    const Recompute choices[] = {Recompute::None, Recompute::Selective, Recompute::Full};
    std::vector<StepFlops> flops;
    for (Recompute rc : choices) {
        // With FlashAttention, selective recomputation is what its backward already does.
        if (rc == Recompute::Selective && base.flash_attention) continue;
        flops.push_back(step_flops(c, base.seq, rc, base.flash_attention, base.decoder_seq));
    }

    // Search space. Tensor parallelism stays inside a node (its collectives run every layer); sequence
    // parallelism on or off with tp > 1 (same bytes as the all-reduce, less memory and elementwise work:
    // Korthikanti et al. 2022, sec. 4.2.2); ZeRO 1 or 3 (ZeRO-2 saves memory over 1 at the same modelled time
    // but is not combined with pipelining in Megatron-LM/DeepSpeed); micro-batch 1 to 16; interleaving v chunks
    // per stage (kInterleaves). Each v has its own budget: interleaving adds first-stage activations (memory.cpp's
    // interleave_activation_factor, 1 + (p−1)/(p·v)), so a layout that fits plain may not fit interleaved; one that
    // does not fit plain fits no v.
    const std::int64_t global = base.global_batch > 0 ? base.global_batch : 0;
    const std::vector<std::int64_t> cps = cp_choices(base);
    for (std::int64_t tp : divisors(gpus, std::min<std::int64_t>(node, c.num_heads))) {
        if (c.num_heads % tp != 0) continue;
        // A mixture of experts also tries expert parallelism: none, or the widest EP group whose all-to-all
        // stays on the intra-node link (tp·ep <= GPUs per node), as DeepSpeed-MoE and Megatron-Core place it.
        std::vector<std::int64_t> eps{c.is_moe() ? 1 : base.ep};
        if (c.is_moe()) {
            const std::vector<std::int64_t> fit = divisors(c.num_experts, std::max<std::int64_t>(node / tp, 1));
            if (fit.back() > 1) eps.push_back(fit.back());
        }
        for (const auto& [pp, cp] : pp_cp_pairs(gpus / tp, c.num_layers, cps)) {
            const std::int64_t dp = gpus / (tp * pp * cp);
            for (int zero : {1, 3}) {
                if (zero == 3 && pp > 1) continue;  // ZeRO-3 with pipelining: not offered by Megatron-LM/DeepSpeed
                if (dp * cp == 1 && zero == 3) continue;  // ZeRO shards over dp·cp
                for (std::int64_t b : {1, 2, 4, 8, 16}) {
                    if (global == 0 && b > 1) continue;
                    for (const StepFlops& counts : flops) {
                        // Sequence parallelism only divides activations by t (memory.cpp's seq_side), so a layout whose
                        // SP variant does not fit does not fit without SP either: counted without computing its budget.
                        std::vector<char> sp_variant_too_big(eps.size(), 0);
                        for (bool sp : {true, false}) {
                            if (!sp && tp == 1) continue;
                            for (std::size_t e = 0; e < eps.size(); ++e) {
                                const std::int64_t ep = eps[e];
                                if (dp % ep != 0) continue;  // EP groups live inside the data-parallel group
                                StepLayout l = in.base;
                                TrainingSetup& st = l.setup;
                                st.tp = tp, st.pp = pp, st.cp = cp, st.zero = dp * cp > 1 ? zero : 0,
                                st.micro_batch = b;
                                st.recompute = counts.recompute;
                                st.sequence_parallel = sp && tp > 1;
                                st.ep = ep;
                                st.virtual_stages = 1;
                                std::int64_t interleaves = 0;  // the v this layout is tried with
                                for (std::int64_t v : kInterleaves)
                                    if (interleave_allowed(c.num_layers, pp, v, in.base.embedding_chunks))
                                        ++interleaves;
                                if (global > 0 && global % (b * dp) != 0) {
                                    out.rejected_shape += interleaves;
                                    continue;
                                }
                                out.evaluated += interleaves;
                                if (!sp && sp_variant_too_big[e]) {
                                    out.rejected_memory += interleaves;
                                    memory.count += interleaves;
                                    continue;
                                }
                                MemoryBudget mem;
                                try {
                                    mem = memory_budget(c, st);
                                } catch (const InputError& error) {
                                    if (!shape_error) shape_error = error;
                                    out.rejected_shape += interleaves;
                                    continue;
                                }
                                if (mem.bytes.total > hw.memory_bytes) {
                                    if (sp) sp_variant_too_big[e] = 1;
                                    out.rejected_memory += interleaves;
                                    memory.count += interleaves;
                                    if (mem.bytes.total < closest)
                                        closest = mem.bytes.total, memory.example = l, memory.example_dp = dp;
                                    continue;
                                }
                                for (std::int64_t v : kInterleaves) {
                                    if (!interleave_allowed(c.num_layers, pp, v, in.base.embedding_chunks)) continue;
                                    l.interleave = v;
                                    st.virtual_stages = v;
                                    const InterleavedBytes bytes = interleaved_budget_bytes(c, st, mem, v);
                                    if (bytes.total > hw.memory_bytes) {
                                        ++out.rejected_memory;
                                        ++memory.count;
                                        if (bytes.total < closest)
                                            closest = bytes.total, memory.example = l, memory.example_dp = dp;
                                        continue;
                                    }
                                    try {
                                        // step_time reads only the parameter counts, the same for every v.
                                        fits.push_back(
                                            {l, step_time(c, hw, l, &mem, &counts), bytes.total, bytes.extra});
                                    } catch (const InputError& error) {
                                        if (!step_error) step_error = error;
                                        ++out.rejected_shape;
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out.fit = static_cast<std::int64_t>(fits.size());
    // A layout is blamed only when one was refused for memory and none that fit was refused for another reason.
    if (fits.empty() && step_error) throw *step_error;
    if (fits.empty() && out.rejected_memory == 0 && shape_error) throw *shape_error;
    if (fits.empty())
        throw InputError("gpus", "no layout of " + c.name + " on " + std::to_string(gpus) + " " + hw.name +
                                     " fits in memory; add GPUs, shorten seq or lower the batch");
    // Fastest first; equal throughput keeps the enumeration order. Indices are sorted, not the entries.
    std::vector<std::size_t> order(fits.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&fits](std::size_t a, std::size_t b) {
        return fits[a].result.tokens_per_second > fits[b].result.tokens_per_second;
    });
    const std::size_t keep = std::min<std::size_t>(fits.size(), static_cast<std::size_t>(in.top));
    for (std::size_t i = 0; i < keep; ++i) out.best.push_back(fits[order[i]]);

    // Why the others lose: the component that costs them the most extra seconds per token over the best.
    std::map<std::string_view, PlanLoser> groups;
    const StepResult& best = fits[order.front()].result;
    const double best_tokens = best.tokens_per_second * best.step_seconds;
    for (std::size_t i = keep; i < fits.size(); ++i) {
        const PlanEntry& entry = fits[order[i]];
        const StepResult& r = entry.result;
        const double tokens = r.tokens_per_second * r.step_seconds;
        double worst = -1;
        const char* reason = "matmul";
        for (std::size_t k = 0; k < r.breakdown.size(); ++k) {
            if (!r.breakdown[k].exposed) continue;
            const double extra = r.breakdown[k].seconds / tokens - best.breakdown[k].seconds / best_tokens;
            if (extra > worst) worst = extra, reason = r.breakdown[k].name;
        }
        PlanLoser& g = groups[reason];
        if (g.count == 0) g = {reason, 0, entry.layout, r.dp, r.mfu};
        ++g.count;
    }
    for (auto& [name, g] : groups) out.losers.push_back(std::move(g));
    if (memory.count > 0) {
        memory.reason = "does not fit in " + std::to_string(hw.memory_bytes / 1'000'000'000) + " GB";
        out.losers.push_back(memory);
    }
    std::stable_sort(out.losers.begin(), out.losers.end(),
                     [](const PlanLoser& a, const PlanLoser& b) { return a.count > b.count; });
    return out;
}

}  // namespace tally
