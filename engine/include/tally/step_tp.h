// torchtitan's tensor-parallel plan with sequence parallelism, what it moves beyond Megatron's count (step.cpp prices
// 4 all-gather + reduce-scatter pairs a layer, Korthikanti et al. 2022): the gathers its per-op selective activation
// checkpointing replays (models/llama3/parallelize_llama.py, _save_list, at torchtitan 820504e, the commit of its
// June 2025 async-TP benchmarks).
#pragma once

namespace tally {

// Sequence-parallel all-gathers per layer that per-op SAC runs again in the backward: the attention's and the MLP's
// gathered inputs (PrepareModuleInput, Shard(1) -> Replicate) are not in _save_list, which keeps
// reduce_scatter_tensor only; the checkpoint replays every op it did not save, collectives included (torchtitan
// PR #1672 measured the replayed all-to-all of MoE). Without sequence parallelism the TP input is replicated: none.
double per_op_sac_regathers_per_layer(bool sequence_parallel);

}  // namespace tally
