// Context parallelism for long sequences: how a causal mask spreads attention work over the cp GPUs that each
// hold part of a sequence (contiguous chunks, or 2·cp chunks with GPU r holding r and 2cp−1−r, the load-balanced
// split of Megatron-LM's context parallelism and Llama 3, Dubey et al. 2024, sec. 3.3.2), and one step of ring
// attention (Liu et al. 2023): a GPU's query block against one K, V block while the next block travels the ring.
#pragma once

#include <cstdint>
#include <vector>

#include "tally/hardware/hardware.h"
#include "tally/model/model.h"

namespace tally::context {

struct RankWork {
    std::vector<double> pairs;  // causal (query, key) pairs each rank scores, k <= q
    double max_over_mean = 0;   // the slowest rank against the average: the step waits for the slowest
};
// Exact pair counts for seq tokens over cp ranks. InputError naming seq (1..2^24) or cp (1..seq; 2·cp | seq when
// balanced, cp | seq otherwise).
RankWork causal_work(std::int64_t seq, std::int64_t cp, bool balanced);

struct RingStep {
    std::int64_t block_tokens = 0;  // s / cp query and key positions per block
    double block_flops = 0;         // Q·Kᵀ and A·V of one full block pair: 4 · block² · a · d (forward)
    double kv_block_bytes = 0;      // the K and V a GPU passes on: 2 · block · n_kv · d · e (GQA shrinks it)
    double link_bytes_per_s = 0;    // NVLink within a node, the GPU's network card beyond (80 % of line rate)
    double compute_seconds = 0;     // block_flops at the dense bf16 peak
    double transfer_seconds = 0;    // kv_block_bytes as one send/recv (collectives::cost: the link and NCCL's latency)
    bool hidden = false;            // the transfer fits under the block's compute
    double min_block_tokens = 0;    // block length from which the bandwidth term hides: 2·n_kv·e·peak / (4·a·link)
};
// InputError naming seq, cp (2..seq, cp | seq) or hardware (no interconnect).
RingStep ring_step(const ModelConfig& config, const Hardware& hw, std::int64_t seq, std::int64_t cp,
                   double element_bytes = 2);

}  // namespace tally::context
