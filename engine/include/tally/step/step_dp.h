// The data-parallel gradient reduction of one step for ZeRO stages 0-2 and the passes a stack makes over the
// gradients between micro-batches: how and when a stack reduces (GradSync, a StackProfile choice) and what that
// costs, per GPU. ZeRO-3's per-layer gathers stay in step.cpp.
#pragma once

#include <cstdint>

#include "tally/comm/collectives.h"

namespace tally {

// How a stack reduces data-parallel gradients; the default is PyTorch DDP / Megatron-Core: gradients in the
// recipe's dtype, bucketed behind the last backward pass.
struct GradSync {
    // Gradients accumulated across micro-batches and reduced in fp32: after each micro-batch's backward every bf16
    // gradient is added into an fp32 buffer, a separate memory-bound pass (nanotron FP32GradientAccumulator).
    bool fp32 = false;
    // With ZeRO-1/2 the whole gradient buffer is all-reduced in one call after the last backward (no bucketing, no
    // overlap), and the optimizer's updated shards are all-gathered after the step, both on the critical path.
    bool zero_after_backward = false;
    // With pipeline parallelism a tied input embedding (first stage) and output layer (head stage) all-reduce their
    // gradients between the two stages after the data-parallel sync, exposed (nanotron sync_tied_weights_gradients).
    bool tied_after_backward = false;
    // Gradients reduced in buckets of this many bytes as the backward fills them: PyTorch DDP's bucket_cap_mb
    // default of 25 MiB (torch/nn/parallel/distributed.py); each bucket is one collective with its own latency.
    double bucket_bytes = 25.0 * 1024 * 1024;
    // When > 0, buckets of max(bucket_params, bucket_params_per_rank x dp) parameters instead, and one bucket
    // without overlap (Megatron-Core DistributedDataParallel: max(40000000, 1000000 * dp_size); bucket_size None
    // unless overlap_grad_reduce).
    double bucket_params = 0;
    double bucket_params_per_rank = 0;
};

struct DpReductionInput {
    std::int64_t dp = 1, zero = 0, microbatches = 1;
    double params = 0;                 // parameters on this GPU
    double grad_element_bytes = 2;     // the recipe's gradient dtype
    double weight_element_bytes = 2;   // the recipe's working-weight dtype
    double link_bytes_per_s = 0;       // the data-parallel group's per-rank ring bandwidth (after efficiency)
    collectives::Placement placement;  // the data-parallel group: ranks per node x nodes (NCCL's latency model)
    double backward_window_s = 0;      // the last micro-batch's backward on this stage
    bool overlap = true;               // StepLayout::overlap_grad_reduce
    double hbm_bytes_per_s = 0;        // streaming bandwidth for the fp32 accumulation passes
    GradSync sync;
    // Parameters whose gradients are complete only when the backward ends (the input embedding, the last layer the
    // backward reaches; tied to the output layer, its hook fires only then): their share cannot overlap.
    double last_grad_params = 0;
};

struct DpReduction {
    double seconds = 0;             // the reduction (and ZeRO's weight all-gather), exposed + hidden
    double hidden = 0;              // overlapped with the backward pass
    double accumulate_seconds = 0;  // fp32 accumulation and gradient-norm passes (HBM), exposed
};

DpReduction dp_reduction(const DpReductionInput& in);

}  // namespace tally
