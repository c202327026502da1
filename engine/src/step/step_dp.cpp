#include "tally/step/step_dp.h"

#include <algorithm>
#include <cmath>

#include "tally/comm/ring.h"

namespace tally {

DpReduction dp_reduction(const DpReductionInput& in) {
    DpReduction out;
    if (in.sync.fp32 && in.hbm_bytes_per_s > 0) {
        // FP32GradientAccumulator._accumulate_grad: after every micro-batch's backward, fp32_grad.add_(half.grad)
        // reads the 16-bit gradient and the fp32 buffer and writes the buffer; clip_grad_norm (optim/clip_grads.py at
        // c252843) reads it for the norm, then multiplies every buffer by the clamped coefficient (read and write).
        const double per_microbatch = in.grad_element_bytes + 4 + 4;
        out.accumulate_seconds =
            in.params * (static_cast<double>(in.microbatches) * per_microbatch + 4 + 8) / in.hbm_bytes_per_s;
    }
    if (in.dp <= 1) return out;
    // PyTorch DDP (Li et al. 2020, sec. 3.2.3; torch.nn.parallel.DistributedDataParallel notes): a bucket is
    // reduced once every gradient in it is ready, and buckets follow the order gradients became ready in the first
    // iteration, so the input embedding's gradient, produced by the backward's last op, is reduced after it ends.
    const double tail_share = in.params > 0 ? std::clamp(in.last_grad_params / in.params, 0.0, 1.0) : 0;
    const std::int64_t dp = in.dp;
    const double bw = in.link_bytes_per_s;
    const double grad_element = in.sync.fp32 ? 4.0 : in.grad_element_bytes;
    const double grad_bytes = in.params * grad_element;
    const double weight_bytes = in.params * in.weight_element_bytes;
    // Buckets: each one collective of its share of the bytes, at NCCL's latency for the group (nccl_cost.h).
    double buckets = 1;
    if (in.sync.bucket_params > 0) {
        if (in.overlap)
            buckets = std::ceil(
                in.params / std::max(in.sync.bucket_params, in.sync.bucket_params_per_rank * static_cast<double>(dp)));
    } else if (in.sync.bucket_bytes > 0) {
        buckets = std::ceil(grad_bytes / in.sync.bucket_bytes);
    }
    buckets = std::max(buckets, 1.0);
    const auto all_reduce = [&](double bytes, double n) {
        return n * nccl_all_reduce_seconds(bytes / n, in.placement, bw);
    };
    const auto gather = [&](double bytes, double n) { return n * nccl_gather_seconds(bytes / n, in.placement, bw); };
    if (in.zero >= 1 && in.sync.zero_after_backward) {
        // nanotron v0.5 (trainer.py): with ZeRO-1 and fp32 accumulation no DDP wrapper is built, so
        // sync_gradients_across_dp all-reduces the whole fp32 buffer (reduce_scatter=False) after
        // train_batch_iter returns; ZeroDistributedOptimizer.step then all-gathers the updated weights.
        out.seconds = all_reduce(grad_bytes, 1) + gather(weight_bytes, 1);
        out.hidden = 0;
    } else {
        // ZeRO-0: all-reduce, of fp32 gradients with DDP's fp32 communication hook (nanotron get_fp32_accum_hook:
        // each bucket all-reduced as the backward produces it); ZeRO-1/2: reduce-scatter of gradients + all-gather of updated weights (same bytes
        // when the dtypes match; Rajbhandari et al. 2020, sec. 7). Bucketed reduction overlaps the last
        // micro-batch's backward (PyTorch DDP, Li et al. 2020; Megatron-LM --overlap-grad-reduce); without
        // overlap it starts after the last backward: Megatron-LM's train_step (2021-2022) calls
        // allreduce_gradients() after forward_backward_func returns; DeepSpeed's TrainSchedule issues
        // ReduceTiedGrads, ReduceGrads, OptimizerStep after the final step (deepspeed/runtime/pipe/schedule.py).
        out.seconds = in.zero == 0 ? all_reduce(grad_bytes, buckets)
                                   : gather(grad_bytes, buckets) + gather(weight_bytes, buckets);
        out.hidden = in.overlap ? std::min(out.seconds * (1 - tail_share), in.backward_window_s) : 0;
        if (in.zero == 2 && in.microbatches > 1) {
            // ZeRO-2 keeps only its shard of the gradients, so every micro-batch's gradients are reduce-scattered
            // as its backward produces them, not once at the accumulation boundary as ZeRO-1 does (DeepSpeed
            // stage_1_and_2.py, reduce_ready_partitions_and_remove_grads: `partition_gradients or
            // is_gradient_accumulation_boundary`; FSDP SHARD_GRAD_OP outside no_sync): m - 1 more, each behind
            // its own micro-batch's backward.
            const double one_pass = gather(grad_bytes, buckets);
            const double extra = static_cast<double>(in.microbatches - 1) * one_pass;
            out.seconds += extra;
            if (in.overlap)
                out.hidden += static_cast<double>(in.microbatches - 1) * std::min(one_pass, in.backward_window_s);
        }
    }
    return out;
}

}  // namespace tally
