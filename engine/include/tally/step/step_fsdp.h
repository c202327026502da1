// Step-time mechanisms of the FSDP2 / torchtitan stack (issue 24): ZeRO-3 per-layer gathers prefetched one layer
// ahead (laid out by overlap.h's FSDP timeline), HSDP, torchtitan's per-op selective checkpointing, eager-mode
// elementwise traffic that torch.compile fuses away, and FP8 weight all-gathers. step.cpp calls these.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tally/hardware/hardware.h"
#include "tally/model/model.h"
#include "tally/step/step.h"

namespace tally {

// Exposed seconds of one pass of ZeRO-3 / FSDP over `layers` layers on one GPU: each layer's weights gathered
// before its forward and again before its backward, its gradients reduce-scattered after, the next gather
// prefetched one layer ahead (overlap::lay_out, Scheme::Fsdp). gather_seconds / scatter_seconds are one layer's
// collectives as step time prices them. Returns the time the compute lane waits on communication.
double fsdp_exposed_seconds(std::int64_t layers, double forward_seconds, double backward_seconds, double gather_seconds,
                            double scatter_seconds);

// ZeRO-3 / FSDP on one pipeline stage (step.cpp's link model: ring collectives over group_link_bytes_per_s).
struct Zero3Input {
    std::int64_t layers = 1;       // on the busiest stage
    std::int64_t dp = 1;           // data-parallel ranks
    std::int64_t shard_group = 0;  // HSDP: ranks a shard spans (0: all dp); replicas = dp / shard_group
    std::int64_t tp = 1, node = 8;
    double link_fraction = 1;       // of the link bandwidth a ring collective reaches
    double weight_bytes = 0;        // the stage's weights as gathered (FP8 all-gather: 1 byte per linear weight)
    double grad_bytes = 0;          // the stage's gradients as reduce-scattered
    double microbatch_seconds = 0;  // one micro-batch's forward and backward on the stage
    double microbatches = 1;
    // FSDP2 with pipelining (torchtitan): weights stay gathered across micro-batches and the gradients are
    // reduce-scattered once a step, so one gather and one reduce-scatter a step.
    bool keep_gathered = false;
};
struct Zero3Cost {
    double seconds = 0;          // every gather and reduce-scatter of the step
    double exposed = 0;          // of which the compute lane waits for
    double replica_seconds = 0;  // HSDP: all-reduce of the sharded gradients across replicas, once a step
};
// InputError naming shard_group when it does not divide dp.
Zero3Cost zero3_cost(const Zero3Input& in, const Interconnect& ic);

// Extra forward passes a matmul class takes under torchtitan's per-op selective activation checkpointing, which
// saves every matmul output except every second aten.mm of a block and recomputes the rest: q(1) k(2) v(3) o(4)
// w1(5) w3(6) w2(7), so wk, wo and w3 (GELU: w2) run again. FP8 linears run as aten._scaled_mm, which the policy
// does not save: all of them run again. Attention (SDPA) is saved when its op is in the save list (sdpa_saved,
// sdpa_saved_by_op_sac); otherwise its forward runs again. The router is not a recomputed mm here.
double per_op_sac_extra_passes(std::string_view matmul_id, const ModelConfig& config, bool fp8_linears,
                               bool sdpa_saved = true);
// Whether torchtitan's per-op policy saves the SDPA op the stack's kernel runs on this GPU generation: the save
// list holds aten._scaled_dot_product_flash_attention and _efficient_attention but not _cudnn_attention, which
// torchtitan runs first on Blackwell (step_fsdp.cpp).
bool sdpa_saved_by_op_sac(AttentionKernel kernel, const std::string& architecture);

// Extra bytes one layer's forward moves in eager PyTorch over fused kernels, for plain-PyTorch model code
// (torchtitan's Llama): RMSNorm as x.float(), pow, mean, x·rsqrt, type_as, ·weight (36 bytes an element against
// a fused kernel's 4 at 2-byte activations), SiLU and the gate product as two kernels (5 passes over the FFN
// activation against 3), rotary through complex fp32 (10 passes over q and k against 2). x_bytes: one tokens·h
// activation; ffn_bytes: one FFN activation (gated width); qk_bytes: q and k for the rotary. torch.compile fuses
// each chain into one kernel (Ansel et al. 2024, "PyTorch 2", sec. 5: Inductor fuses pointwise and reductions).
double eager_extra_forward_bytes(const ModelConfig& config, double x_bytes, double ffn_bytes, double qk_bytes);

// Async TP (PyTorch's micro-pipelined all-gather-matmul / matmul-reduce-scatter, torchtitan): the two
// collectives of a layer's forward pass hide behind its linear GEMMs; the backward's, and the recomputed
// forward's (in the backward graph), stay exposed. Wang et al. 2024, "Distributed w/ TorchTitan: Introducing Async
// Tensor Parallelism in PyTorch" (PyTorch dev-discuss): up to 29 % forward speed-up and ~8 % end to end on Llama 3
// 8B/70B, which a forward-only overlap gives (a third of the step 29 % faster: 1/(2/3 + 1/3/1.29) = 1.08).
// one_collective: one sequence-parallel collective's pair; linear_seconds: the layer's linear GEMMs, all passes.
double async_tp_hidden_seconds(double one_collective, double linear_seconds);

// LoRA's adapters in one layer on one GPU, one micro-batch (Hu et al. 2021, sec. 4.1: h = W0 x + B A x): for
// each adapted module x·Aᵀ (tokens × r × in) and its result ·Bᵀ (tokens × out × r), each run forward, for the input
// gradient and for the weight gradient (3 passes, 6 FLOPs per adapter parameter per token; +1 with full
// recomputation). The skinny GEMMs are timed by step.cpp's matmul model (a rank of 8 pads to a 128-wide tile and
// is bound by reading x). tp splits each module's wide side.
struct LoraStepCost {
    double flops = 0, seconds = 0;  // per layer (averaged over layers), all passes
    double params_per_gpu = 0;      // trainable adapter parameters on this GPU (all layers, before pp)
};
struct LoraStepInput {
    std::int64_t rank = 0;
    unsigned targets = 0;
    double tokens = 0, tp = 1, passes = 3;
    double peak = 0, bytes_per_s = 0, element_bytes = 2, peak_fraction = 0;
};
LoraStepCost lora_step_cost(const ModelConfig& config, const LoraStepInput& in);

// Share of a decoder's parameters in its linear layers' weights (what an FP8 all-gather sends at one byte).
double linear_weight_share(const ModelConfig& config);

}  // namespace tally
