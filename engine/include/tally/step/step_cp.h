// Context parallelism in the step time: the K, V exchange among the cp GPUs that share a sequence, and how much of
// it hides behind the attention blocks (step.cpp calls this per layer). The causal work split is
// context::causal_work, the K, V block size context::ring_step (context.h).
#pragma once

#include <cstdint>

namespace tally {

// How a stack moves K and V among the cp ranks of a sequence: its profile's cp_exchange (step.h), megatron-te the
// ring, torchtitan PyTorch's all-gather, the rest (generic included, no communication overlap) the exposed all-gather.
enum class CpExchange {
    // Ring attention (Liu et al. 2023, arXiv:2310.01889): cp−1 steps each pass one K, V block to the next rank while
    // the current block computes; the backward passes K, V and dK, dV. Transformer Engine's cp_comm_type "p2p", the
    // Megatron-Core default (TE attention.py, AttnFuncWithCPAndKVP2P).
    Ring,
    // All-gather K, V once, overlapped with the local block only; the backward gathers again and passes dK, dV
    // around the ring: PyTorch's context_parallel (torch/distributed/tensor/experimental/_attention.py,
    // _ContextParallelOptions.rotate_method = ALL_GATHER by default, dkv_rotater ALL_TO_ALL), which torchtitan uses.
    AllGatherLocalOverlap,
    // All-gather K, V before attention, exposed (Llama 3 paper, Dubey et al. 2024, sec. 3.3.2: "the all-gather
    // communication latency is exposed in the critical path"); the backward gathers again and reduce-scatters dK, dV.
    AllGather,
};

// The transfers' seconds come priced by step_collective_seconds (step.h), so the `collective` method gives the same
// for each; one block is K and V of one rank's seq/cp positions, this GPU's heads, one micro-batch.
struct CpLayerInput {
    std::int64_t cp = 1;
    CpExchange exchange = CpExchange::Ring;
    double hop_s = 0;                 // one block to the next rank: a send/recv over the group
    double double_hop_s = 0;          // two blocks' bytes (K, V with dK, dV; or fp32 dK, dV): a send/recv
    double gather_s = 0;              // all-gather of every rank's block (cp blocks out)
    double reduce_scatter_s = 0;      // reduce-scatter of cp blocks' dK, dV
    double attention_forward_s = 0;   // one forward of the layer's attention cores, one micro-batch
    double attention_backward_s = 0;  // its backward (QKᵀ recomputed inside)
    int forward_passes = 1;           // 2 under full recomputation (the forward's exchange repeats)
};
struct CpLayerCost {
    double total_s = 0;    // all the K, V (and dK, dV) traffic of one layer, one micro-batch
    double exposed_s = 0;  // what the attention blocks do not hide
};
// One layer's context-parallel exchange; zero when cp == 1.
CpLayerCost context_parallel_layer(const CpLayerInput& in);

// K, V heads a stack exchanges per query head group: torchtitan's Llama repeats K, V to the query heads before
// scaled_dot_product_attention (models/llama/model.py, Attention.forward: repeat_kv), so PyTorch's context_parallel
// gathers and rotates them at the query-head count; other stacks pass the kv heads. repeat_kv: the profile's
// cp_repeat_kv (step.h). Returns heads / kv_heads or 1.
double cp_kv_repeat(bool repeat_kv, double heads, double kv_heads);

struct CpMergeInput {
    std::int64_t cp = 1;
    CpExchange exchange = CpExchange::Ring;
    double q_elements = 0;   // one rank's attention output: seq/cp positions × its query heads × head dim
    double kv_elements = 0;  // its K and V together, as exchanged
    int forward_passes = 1;  // 2 under full recomputation
};
// HBM bytes of one layer's ring-merge bookkeeping, one micro-batch: PyTorch's context_parallel merges each ring
// step's partial output through fp32 (out, logsumexp) and accumulates dQ, dK, dV in fp32, as separate elementwise
// kernels; Transformer Engine's ring fuses its correction into the attention kernels (0 for the other stacks).
double cp_merge_bytes(const CpMergeInput& in);

}  // namespace tally
