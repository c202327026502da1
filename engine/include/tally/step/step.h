// The time of one training step, per GPU: matmuls at a shape-dependent fraction of peak,
// memory-bound kernels at HBM bandwidth, tensor/sequence-parallel collectives, the pipeline bubble
// and point-to-point sends, the data-parallel gradient reduction (and ZeRO-3 gathers), and the
// optimizer step. MFU becomes an output. The model and every constant are in step.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tally/compute/flops.h"
#include "tally/hardware/hardware.h"
#include "tally/step/schedule.h"
#include "tally/memory/memory.h"
#include "tally/model/model.h"
#include "tally/step/stack.h"
#include "tally/parallel/step_stages.h"
#include "tally/comm/ring.h"

namespace tally {

struct StepLayout {
    TrainingSetup setup;             // seq, micro_batch, global_batch, gpus, zero, tp, pp, sp, recompute, flash, recipe
    std::int64_t interleave = 1;     // v: model chunks per pipeline stage (Narayanan et al. 2021, sec. 2.2.2)
    bool embedding_chunks = false;   // embedding and output layer are pipeline chunks of their own (Llama 3)
    std::int64_t gpus_per_node = 0;  // 0: the hardware preset's
    std::string dtype = "bf16";      // matmul dtype, for the dense peak
    // Low-precision recipe: "" (from dtype: fp8 is Transformer Engine's default delayed scaling), bf16, fp16,
    // fp8-delayed, fp8-current-scaling, fp8-current-tensorwise, fp8-rowwise, mxfp8. FP8 applies to the linear
    // layers' GEMMs only; attention's core and the LM head stay at the 16-bit peak (step.cpp).
    std::string precision;
    // Data-parallel gradient reduction bucketed behind the backward pass (PyTorch DDP, Megatron-Core
    // --overlap-grad-reduce), or issued after the last backward (Megatron-LM's train_step before Megatron-Core,
    // DeepSpeed's PipelineEngine): then all of it is exposed.
    bool overlap_grad_reduce = true;
    // Software stack (stack.h, content/presets/stacks): the defaults of the switches below; "" is "generic".
    std::string stack;
    // The run's switches: the stack's defaults with the run's own settings over them (the API's layout_from_args);
    // unset: stack_profile(stack).defaults.
    std::optional<StepSwitches> switches;
    // torch.compile: fuses the elementwise chains of plain-PyTorch model code (a stack with eager_elementwise).
    bool compile = false;
    // Async TP (torchtitan, PyTorch's micro-pipelined collective matmul): the sequence-parallel all-gather /
    // reduce-scatter overlapped with the linear layers' GEMMs, as the stack's tp_comm_overlap does.
    bool async_tp = false;
    // FSDP all-gathers the linear weights in FP8 (torchao enable_fsdp_float8_all_gather): ZeRO-3 gathers send 1
    // byte per linear weight; needs an FP8 precision.
    bool fp8_all_gather = false;
    // MoE: each micro-batch's expert-parallel dispatch/combine all-to-all runs behind an adjacent micro-batch's
    // computation (Megatron-Core combined 1F1B, --overlap-moe-expert-parallel-comm; step_moe.h).
    bool ep_overlap = false;
    // LoRA (Hu et al. 2021): lora_rank > 0 freezes the base weights (no weight-gradient GEMMs, no gradients to
    // reduce, no optimizer step for them) and trains rank-r adapters on lora_targets (finetune.h's LoraTarget
    // bits; default q, v as PEFT). 0: every weight trains.
    std::int64_t lora_rank = 0;
    unsigned lora_targets = 0;
    // The cluster's measured fabric (fabric.h: a content/presets/fabrics id) for the tensor-, context- and
    // data-parallel collectives that cross nodes; "" or "nominal": the hardware preset's network cards.
    std::string fabric;
    // The node's network as a run states it (Gb/s one way, all its cards together, "400Gbps" in fms-fsdp's table);
    // each GPU gets its share for collectives across nodes. 0: the hardware preset's cards.
    double node_network_gbps = 0;
};

// Fraction of the 16-bit dense peak an attention kernel reaches over its forward and backward passes on a GPU
// generation (Hardware::architecture) at the query/key length one kernel call sees (seq, or seq/cp under context
// parallelism); Hopper from the FlashAttention-3 paper's per-length rates, Blackwell from cudnn-frontend's B200
// rates (step_attention.cpp).
double attention_efficiency(AttentionKernel kernel, const std::string& architecture, double seq = 16384);
// Fraction of the dense 16-bit peak large GEMMs reach on a GPU generation.
double matmul_peak_fraction(const std::string& architecture);
// Per-rank ring bandwidth (bytes/s, before the collective efficiency) of a group with ranks_per_node members
// in each of `nodes` NVLink domains: NVLink inside one domain; across domains the node's network cards shared by
// its members (NCCL runs one channel per card), capped by NVLink.
double group_link_bytes_per_s(const Interconnect& ic, std::int64_t ranks_per_node, std::int64_t nodes);
// The step's seconds for one collective of `bytes` (nccl-tests counting, collectives.h) over a group placed as
// ranks_per_node x nodes, fraction of the link reached: the ring collectives at NCCL's model over
// group_link_bytes_per_s (a measured fabric included; an all-reduce across nodes may run as a tree), the
// all-to-all and send/recv as collectives::cost prices them. Without a fabric, the `collective` method's seconds
// for the same transfer (the all-reduce: its faster algorithm). 0 for one rank or no bytes.
double step_collective_seconds(collectives::Kind kind, double bytes, const Interconnect& ic,
                               const collectives::Placement& group, double fraction);

// One per-GPU cost of the step, in seconds.
struct StepComponent {
    const char* id;
    const char* name;
    double seconds = 0;
    bool exposed = true;  // false: overlapped with compute, not on the critical path
};

struct StepResult {
    double step_seconds = 0;
    double tokens_per_second = 0;          // whole cluster
    double model_flops_per_s_per_gpu = 0;  // model FLOPs (no recomputation) per second per GPU
    double mfu = 0;                        // Chowdhery et al. 2022 (PaLM), App. B
    double hfu = 0;                        // recomputed FLOPs counted
    double peak_flops_per_s = 0;
    std::int64_t dp = 1, microbatches = 1, global_batch = 0;
    std::int64_t busiest_stage_layers = 0;  // layers on the slowest pipeline stage
    double microbatch_seconds = 0;          // forward + backward of one micro-batch on the slowest stage
    double bubble_fraction = 0;             // (p-1)/(v·m)
    double matmul_efficiency = 0;           // FLOP-weighted fraction of peak the matmuls reach
    std::vector<StepComponent> breakdown;   // exposed components sum to step_seconds
};

// The FLOP counts step_time needs, which depend on the model, seq, recomputation and FlashAttention but not
// on the parallel layout: the planner computes them once per recomputation choice instead of per layout.
struct StepFlops {
    std::int64_t seq = 0;
    std::int64_t decoder_seq = 0;  // encoder-decoder target length (0: seq)
    Recompute recompute = Recompute::None;
    bool flash_attention = false;
    FlopsResult counted;   // full attention: the MFU and HFU numerators
    FlopsResult executed;  // what runs: a fused causal kernel skips the masked half of the scores
};
StepFlops step_flops(const ModelConfig& config, std::int64_t seq, Recompute recompute, bool flash_attention,
                     std::int64_t decoder_seq = 0);

// Throws InputError naming the field on bad input (including layouts that do not divide).
StepResult step_time(const ModelConfig& config, const Hardware& hardware, const StepLayout& layout);
// The same with pieces already computed (the planner's fast path); each may be null. budget must be
// memory_budget(config, layout.setup) for this layout (only its parameter counts are read); flops must be
// step_flops(config, ...) for the layout's seq, recomputation and FlashAttention (checked). The result is
// bit for bit the one of the three-argument step_time (tests/engine/step/step_test.cpp).
StepResult step_time(const ModelConfig& config, const Hardware& hardware, const StepLayout& layout,
                     const MemoryBudget* budget, const StepFlops* flops = nullptr);

// Pieces of the model, exposed for tests and the page.
// Fraction of peak a matmul of m×n×k (batch of them) reaches: tile padding and the roofline (step.cpp).
// peak_fraction: the fraction of peak large GEMMs reach (0: the calibrated 16-bit value).
double matmul_efficiency(double m, double n, double k, double batch, double peak_flops_per_s, double bytes_per_s,
                         double element_bytes, double peak_fraction = 0);

}  // namespace tally
