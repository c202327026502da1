#include "tally/parallel/step_stages.h"

#include <algorithm>
#include <string>

#include "tally/base/error.h"

namespace tally {

std::vector<std::int64_t> stage_layers(std::int64_t layers, std::int64_t pp, std::int64_t interleave,
                                       bool embedding_chunks) {
    const std::int64_t chunks = pp * interleave;
    const std::int64_t layer_chunks = chunks - (embedding_chunks ? 2 : 0);
    if (layer_chunks < 1)
        throw InputError("interleave",
                         "pp·interleave must leave at least one chunk for layers when the embedding and "
                         "output layer are chunks of their own");
    if (layers < layer_chunks)
        throw InputError("interleave", "pp·interleave (" + std::to_string(layer_chunks) +
                                           " layer chunks) must not exceed num_layers (" + std::to_string(layers) +
                                           ")");
    // Chunk c of the global order sits on stage c mod p (Narayanan et al. 2021, sec. 2.2.2); the
    // remainder layers go to the earliest layer chunks (Megatron-LM's uneven split puts the extra
    // layers first).
    std::vector<std::int64_t> per_stage(static_cast<std::size_t>(pp), 0);
    const std::int64_t base = layers / layer_chunks, extra = layers % layer_chunks;
    std::int64_t layer_chunk = 0;
    for (std::int64_t c = 0; c < chunks; ++c) {
        if (embedding_chunks && (c == 0 || c == chunks - 1)) continue;
        per_stage[static_cast<std::size_t>(c % pp)] += base + (layer_chunk < extra ? 1 : 0);
        ++layer_chunk;
    }
    return per_stage;
}

StageSplit cost_balanced_stages(const ModelConfig& c, std::int64_t pp) {
    if (pp < 1 || pp > c.num_layers)
        throw InputError("pp", "pp must be between 1 and num_layers (" + std::to_string(c.num_layers) + "), got " +
                                   std::to_string(pp));
    const double h = static_cast<double>(c.hidden_size);
    // LlamaForTraining.get_block_compute_costs (models/llama.py at c252843): the costs nanotron balances.
    const double layer = 4 * static_cast<double>(c.num_heads) * static_cast<double>(c.head_dim) * h +
                         3 * static_cast<double>(c.ffn_hidden_size) * h;
    const double head = static_cast<double>(c.vocab_size) * h;
    const double total = static_cast<double>(c.num_layers) * layer + head;
    const auto threshold = [&](std::int64_t rank) {
        return total * static_cast<double>(rank + 1) / static_cast<double>(pp);
    };
    StageSplit out;
    out.layers.assign(static_cast<std::size_t>(pp), 0);
    std::int64_t rank = 0;
    double cumulative = 0;  // the embedding comes first at cost 0: it never moves the rank
    for (std::int64_t i = 0; i < c.num_layers; ++i) {
        ++out.layers[static_cast<std::size_t>(rank)];
        cumulative += layer;
        if (cumulative > threshold(rank) && rank + 1 < pp) ++rank;
    }
    // The final norm (cost 0) and the LM head land on the current rank; the head's cost ends at the total, which
    // exceeds no threshold, so the loss blocks after it stay there too.
    out.head_stage = static_cast<std::size_t>(rank);
    return out;
}

std::uint64_t busiest_stage_params(const ModelConfig& c, const StageSplit& split, std::int64_t tp, std::int64_t ep,
                                   std::int64_t etp) {
    std::uint64_t most = 0;
    for (std::size_t i = 0; i < split.layers.size(); ++i) {
        const bool head = i == split.head_stage;
        const std::uint64_t n =
            shard_params(c, {tp, split.layers[i], i == 0, head, head && i != 0 && c.tied_embeddings, ep, etp});
        most = std::max(most, n);
    }
    return most;
}

StageSplit pipeline_stages(const ModelConfig& c, std::int64_t pp, std::int64_t interleave, bool embedding_chunks,
                           bool cost_balanced) {
    if (cost_balanced && interleave == 1 && !embedding_chunks && pp > 1) return cost_balanced_stages(c, pp);
    StageSplit out;
    out.layers = stage_layers(c.num_layers, pp, interleave, embedding_chunks);
    out.head_stage = out.layers.size() - 1;
    return out;
}

double tied_embedding_sync_bytes(const ModelConfig& c, const StageSplit& split, double params, double element_bytes) {
    if (!c.tied_embeddings || split.head_stage == 0) return 0;
    return params * element_bytes;
}

}  // namespace tally
