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
// fp8_tensorwise_gather: the profile's fp8_tensorwise_sp_gather (step.h).
double sp_gather_element_bytes(bool fp8_tensorwise_gather, std::string_view precision, double activation_bytes,
                               double fp8_bytes);

// One layer's sequence-parallel collectives on one GPU, one micro-batch: what sp_layout_copy_bytes reads.
struct SpCollectives {
    double gathers = 0;                // all-gathers, recomputed ones included
    double scatters = 0;               // reduce-scatters
    double fused_gathers = 0;          // of those, fused into a matmul by async TP (no layout copy)
    double fused_scatters = 0;         // likewise
    double elements = 0;               // elements of the gathered (pre-scatter) activation: tokens · h
    double gather_element_bytes = 0;   // bytes per element gathered (FP8 under torchtitan's float8 tensorwise plan)
    double scatter_element_bytes = 0;  // bytes per element reduce-scattered
    double tp = 1;                     // ranks of the tensor-parallel group
};

// HBM bytes of the layout copies beside torchtitan's sequence-parallel collectives. Its activations are batch-first
// [b, s, h] and its plan shards the sequence (Shard(1)), so DTensor gathers and scatters on dim 1: funcol's
// all_gather_tensor gathers on dim 0, then torch.cat(torch.chunk(res, group_size, dim=0), dim=gather_dim);
// reduce_scatter_tensor first runs torch.cat(torch.chunk(self, group_size, dim=scatter_dim)) (torch
// distributed/_functional_collectives.py, unchanged from 2023 to the runs' torch 38410cf9; the batch-size-1 view
// shortcut came in pytorch PR #169404, December 2025). Each cat reads and writes the whole gathered activation.
// torchtitan says so beside its plan ("we can accelerate Sequence Parallel by folding (and unfolding) the batch
// dimension and the sequence dimension", apply_tp at 820504e; PR #437: "an extra aten.cat after each collective").
// Async TP's micro-pipeline pass matches the split-cat pattern and its fused ops take the shard restrided instead
// (torch/_inductor/fx_passes/micro_pipeline_tp.py, restride_A_shard_for_fused_all_gather_matmul): no cat there, but
// its fused ops move bytes of their own on the compute stream (torch/distributed/_symmetric_memory/__init__.py):
// fused_all_gather_matmul copies the local shard into its slot of the output and into the peer-visible buffer
// (_pipelined_all_gather_and_consume), fused_matmul_reduce_scatter sums the tp stacked partial products in one
// reduction kernel (reduce_fn over stacked_partials: reads the whole product, writes 1/tp of it).
// Megatron keeps activations sequence-first [s, b, h] and gathers on dim 0: no copy (0 unless batch_first, the
// profile's sp_batch_first, step.h).
double sp_layout_copy_bytes(bool batch_first, const SpCollectives& layer);

// FLOP-weighted rate of the query, key and value projections run as three GEMMs of one input (torchtitan's Llama:
// self.wq, self.wk, self.wv, "xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)", models/llama3/model.py at 820504e;
// Inductor batches no linears by default: pytorch PR #135922, September 2024, emptied pre_grad_fusion_options, whose
// batch_linear_lhs fused linears sharing an input). Each GEMM reads the whole input, so under grouped-query attention
// the key and value GEMMs (kv_n columns a rank: 128 for Llama 3 8B and 70B at TP 8) are bound by that read; Megatron's
// fused linear_qkv reads it once for all q_n + 2 kv_n columns. q_eff, kv_eff: matmul_efficiency at those widths; each
// GEMM's FLOPs are proportional to its width.
double separate_qkv_efficiency(double q_n, double kv_n, double q_eff, double kv_eff);

}  // namespace tally
