// torchtitan's tensor-parallel plan with sequence parallelism, what it moves beyond Megatron's count (step.cpp prices
// 4 all-gather + reduce-scatter pairs a layer, Korthikanti et al. 2022): the gathers its per-op selective activation
// checkpointing replays, and the float8 tensorwise plan's gathers in FP8 (models/llama3/parallelize_llama.py, apply_tp
// and _save_list, at torchtitan 820504e, the commit of its June 2025 async-TP benchmarks).
#pragma once

#include <string_view>

namespace tally {

// Sequence-parallel all-gathers per layer that per-op SAC runs again in the backward: the attention's and the MLP's
// gathered inputs (PrepareModuleInput, Shard(1) -> Replicate) are not in _save_list, which keeps
// reduce_scatter_tensor only; the checkpoint replays every op it did not save, collectives included (torchtitan
// PR #1672 measured the replayed all-to-all of MoE). Without sequence parallelism the TP input is replicated: none.
double per_op_sac_regathers_per_layer(bool sequence_parallel);

// Bytes per element of the sequence-parallel all-gathers. torchtitan with float8 tensorwise applies
// Float8ColwiseParallel / Float8RowwiseParallel / PrepareFloat8ModuleInput (enable_float8_tensorwise_tp): the inputs
// are cast to FP8 before the forward gather and the output gradients before the backward gather (torchao
// float8_tensor_parallel.py at 6243040, NoopFwToFloat8BwDynamic); reduce-scatters stay in `activation_bytes`. Rowwise
// recipes and other stacks gather in `activation_bytes` (torchtitan docs/float8.md at 820504e: float8 all-gather "for
// TP (by default for Float8Linear)"; "with rowwise scaling, all distributed communication is done in high precision").
double sp_gather_element_bytes(std::string_view stack_id, std::string_view precision, double activation_bytes,
                               double fp8_bytes);

}  // namespace tally
