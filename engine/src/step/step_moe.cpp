#include "tally/step/step_moe.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "tally/base/error.h"
#include "tally/comm/collectives.h"
#include "tally/step/step.h"

namespace tally {

namespace {

// A dropless dispatcher learns how many tokens each expert receives only on the GPU; the all-to-all's split sizes
// and the grouped GEMM's per-expert row counts (TE GroupedLinear's m_splits, a Python list) are host-side lists, so every MoE layer's forward
// waits for a device-to-host copy and the GPU idles while the host launches the kernels behind it (Megatron-Core
// MoEAlltoAllTokenDispatcher preprocess; its CUDA-graph inference dispatcher exists "to avoid host
// synchronizations", Megatron-Core developer guide, core.transformer.moe.token_dispatcher_inference). Seconds
// lost per MoE layer per micro-batch forward: chosen on the fit half of content/validation/runs-modern.json only
// (grid 0-5 ms over its 17 MoE rows, refit once the all-to-all took one card per GPU across nodes and the rows'
// moe_a2a_overlap: 1.25 ms gave the lowest median |error|, 12.2 %, against 15.1 % at 0 and 18.9 % at 3.25 ms;
// BENCHMARKS.md, issue 24). The held-out half took no part.
constexpr double kDroplessSyncSeconds = 1.25e-3;
// Passes over the hidden states of the permutation kernels in one forward: the local permute (read the tokens,
// write k copies) and unpermute (read k rows, write the weighted sum) around the experts; with ep > 1 Megatron
// sorts the received chunks by local expert and back again (sort_chunks_by_idxs), two more reads and writes of
// the k rows (Megatron-Core token_dispatcher.py, MoEAlltoAllTokenDispatcher). Backward: the same bytes again.
constexpr double kPermuteBackwardOverForward = 1;
// Host seconds per local expert per MoE layer per micro-batch (forward and backward): TE's GroupedLinear walks
// the experts on the host, in the forward quantizing each expert's input and weight (get_weight_workspace in a
// Python loop over num_gemms) and launching one GEMM per expert (general_grouped_gemm), in the backward
// quantizing each expert's gradient and launching its dgrad and wgrad GEMMs, for both expert linears
// (TransformerEngine transformer_engine/pytorch/module/grouped_linear.py, _GroupedLinear forward/backward). The
// Megatron-Bridge 25.11 recipes capture only "attn", "moe_router", "moe_preprocess" in CUDA graphs, if any (v0.2.0
// scripts/performance/configs/*/workload_base_configs.py): the experts are launched from the host every micro-batch.
// Chosen on the fit half of content/validation/runs-modern.json only (grid 0-1.2 ms in 0.05 ms steps: fit median
// |error| 6.7 % at 0, 5.9 % at 0.7 ms; its 17 MoE rows 12.2 % -> 8.8 %; BENCHMARKS.md); the held-out half took no part.
constexpr double kHostSecondsPerLocalExpert = 0.7e-3;
// Of those per-expert host steps, the forward's share (input cast, weight cast, fprop GEMM: 3 of 6 per linear),
// replayed once more under full recomputation.
constexpr double kHostForwardShare = 0.5;
// torch._grouped_mm BF16, forward + backward (three grouped GEMMs of 2·M·N·K each) on one B200 at Llama 4 Scout's
// expert shapes M=128,000 tokens, N=8,192, K=5,120, in microseconds by G groups (experts per device): pytorch/ao
// torchao/prototype/moe_training/README.md, "Autograd function / Llama4 Scout shapes", column bf16_fwd_bwd_us
// (commit ff16308, 2025-10-14; torch 2.10.0a0+gitf6de195), against HGX B200's 2,250 TFLOP/s dense BF16 peak. The
// timed step also runs an MSE loss over the 128,000x8,192 output and accumulates .grad (benchmarks/utils.py):
// some 2 ms of memory traffic at 8 TB/s, so the GEMMs alone run up to ~5 % faster than these rates.
constexpr double kGroupedMmGroups[] = {1, 2, 4, 8};
constexpr double kGroupedMmScoutMicroseconds[] = {43140.20, 39487.60, 39189.20, 37700.70};
constexpr double kGroupedMmScoutFlops = 3 * 2 * 128000.0 * 8192 * 5120;
constexpr double kB200DenseBf16Flops = 2250e12;
// The same table's scaled_fwd_bwd_us column: torchao's _quantize_then_scaled_grouped_mm in MXFP8, forward +
// backward with every operand's dynamic quantization (to_mx casts, scale rearrangement) inside the time, at the
// same shapes and group counts, against HGX B200's 4,500 TFLOP/s dense FP8 peak (the MX GEMMs' rate).
constexpr double kMxfp8GroupedScoutMicroseconds[] = {23867.00, 23359.00, 23945.50, 22170.60};
constexpr double kB200DenseFp8Flops = 4500e12;

// Piecewise linear in log2(G) between the measured group counts (1, 2, 4, 8), flat outside them.
template <typename Fraction>
double by_groups(double local_experts, Fraction fraction) {
    if (!(local_experts > kGroupedMmGroups[0])) return fraction(0);
    for (int i = 1; i < 4; ++i)
        if (local_experts <= kGroupedMmGroups[i]) {
            const double w = std::log2(local_experts / kGroupedMmGroups[i - 1]);  // the group counts double
            return fraction(i - 1) + w * (fraction(i) - fraction(i - 1));
        }
    return fraction(3);
}

}  // namespace

double all_to_all_seconds(const Interconnect& ic, double bytes, std::int64_t ep, std::int64_t per_node,
                          double fraction) {
    // Priced where every collective is (collectives::cost, Kind::AllToAll): each GPU sends (ep−1)/ep of its bytes
    // (padded slots when a capacity is set, GShard), its node's share over NVLink and the rest over its own card,
    // both at once, plus the launch and one step latency per peer. One card per GPU, not a ring's cards per node:
    // DeepEP's normal kernels over one 400 Gb/s card (~50 GB/s) per H800 reach 43-58 GB/s "bottleneck bandwidth
    // (RDMA)" at EP 16-64 against 153 GB/s over NVLink at EP 8 (deepseek-ai/DeepEP, docs/legacy.md, "Normal
    // kernels with NVLink and RDMA forwarding").
    if (ep <= 1 || bytes <= 0) return 0;
    const std::int64_t local = std::clamp<std::int64_t>(per_node, 1, ep);
    const collectives::Placement placement{local, (ep + local - 1) / local};
    const collectives::Links links{std::max(ic.gpus_per_node, local), ic.intra_node_bytes_per_s,
                                   ic.network_bytes_per_s > 0 ? ic.network_bytes_per_s : ic.intra_node_bytes_per_s,
                                   fraction};
    return collectives::cost(collectives::Kind::AllToAll, collectives::Algorithm::Ring, std::max(bytes, 1.0), placement,
                             links)
        .seconds;
}

double moe_overlapped_all_to_all_seconds(double all_to_all, double behind) {
    // Megatron-Core's combined 1F1B ("EP A2A overlap", --overlap-moe-expert-parallel-comm) runs one micro-batch's
    // dispatch and combine all-to-alls beside an adjacent micro-batch's forward or backward of the same layer, so
    // only what outlasts that computation stays exposed (Megatron-Core developer guide, "Combined 1F1B:
    // Expert-Parallel All-to-All Overlap"; Megatron-Bridge's moe_a2a_overlap sets it, with delay_wgrad_compute).
    return std::max(all_to_all - std::max(behind, 0.0), 0.0);
}

double moe_routed_flops_share(const ModelConfig& c) {
    if (!c.is_moe()) return 0;
    const double k = static_cast<double>(c.experts_per_token), shared = static_cast<double>(c.num_shared_experts);
    const double f = static_cast<double>(c.ffn_hidden_size), moe_layers = static_cast<double>(c.num_moe_layers());
    const double dense = static_cast<double>(c.dense_ffn_hidden_size) * static_cast<double>(c.num_dense_layers);
    return k * f * moe_layers / (f * (k + shared) * moe_layers + dense);
}

MoeStepShape moe_step_shape(const ModelConfig& c, const Interconnect& ic, const MoeStepInput& in) {
    if (!c.is_moe() || in.ep < 1 || in.ep > c.num_experts || c.num_experts % in.ep != 0)
        throw InputError(
            "ep", "ep must divide num_experts (" + std::to_string(c.num_experts) + "), got " + std::to_string(in.ep));
    if (!(in.capacity_factor == 0 || (in.capacity_factor > 0 && in.capacity_factor <= 64)))
        throw InputError("capacity_factor", "capacity_factor must be 0 (no limit) or in (0, 64]");
    require_range("etp", in.etp, 1, std::max<std::int64_t>(in.tp, 1) * in.ep);
    MoeStepShape out;
    const double E = static_cast<double>(c.num_experts), k = static_cast<double>(c.experts_per_token);
    const double ep = static_cast<double>(in.ep), etp = static_cast<double>(in.etp), tp = static_cast<double>(in.tp);
    const double h = static_cast<double>(c.hidden_size), e = in.activation_bytes;
    out.local_experts = E / ep;
    // Megatron-Core "MoE Parallel Folding" (Liu et al. 2025, arXiv:2504.14960): the experts' own etp·ep·edp grid
    // covers the tp·dp ranks of a stage, so one GPU computes tokens·k·etp/tp rows (etp = tp: every token of its
    // tensor-parallel group over 1/tp of the FFN; etp = 1: its 1/tp share of the tokens over the whole FFN), spread
    // evenly over its E/ep local experts (force-balanced routing, as the NVIDIA tables run it).
    out.dispatched_rows = in.tokens * k * etp / tp;
    const double cf = in.capacity_factor > 0 ? in.capacity_factor : 1;
    out.tokens_per_expert = out.dispatched_rows * cf / out.local_experts;
    out.expert_ffn = std::ceil(static_cast<double>(c.ffn_hidden_size) / etp);
    // Router: fp32 logits tokens×E written, softmax and top-k read them (3 passes), probabilities kept for the
    // backward; permutation passes over the hidden states as kPermuteBackwardOverForward says.
    const double local_tokens = in.tokens * etp / tp;
    const double router_bytes = 3 * 4 * local_tokens * E;
    const double rows = out.dispatched_rows;
    const double permute = (local_tokens + rows) * h * e * 2 + (in.ep > 1 ? 4 * rows * h * e : 0);
    out.permute_bytes = (router_bytes + permute) * (1 + kPermuteBackwardOverForward);
    if (in.ep > 1) {
        // EP peers are consecutive after the etp ranks (Megatron-Core's expert rank order etp, ep, edp): the group
        // stays in one NVLink domain when ep·etp fits in it.
        const std::int64_t node = std::max<std::int64_t>(in.gpus_per_node, 1);
        const std::int64_t per_node = std::min(in.ep, std::max<std::int64_t>(node / in.etp, 1));
        out.all_to_all_seconds = all_to_all_seconds(ic, rows * cf * h * e, in.ep, per_node, in.collective_fraction);
    }
    out.sync_seconds = in.capacity_factor > 0 ? 0 : kDroplessSyncSeconds;
    return out;
}

double moe_expert_host_seconds(const MoeStepShape& shape, bool recomputed) {
    return kHostSecondsPerLocalExpert * std::max(shape.local_experts, 0.0) * (1 + (recomputed ? kHostForwardShare : 0));
}

double moe_launch_bound_seconds(double host, double gpu) {
    // The host runs ahead of the GPU while kernels queue up; a layer whose host work outlasts its GPU work leaves
    // the GPU idle for the difference (CUDA's asynchronous launches: the queue hides host time only up to the
    // GPU time behind it).
    return std::max(host - std::max(gpu, 0.0), 0.0);
}

double moe_grouped_gemm_seconds(const MoeStepShape& shape, double hidden, double forward_flops, double passes,
                                double peak, double bytes_per_s, double element_bytes, double peak_fraction) {
    // A grouped GEMM (TE GroupedLinear, cuBLAS/CUTLASS grouped kernels) runs one M×N×K problem per local expert:
    // its tiles and its roofline are those of the per-expert shape, its count the local experts.
    const double eff = matmul_efficiency(std::max(shape.tokens_per_expert, 1.0), shape.expert_ffn, hidden,
                                         shape.local_experts, peak, bytes_per_s, element_bytes, peak_fraction);
    return forward_flops * passes / (eff * peak);
}

double torch_grouped_mm_bf16_fraction(double local_experts) {
    return by_groups(local_experts, [](int i) {
        return kGroupedMmScoutFlops / (kGroupedMmScoutMicroseconds[i] * 1e-6) / kB200DenseBf16Flops;
    });
}

double torchao_mxfp8_grouped_mm_fraction(double local_experts) {
    return by_groups(local_experts, [](int i) {
        return kGroupedMmScoutFlops / (kMxfp8GroupedScoutMicroseconds[i] * 1e-6) / kB200DenseFp8Flops;
    });
}

}  // namespace tally
