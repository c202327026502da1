#include "tally/step/step.h"
#include "tally/comm/fabric.h"
#include "tally/comm/nccl_cost.h"
#include "tally/comm/ring.h"
#include "tally/step/step_dp.h"
#include "tally/parallel/step_stages.h"
#include "tally/parallel/moe.h"
#include "tally/comm/overlap_contention.h"
#include "tally/step/step_cp.h"
#include "tally/step/step_moe.h"
#include "tally/step/step_pp.h"
#include "tally/step/step_fsdp.h"
#include "tally/step/step_rowwise.h"
#include "tally/step/step_tp.h"
#include "tally/compute/training.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "tally/comm/context.h"
#include "tally/numerics/dtype.h"
#include "tally/base/error.h"
#include "tally/compute/flops.h"
#include "tally/compute/roofline.h"

namespace tally {

namespace {

// ---------------------------------------------------------------- model constants
// Fraction of the dense peak that large bf16/fp16 GEMMs reach in cuBLAS: NVIDIA's "Matrix
// Multiplication Background" guide (Deep Learning Performance docs) shows large GEMMs near but below
// peak; Narayanan et al. 2021 (sec. 5.1) report 52% of peak end to end with their GEMMs well above
// that. One global value, calibrated once: of 0.80, 0.72 and 0.70 tried against
// content/validation/runs.json, 0.70 gave the lowest median error (BENCHMARKS.md, "Step time").
constexpr double kMatmulPeakFraction = 0.70;
// Hopper and Blackwell reach a lower fraction of their (much higher) dense peak in end-to-end training GEMMs: the
// issue's same-code H100/A100 ratio was 2.29-2.53x against a 3.2x peak ratio. Chosen on the fit half of
// content/validation/runs-modern.json only (grid 0.55-0.80 for each, lowest fit-half median |error|; Blackwell is
// flat over 0.55-0.625 and takes Hopper's value; BENCHMARKS.md, issue 24); the held-out half took no part.
constexpr double kHopperMatmulPeakFraction = 0.60;
constexpr double kBlackwellMatmulPeakFraction = 0.60;
// Fraction of the dense FP8 peak that the linear layers' FP8 GEMMs reach: of 0.45-0.65 in steps of 0.05, 0.50
// gave the lowest median error over the FP8 runs of the fit half of content/validation/runs-modern.json
// (BENCHMARKS.md, issue 24); the held-out half took no part.
constexpr double kFp8MatmulPeakFraction = 0.50;
// Thread-block tile of a tensor-core GEMM: M and N are padded to 128, K to 64 (tile quantization,
// NVIDIA "Matrix Multiplication Background" guide, sec. "Tile quantization"; CUTLASS default tiles).
constexpr double kTileMN = 128, kTileK = 64;
// Fraction of HBM bandwidth streaming kernels (norms, elementwise, optimizer) reach: STREAM-like
// kernels measure 80-90% of the spec bandwidth on A100/H100 (BabelStream, Deakin et al. 2018 method).
constexpr double kMemoryBandwidthFraction = 0.80;
// Fraction of the link bandwidth NCCL ring collectives reach (bus bandwidth): nccl-tests on DGX A100
// measure about 230 GB/s all_reduce bus bandwidth of 300 GB/s per direction (~0.77).
constexpr double kCollectiveBandwidthFraction = 0.77;
// Passes over a tensor of an elementwise kernel: forward reads the input and writes the output (2);
// the backward reads the saved input and the incoming gradient and writes the gradient (3); norms
// read twice in their backward, so backward traffic is taken as 2 × forward.
constexpr double kForwardPasses = 2, kBackwardOverForward = 2;
// Micro-batches assumed when no global batch is given and pp > 1: 4 per stage keeps the 1F1B bubble
// at (p-1)/4p < 25% (Narayanan et al. 2021, sec. 2.2.1, recommend m >> p).
constexpr std::int64_t kDefaultMicrobatchesPerStage = 4;

double ceil_to(double value, double multiple) { return std::ceil(value / multiple) * multiple; }

// One matmul class of a layer: per-GPU FLOPs of one forward pass over one micro-batch and its shape.
struct Matmul {
    const char* id;
    double forward_flops = 0;  // executed, per GPU, one micro-batch
    double m = 0, n = 0, k = 0, batch = 1;
    bool attention_core = false;  // scores or attention·V (fused by FlashAttention)
    double passes = 3;            // forward + backward (2×) + recomputed forwards
};

// How the low-precision recipe scales its tensors, which sets the memory-bound work around each GEMM.
enum class Scaling {
    None,     // 16/32-bit GEMMs
    Delayed,  // per-tensor scale from an amax history, amax fused into the cast (TE DelayedScaling)
    Current,  // per-tensor scale from this tensor's amax: one extra read (TE Float8CurrentScaling, torchao tensorwise)
    Rowwise,  // per-row scales, each operand re-quantized along the other axis for the backward (step_rowwise.h)
    Block,    // MX block scales (32 elements), amax fused into the quantize kernel (TE MXFP8BlockScaling)
};

Scaling scaling_of(const StepLayout& layout, const Hardware& hw) {
    const std::string& p = layout.precision;
    if (p.empty())
        return layout.dtype == "fp8" ? Scaling::Delayed : layout.dtype == "fp4" ? Scaling::Block : Scaling::None;
    Scaling scaling;
    if (p == "bf16" || p == "fp16")
        scaling = Scaling::None;
    else if (p == "fp8-delayed")
        scaling = Scaling::Delayed;
    else if (p == "fp8-current-scaling" || p == "fp8-current-tensorwise")
        scaling = Scaling::Current;
    else if (p == "fp8-rowwise")
        scaling = Scaling::Rowwise;
    else if (p == "mxfp8")
        scaling = Scaling::Block;
    else
        throw InputError("precision",
                         "precision must be bf16, fp16, fp8-delayed, fp8-current-scaling, fp8-current-tensorwise, "
                         "fp8-rowwise or mxfp8, got \"" +
                             p.substr(0, 40) + "\"");
    if (scaling == Scaling::None ? layout.dtype != p : layout.dtype != "fp8")
        throw InputError("precision", "precision " + p + " needs dtype " + (scaling == Scaling::None ? p : "fp8") +
                                          ", got dtype " + layout.dtype);
    // MX block scaling is a tensor-core feature of the generation that added FP4 (Blackwell, CDNA 4; OCP MX spec).
    if (scaling == Scaling::Block && !(hw.peak_fp4 > 0))
        throw InputError("precision", "precision mxfp8 needs MX block-scaled tensor cores (Blackwell, CDNA 4); " +
                                          hw.name + " has none: use fp8-delayed or fp8-current-scaling");
    return scaling;
}

}  // namespace

double matmul_peak_fraction(const std::string& architecture) {
    if (architecture == "hopper") return kHopperMatmulPeakFraction;
    if (architecture == "blackwell") return kBlackwellMatmulPeakFraction;
    return kMatmulPeakFraction;
}

double group_link_bytes_per_s(const Interconnect& ic, std::int64_t ranks_per_node, std::int64_t nodes) {
    if (nodes <= 1) return ic.intra_node_bytes_per_s;
    // A ring crossing domains sends its whole per-rank volume out of each domain once per channel; NCCL spreads
    // the channels over the domain's cards, so a group's share is its members' cards (network_bytes_per_s is the
    // per-GPU share): nccl-tests over 8 A100 + 4 HDR cards per node reach 85-96 of the 100 GB/s the node's
    // cards carry (NVIDIA/nccl-tests issue #119). Groups sharing a node at once split its cards the same way.
    const double cards =
        std::min(ic.intra_node_bytes_per_s,
                 static_cast<double>(std::max<std::int64_t>(ranks_per_node, 1)) * ic.network_bytes_per_s);
    // A measured fabric (fabric.h) caps it at what a collective over that many nodes reached there.
    return ic.fabric ? std::min(cards, fabric_link_bytes_per_s(*ic.fabric, nodes, kCollectiveBandwidthFraction))
                     : cards;
}

double step_collective_seconds(collectives::Kind kind, double bytes, const Interconnect& ic,
                               const collectives::Placement& group, double fraction) {
    if (group.ranks() <= 1 || bytes <= 0) return 0;
    const double ring = fraction * group_link_bytes_per_s(ic, group.ranks_per_node, group.nodes);
    switch (kind) {
        case collectives::Kind::AllReduce: return nccl_all_reduce_seconds(bytes, group, ring);
        case collectives::Kind::AllToAll:
            return all_to_all_seconds(ic, bytes, group.ranks(), group.ranks_per_node, fraction);
        case collectives::Kind::SendRecv: {
            const collectives::Links links{
                std::max(ic.gpus_per_node, group.ranks_per_node), ic.intra_node_bytes_per_s,
                ic.network_bytes_per_s > 0 ? ic.network_bytes_per_s : ic.intra_node_bytes_per_s, fraction};
            return collectives::cost(kind, collectives::Algorithm::Ring, std::max(bytes, 1.0), group, links).seconds;
        }
        default: return collectives::nccl_time(kind, collectives::Algorithm::Ring, bytes, group, ring).seconds;
    }
}

double matmul_efficiency(double m, double n, double k, double batch, double peak, double bytes_per_s,
                         double element_bytes, double peak_fraction) {
    const double useful = 2 * m * n * k * batch;
    const double padded = 2 * ceil_to(m, kTileMN) * ceil_to(n, kTileMN) * ceil_to(k, kTileK) * batch;
    const double compute_s = padded / ((peak_fraction > 0 ? peak_fraction : kMatmulPeakFraction) * peak);
    // Roofline (Williams et al. 2009): each operand read once, the result written once (roofline.h). The
    // operands are whole numbers below 2^53, so the products are exact in any order.
    const double memory_s =
        batch * roofline::matmul_min_traffic(m, n, k, element_bytes).bytes / (kMemoryBandwidthFraction * bytes_per_s);
    return useful / (std::max(compute_s, memory_s) * peak);
}

StepFlops step_flops(const ModelConfig& c, std::int64_t seq, Recompute recompute, bool flash_attention,
                     std::int64_t decoder_seq) {
    StepFlops out;
    out.seq = seq, out.decoder_seq = decoder_seq, out.recompute = recompute, out.flash_attention = flash_attention;
    FlopsInput fin;
    fin.seq = seq;
    fin.decoder_seq = decoder_seq;  // T5's targets: the decoder layers' FLOPs (flops.cpp), averaged per layer below
    fin.recompute = recompute;
    fin.flash_attention = flash_attention;
    out.counted = count_flops(c, fin);
    // What runs: a fused causal kernel skips the masked half of the scores (FlashAttention-2 sec. 3.1.1).
    fin.attention = flash_attention ? AttentionFlops::Causal : AttentionFlops::Full;
    out.executed = count_flops(c, fin);
    return out;
}

StepResult step_time(const ModelConfig& c, const Hardware& hw, const StepLayout& layout) {
    return step_time(c, hw, layout, nullptr, nullptr);
}

StepResult step_time(const ModelConfig& c, const Hardware& hw, const StepLayout& layout, const MemoryBudget* budget,
                     const StepFlops* flops) {
    require_range("interleave", layout.interleave, 1, 1024);
    require_range("gpus_per_node", layout.gpus_per_node, 0, 1'000'000);
    if (!hw.interconnect.present)
        throw InputError("hardware", hw.name + " has no interconnect figures (preset field \"interconnect\")");
    if (layout.node_network_gbps != 0) {  // the stated network replaces the preset's cards, everywhere they are read
        if (!(layout.node_network_gbps >= 1 && layout.node_network_gbps <= kMaxNodeNetworkGbps))
            throw InputError("node_network_gbps",
                             "node_network_gbps must be 0 (the hardware preset's cards) or in "
                             "[1, " +
                                 format_number(kMaxNodeNetworkGbps) + "] Gb/s, got " +
                                 format_number(layout.node_network_gbps));
        Hardware stated = hw;
        const std::int64_t per_node = layout.gpus_per_node > 0 ? layout.gpus_per_node : hw.interconnect.gpus_per_node;
        stated.interconnect.network_bytes_per_s = layout.node_network_gbps * 1e9 / 8 / static_cast<double>(per_node);
        StepLayout rest = layout;
        rest.node_network_gbps = 0;
        return step_time(c, stated, rest, budget, flops);
    }
    TrainingSetup st = layout.setup;
    const double peak = hw.peak(layout.dtype);
    // FP8 as Transformer Engine applies it: te.Linear / LayerNormLinear / LayerNormMLP run their GEMMs in FP8;
    // DotProductAttention stays BF16 unless fp8_dpa is set, and Megatron's output layer is not a TE module
    // (TE docs, "Using FP8 with Transformer Engine" and the DelayedScaling recipe's fp8_dpa flag).
    const Scaling scaling = scaling_of(layout, hw);
    const StepSwitches& stack = layout.switches ? *layout.switches : stack_profile(layout.stack).defaults;
    // A measured device's own fraction (calibrate-gpu.sh), else its generation's.
    const double fraction_16 =
        hw.matmul_peak_fraction > 0 ? hw.matmul_peak_fraction : matmul_peak_fraction(hw.architecture);
    const bool low_precision = scaling != Scaling::None;
    // torchtitan refuses FSDP float8 all-gather with a recipe name (components/quantization/float8.py at 820504e).
    if (layout.fp8_all_gather && !(low_precision && scaling != Scaling::Block && scaling != Scaling::Rowwise))
        throw InputError("fp8_all_gather",
                         "fp8_all_gather needs a per-tensor FP8 precision (fp8-delayed, "
                         "fp8-current-*): rowwise and MX recipes gather in BF16");
    const double peak_16 = low_precision ? hw.peak(DType::BF16) : peak;  // attention core and LM head
    const std::int64_t node = layout.gpus_per_node > 0 ? layout.gpus_per_node : hw.interconnect.gpus_per_node;
    if (st.pp == 1 && layout.interleave > 1)
        throw InputError("interleave", "interleave > 1 needs pipeline parallelism (pp > 1)");

    // Micro-batches per step; memory_budget checks tp | heads, gpus = tp·pp·dp, global batch divisibility.
    // Context parallelism (step_cp.h): cp GPUs share each sequence; gpus = tp·pp·cp·dp (memory.h).
    const std::int64_t model_parallel = st.tp * st.pp * st.cp;
    if (st.tp < 1 || st.pp < 1 || st.cp < 1) throw InputError("tp", "tp, pp and cp must be >= 1");
    if (st.gpus % model_parallel != 0)
        throw InputError("gpus", "gpus (" + std::to_string(st.gpus) + ") must be a multiple of tp·pp" +
                                     (st.cp > 1 ? "·cp" : "") + " = " + std::to_string(model_parallel));
    const std::int64_t dp = st.gpus / model_parallel;
    if (st.global_batch == 0)
        st.global_batch = dp * st.micro_batch * (st.pp > 1 ? kDefaultMicrobatchesPerStage * st.pp : 1);
    // The planner passes the budget it already computed (same parameters per GPU; it checked the layout).
    const MemoryBudget computed_budget = budget != nullptr ? MemoryBudget{} : memory_budget(c, st);
    const MemoryBudget& mem = budget != nullptr ? *budget : computed_budget;
    if (st.global_batch % (st.micro_batch * dp) != 0)
        throw InputError("global_batch",
                         "global_batch (" + std::to_string(st.global_batch) +
                             ") must be a multiple of micro_batch·dp = " + std::to_string(st.micro_batch * dp));
    const std::int64_t m = st.global_batch / (st.micro_batch * dp);
    const StageSplit stages =
        pipeline_stages(c, st.pp, layout.interleave, layout.embedding_chunks, stack.cost_balanced_stages);
    const std::vector<std::int64_t>& layers_of = stages.layers;

    // ---------------------------------------------------------------- FLOPs, from flops.h
    if (flops != nullptr && (flops->seq != st.seq || flops->decoder_seq != st.decoder_seq ||
                             flops->recompute != st.recompute || flops->flash_attention != st.flash_attention))
        throw InputError("seq", "the cached FLOP counts are for another seq, recomputation or FlashAttention choice");
    const StepFlops computed =
        flops != nullptr ? StepFlops{} : step_flops(c, st.seq, st.recompute, st.flash_attention, st.decoder_seq);
    const StepFlops& counts = flops != nullptr ? *flops : computed;
    const FlopsResult& counted = counts.counted;
    const FlopsResult& executed = counts.executed;

    const double s = static_cast<double>(st.seq), b = static_cast<double>(st.micro_batch);
    const double t = static_cast<double>(st.tp), L = static_cast<double>(c.num_layers);
    const double h = static_cast<double>(c.hidden_size), e = static_cast<double>(st.activation_bytes);
    const double cp = static_cast<double>(st.cp);
    const double tokens = s * b / cp;  // per micro-batch per data-parallel rank (and context-parallel rank)
    // Causal attention work of the busiest context-parallel rank over the mean (1 with the balanced 2·cp chunks).
    const double cp_imbalance =
        st.cp > 1 ? context::causal_work(st.seq, st.cp, st.cp_load_balance && c.architecture == Architecture::Decoder)
                        .max_over_mean
                  : 1;
    const double heads_gpu = static_cast<double>(c.num_heads) / t;
    const double d = static_cast<double>(c.head_dim);
    const double f_gpu = std::ceil(static_cast<double>(c.ffn_hidden_size) / t);
    const double bw = hw.memory_bandwidth_bytes_per_s;
    const bool sp = st.sequence_parallel && st.tp > 1;
    const bool full = st.recompute == Recompute::Full, selective = st.recompute == Recompute::Selective;
    const bool op_sac = selective && stack.per_op_sac;  // torchtitan's per-op policy (step_fsdp.h)
    const bool lora = layout.lora_rank > 0;             // frozen base: no weight-gradient GEMMs (step_fsdp.h)

    // Per-layer matmuls, per GPU, one micro-batch. Passes: 1 forward + 2 backward, + 1 per recomputed
    // forward (the same rule as count_flops: full redoes the layer; selective redoes QKᵀ and
    // attention·V; FlashAttention's backward redoes QKᵀ).
    std::vector<Matmul> layer_mm;
    layer_mm.reserve(executed.terms.size());
    double routed_forward_flops = 0, routed_passes = 0;  // MoE routed experts, per layer (averaged over L)
    Matmul head{"lm_head"};
    for (const FlopsTerm& term : executed.terms) {
        const std::string_view id = term.id;
        const bool core = id == "attn_scores" || id == "attn_values";
        const double per_gpu = term.forward_per_sequence * b / t / cp * (core ? cp_imbalance : 1);
        if (id == "lm_head") {
            head = {"lm_head", per_gpu, tokens, std::ceil(static_cast<double>(c.vocab_size) / t),
                    h,         1,       false,  lora ? 2.0 : 3.0};
            continue;
        }
        Matmul mm{term.id, per_gpu / L};
        if (id == "qkv")
            mm.m = tokens, mm.n = static_cast<double>(c.q_dim() + 2 * c.kv_dim()) / t, mm.k = h;
        else if (id == "attn_scores")
            mm.m = s, mm.n = s, mm.k = d, mm.batch = b * heads_gpu, mm.attention_core = true;
        else if (id == "attn_values")
            mm.m = s, mm.n = d, mm.k = s, mm.batch = b * heads_gpu, mm.attention_core = true;
        else if (id == "attn_out")
            mm.m = tokens, mm.n = h, mm.k = static_cast<double>(c.q_dim()) / t;
        else if (id == "indexer")  // DeepSeek Sparse Attention: s×s scores of d_I per indexer head, replicated
            mm.m = s, mm.n = s, mm.k = static_cast<double>(c.index_head_dim),
            mm.batch = b * static_cast<double>(c.index_n_heads);
        else if (id == "mlp") {
            mm.m = tokens, mm.n = f_gpu, mm.k = h;  // up/gate and down have the same efficiency model
            if (c.is_moe()) {                       // the routed experts run apart, as a grouped GEMM (step_moe.h)
                const double routed = moe_routed_flops_share(c);
                routed_forward_flops = mm.forward_flops * routed * (st.capacity_factor > 0 ? st.capacity_factor : 1);
                mm.forward_flops *= 1 - routed;  // shared experts and DeepSeek's dense layers: tensor-parallel MLPs
                routed_passes = mm.passes + (full ? 1 : 0);
            }
        } else if (id == "router")
            mm.m = tokens, mm.n = static_cast<double>(c.num_experts), mm.k = h,
            mm.forward_flops = term.forward_per_sequence * b / L / cp;
        else
            mm.m = tokens, mm.n = h / t, mm.k = h;  // cross-attention, pooler: shaped like a tensor-parallel projection
        if (full) mm.passes += 1;
        if (op_sac)
            mm.passes +=
                per_op_sac_extra_passes(id, c, scaling != Scaling::None,
                                        !st.flash_attention || sdpa_saved_by_op_sac(stack.attention, hw.architecture));
        if (lora && !mm.attention_core) mm.passes -= 1;  // the input gradient only: the weight is frozen
        const bool scores = id == "attn_scores", values = id == "attn_values";
        if (scores && (st.flash_attention || (selective && !st.flash_attention))) mm.passes += 1;
        if (values && selective && !st.flash_attention) mm.passes += 1;
        layer_mm.push_back(mm);
    }

    const double linear_bytes =
        low_precision ? dtype_element_bytes(dtype_from_string(layout.dtype, "dtype", kPeakDType)) : e;
    const double linear_fraction = low_precision ? kFp8MatmulPeakFraction : fraction_16;
    // One kernel call sees the seq/cp positions of a context-parallel block (ring steps), else the whole sequence.
    const double attention_eff = attention_efficiency(stack.attention, hw.architecture, s / cp);
    // torchao rowwise on Hopper: BF16 linear time over the measured speed-up at the GEMM's shape, casts included;
    // dense linears only (MoE's grouped expert GEMMs were not measured: the generic FP8 path with rowwise casts).
    const bool rowwise_measured = scaling == Scaling::Rowwise && hw.architecture == "hopper" && !c.is_moe();
    const double gated_up = c.mlp == MlpKind::Gelu ? 1 : 2;       // up (and gate) projections of h → f, then f → h
    double mm_flops = 0, mm_seconds = 0, linear_seconds = 0;      // per layer, all passes
    double attention_seconds = 0, attention_forward_seconds = 0;  // the attention cores (context parallelism)
    double mm_flops_trained = 0;  // LoRA: what the layer's matmuls would run with every weight trained
    for (const Matmul& mm : layer_mm) {
        const bool linear = !mm.attention_core && std::string_view(mm.id) != "router";  // TE modules
        const bool measured = linear && rowwise_measured;
        const double mm_peak = linear && !measured ? peak : peak_16;
        const auto shaped = [&](double n) {
            return linear && !measured
                       ? matmul_efficiency(mm.m, n, mm.k, mm.batch, peak, bw, linear_bytes, linear_fraction)
                       : matmul_efficiency(mm.m, n, mm.k, mm.batch, mm_peak, bw, e, fraction_16);
        };
        const double q_n = static_cast<double>(c.q_dim()) / t, kv_n = static_cast<double>(c.kv_dim()) / t;
        const double eff = mm.attention_core && st.flash_attention ? attention_eff
                           : stack.separate_qkv && std::string_view(mm.id) == "qkv"
                               ? separate_qkv_efficiency(q_n, kv_n, shaped(q_n), shaped(kv_n))
                               : shaped(mm.n);
        mm_flops += mm.forward_flops * mm.passes;
        mm_flops_trained += mm.forward_flops * (mm.passes + (lora && !mm.attention_core ? 1 : 0));
        const double slowdown = !measured ? 1
                                : std::string_view(mm.id) == "mlp"
                                    ? (gated_up / torchao_rowwise_speedup(mm.m, mm.k, mm.n) +
                                       1 / torchao_rowwise_speedup(mm.m, mm.n, mm.k)) /
                                          (gated_up + 1)
                                    : 1 / torchao_rowwise_speedup(mm.m, mm.k, mm.n);
        const double seconds = mm.forward_flops * mm.passes / (eff * mm_peak) * slowdown;
        mm_seconds += seconds;
        if (linear) linear_seconds += seconds;
        if (mm.attention_core) {
            attention_seconds += seconds;
            attention_forward_seconds += seconds / mm.passes;  // one forward pass
        }
    }
    // torchao's MXFP8 grouped GEMM on Blackwell: measured with its operands' quantization inside (step_moe.h), so
    // the routed experts take that rate and no cast passes of their own.
    const bool mx_grouped_measured =
        c.is_moe() && stack.torch_grouped_mm && scaling == Scaling::Block && hw.architecture == "blackwell";
    MoeStepShape moe_shape;
    const double moe_layer_share = c.is_moe() ? static_cast<double>(c.num_moe_layers()) / L : 0;
    if (c.is_moe()) {
        moe_shape = moe_step_shape(
            c, hw.interconnect,
            {tokens, st.tp, st.ep, st.etp_or_tp(), node, st.capacity_factor, e, kCollectiveBandwidthFraction});
        // torch._grouped_mm in BF16 on Blackwell: its measured rate instead of the dense GEMMs' (step_moe.h).
        const bool grouped_measured = stack.torch_grouped_mm && !low_precision && hw.architecture == "blackwell";
        const double seconds =
            moe_grouped_gemm_seconds(moe_shape, h, routed_forward_flops, routed_passes, peak, bw, linear_bytes,
                                     grouped_measured      ? torch_grouped_mm_bf16_fraction(moe_shape.local_experts)
                                     : mx_grouped_measured ? torchao_mxfp8_grouped_mm_fraction(moe_shape.local_experts)
                                                           : linear_fraction);
        mm_flops += routed_forward_flops * routed_passes;
        mm_seconds += seconds;
        linear_seconds += seconds;
    }
    double lora_params_gpu = 0;  // trainable adapter parameters on this GPU (LoRA)
    if (lora) {
        const LoraStepCost a = lora_step_cost(
            c, {layout.lora_rank, layout.lora_targets, tokens, t, full ? 4.0 : 3.0, peak_16, bw, e, fraction_16});
        mm_flops += a.flops, mm_seconds += a.seconds;
        lora_params_gpu = a.params_per_gpu / static_cast<double>(st.pp);
    }
    const double head_eff = matmul_efficiency(head.m, head.n, head.k, 1, peak_16, bw, e, fraction_16);
    const double head_seconds = head.forward_flops * head.passes / (head_eff * peak_16);

    // FP8 quantisation around each linear GEMM, memory-bound: the forward casts its BF16 input and writes the
    // FP8 copy and its transpose (the weight-gradient GEMM's operand; TE's fused cast_transpose), the backward
    // does the same for the output gradient; current scaling first reads the tensor for its amax, MX writes a
    // 1-byte scale per 32 elements per copy. Full recomputation repeats the forward casts. Weights are cast once
    // per step (TE caches them across micro-batches: is_first_microbatch).
    double layer_cast_seconds = 0, weight_cast_seconds = 0;
    if (low_precision) {
        const double routed = mx_grouped_measured ? 0 : 1;  // the measured MX grouped GEMM casts its own operands
        const double experts =
            c.is_moe() ? routed * static_cast<double>(c.experts_per_token) + static_cast<double>(c.num_shared_experts)
                       : 1;
        const double local_experts = c.is_moe() ? routed * static_cast<double>(c.num_experts) /
                                                          static_cast<double>(std::max<std::int64_t>(st.ep, 1)) +
                                                      static_cast<double>(c.num_shared_experts)
                                                : 1;
        double inputs = 0, grads = 0, weights = 0;
        for (const Matmul& mm : layer_mm) {
            const std::string_view id = mm.id;
            if (mm.attention_core || id == "router") continue;
            if (id == "mlp") {
                inputs += tokens * (h + f_gpu) * experts;
                grads += tokens * (gated_up * f_gpu + h) * experts;
                weights += h * f_gpu * (gated_up + 1) * local_experts;
            } else {
                inputs += mm.m * mm.k;
                grads += mm.m * mm.n;
                weights += mm.n * mm.k;
            }
        }
        const double hbm_bytes_per_s = kMemoryBandwidthFraction * bw;
        const double activations = inputs * (full || op_sac ? 2 : 1) + grads;  // cast each micro-batch
        if (scaling == Scaling::Rowwise) {  // both axes each micro-batch, weights too; inside the measured speed-ups
            const double rowwise_bytes = activations * rowwise_cast_bytes_per_element(e, linear_bytes, false) +
                                         weights * rowwise_cast_bytes_per_element(e, linear_bytes, true);
            layer_cast_seconds = rowwise_measured ? 0 : rowwise_bytes / hbm_bytes_per_s;
        } else {  // per tensor (the comment above)
            const double per_element = e + 2 * linear_bytes + (scaling == Scaling::Current ? e : 0) +
                                       (scaling == Scaling::Block ? 2.0 / 32 : 0);
            layer_cast_seconds = activations * per_element / hbm_bytes_per_s;
            weight_cast_seconds = weights * per_element / hbm_bytes_per_s;
        }
    }

    // ---------------------------------------------------------------- memory-bound kernels per layer
    // Sequence-side tensors (norm, dropout, residual) are split over t only with sequence parallelism.
    const double x = tokens * h * e / (sp ? t : 1);
    const double visited = c.is_moe() ? static_cast<double>(c.experts_per_token + c.num_shared_experts) : 1;
    const double ffn = tokens * f_gpu * e * visited;
    const double scores_bytes = st.flash_attention ? 0 : heads_gpu * s * s * b * e;
    // Bytes touched in one forward pass: 2 norms (read, write), 2 residual adds (read 2, write 1), 2 dropouts
    // (+1-byte mask, Megatron fuses bias-dropout-add), the activation (gated: read 2, write 1), rotary on Q, K,
    // the unfused softmax (and its dropout) over the s×s scores.
    // Dropout as the setup says, else as the model was trained (memory.cpp decides the same way).
    const bool resid_drop = st.dropout.value_or(c.residual_dropout > 0);
    const bool attn_drop = st.dropout.value_or(c.attention_dropout > 0);
    const double dropout_mask = resid_drop ? 0.5 : 0;  // 1-byte mask per 2-byte element
    double fwd_bytes = 2 * kForwardPasses * x + 2 * (3 + dropout_mask) * x;
    fwd_bytes += c.mlp == MlpKind::Gelu ? 2 * ffn : 3 * ffn;
    if (c.position == PositionKind::Rotary)
        fwd_bytes += 2 * tokens * static_cast<double>(c.q_dim() + c.kv_dim()) * e / t;
    if (stack.eager_elementwise && !layout.compile)
        fwd_bytes += eager_extra_forward_bytes(c, x, ffn, tokens * static_cast<double>(c.q_dim() + c.kv_dim()) * e / t);
    else if (stack.eager_glu && c.mlp != MlpKind::Gelu)
        fwd_bytes += (5 - 3) * ffn;
    const double softmax_fwd = scores_bytes * (kForwardPasses + (attn_drop ? 2.5 : 0));
    fwd_bytes += softmax_fwd;
    double layer_bytes = fwd_bytes * (1 + kBackwardOverForward);
    if (full || op_sac)  // the per-op policy recomputes every elementwise op too
        layer_bytes += fwd_bytes;
    else if (selective)
        layer_bytes += softmax_fwd;
    const double hbm = kMemoryBandwidthFraction * bw;
    layer_bytes += moe_layer_share * moe_shape.permute_bytes;  // router, permute and unpermute (step_moe.h)
    // PyTorch context_parallel's fp32 merge of each ring step's partial output and fp32 dQ, dK, dV (step_cp.h).
    const double cp_kv_heads_gpu = st.cp > 1
                                       ? std::max(static_cast<double>(c.num_kv_heads) / t *
                                                      cp_kv_repeat(stack.cp_repeat_kv, static_cast<double>(c.num_heads),
                                                                   static_cast<double>(c.num_kv_heads)),
                                                  1.0)
                                       : 0;
    if (st.cp > 1)
        layer_bytes += cp_merge_bytes(
            {st.cp, stack.cp_exchange, tokens * heads_gpu * d, 2 * tokens * cp_kv_heads_gpu * d, full ? 2 : 1});
    const double layer_memory_seconds = layer_bytes / hbm;
    // Logits in fp32 for the cross-entropy: written, read by the softmax, the loss and its backward (≈5 passes), or
    // what the stack's loss is known to move.
    const double logits_seconds = (stack.logits_bytes > 0 ? stack.logits_bytes : 5 * 4) * tokens *
                                  std::ceil(static_cast<double>(c.vocab_size) / t) / hbm;

    // ---------------------------------------------------------------- tensor/sequence-parallel collectives
    Interconnect with_fabric;  // a measured fabric (fabric.h) replaces the nominal cards for the ring collectives
    const Interconnect& ic =
        layout.fabric.empty() ? hw.interconnect : fabric_interconnect(hw, layout.fabric, with_fabric);
    // Ranks are placed tensor first, then data, then pipeline (Megatron-LM order): a TP group fills its nodes.
    const auto domains = [](std::int64_t ranks, std::int64_t per_node) { return (ranks + per_node - 1) / per_node; };
    const std::int64_t tp_per_node = std::min(st.tp, node);
    const collectives::Placement tp_group{tp_per_node, domains(st.tp, tp_per_node)};
    using collectives::Kind;
    const auto tp_collective = [&](Kind kind, double bytes) {
        return step_collective_seconds(kind, bytes, ic, tp_group, kCollectiveBandwidthFraction);
    };
    const double act_msg = tokens * h * e;  // the full s·b·h activation each collective reduces or gathers
    // Megatron-LM: 2 all-reduces in the forward and 2 in the backward per layer (Shoeybi et al. 2019,
    // Fig. 4); sequence parallelism turns each into a reduce-scatter and an all-gather of the same bytes
    // (Korthikanti et al. 2022, sec. 4.2.2); full recomputation repeats the forward's two.
    const double collectives = 4 + (full ? 2 : 0);
    // Sequence parallelism: an all-gather and a reduce-scatter each; torchtitan's float8 plan gathers in FP8 (step_tp.h).
    const double sp_gather_bytes =
        sp_gather_element_bytes(stack.fp8_tensorwise_sp_gather, layout.precision, e, linear_bytes);
    const double sp_gather = tp_collective(Kind::AllGather, act_msg * sp_gather_bytes / e);
    const double one =
        sp ? sp_gather + tp_collective(Kind::ReduceScatter, act_msg) : tp_collective(Kind::AllReduce, act_msg);
    const double layer_tp_total = collectives * one + (op_sac ? per_op_sac_regathers_per_layer(sp) * sp_gather : 0);
    // Overlapped with the linear layers' GEMMs where the stack does it (userbuffers need sequence parallelism).
    // The run's own --tp-comm-overlap when given, else its stack's default.
    const bool tp_comm_overlap = stack.tp_comm_overlap;
    const double layer_tp_hidden = !sp               ? 0
                                   : tp_comm_overlap ? std::min(layer_tp_total, linear_seconds)
                                   : layout.async_tp ? async_tp_hidden_seconds(one, linear_seconds)
                                                     : 0;
    const double layer_tp_seconds = layer_tp_total - layer_tp_hidden;
    // torchtitan's batch-first activations: a torch.cat beside each sequence-dim collective, HBM work (step_tp.h).
    const bool async_fused = sp && !tp_comm_overlap && layout.async_tp;  // the forward's 2 AG + 2 RS
    const double sp_gathers = collectives + (op_sac ? per_op_sac_regathers_per_layer(sp) : 0);
    const double layer_sp_copy_seconds =
        sp ? sp_layout_copy_bytes(stack.sp_batch_first, {sp_gathers, collectives, async_fused ? 2.0 : 0,
                                                         async_fused ? 2.0 : 0, tokens * h, sp_gather_bytes, e, t}) /
                 hbm
           : 0;

    // ---------------------------------------------------------------- context-parallel K, V exchange (step_cp.h)
    // CP peers are t ranks apart (Megatron-Core order tp, cp, dp, pp; Llama 3 sec. 3.3.2 [TP, CP, PP, DP]).
    CpLayerCost layer_cp;
    if (st.cp > 1) {
        const std::int64_t cp_per_node = std::min(st.cp, std::max<std::int64_t>(node / st.tp, 1));
        const double kv_heads = static_cast<double>(c.num_kv_heads);  // split over t, one whole head at least
        const double kv_block_bytes =
            context::ring_step(c, hw, st.seq, st.cp, e).kv_block_bytes * b * cp_kv_heads_gpu / kv_heads;
        // Every transfer priced where every collective is (step_collective_seconds): a ring hop is one send/recv.
        const collectives::Placement cp_group{cp_per_node, domains(st.cp, cp_per_node)};
        const auto cp_collective = [&](Kind kind, double bytes) {
            return step_collective_seconds(kind, bytes, ic, cp_group, kCollectiveBandwidthFraction);
        };
        CpLayerInput in;
        in.cp = st.cp;
        in.exchange = stack.cp_exchange;
        in.hop_s = cp_collective(Kind::SendRecv, kv_block_bytes);
        in.double_hop_s = cp_collective(Kind::SendRecv, 2 * kv_block_bytes);
        in.gather_s = cp_collective(Kind::AllGather, kv_block_bytes * static_cast<double>(st.cp));
        in.reduce_scatter_s = cp_collective(Kind::ReduceScatter, kv_block_bytes * static_cast<double>(st.cp));
        in.forward_passes = full ? 2 : 1;
        in.attention_forward_s = attention_forward_seconds;
        in.attention_backward_s = attention_seconds - in.forward_passes * attention_forward_seconds;
        layer_cp = context_parallel_layer(in);
    }
    const double layer_cp_seconds = layer_cp.exposed_s;

    // ---------------------------------------------------------------- expert-parallel all-to-all (MoE)
    // Dispatch and combine in the forward, their gradients in the backward (and the forward's again under full
    // recomputation), over the ep·etp-rank expert group (step_moe.cpp); a dropless dispatcher's host sync per forward.
    const double recomputed = full ? 1 : 0;
    const double layer_ep_seconds =
        moe_overlapped_all_to_all_seconds(moe_layer_share * (4 + 2 * recomputed) * moe_shape.all_to_all_seconds,
                                          layout.ep_overlap ? mm_seconds + layer_memory_seconds : 0);
    const double layer_dispatch_sync_seconds = moe_layer_share * (1 + recomputed) * moe_shape.sync_seconds;
    const double gpu_layer_seconds = mm_seconds + layer_memory_seconds + layer_sp_copy_seconds + layer_tp_seconds +
                                     layer_ep_seconds + layer_dispatch_sync_seconds + layer_cast_seconds +
                                     layer_cp_seconds;
    // TE's GroupedLinear issues each local expert's casts and GEMMs from the host: a small layer waits on it.
    const double layer_launch_seconds =
        c.is_moe() && stack.expert_host_launches
            ? moe_layer_share * moe_launch_bound_seconds(moe_expert_host_seconds(moe_shape, full), gpu_layer_seconds)
            : 0;
    const double layer_sync_seconds = layer_dispatch_sync_seconds + layer_launch_seconds;

    // ---------------------------------------------------------------- stages and the pipeline
    const double layer_seconds = gpu_layer_seconds + layer_launch_seconds;
    // Multi-token prediction (DeepSeek-V3 sec. 2.2): each module is one more transformer block, a 2h→h projection
    // and the shared output head with its loss, run after the main model on the last stage (Megatron-Core's MTP).
    const double mtp_projection_flops = 2 * tokens * 2 * h * h / t;
    const double mtp_seconds =
        static_cast<double>(c.mtp_modules) *
        (layer_seconds + head_seconds + logits_seconds +
         3 * mtp_projection_flops /
             (matmul_efficiency(tokens, h / t, 2 * h, 1, peak_16, bw, e, fraction_16) * peak_16));
    double slowest = 0;
    std::int64_t slowest_layers = 0;
    for (std::size_t i = 0; i < layers_of.size(); ++i) {
        double stage = static_cast<double>(layers_of[i]) * layer_seconds;
        if (i == stages.head_stage) stage += head_seconds + logits_seconds + mtp_seconds;  // output layer, MTP
        if (stage > slowest) slowest = stage, slowest_layers = layers_of[i];
    }
    const double md = static_cast<double>(m);
    const double v = static_cast<double>(layout.interleave);
    const double bubble_fraction = pipeline_bubble_fraction(st.pp, layout.interleave, m);
    const double compute_seconds = md * slowest;
    // torch.distributed.pipelining's looped schedules wait out a grid of time steps (step_pp.h): a chunk forward more.
    const LockstepExtra lockstep =
        stack.pipeline_lockstep ? lockstep_grid_extra(st.pp, layout.interleave, m) : LockstepExtra{};
    const double bubble_seconds =
        bubble_fraction * md * slowest + lockstep.chunk_forwards * slowest / (v * (3 + recomputed));

    // Point-to-point activation sends between stages: one forward and one backward per chunk boundary per
    // micro-batch (v per stage when interleaved, Narayanan et al. 2021, sec. 2.2.2), split over the t ranks
    // (scatter/gather optimisation, sec. 4.1); counted exposed. Stages sit on other nodes unless the whole job fits one.
    // Each send is one send/recv between a stage pair (step_collective_seconds).
    double p2p_seconds = 0;
    if (st.pp > 1) {
        const collectives::Placement pair =
            st.gpus <= node ? collectives::Placement{2, 1} : collectives::Placement{1, 2};
        p2p_seconds = (2 * v * md + lockstep.transfers) *
                      step_collective_seconds(Kind::SendRecv, act_msg / t, ic, pair, kCollectiveBandwidthFraction);
    }

    // ---------------------------------------------------------------- data parallelism and ZeRO
    // Data-parallel peers are t ranks apart (Megatron-LM rank order: tensor, then data, then pipeline):
    // one node holds the group only when t·dp fits in it. Gradients are reduced over dp·cp ranks: the cp ranks of
    // a sequence hold the same weights (Megatron-Core's data-parallel-with-context-parallel group).
    const std::int64_t dp_group = dp * st.cp;
    const std::int64_t dp_per_node = std::min(dp_group, std::max<std::int64_t>(node / st.tp, 1));
    const double dp_bw =
        kCollectiveBandwidthFraction * group_link_bytes_per_s(ic, dp_per_node, domains(dp_group, dp_per_node));
    const collectives::Placement dp_placement{dp_per_node, domains(dp_group, dp_per_node)};
    // nanotron's cost-balanced split moves layers onto the first stage, beside the input embedding (step_stages.h).
    const double params = static_cast<double>(stack.cost_balanced_stages && st.pp > 1
                                                  ? busiest_stage_params(c, stages, st.tp, st.ep, st.etp)
                                                  : mem.params_on_gpu);
    // LoRA: only the fp32 adapters have gradients and updates (PEFT keeps adapters in fp32; finetune.h).
    const double trained_params = lora ? lora_params_gpu : params;
    const double grad_element_bytes = lora ? 4 : dtype_element_bytes(st.recipe.gradients);
    const double updated_element_bytes = lora ? 4 : dtype_element_bytes(st.recipe.weights);
    const double grad_bytes = trained_params * grad_element_bytes;
    const double weight_bytes = params * dtype_element_bytes(st.recipe.weights);
    double dp_seconds = 0, dp_hidden = 0, zero3_seconds = 0, zero3_hidden = 0;
    const double backward_window = slowest * 2.0 / 3.0;  // the last micro-batch's backward on this stage
    // ZeRO-0/1/2 reduction and the stack's gradient passes (step_dp.cpp).
    const DpReduction reduction =
        dp_reduction({dp_group, st.zero, m, trained_params, grad_element_bytes, updated_element_bytes, dp_bw,
                      dp_placement, backward_window, layout.overlap_grad_reduce, kMemoryBandwidthFraction * bw,
                      stack.grad_sync, lora ? 0 : static_cast<double>(c.vocab_size) * h / t});
    if (dp_group > 1) {
        if (st.zero <= 2) {
            dp_seconds = reduction.seconds;
            dp_hidden = reduction.hidden;
        } else {
            // ZeRO-3 / FSDP: every micro-batch gathers each layer's weights for its forward and again for its
            // backward and reduce-scatters its gradients (Rajbhandari et al. 2020, sec. 7.2.2: 1.5x the
            // all-reduce volume), the next gather prefetched one layer ahead (overlap.h's FSDP timeline).
            Zero3Input zi;
            zi.layers = slowest_layers, zi.dp = dp_group, zi.shard_group = st.shard_group, zi.tp = st.tp,
            zi.node = node;
            zi.link_fraction = kCollectiveBandwidthFraction;
            zi.weight_bytes =
                layout.fp8_all_gather
                    ? params * (1 + (dtype_element_bytes(st.recipe.weights) - 1) * (1 - linear_weight_share(c)))
                    : weight_bytes;
            zi.grad_bytes = grad_bytes, zi.microbatch_seconds = slowest, zi.microbatches = md;
            zi.keep_gathered = stack.fsdp_keep_gathered_with_pp && st.pp > 1;
            const Zero3Cost z = zero3_cost(zi, ic);
            zero3_seconds = z.seconds;
            zero3_hidden = z.seconds - z.exposed;
            dp_seconds = z.replica_seconds;  // HSDP: the gradient all-reduce across replicas, behind the backward
            dp_hidden = std::min(dp_seconds, backward_window);
        }
    }

    // A stack that syncs the tied embedding between the first and the head stage after the backward (step_stages.h).
    // One all-reduce between the pair, priced as every collective (step_collective_seconds).
    if (stack.grad_sync.tied_after_backward && !lora) {
        const collectives::Placement pair =
            st.gpus <= node ? collectives::Placement{2, 1} : collectives::Placement{1, 2};
        dp_seconds +=
            step_collective_seconds(Kind::AllReduce,
                                    tied_embedding_sync_bytes(c, stages, static_cast<double>(c.vocab_size) * h / t,
                                                              stack.grad_sync.fp32 ? 4.0 : grad_element_bytes),
                                    ic, pair, kCollectiveBandwidthFraction);
    }

    // ---------------------------------------------------------------- optimizer step
    // Reads the gradient, reads and writes the master weights and states, writes the working weights.
    const BytesPerParam256 bpp = bytes_per_param_256(st.recipe);
    const double update_bytes_per_param =
        static_cast<double>(2 * (bpp.master_weights + bpp.optimizer_states) + bpp.gradients + bpp.weights) / 256;
    const double optimizer_params =
        lora ? lora_params_gpu / static_cast<double>(st.zero >= 1 ? dp : 1) : static_cast<double>(mem.params_optimizer);
    const double optimizer_seconds = optimizer_params * update_bytes_per_param / hbm;

    // ---------------------------------------------------------------- totals
    const double per_layer_split_tp = layer_tp_seconds * md * static_cast<double>(slowest_layers);
    const double per_layer_split_mem =
        ((layer_memory_seconds + layer_sp_copy_seconds) * static_cast<double>(slowest_layers)) * md;
    const double per_layer_split_ep = layer_ep_seconds * md * static_cast<double>(slowest_layers);
    const double per_layer_split_sync = layer_sync_seconds * md * static_cast<double>(slowest_layers);
    const double per_layer_split_cast = layer_cast_seconds * md * static_cast<double>(slowest_layers);
    const double per_layer_split_cp = layer_cp_seconds * md * static_cast<double>(slowest_layers);
    const double tp_hidden_step = layer_tp_hidden * md * static_cast<double>(slowest_layers);
    const double cp_hidden_step = (layer_cp.total_s - layer_cp.exposed_s) * md * static_cast<double>(slowest_layers);
    // The compute under every hidden NCCL collective runs slower beside it (overlap_contention.h); TP overlap moves
    // its chunks outside NCCL (copy engines for async TP and TE's ring exchange), so it is not charged.
    const double contention_seconds = overlap_contention_seconds(cp_hidden_step + dp_hidden + zero3_hidden);
    StepResult r;
    r.breakdown = {
        {"matmul", "matmuls (forward, backward, recompute)",
         compute_seconds - per_layer_split_tp - per_layer_split_mem - per_layer_split_ep - per_layer_split_sync -
             per_layer_split_cast - per_layer_split_cp,
         true},
        {"memory_bound", "norms, softmax, dropout, elementwise (HBM)", per_layer_split_mem, true},
        {"fp8_cast", "FP8 casts, transposes and amax (HBM)",
         per_layer_split_cast + weight_cast_seconds * static_cast<double>(slowest_layers), true},
        {"tp_comm", sp ? "sequence-parallel all-gather / reduce-scatter" : "tensor-parallel all-reduce",
         per_layer_split_tp, true},
        {"tp_comm_hidden", "tensor-parallel communication (overlapped with GEMMs)", tp_hidden_step, false},
        {"ep_comm", "expert-parallel all-to-all (MoE)", per_layer_split_ep, true},
        {"cp_comm", "context-parallel K, V exchange (exposed)", per_layer_split_cp, true},
        {"cp_comm_hidden", "context-parallel K, V exchange (overlapped with attention)", cp_hidden_step, false},
        {"moe_sync", "MoE host time: dispatch sync, per-expert launches", per_layer_split_sync, true},
        {"bubble", "pipeline bubble", bubble_seconds, true},
        {"pp_comm", "pipeline point-to-point sends", p2p_seconds, true},
        {"dp_comm", "data-parallel gradient reduction (exposed)", dp_seconds - dp_hidden, true},
        {"dp_comm_hidden", "data-parallel gradient reduction (overlapped)", dp_hidden, false},
        {"zero3_comm", "ZeRO-3 weight gathers (exposed)", zero3_seconds - zero3_hidden, true},
        {"zero3_comm_hidden", "ZeRO-3 weight gathers (overlapped)", zero3_hidden, false},
        {"optimizer", "optimizer step (HBM)", optimizer_seconds, true},
        {"grad_accum", "fp32 gradient accumulation and norm passes (HBM)", reduction.accumulate_seconds, true},
        {"overlap_contention", "compute slowed by the collectives it hides", contention_seconds, true},
    };
    // The last stage's output layer is inside `matmul` (its share of the slowest stage).
    double step = 0;
    for (const StepComponent& part : r.breakdown)
        if (part.exposed) step += part.seconds;
    r.step_seconds = step;
    r.dp = dp;
    r.microbatches = m;
    r.global_batch = st.global_batch;
    r.busiest_stage_layers = slowest_layers;
    r.microbatch_seconds = slowest;
    r.bubble_fraction = bubble_fraction;
    const double layer_flops_all = mm_flops;
    double mm_time_all = mm_seconds;
    r.matmul_efficiency = layer_flops_all / (mm_time_all * peak);
    const double step_tokens = static_cast<double>(st.global_batch) * s;
    r.tokens_per_second = step_tokens / step;
    r.peak_flops_per_s = peak;
    const double gpus = static_cast<double>(st.gpus);
    r.model_flops_per_s_per_gpu = counted.model_per_token * r.tokens_per_second / gpus;
    const Utilization u = utilization(counted.model_per_token, counted.training_per_token, counted.six_n,
                                      r.tokens_per_second, gpus, peak);
    r.mfu = u.mfu;
    r.hfu = u.hfu;
    if (lora) {
        // LoRA's useful work is the forward, the input gradients and the adapters (finetune.h), not 6N: scale the
        // numerators by what the matmuls run against what full training would run.
        const double ratio = (L * mm_flops + head.forward_flops * head.passes) /
                             (L * mm_flops_trained + head.forward_flops * (head.passes + 1));
        r.model_flops_per_s_per_gpu *= ratio, r.mfu *= ratio, r.hfu *= ratio;
    }
    if (!std::isfinite(r.step_seconds) || !(r.step_seconds > 0))
        throw InputError("model", "the step time is not representable for this setup");
    return r;
}

}  // namespace tally
