#include "tally/memory/checkpoint.h"

#include "tally/model/params.h"

namespace tally {

CheckpointSize checkpoint_size(const ModelConfig& config, const Recipe& recipe) {
    // Bytes per parameter in 1/256 units (exact for 4-bit and block-scaled formats), as the memory budget counts them.
    const BytesPerParam256 per = bytes_per_param_256(recipe);
    CheckpointSize s;
    s.params = static_cast<double>(count_params(config).total);
    s.weights_bytes = s.params * static_cast<double>(per.weights) / 256;
    s.master_bytes = s.params * static_cast<double>(per.master_weights) / 256;
    s.optimizer_bytes = s.params * static_cast<double>(per.optimizer_states) / 256;
    s.inference_bytes = s.weights_bytes;
    s.resume_bytes = s.weights_bytes + s.master_bytes + s.optimizer_bytes;
    s.resume_bytes_per_param = static_cast<double>(per.weights + per.master_weights + per.optimizer_states) / 256;
    return s;
}

}  // namespace tally
