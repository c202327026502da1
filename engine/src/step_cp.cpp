// Context parallelism's K, V exchange per layer (step_cp.h).
#include "tally/step_cp.h"

#include <algorithm>

#include "tally/step.h"

namespace tally {

CpExchange cp_exchange(const std::string& stack_id) {
    if (stack_id == "megatron-te") return CpExchange::Ring;
    if (stack_id == "torchtitan") return CpExchange::AllGatherLocalOverlap;
    return CpExchange::AllGather;
}

CpLayerCost context_parallel_layer(const CpLayerInput& in) {
    CpLayerCost out;
    if (in.cp <= 1) return out;
    const double steps = static_cast<double>(in.cp - 1);
    const double hop = in.kv_block_bytes / in.bytes_per_s + in.latency_s;  // one block to the next rank
    // All-gather of every rank's block over the ring: (cp−1)/cp of the whole, as ring_gather_seconds prices it.
    const double gather =
        ring_gather_seconds(in.kv_block_bytes * static_cast<double>(in.cp), in.cp, in.bytes_per_s, in.latency_s);
    // One block's compute: balanced causal chunks give each ring step 1/cp of the rank's attention (context.h).
    const double block_forward = in.attention_forward_s / static_cast<double>(in.cp);
    const double block_backward = in.attention_backward_s / static_cast<double>(in.cp);
    const double passes = static_cast<double>(in.forward_passes);
    double total = 0, exposed = 0;
    switch (in.exchange) {
        case CpExchange::Ring: {
            const double back_hop = 2 * in.kv_block_bytes / in.bytes_per_s + in.latency_s;  // K, V and dK, dV
            total = passes * steps * hop + steps * back_hop;
            exposed =
                passes * steps * std::max(0.0, hop - block_forward) + steps * std::max(0.0, back_hop - block_backward);
            break;
        }
        case CpExchange::AllGatherLocalOverlap:
            total = passes * gather + gather + steps * hop;
            exposed = passes * std::max(0.0, gather - block_forward) + std::max(0.0, gather - block_backward) +
                      steps * std::max(0.0, hop - block_backward);
            break;
        case CpExchange::AllGather:
            total = exposed = passes * gather + 2 * gather;  // backward: gather K, V; reduce-scatter dK, dV
            break;
    }
    out.total_s = total;
    out.exposed_s = exposed;
    return out;
}

}  // namespace tally
