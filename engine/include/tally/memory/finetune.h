// Fine-tuning on one GPU: LoRA (Hu et al. 2021, arXiv:2106.09685) with a frozen base, QLoRA (Dettmers et al.
// 2023, arXiv:2305.14314: NF4 base weights with block absmax and double quantization, BF16 compute, paged
// optimizer) and full fine-tuning (the training budget of memory.h, e.g. with 8-bit AdamW). Adapter parameters,
// the memory of the busiest (only) GPU class by class, and the training FLOPs per token.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tally/numerics/dtype.h"
#include "tally/compute/flops.h"
#include "tally/memory/memory.h"
#include "tally/model/model.h"

namespace tally {

enum class FinetuneMethod { Full, Lora, Qlora };
const char* to_string(FinetuneMethod method);
FinetuneMethod finetune_method_from_string(const std::string& text);  // InputError field "method"

// Storage of the frozen base weights: a whole-byte dtype, or NF4 (4-bit NormalFloat, bitsandbytes Linear4bit).
enum class BaseStorage { BF16, FP16, FP32, NF4 };
const char* to_string(BaseStorage storage);
BaseStorage base_storage_from_string(const std::string& text);  // InputError field "base_dtype"

// LoRA target modules, named like HF PEFT's target_modules without the "_proj" suffix: the last component of
// a linear weight's name in params.h (q of layers.*.attn.q.weight, also an encoder-decoder's cross_attn.q).
// MLA models (DeepSeek-V2/V3) have q (or q_a, q_b), kv_a, kv_b and o instead of k and v. The router, the
// embeddings and the LM head are never adapted (PEFT's "all-linear" leaves the output layer out too).
enum LoraTarget : unsigned {
    kLoraQ = 1u << 0,
    kLoraK = 1u << 1,
    kLoraV = 1u << 2,
    kLoraO = 1u << 3,
    kLoraGate = 1u << 4,
    kLoraUp = 1u << 5,
    kLoraDown = 1u << 6,
    kLoraQA = 1u << 7,
    kLoraQB = 1u << 8,
    kLoraKvA = 1u << 9,
    kLoraKvB = 1u << 10,
};
inline constexpr unsigned kLoraAllLinear = (1u << 11) - 1;  // "all-linear": every target the model has
// "q,k,v,o" -> set; "all-linear" (or "all") -> kLoraAllLinear. InputError field "lora_targets".
unsigned lora_targets_from_string(const std::string& text);
std::string lora_targets_to_string(unsigned targets);  // "q,v"

struct LoraConfig {
    std::int64_t rank = 8;               // r
    double alpha = 16;                   // scaling alpha / r
    unsigned targets = kLoraQ | kLoraV;  // PEFT's default for Llama: q_proj, v_proj
    double dropout = 0;                  // lora_dropout: > 0 stores a dropped copy of each adapted input and its mask
    // MoE: each routed expert's gate/up/down gets its own adapter (PEFT does this where the experts are
    // nn.Linear modules: Mixtral, Qwen-MoE, DeepSeek); false adapts only the dense and shared-expert MLPs.
    bool experts = true;
};

// One adapted module (per layer and instance): its A (r × in) and B (out × r).
struct LoraModule {
    std::string name;    // the weight it adapts, "layers.*.attn.q.weight"
    const char* target;  // "q"
    std::int64_t in = 0, out = 0;
    std::int64_t layers = 0;     // layers holding it
    std::int64_t instances = 1;  // per layer (routed experts: E)
    std::int64_t active = 1;     // instances a token visits per layer (routed experts: top-k)
    std::uint64_t params = 0;    // r (in + out) · instances · layers
};

struct LoraParams {
    std::vector<LoraModule> modules;
    std::uint64_t total = 0;     // trainable adapter parameters
    std::uint64_t active = 0;    // those a token passes through (MoE: top-k of the routed experts' adapters)
    std::int64_t narrowest = 0;  // smallest in or out of the adapted modules: the largest rank allowed
};
// Checks the rank (1..narrowest adapted dimension), alpha, dropout and that each target exists in the model.
LoraParams lora_params(const ModelConfig& config, const LoraConfig& lora);

// bitsandbytes NF4 with blocks of 64 weights: 4 bits each (two per byte), one absmax per block: fp32, or with
// double quantization 8-bit with one fp32 scale per 256 absmax values and one fp32 offset (their mean) per
// tensor (bitsandbytes functional.quantize_4bit, compress_statistics). Bytes of one tensor of n weights.
inline constexpr std::uint64_t kNf4Block = 64, kNf4DoubleQuantBlock = 256;
// bitsandbytes' 8-bit optimizers keep 32-bit states for tensors under this many elements (min_8bit_size).
inline constexpr std::uint64_t kBnbMin8bitSize = 4096;
std::uint64_t nf4_bytes(std::uint64_t n, bool double_quant);
// Bits per weight over whole blocks: 4 + 32/64 = 4.5, or with double quantization 4 + 8/64 + 32/(64·256) =
// 4.126953125 (QLoRA sec. 3: "0.127 bits", saving 0.373 bits per parameter).
double nf4_bits_per_param(bool double_quant);

struct FinetuneSetup {
    FinetuneMethod method = FinetuneMethod::Lora;
    LoraConfig lora;
    BaseStorage base = BaseStorage::BF16;  // frozen weights (lora, qlora); qlora: NF4
    bool double_quant = true;              // NF4 only
    DType compute = DType::BF16;           // dequantized weights and the unquantized base tensors (NF4)
    DType adapter = DType::FP32;           // adapter weights and gradients (PEFT keeps them in fp32)
    // bitsandbytes paged optimizers keep their states in CUDA unified memory, which pages to host RAM when the
    // GPU runs out. tally counts the states on the GPU and reports the floor without them.
    bool paged = false;
    // bitsandbytes before 0.43.2 kept each 4-bit linear's input for backward (MatMul4Bit saved ctx.tensors = (A, B)
    // although the frozen weight takes no gradient); PR #1270 (commit 9e75374, 2024-07-16) dropped it. NF4 only.
    bool quantized_inputs_kept = false;
    // When the step peaks (pytorch/torchtune@1814feb17a9038e1a8053ce93111bd26774a8db6, recipes/*_single_device.py):
    // gradients set to None after each step (zero_grad(set_to_none=True)) exist only during backward, so the peak is
    // the larger of the start of backward (every stored activation and the loss) and its end (every gradient);
    // false sums every class at once (persistent gradient buffers).
    bool grads_freed = false;
    // optimizer_in_bwd (training.register_optim_in_bwd_hooks): each parameter steps as soon as its gradient is whole
    // and drops it, so one gradient is held at a time (the largest; a tied embedding's from the head to the input).
    // Implies grads_freed; one GPU. The gradients class is then that one gradient.
    bool optimizer_in_backward = false;
    // CEWithChunkedOutputLoss (torchtune/modules/loss/ce_chunked_output_loss.py): the LM head runs in this many
    // sequence chunks whose logits stay in the compute dtype, each upcast to fp32 inside the compiled cross-entropy
    // (training.compile_loss compiles compute_cross_entropy, as the class docstring requires), so no fp32 copy is
    // stored and a chunk's gradient comes back in the compute dtype. 0: the whole logits upcast (memory.h's
    // logits_fp32).
    std::int64_t loss_chunks = 0;
    // Activation offloading (torchtune/training/_activation_offloading.py, OffloadActivations): with activation
    // checkpointing the layer checkpoints move to host memory in the forward and come back for the backward.
    bool activation_offloading = false;
    // Sequence, micro-batch, recomputation, flash attention, activation bytes; the recipe's optimizer and state
    // dtype drive the adapters (lora, qlora) or the whole model (full). gpus, tp, pp, zero: full only.
    TrainingSetup training;
};

struct FinetuneBytes {
    std::uint64_t frozen_weights = 0;     // base weights without gradients or states (lora, qlora)
    std::uint64_t trainable_weights = 0;  // adapters (lora, qlora) or the model (full)
    std::uint64_t gradients = 0, master_weights = 0, optimizer_states = 0;
    // The base model's stored activations (memory.h), the loss's logits among them (as loss_chunks keeps them),
    // less what activation_offloading holds in host memory.
    std::uint64_t activations = 0;
    std::uint64_t adapter_activations = 0;  // A·x per adapted module (and the dropped input with lora_dropout)
    std::uint64_t dequant_buffer = 0;       // NF4: the largest weight dequantized to the compute dtype
    std::uint64_t quantized_inputs = 0;     // NF4 with quantized_inputs_kept: each 4-bit linear's saved input
    std::uint64_t other = 0;                // full: gradient accumulation buffer and ZeRO-3 buffer
    std::uint64_t total = 0;                // the sum of the classes, or with grads_freed the peak of the two moments
};

// Where the peak falls: every class at once (sum), or with grads_freed the start or the end of backward.
enum class PeakPhase { Sum, BackwardStart, BackwardEnd };
const char* to_string(PeakPhase phase);

struct FinetuneBudget {
    std::uint64_t params_total = 0;
    std::uint64_t params_trainable = 0;
    double trainable_fraction = 0;       // params_trainable / params_total
    double lora_scaling = 0;             // alpha / r (lora, qlora)
    std::uint64_t params_quantized = 0;  // NF4: the linear weights of the layers
    LoraParams lora;                     // empty for full
    FinetuneBytes bytes;
    std::uint64_t paged_floor_bytes = 0;  // total less the optimizer states (paged), else total
    PeakPhase peak_phase = PeakPhase::Sum;
    std::uint64_t backward_start_bytes = 0, backward_end_bytes = 0;  // grads_freed: the two moments (else 0)
    std::uint64_t gradient_held_bytes = 0;  // optimizer_in_backward: the one gradient held (else 0)
    // The loss at its largest: the logits it keeps (whole in fp32, or every chunk in the activation dtype; counted in
    // activations) and, with grads_freed, the gradient at backward's start (the whole fp32 one, or one chunk's).
    std::uint64_t loss_bytes = 0;
    std::uint64_t offloaded_bytes = 0;  // activation_offloading: the checkpoints in host memory (not in total)
    MemoryBudget full;                  // full: the memory.h budget
    // Training FLOPs per token: full = count_flops; lora: the base's forward and its backward to the inputs
    // (no weight-gradient GEMMs for frozen weights: 2F + the attention matmuls' second operands, ~4N against 6N),
    // plus 6 per active adapter parameter, plus recomputation.
    double forward_per_token = 0;
    double base_training_per_token = 0;
    double adapter_training_per_token = 0;
    double recompute_per_token = 0;
    double training_per_token = 0;
    double full_training_per_token = 0;  // the same model fully fine-tuned, for comparison
};

FinetuneBudget finetune_budget(const ModelConfig& config, const FinetuneSetup& setup);

}  // namespace tally
