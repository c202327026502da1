// The training memory budget of one GPU: weights, gradients, master weights, optimizer states
// (the training recipe: a dtype per tensor class and an optimizer; named recipes; ZeRO / tensor / pipeline / sequence parallelism) and
// activations after Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models" (arXiv:2205.05198), generalised term by term.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tally/numerics/dtype.h"
#include "tally/compute/flops.h"
#include "tally/model/model.h"

namespace tally {

enum class Optimizer { AdamW, AdamW8bit, SgdMomentum, Sgd, Lion, Adafactor };
const char* to_string(Optimizer optimizer);
Optimizer optimizer_from_string(const std::string& text);  // InputError field "optimizer"
// Full-size state tensors the optimizer keeps per parameter (Adafactor: 0, its state is factored).
int optimizer_states(Optimizer optimizer);
const char* optimizer_description(Optimizer optimizer);

// bitsandbytes' 8-bit Adam quantizes each state in blocks of 2048 values with one fp32 absmax per
// block (Dettmers et al. 2022, "8-bit Optimizers via Block-wise Quantization", sec. 2).
inline constexpr std::uint64_t kAdam8bitBlock = 2048;

// The training recipe: the number format (dtype.h) of each tensor class and the optimizer, e.g. bf16
// mixed precision (bf16 weights and gradients, fp32 master weights and Adam states). "Precision" in
// tally names the float formats (precision.h); a recipe is this struct.
struct Recipe {
    DType weights = DType::BF16;  // working weights used in forward/backward
    DType gradients = DType::BF16;
    DType master_weights = DType::FP32;  // None when the optimizer updates the working weights
    Optimizer optimizer = Optimizer::AdamW;
    DType optimizer_state = DType::FP32;  // AdamW 8-bit forces INT8
    // A separate gradient-accumulation buffer beside the gradients (e.g. fp32 beside bf16 gradients:
    // 2 + 2 + 4 + 8 + 4 = 20 B/param, the Ultra-Scale Playbook's count); sharded like the optimizer
    // states (ZeRO >= 1), as DeepSpeed keeps its fp32 gradient partition. None: no such buffer.
    DType grad_accum = DType::None;
};

// A named recipe (`recipe` argument of the API, --recipe of the CLI).
struct RecipePreset {
    const char* id;
    const char* name;
    const char* description;  // one line: what it counts
    Recipe recipe;
};
std::span<const RecipePreset> recipes();
const RecipePreset& find_recipe(const std::string& id);  // InputError field "recipe" listing the ids
inline constexpr const char* kDefaultRecipe = "bf16_mixed_adamw";

// Per-class overrides of a named recipe (the API's weights, gradients, ... arguments); nullopt keeps the preset's.
struct RecipeOverrides {
    std::optional<DType> weights, gradients, master_weights, optimizer_state, grad_accum;
    std::optional<Optimizer> optimizer;
};
// A preset with its overrides applied: 8-bit AdamW forces int8 states and plain SGD none, then validate().
// custom: an override was given (a grad_accum of none alone changes nothing).
struct ChosenRecipe {
    Recipe recipe;
    const RecipePreset* preset = nullptr;
    bool custom = false;
    std::string id() const;           // the preset's id, or "custom"
    std::string name() const;         // the preset's name, or "custom (from <preset name>)"
    std::string description() const;  // the preset's description, or "per-class settings below"
};
ChosenRecipe choose_recipe(const RecipePreset& preset, const RecipeOverrides& overrides);

// Checks a recipe for contradictions (a master copy no wider than the weights, an
// optimizer state type for an optimizer without states); InputError naming the class.
void validate(const Recipe& recipe);

// Bytes per parameter of each class in units of 1/256 byte (exact for every recipe, including the
// 8-bit absmax overhead of 8/2048 = 1/256 B). Adafactor's factored state counts as 0 here.
struct BytesPerParam256 {
    std::uint64_t weights = 0, gradients = 0, master_weights = 0, optimizer_states = 0, grad_accum = 0;
    std::uint64_t total() const { return weights + gradients + master_weights + optimizer_states + grad_accum; }
};
BytesPerParam256 bytes_per_param_256(const Recipe& recipe);
// A class's bytes as a formula: `count` parameters times bytes per parameter ("N_w · 2 B").
std::string bytes_per_param_formula(const char* count, std::uint64_t bytes256);
// The optimizer states' bytes as a formula in N_o, the parameters whose states a GPU keeps.
std::string optimizer_states_formula(const Recipe& recipe);
// The optimizer's state tensors one by one, sharing `optimizer_state_bytes` (Adam's m and v are the same size).
struct OptimizerPart {
    const char* id;  // "m", "v", "momentum", "v_factored"
    const char* name;
    std::uint64_t bytes = 0;
};
std::vector<OptimizerPart> optimizer_parts(Optimizer optimizer, std::uint64_t optimizer_state_bytes);

struct TrainingSetup {
    std::int64_t seq = 2048;  // s
    // Encoder-decoder: the decoder's target length s_dec (0: s). Encoder layers hold s positions, decoder layers
    // s_dec with cross-attention over s; the logits are s_dec. Must be 0 for other models.
    std::int64_t decoder_seq = 0;
    std::int64_t micro_batch = 1;   // b, sequences per micro-batch per data-parallel rank
    std::int64_t global_batch = 0;  // sequences per optimizer step; 0 = micro_batch × dp (no accumulation)
    std::int64_t gpus = 1;
    int zero = 0;         // ZeRO stage 0..3 (Rajbhandari et al. 2020); FSDP full shard = 3
    std::int64_t tp = 1;  // tensor parallel degree t
    std::int64_t pp = 1;  // pipeline parallel degree p
    // Interleaved 1F1B with v model chunks per GPU (Narayanan et al. 2021, sec. 2.2): the first stage
    // holds (1 + (p−1)/(p·v)) times the activations of the plain schedule (Korthikanti et al. 2022, sec. 4.2.3);
    // interleave_activation_factor below. Layers need not divide evenly over the p·v chunks.
    std::int64_t virtual_stages = 1;
    // Each stage's output tensor, sent to the next stage, is freed once sent (Korthikanti et al. 2022, App. B:
    // only its autograd metadata is needed; the default here) or kept, e·s·b·h per micro-batch in flight.
    bool keep_stage_outputs = false;
    // The gradient-accumulation buffer covers every parameter of the rank, not its ZeRO shard: nanotron's
    // FP32GradientAccumulator keeps "grad buffers for all parameters even when Zero 1 is used" (c252843,
    // optim/gradient_accumulator.py); DeepSpeed's ZeRO-1/2 accumulates into this rank's fp32 partition (the default).
    bool grad_accum_full = false;
    // Pipeline stages split by compute cost, the LM head counted (nanotron's build_model, step_stages.h
    // cost_balanced_stages) instead of ceil(layers / pp) on every stage; plain 1F1B only (virtual_stages 1).
    bool cost_balanced_stages = false;
    bool sequence_parallel = false;  // Korthikanti et al. sec. 4.2.2 (needs tp > 1 to matter)
    Recompute recompute = Recompute::None;
    unsigned recompute_ops = 0;         // RecomputeOp set on top of none/selective (flops.h)
    std::int64_t recompute_layers = 0;  // layers per stage fully recomputed (Megatron-LM block method)
    bool flash_attention = false;       // no s×s scores stored (Dao et al. 2022)
    // Dropout masks (1 byte each): nullopt follows the model (each dropout the model has, and only those);
    // true stores all of them (attention probabilities, attention and MLP outputs, embeddings), false none.
    std::optional<bool> dropout;
    // ZeRO-3 working buffer: the parameters gathered for the unit being computed plus `zero3_prefetch`
    // units fetched ahead, and that unit's full gradient before its reduce-scatter. Module: the largest
    // single module (DeepSpeed's estimator: 4 B × largest layer params in 16 bits); layer: a whole
    // transformer layer (FSDP wrapping each layer). None: not counted (default).
    enum class Zero3Gather { None, Module, Layer } zero3_gather = Zero3Gather::None;
    std::int64_t zero3_prefetch = 0;
    std::int64_t activation_bytes = 2;
    Recipe recipe;
    // Mixture of experts: expert parallel degree (routed experts sharded over ep GPUs of each data-parallel
    // group; ZeRO then shards expert states over dp/ep, as DeepSpeed-MoE and Megatron-Core do) and the
    // capacity factor (0 = no capacity limit), moe.h.
    std::int64_t ep = 1;
    double capacity_factor = 0;
    // Expert tensor parallel degree: each routed expert's matrices split over etp GPUs instead of tp, with ep·etp
    // dividing tp·cp·dp per stage (Megatron-Core --expert-tensor-parallel-size, "MoE Parallel Folding", Liu et al.
    // 2025, arXiv:2504.14960); expert states are then ZeRO-sharded over edp = tp·cp·dp/(ep·etp). 0: etp = tp.
    std::int64_t etp = 0;
    // Context parallelism (Megatron-Core --context-parallel-size; ring attention, Liu et al. 2023, arXiv:2310.01889):
    // each of cp GPUs holds seq/cp positions of every sequence; gpus = tp·pp·cp·dp. A causal model's sequence is cut
    // into 2·cp chunks, GPU i holding chunks i and 2cp−1−i to balance the causal mask (cp_load_balance), so 2·cp
    // must divide seq; otherwise cp must divide it.
    std::int64_t cp = 1;
    bool cp_load_balance = true;
    // HSDP: ZeRO shards over groups of shard_group GPUs and replicates across the groups (PyTorch FSDP HYBRID_SHARD,
    // FSDP2's 2-D device mesh). 0: one group of all dp·cp GPUs holding the same weights (plain ZeRO / FSDP).
    std::int64_t shard_group = 0;
    // CPU offload (ZeRO-Offload, Ren et al. 2021, arXiv:2101.06840; ZeRO-Infinity for the parameters): the master
    // weights, optimizer states, accumulation buffer and an fp32 gradient partition live in host memory (the
    // update runs on the CPU); at ZeRO >= 2 the gradients stream to the host as they are reduced. offload_params
    // (ZeRO 3) also keeps the working-weight partition on the host, gathered per unit into the ZeRO-3 buffer.
    bool offload_optimizer = false;
    bool offload_params = false;
    std::int64_t etp_or_tp() const { return etp == 0 ? tp : etp; }
};

struct ActivationTerm {
    const char* id;
    const char* name;
    const char* description;
    std::string formula;      // plain text in the paper's symbols (s, b, h, a, t, ...)
    bool per_layer = true;    // per layer per micro-batch, or once (outside the layers)
    std::uint64_t bytes = 0;  // one layer and one micro-batch (per_layer), or the whole term
};

struct Activations {
    std::vector<ActivationTerm> terms;       // non-zero terms only
    std::uint64_t per_layer_bytes = 0;       // sum of per-layer terms (one micro-batch)
    std::int64_t layers = 0;                 // layers on this stage
    std::int64_t in_flight = 1;              // micro-batches whose activations are held at once
    std::int64_t full_recompute_layers = 0;  // of `layers`, those fully recomputed (recompute_layers)
    std::uint64_t outside_bytes = 0;         // sum of the outside terms (already × in_flight where due)
    std::uint64_t total_bytes = 0;           // per_layer × (layers − full_recompute_layers) × in_flight + outside
    std::string korthikanti_formula;         // the paper's closed form for this setup
    bool attention_dropout = false, residual_dropout = false, embedding_dropout = false;  // masks stored
    std::string interleave_factor;             // "1 + (p−1)/(p·v) = 23/16" when interleaved, else ""
    std::uint64_t interleave_extra_bytes = 0;  // what interleaving adds to the layers' activations (in total_bytes)
};

// The first pipeline stage's in-flight layer activations under interleaved 1F1B over those under plain 1F1B,
// as a fraction. Megatron-LM's interleaved schedule runs 2(p−1) + (v−1)p warm-up forwards on the first stage,
// then one more before the first backward (schedules.py, forward_backward_pipelining_with_interleaving), so it
// holds p·v + p − 1 chunk forwards: p micro-batches of all v chunks and p − 1 more of its first chunk. With
// even chunks that is Korthikanti et al. 2022 (arXiv:2205.05198), sec. 4.2.3: L(1 + (p−1)/(p·m)) layers, m the
// number of interleaving stages (v here). Uneven layers: the stage holds ceil(L/p) layers, its first chunk
// ceil(L/(p·v)) (the extra layers go to the earliest chunks). With m micro-batches and m·v <= p·v + p − 1 every
// forward runs before the first backward: m micro-batches of the stage, over min(p, m). v = 1: 1/1.
// microbatches 0: unknown, taken as many (the paper's case).
struct InterleaveFactor {
    std::uint64_t numerator = 1, denominator = 1;  // reduced
};
InterleaveFactor interleave_activation_factor(std::int64_t layers, std::int64_t pp, std::int64_t virtual_stages,
                                              std::int64_t microbatches);

struct ClassBytes {
    std::uint64_t weights = 0, gradients = 0, master_weights = 0, optimizer_states = 0, activations = 0;
    std::uint64_t grad_accum = 0, zero3_buffer = 0;  // 0 unless asked for
    std::uint64_t total = 0;
};

// Host (CPU) memory per GPU under offload: the classes that left the GPU, plus the gradient copy the CPU optimizer
// reads (the master weights' dtype; none when the accumulation buffer already is that copy).
struct HostBytes {
    std::uint64_t weights = 0, gradients = 0, master_weights = 0, optimizer_states = 0, grad_accum = 0;
    std::uint64_t total = 0;
};

struct MemoryBudget {
    std::int64_t dp = 1;
    std::int64_t shard_group = 1;         // GPUs ZeRO shards the dense states over (dp·cp unless HSDP)
    std::int64_t expert_shard_group = 1;  // GPUs ZeRO shards the routed experts' states over
    std::int64_t grad_accum_steps = 1;
    std::int64_t layers_per_stage = 0;
    const char* stage = "only";  // "only" (pp = 1), "first" or "last": the larger of the two
    std::uint64_t params_total = 0;
    std::uint64_t params_on_gpu = 0;                                               // after TP and PP, before ZeRO
    std::uint64_t params_weights = 0, params_gradients = 0, params_optimizer = 0;  // after ZeRO
    std::uint64_t zero3_gathered_params = 0;  // parameters of one gather unit (0 without a ZeRO-3 buffer)
    std::uint64_t expert_params_on_gpu = 0;   // routed experts' share of params_on_gpu (after EP)
    std::int64_t expert_dp = 1;  // tp·cp·dp / (ep·etp): GPUs holding the same experts (dp / ep by default)
    ClassBytes bytes;
    HostBytes host;  // zero unless offloading
    Activations activations;
    // Both stages' totals under the plain schedule's layer activations, for interleaved_budget_bytes (pp = 1: both
    // the only stage's), the first stage's layer activations before the interleave factor, micro-batches (0: unknown).
    std::uint64_t first_stage_plain_bytes = 0, last_stage_bytes = 0, first_stage_plain_layer_bytes = 0;
    std::int64_t microbatches = 0;
};

// Checks the setup (ranges, dp = gpus / (tp·pp) whole, tp | heads, pp <= layers, ...) and computes
// the budget of the busiest GPU. Every byte count is exact; overflow is an InputError.
MemoryBudget memory_budget(const ModelConfig& config, const TrainingSetup& setup);

// The classes a budget lists, each with a sentence saying what it holds for a setup (dtype, sharding,
// ZeRO stage, layers in flight) for the CLI and the widgets.
enum class MemoryClass { Weights, Gradients, MasterWeights, OptimizerStates, Activations, GradAccum, Zero3Buffer };
std::string memory_class_description(MemoryClass memory_class, const TrainingSetup& setup, const MemoryBudget& budget);
// The ZeRO-3 working buffer's formula text: N_unit · (1 + prefetch + 1) · bytes per weight.
std::string zero3_buffer_formula(const TrainingSetup& setup);

// memory_budget's bytes.total and activations.interleave_extra_bytes with v chunks per stage, from the budget of
// the same setup (any virtual_stages) in O(1): the planner tries several v per layout.
struct InterleavedBytes {
    std::uint64_t total = 0, extra = 0;
};
InterleavedBytes interleaved_budget_bytes(const ModelConfig& config, const TrainingSetup& setup,
                                          const MemoryBudget& budget, std::int64_t virtual_stages);

// The activation terms alone (used by memory_budget) for one stage; microbatches per step (0: unknown) decides
// the interleaved schedule's in-flight chunks (interleave_activation_factor).
Activations activation_memory(const ModelConfig& config, const TrainingSetup& setup, std::int64_t layers,
                              std::int64_t in_flight, bool first_stage, bool last_stage, std::int64_t microbatches = 0);

}  // namespace tally
