// What a checkpoint holds: an inference checkpoint is the working weights; one to resume training adds the
// master copy and the optimizer states (gradients are rebuilt by the next step, so they are not saved).
#pragma once

#include "tally/memory/memory.h"
#include "tally/model/model.h"

namespace tally {

struct CheckpointSize {
    double params = 0;
    double weights_bytes = 0;    // working weights in the recipe's weight format
    double master_bytes = 0;     // fp32 master copy (0 when the weights are fp32 themselves)
    double optimizer_bytes = 0;  // optimizer states (Adam m and v)
    double inference_bytes = 0;  // = weights_bytes
    double resume_bytes = 0;     // weights + master + optimizer
    double resume_bytes_per_param = 0;
};

CheckpointSize checkpoint_size(const ModelConfig& config, const Recipe& recipe);

}  // namespace tally
