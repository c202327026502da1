// torchtitan's sequence-parallel collectives beyond Megatron's count (step_tp.h).
#include "tally/step_tp.h"

namespace tally {

double per_op_sac_regathers_per_layer(bool sequence_parallel) {
    return sequence_parallel ? 2 : 0;  // the attention's and the MLP's inputs
}

}  // namespace tally
