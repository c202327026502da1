// torchtitan's sequence-parallel collectives beyond Megatron's count (step_tp.h).
#include "tally/step/step_tp.h"

namespace tally {

double per_op_sac_regathers_per_layer(bool sequence_parallel) {
    return sequence_parallel ? 2 : 0;  // the attention's and the MLP's inputs
}

double sp_gather_element_bytes(bool fp8_tensorwise_gather, std::string_view precision, double activation_bytes,
                               double fp8_bytes) {
    return fp8_tensorwise_gather && precision == "fp8-current-tensorwise" ? fp8_bytes : activation_bytes;
}

double sp_layout_copy_bytes(bool batch_first, const SpCollectives& in) {
    if (!batch_first) return 0;
    const double gathers = in.gathers - in.fused_gathers, scatters = in.scatters - in.fused_scatters;
    // Each torch.cat reads the collective's buffer and writes the rearranged copy: 2 passes over the activation.
    const double cats = 2 * in.elements * (gathers * in.gather_element_bytes + scatters * in.scatter_element_bytes);
    // Async TP: the shard copied twice (read + write, 1/tp of the activation each); the partials' sum (1 + 1/tp).
    const double fused = in.fused_gathers * 2 * 2 * in.elements / in.tp * in.gather_element_bytes +
                         in.fused_scatters * in.elements * (1 + 1 / in.tp) * in.scatter_element_bytes;
    return cats + fused;
}

double separate_qkv_efficiency(double q_n, double kv_n, double q_eff, double kv_eff) {
    return (q_n + 2 * kv_n) / (q_n / q_eff + 2 * kv_n / kv_eff);  // total FLOPs over the sum of each GEMM's time
}

}  // namespace tally
