#include "tally/step/step_fsdp.h"

#include <algorithm>

#include <string>

#include "tally/base/error.h"
#include "tally/memory/finetune.h"
#include "tally/comm/overlap.h"
#include "tally/comm/ring.h"
#include "tally/step/step.h"

namespace tally {

double fsdp_exposed_seconds(std::int64_t layers, double forward_seconds, double backward_seconds, double gather_seconds,
                            double scatter_seconds) {
    if (layers < 1 || !(gather_seconds > 0 || scatter_seconds > 0)) return 0;
    // When each gather fits in a layer's forward and a gather plus a reduce-scatter in its backward, the timeline
    // below waits only for the first gather and the last reduce-scatter: that answer without laying it out (the
    // planner's hot path; tests/engine/step/step_fsdp_test.cpp checks it against the timeline).
    if (gather_seconds <= forward_seconds && gather_seconds + scatter_seconds <= backward_seconds)
        return gather_seconds + scatter_seconds;
    overlap::Input in;
    in.scheme = overlap::Scheme::Fsdp;
    in.layers = std::min<std::int64_t>(layers, 1024);
    // The timeline needs positive compute; a layer without work (never in step time) still orders the lanes.
    in.forward_seconds = std::max(forward_seconds, 1e-12);
    in.backward_seconds = std::max(backward_seconds, 1e-12);
    in.gather_seconds = std::max(gather_seconds, 1e-15);
    in.scatter_seconds = std::max(scatter_seconds, 1e-15);
    in.overlap = true;  // FSDP2 prefetches the next gather (forward and backward) by default
    const overlap::Timeline t = overlap::lay_out(in);
    return t.exposed_comm_seconds * static_cast<double>(layers) / static_cast<double>(in.layers);
}

Zero3Cost zero3_cost(const Zero3Input& in, const Interconnect& ic) {
    Zero3Cost out;
    const std::int64_t shard = in.shard_group > 0 ? in.shard_group : in.dp;
    if (shard > in.dp || in.dp % shard != 0)
        throw InputError("shard_group", "shard_group (" + std::to_string(in.shard_group) +
                                            ") must divide the data-parallel degree " + std::to_string(in.dp));
    const auto domains = [](std::int64_t ranks, std::int64_t per_node) { return (ranks + per_node - 1) / per_node; };
    // Shard peers are tp ranks apart and contiguous in the data-parallel order (FSDP2's 2-D mesh: replicate
    // outer, shard inner), so a shard group stays in a node when tp·shard fits in it.
    const std::int64_t per_node = std::min(shard, std::max<std::int64_t>(in.node / in.tp, 1));
    // Each collective priced where the step prices every one (step_collective_seconds).
    const collectives::Placement shard_placement{per_node, domains(shard, per_node)};
    const double layers = static_cast<double>(in.layers);
    using collectives::Kind;
    const double gather =
        step_collective_seconds(Kind::AllGather, in.weight_bytes / layers, ic, shard_placement, in.link_fraction);
    const double scatter =
        step_collective_seconds(Kind::ReduceScatter, in.grad_bytes / layers, ic, shard_placement, in.link_fraction);
    // Forward one third of a layer's micro-batch time, backward two thirds (2x the forward's matmuls).
    const double layer_seconds = in.microbatch_seconds / layers;
    const double exposed = fsdp_exposed_seconds(in.layers, layer_seconds / 3, 2 * layer_seconds / 3, gather, scatter);
    if (in.keep_gathered) {
        out.seconds = layers * (gather + scatter);
        out.exposed = std::min(out.seconds, exposed);
    } else {
        out.seconds = in.microbatches * layers * (2 * gather + scatter);
        out.exposed = in.microbatches * exposed;
    }
    // HSDP: each GPU all-reduces its shard's gradients with the replicas holding the same shard (tp·shard ranks
    // apart: across nodes once tp·shard fills one).
    const std::int64_t replicas = in.dp / shard;
    if (replicas > 1) {
        const std::int64_t rep_per_node = std::min(replicas, std::max<std::int64_t>(in.node / (in.tp * shard), 1));
        out.replica_seconds =
            step_collective_seconds(Kind::AllReduce, in.grad_bytes / static_cast<double>(shard), ic,
                                    {rep_per_node, domains(replicas, rep_per_node)}, in.link_fraction);
    }
    return out;
}

double per_op_sac_extra_passes(std::string_view id, const ModelConfig& c, bool fp8_linears, bool sdpa_saved) {
    if (id == "attn_scores" || id == "attn_values") return sdpa_saved ? 0 : 1;  // an unsaved SDPA runs again
    if (id == "router") return 0;
    if (fp8_linears) return 1;  // _scaled_mm: never saved
    if (id == "qkv")            // wk, the second mm: its share of the fused q|k|v projection
        return static_cast<double>(c.kv_dim()) / static_cast<double>(c.q_dim() + 2 * c.kv_dim());
    if (id == "attn_out") return 1;                                  // wo, the fourth
    if (id == "mlp") return c.mlp == MlpKind::Gelu ? 0.5 : 1.0 / 3;  // w2 of (w1, w2); w3 of (w1, w3, w2)
    return 0;
}

bool sdpa_saved_by_op_sac(AttentionKernel kernel, const std::string& architecture) {
    // torchtitan's _save_list (models/llama3/infra/parallelize.py at 9dec370 and at 6fc499f, the torchao B200
    // table's commit) names aten._scaled_dot_product_flash_attention and _efficient_attention only; the cuDNN op,
    // which torchtitan puts first on compute capability 10.0 (PR #1196), joined it in PR #2095 (b39377f,
    // 2025-12-01, issue #2091: "to avoid recomputing attention during backward"), after the runs here that use it.
    return !(kernel == AttentionKernel::SdpaCudnnOnBlackwell && architecture == "blackwell");
}

double eager_extra_forward_bytes(const ModelConfig& c, double x_bytes, double ffn_bytes, double qk_bytes) {
    double extra = 0;
    // Two RMSNorms a layer; per 2-byte element eager moves 36 bytes = 18 activation passes, fused 2.
    if (c.norm == NormKind::RmsNorm) extra += 2 * (18 - 2) * x_bytes;
    // F.silu(w1(x)) * w3(x): silu reads and writes (2), the product reads 2 and writes 1 (3): 5 passes, fused 3.
    if (c.mlp != MlpKind::Gelu) extra += (5 - 3) * ffn_bytes;
    // apply_rotary_emb: x.float() (2-byte read, 4-byte write), complex product (4 + 4), type_as (4 + 2) = 20
    // bytes an element = 10 passes, fused 2.
    if (c.position == PositionKind::Rotary) extra += (10 - 2) * qk_bytes;
    return extra;
}

double async_tp_hidden_seconds(double one_collective, double linear_seconds) {
    return std::min(2 * one_collective, linear_seconds / 3);  // the forward: 2 collectives, a third of the GEMMs
}

LoraStepCost lora_step_cost(const ModelConfig& c, const LoraStepInput& in) {
    LoraStepCost out;
    LoraConfig lora;
    lora.rank = in.rank;
    lora.targets = in.targets != 0 ? in.targets : kLoraQ | kLoraV;  // PEFT's default for Llama
    const LoraParams params = lora_params(c, lora);                 // checks the rank and the targets
    const double r = static_cast<double>(in.rank), layers = static_cast<double>(c.num_layers);
    for (const LoraModule& m : params.modules) {
        const double in_dim = static_cast<double>(m.in), out_dim = static_cast<double>(m.out);
        // Column-parallel modules split out, row-parallel ones in: the wide side over tp either way.
        const double a_in = m.in >= m.out ? in_dim / in.tp : in_dim, b_out = m.out > m.in ? out_dim / in.tp : out_dim;
        const double visits = static_cast<double>(m.active) * static_cast<double>(m.layers) / layers;
        const double a_flops = 2 * in.tokens * r * a_in, b_flops = 2 * in.tokens * b_out * r;
        const double a_eff =
            matmul_efficiency(in.tokens, r, a_in, 1, in.peak, in.bytes_per_s, in.element_bytes, in.peak_fraction);
        const double b_eff =
            matmul_efficiency(in.tokens, b_out, r, 1, in.peak, in.bytes_per_s, in.element_bytes, in.peak_fraction);
        out.flops += visits * in.passes * (a_flops + b_flops);
        out.seconds += visits * in.passes * (a_flops / a_eff + b_flops / b_eff) / in.peak;
    }
    out.params_per_gpu = static_cast<double>(params.total) / in.tp;
    return out;
}

double linear_weight_share(const ModelConfig& c) {
    const double h = static_cast<double>(c.hidden_size), f = static_cast<double>(c.ffn_hidden_size);
    const double mats = c.mlp == MlpKind::Gelu ? 2 : 3;
    const double experts = c.is_moe() ? static_cast<double>(c.num_experts + c.num_shared_experts) : 1;
    const double attention = h * static_cast<double>(c.q_dim() + 2 * c.kv_dim()) + static_cast<double>(c.q_dim()) * h;
    const double linear = static_cast<double>(c.num_layers) * (attention + mats * h * f * experts);
    const double embeddings = static_cast<double>(c.vocab_size) * h * (c.tied_embeddings ? 1 : 2);
    return linear / (linear + embeddings);
}

}  // namespace tally
