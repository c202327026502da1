// The run's switches for the step-time model, and the software stacks that set their defaults. A switch is one
// documented behaviour (a kernel, an overlap, a reduction schedule) a reader can set; a stack
// (content/presets/stacks/<id>.json) is only the defaults its framework's own default configuration gives them,
// each with its source. No switch exists for one stack's sake: every one is an argument of step_time and plan.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tally/step/step_cp.h"
#include "tally/step/step_dp.h"

namespace tally {

// The attention kernel that runs when flash_attention is on.
enum class AttentionKernel {
    FlashAttention2,  // Dao 2023: the flash-attn package, PyTorch SDPA's flash backend
    FusedHopper,      // cuDNN fused attention / FlashAttention-3: warp-specialised, asynchronous (Hopper and later)
    SdpaCudnnOnBlackwell,  // PyTorch SDPA with cuDNN first on sm100 and flash (FA2) before it
};

// The fields behind kStepSwitches (below), which names each as the API and the stack files do.
struct StepSwitches {
    AttentionKernel attention = AttentionKernel::FlashAttention2;
    // Tensor-parallel all-gather / reduce-scatter overlapped with the linear layers' GEMMs (Transformer Engine
    // userbuffers, Megatron-Core --tp-comm-overlap); needs sequence parallelism.
    bool tp_comm_overlap = false;
    // Sequence-parallel all-gathers in FP8 under the float8 tensorwise recipe (step_tp.h, sp_gather_element_bytes);
    // reduce-scatters stay 16-bit.
    bool fp8_tensorwise_sp_gather = false;
    // Batch-first [b, s, h] activations sharded on the sequence dim: a copy beside each sequence-parallel
    // collective (step_tp.h, sp_layout_copy_bytes).
    bool sp_batch_first = false;
    // How K and V move among the context-parallel ranks of a sequence (step_cp.h).
    CpExchange cp_exchange = CpExchange::AllGather;
    // K, V repeated to the query heads before attention, so context parallelism exchanges them at the query-head
    // count (step_cp.h, cp_kv_repeat).
    bool cp_repeat_kv = false;
    // Selective recomputation as a per-op policy (every second matmul of a block and the elementwise ops
    // recomputed; step_fsdp.h), not the attention core only (Korthikanti et al. 2022).
    bool per_op_sac = false;
    // Model code in plain PyTorch: elementwise chains run as separate kernels unless compiled (step_fsdp.h).
    bool eager_elementwise = false;
    // With pipeline parallelism FSDP keeps the gathered weights across micro-batches and reduce-scatters once a
    // step: gathers once a step instead of once per micro-batch.
    bool fsdp_keep_gathered_with_pp = false;
    // How data-parallel gradients are accumulated, bucketed and reduced (step_dp.h).
    GradSync grad_sync{};
    // Routed experts through torch._grouped_mm: on Blackwell in BF16 at its measured rate (step_moe.h).
    bool torch_grouped_mm = false;
    // Routed experts issued one local expert at a time from the host (Transformer Engine's GroupedLinear): a small
    // MoE layer waits on the launches (step_moe.h, moe_launch_bound_seconds).
    bool expert_host_launches = false;
    // Query, key and value projections as three GEMMs, not one fused q|k|v GEMM (step_tp.h).
    bool separate_qkv = false;
    // Looped pipeline schedules as a lock-step grid of time steps (torch.distributed.pipelining; step_pp.h).
    bool pipeline_lockstep = false;
    // Pipeline stages split by compute cost with the LM head counted, not layers evenly (step_stages.h).
    bool cost_balanced_stages = false;
    // Bytes moved per logit element by the fp32 cross-entropy, forward and backward (0: 5 fp32 passes, 20 bytes).
    double logits_bytes = 0;
    // The gated MLP's activation runs eagerly (silu, then the product: 5 passes over the f-wide tensor, fused 3)
    // while the norms and rotary are fused kernels.
    bool eager_glu = false;
};

// A named software stack: the defaults its framework's default configuration gives the switches.
struct StackProfile {
    std::string id;
    std::string name;
    StepSwitches defaults;
};

// One switch as the API and the stack files name it.
struct StepSwitchInfo {
    const char* name;
    const char* kind;    // "boolean", "number" or "enum"
    const char* values;  // enum: "a|b|c"; otherwise ""
    const char* doc;
};
// Every switch, in the order the contract lists them (the API declares its arguments from this table).
inline constexpr StepSwitchInfo kStepSwitches[] = {
    {"attention_kernel", "enum", "flash-attn-2|cudnn-fused|sdpa",
     "attention kernel under flash_attention: the flash-attn 2 package, cuDNN fused attention / FlashAttention-3 "
     "(Hopper and later), or PyTorch SDPA (cuDNN first on Blackwell, flash before)"},
    {"tp_comm_overlap", "boolean", "",
     "TP communication overlap (Megatron-Core --tp-comm-overlap, TE userbuffers): the sequence-parallel "
     "collectives hidden behind the linear GEMMs"},
    {"fp8_tensorwise_sp_gather", "boolean", "",
     "sequence-parallel all-gathers in FP8 under a per-tensor FP8 recipe (torchao Float8ColwiseParallel)"},
    {"sp_batch_first", "boolean", "",
     "batch-first activations sharded on the sequence dim: a copy beside each sequence-parallel collective"},
    {"cp_exchange", "enum", "all-gather|ring|all-gather-overlap",
     "context parallelism's K, V exchange: an exposed all-gather, TE's p2p ring, or PyTorch's all-gather "
     "overlapped with the local block"},
    {"cp_repeat_kv", "boolean", "", "context parallelism exchanges K, V after repeating them to the query heads"},
    {"per_op_sac", "boolean", "",
     "selective recomputation as a per-op policy (every second matmul and the elementwise ops), not the attention "
     "core only"},
    {"eager_elementwise", "boolean", "",
     "plain-PyTorch model code: elementwise chains as separate kernels unless compile is on"},
    {"fsdp_keep_gathered_with_pp", "boolean", "",
     "FSDP with pipeline parallelism keeps gathered weights across micro-batches (reshard_after_forward False)"},
    {"grad_fp32", "boolean", "",
     "gradients accumulated across micro-batches and reduced in fp32 (a separate HBM pass per micro-batch)"},
    {"grad_reduce_after_backward", "boolean", "",
     "ZeRO-1/2: the whole gradient buffer all-reduced in one call after the last backward, then the updated "
     "shards all-gathered, both exposed"},
    {"tied_grad_after_backward", "boolean", "",
     "pipeline parallelism: tied embedding and output-layer gradients all-reduced between their stages, exposed"},
    {"bucket_bytes", "number", "",
     "gradient buckets of this many bytes, one collective each (PyTorch DDP bucket_cap_mb)"},
    {"bucket_params", "number", "",
     "gradient buckets of at least this many parameters instead (0: bucket_bytes; Megatron-Core, DeepSpeed)"},
    {"bucket_params_per_rank", "number", "",
     "gradient buckets of at least this many parameters per data-parallel rank (Megatron-Core)"},
    {"torch_grouped_mm", "boolean", "", "MoE experts through torch._grouped_mm (its measured Blackwell BF16 rate)"},
    {"expert_host_launches", "boolean", "",
     "MoE experts launched one local expert at a time from the host (TE GroupedLinear)"},
    {"separate_qkv", "boolean", "", "query, key and value as three GEMMs, not one fused q|k|v GEMM"},
    {"pipeline_lockstep", "boolean", "",
     "looped pipeline schedules as a lock-step grid of time steps (torch.distributed.pipelining)"},
    {"cost_balanced_stages", "boolean", "", "pipeline stages split by compute cost, LM head counted"},
    {"logits_bytes", "number", "",
     "bytes the cross-entropy moves per logit element, forward and backward (0: 5 fp32 passes, 20 bytes)"},
    {"eager_glu", "boolean", "", "the gated MLP's activation and product as separate eager kernels"},
};

// Sets the switch `name` from a JSON value (a boolean, a number, an enum string; "true"/"false" and decimal text
// too, as the CLI sends them); InputError naming `name` for an unknown switch or a value out of range.
void set_step_switch(StepSwitches& switches, std::string_view name, const nlohmann::json& value);
// The value of switch `name` as JSON (the form set_step_switch reads).
nlohmann::json step_switch_value(const StepSwitches& switches, std::string_view name);

// The stack files (content/presets/stacks), "generic" first; InputError naming "stack" for an unknown id
// ("" is generic).
const StackProfile& stack_profile(const std::string& id);
const std::vector<StackProfile>& stack_profiles();
// A stack file's object ({name, defaults: {switch: {value, source}}}) as a profile; InputError naming
// "stack.<switch>" for an unknown switch, a bad value or a default without its source.
StackProfile stack_from_json(const std::string& id, const nlohmann::json& file);

}  // namespace tally
