// torchtitan's sequence-parallel collectives beyond Megatron's count (step_tp.h).
#include "tally/step_tp.h"

namespace tally {

double per_op_sac_regathers_per_layer(bool sequence_parallel) {
    return sequence_parallel ? 2 : 0;  // the attention's and the MLP's inputs
}

double sp_gather_element_bytes(std::string_view stack_id, std::string_view precision, double activation_bytes,
                               double fp8_bytes) {
    return stack_id == "torchtitan" && precision == "fp8-current-tensorwise" ? fp8_bytes : activation_bytes;
}

}  // namespace tally
