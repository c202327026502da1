// Context parallelism's K, V exchange per layer (step_cp.h).
#include "tally/step/step_cp.h"

#include <algorithm>

namespace tally {

CpLayerCost context_parallel_layer(const CpLayerInput& in) {
    CpLayerCost out;
    if (in.cp <= 1) return out;
    const double steps = static_cast<double>(in.cp - 1);
    const double hop = in.hop_s, gather = in.gather_s;  // one block to the next rank; every rank's block to all
    // One block's compute: balanced causal chunks give each ring step 1/cp of the rank's attention (context.h).
    const double block_forward = in.attention_forward_s / static_cast<double>(in.cp);
    const double block_backward = in.attention_backward_s / static_cast<double>(in.cp);
    const double passes = static_cast<double>(in.forward_passes);
    double total = 0, exposed = 0;
    switch (in.exchange) {
        case CpExchange::Ring: {
            const double back_hop = in.double_hop_s;  // K, V and dK, dV
            total = passes * steps * hop + steps * back_hop;
            exposed =
                passes * steps * std::max(0.0, hop - block_forward) + steps * std::max(0.0, back_hop - block_backward);
            break;
        }
        case CpExchange::AllGatherLocalOverlap: {
            // dK, dV travel in fp32: the backward accumulates them in float32 (_ContextParallelOptions.convert_to_f32
            // True, accum_dtype) and rotates the accumulators (_templated_ring_attention_backward, dkv_rotater).
            const double dkv_hop = in.double_hop_s;
            total = passes * gather + gather + steps * dkv_hop;
            exposed = passes * std::max(0.0, gather - block_forward) + std::max(0.0, gather - block_backward) +
                      steps * std::max(0.0, dkv_hop - block_backward);
            break;
        }
        case CpExchange::AllGather:
            total = exposed = passes * gather + gather + in.reduce_scatter_s;  // backward: gather K, V; scatter dK, dV
            break;
    }
    out.total_s = total;
    out.exposed_s = exposed;
    return out;
}

double cp_kv_repeat(bool repeat_kv, double heads, double kv_heads) {
    return repeat_kv && kv_heads > 0 && heads > kv_heads ? heads / kv_heads : 1;
}

double cp_merge_bytes(const CpMergeInput& in) {
    if (in.cp <= 1 || in.exchange != CpExchange::AllGatherLocalOverlap) return 0;
    const double cp = static_cast<double>(in.cp);
    // Bytes per element, counted from torch/distributed/tensor/experimental/_attention.py (_SDPAMerger and
    // _templated_ring_attention_backward) for the last rank, whose every ring step takes the whole local query.
    // Forward, per step after the first: block_out.to(fp32) 2+4, out − block_out 8+4, sigmoid(Δlse)·(…) 4+4,
    // out − … 8+4 = 38; once: the first step's cast 2+4 and the final .to(bf16) 4+2 = 12.
    const double forward = in.q_elements * (38 * (cp - 1) + 12);
    // Backward: fp32 zeros for dQ (4), dQ += block dQ each step (4+2 read, 4 write), the final cast (4+2); for dK,
    // dV: zeros (4), the first step's += (10), each later step's chunked += and torch.cat (5+8) and the flattening
    // torch.cat before each send (4+4), the final cast (4+2).
    const double backward = in.q_elements * (4 + 10 * cp + 6) + in.kv_elements * (4 + 10 + 13 * (cp - 1) + 8 * cp + 6);
    return static_cast<double>(in.forward_passes) * forward + backward;
}

}  // namespace tally
