// Mixture-of-experts pieces of the step-time model (step.cpp): the routed experts as a grouped GEMM at their
// real per-expert shape, expert parallelism folded over the tensor and data-parallel ranks (expert tensor
// parallelism), the router and the token permutation passes, the per-layer dispatch synchronisation, and the
// expert-parallel all-to-all. Constants and sources in step_moe.cpp.
#pragma once

#include <cstdint>

#include "tally/hardware/hardware.h"
#include "tally/model/model.h"

namespace tally {

struct MoeStepInput {
    double tokens = 0;     // s·b: tokens of one micro-batch of one data-parallel rank
    std::int64_t tp = 1;   // tensor-parallel degree of the dense layers
    std::int64_t ep = 1;   // expert-parallel degree
    std::int64_t etp = 1;  // expert tensor-parallel degree (Megatron-Core folding); tp when not folded
    std::int64_t gpus_per_node = 8;
    double capacity_factor = 0;         // 0: dropless
    double activation_bytes = 2;        // bytes per element of the hidden states sent and permuted
    double collective_fraction = 0.77;  // of the link bandwidth the all-to-all reaches (step.cpp's NCCL fraction)
};

// One MoE layer's per-GPU shapes and costs for one micro-batch (forward and backward, no recomputation).
struct MoeStepShape {
    double local_experts = 0;       // E / ep routed experts held by one GPU
    double tokens_per_expert = 0;   // M of each expert's GEMMs: tokens·k·ep·etp / (tp·E), times the capacity factor
    double expert_ffn = 0;          // N (up) / K (down): the expert FFN width over etp
    double dispatched_rows = 0;     // rows one GPU sends to the experts (k per token, over tp/etp ranks)
    double permute_bytes = 0;       // router softmax/top-k and permutation passes, forward + backward (HBM bytes)
    double all_to_all_seconds = 0;  // one dispatch or combine all-to-all (0 when ep = 1)
    double sync_seconds = 0;        // dropless dispatch: the host synchronisation of one forward
};

// Share of the "mlp" FLOP term (flops.h) that the routed experts compute: k·f·L_moe over the routed, shared and
// dense-layer MLPs together (0 for a dense model).
double moe_routed_flops_share(const ModelConfig& c);

// Seconds of one expert-parallel all-to-all in which every GPU sends `bytes` (its rows for all ep ranks, its own
// included), per_node of the ep ranks sharing its NVLink domain; fraction: of the link bandwidth reached. The
// same seconds as collectives::cost for Kind::AllToAll over that placement (latency included).
double all_to_all_seconds(const Interconnect& ic, double bytes, std::int64_t ep, std::int64_t per_node,
                          double fraction);

// Exposed seconds of one layer's all-to-alls (all_to_all) when `behind` seconds of an adjacent micro-batch's
// computation can run meanwhile (0: no overlap).
double moe_overlapped_all_to_all_seconds(double all_to_all, double behind);

// The shapes and costs of one MoE layer; InputError naming etp when etp is not 1..tp·ep (memory_budget checks
// that ep·etp divides tp·cp·dp).
MoeStepShape moe_step_shape(const ModelConfig& c, const Interconnect& ic, const MoeStepInput& in);

// Host seconds of one MoE layer's per-expert work (TE GroupedLinear's per-expert casts and GEMM launches) for one
// micro-batch, forward and backward, the forward's share again when recomputed.
double moe_expert_host_seconds(const MoeStepShape& shape, bool recomputed);

// Seconds the GPU idles in a layer whose host work (`host`) outlasts its GPU work (`gpu`): 0 when it does not.
double moe_launch_bound_seconds(double host, double gpu);

// Seconds of the routed experts' GEMMs over all passes (`passes` forward-equivalents) for `flops` executed
// FLOPs of one forward, at the grouped GEMM's per-expert shape (matmul_efficiency of step.h).
double moe_grouped_gemm_seconds(const MoeStepShape& shape, double hidden, double forward_flops, double passes,
                                double peak, double bytes_per_s, double element_bytes, double peak_fraction);

// Fraction of the dense BF16 peak that PyTorch's torch._grouped_mm (the CUTLASS sm100 kernel) reaches over a
// forward + backward on Blackwell with local_experts groups, measured at Llama 4 Scout's expert shapes (step_moe.cpp).
double torch_grouped_mm_bf16_fraction(double local_experts);
// Fraction of the dense FP8 peak that torchao's MXFP8 grouped GEMM (_quantize_then_scaled_grouped_mm) reaches over
// a forward + backward on Blackwell, its operands' MXFP8 quantization included, at the same shapes (step_moe.cpp).
double torchao_mxfp8_grouped_mm_fraction(double local_experts);

}  // namespace tally
