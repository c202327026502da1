// Which layers each pipeline stage holds, and which stage runs the output layer: an even split (Megatron-LM), or
// nanotron's split by compute cost (a StackProfile choice), which moves layers off the stage holding the LM head.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tally/model/model.h"
#include "tally/model/params.h"

namespace tally {

struct StageSplit {
    std::vector<std::int64_t> layers;  // transformer layers on each stage (all chunks of it when interleaved)
    std::size_t head_stage = 0;        // the stage that runs the output layer and the loss
};

// Layers per pipeline stage when L layers fill p·v chunks (less 2 when embedding and output are chunks).
std::vector<std::int64_t> stage_layers(std::int64_t layers, std::int64_t pp, std::int64_t interleave,
                                       bool embedding_chunks);
// nanotron v0.5 (models/base.py build_model at c252843): each pipeline block costs what the model's
// get_block_compute_costs says (a decoder layer 4·a·d·h + 3·f·h, the LM head V·h, every other block 0); blocks
// are placed in order, and the rank moves on after the block whose cumulative cost first exceeds rank+1 pp-ths of
// the total. InputError naming "pp" unless 1 <= pp <= num_layers.
StageSplit cost_balanced_stages(const ModelConfig& c, std::int64_t pp);
// The split step_time uses: cost_balanced_stages when the stack balances by cost (interleave 1, no separate
// embedding chunks), else stage_layers (step.h) with the output layer on the last stage.
StageSplit pipeline_stages(const ModelConfig& c, std::int64_t pp, std::int64_t interleave, bool embedding_chunks,
                           bool cost_balanced);
// Parameters on the stage holding the most of them, per GPU (params.h shard_params): the first stage holds the
// input embedding, the head stage the output layer (its own copy of a tied embedding when that is another stage).
std::uint64_t busiest_stage_params(const ModelConfig& c, const StageSplit& split, std::int64_t tp, std::int64_t ep,
                                   std::int64_t etp);

// The bytes of a tied embedding's gradient all-reduce between the first stage (input embedding) and the head stage
// (output layer), from params per GPU of the shared matrix and the gradient's element bytes; the step prices it as
// every collective (step_collective_seconds, step.h). 0 when the model is untied or one stage holds both (nanotron
// sync_tied_weights_gradients, parallel/tied_parameters.py at c252843: one all_reduce_coalesced per tied group after
// the data-parallel sync).
double tied_embedding_sync_bytes(const ModelConfig& c, const StageSplit& split, double params, double element_bytes);

}  // namespace tally
