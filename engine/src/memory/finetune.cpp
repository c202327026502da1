#include "tally/memory/finetune.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <tuple>

#include "tally/base/error.h"
#include "tally/base/names.h"
#include "tally/model/params.h"

namespace tally {

namespace {

using u64 = std::uint64_t;

u64 mul(u64 a, u64 b) { return checked_mul("finetune", a, b); }
u64 add(u64 a, u64 b) { return checked_add("finetune", a, b); }

struct TargetName {
    LoraTarget bit;
    const char* id;
};
constexpr TargetName kTargets[] = {{kLoraQ, "q"},       {kLoraK, "k"},      {kLoraV, "v"},       {kLoraO, "o"},
                                   {kLoraGate, "gate"}, {kLoraUp, "up"},    {kLoraDown, "down"}, {kLoraQA, "q_a"},
                                   {kLoraQB, "q_b"},    {kLoraKvA, "kv_a"}, {kLoraKvB, "kv_b"}};

const char* kTargetList = "q, k, v, o, gate, up, down, q_a, q_b, kv_a, kv_b or all-linear";

// The module a weight belongs to: "q" of "layers.*.attn.q.weight"; "" for anything LoRA never adapts.
const TargetName* weight_target(const Tensor& t) {
    if (t.component == Component::Mtp || t.rows <= 1 || t.cols <= 1) return nullptr;
    if (t.component != Component::Attention && t.component != Component::Mlp &&
        t.component != Component::CrossAttention)
        return nullptr;
    const std::string_view name = t.name;
    if (!name.ends_with(".weight")) return nullptr;
    const std::string_view stem = name.substr(0, name.size() - 7);
    const std::string_view last = stem.substr(stem.rfind('.') + 1);
    for (const TargetName& target : kTargets)
        if (last == target.id) return &target;
    return nullptr;  // router, norms
}

// A weight bitsandbytes replaces by Linear4bit: every nn.Linear of the layers (not the embeddings or the head).
bool quantized_linear(const Tensor& t) {
    return t.per_layer && t.rows > 1 && t.cols > 1 && t.component != Component::Mtp &&
           (t.component == Component::Attention || t.component == Component::Mlp ||
            t.component == Component::CrossAttention);
}

std::int64_t instances(const ModelConfig& c, const Tensor& t) { return t.expert ? c.num_experts : 1; }

// The activation a 4-bit linear reads, so that linears reading one tensor keep it once: q, k, v, q_a and kv_a read
// the attention input, gate, up and the router the MLP input, cross-attention's k and v the encoder's output (one
// tensor for every decoder layer); o, down, q_b and kv_b each read their own.
std::string_view linear_input(const Tensor& t) {
    const TargetName* target = weight_target(t);
    const std::string_view id = target == nullptr ? "router" : target->id;
    if (t.component == Component::CrossAttention && (id == "k" || id == "v")) return "encoder_output";
    if (id == "q" || id == "k" || id == "v" || id == "q_a" || id == "kv_a") return "attention_input";
    if (id == "gate" || id == "up" || id == "router") return "mlp_input";
    return id;
}

constexpr Named<FinetuneMethod> kMethodNames[] = {
    {FinetuneMethod::Full, "full"}, {FinetuneMethod::Lora, "lora"}, {FinetuneMethod::Qlora, "qlora"}};
constexpr Named<PeakPhase> kPhaseNames[] = {
    {PeakPhase::Sum, "sum"}, {PeakPhase::BackwardStart, "backward_start"}, {PeakPhase::BackwardEnd, "backward_end"}};
constexpr Named<BaseStorage> kStorageNames[] = {
    {BaseStorage::BF16, "bf16"}, {BaseStorage::FP16, "fp16"}, {BaseStorage::FP32, "fp32"}, {BaseStorage::NF4, "nf4"}};

// The base activations split the way the step uses them: the layers' stored tensors (the checkpoints under full
// recomputation), the one recomputed layer, the fp32 logits, and the rest kept outside the layers.
struct ActivationSplit {
    u64 layers = 0, recomputed = 0, logits_fp32 = 0, outside = 0;
};
ActivationSplit split_activations(const Activations& a) {
    ActivationSplit x;
    x.layers = a.total_bytes - a.outside_bytes;
    for (const ActivationTerm& t : a.terms) {
        if (t.per_layer) continue;
        const std::string_view id = t.id;
        if (id == "logits_fp32")
            x.logits_fp32 = add(x.logits_fp32, t.bytes);
        else if (id == "recomputed_layer")
            x.recomputed = add(x.recomputed, t.bytes);
        else if (id == "recompute_checkpoint_layers")
            x.layers = add(x.layers, t.bytes);  // checkpoints too: offloaded with the others
        else
            x.outside = add(x.outside, t.bytes);
    }
    return x;
}

// Activations, loss, offloading and the peak of the step over bytes whose weights, gradients and states are set:
// every class at once, or with grads_freed the larger of the start of backward and its end (finetune.h).
// `largest_gradient`: the gradient optimizer_in_backward holds; `second_gradient`: a tied embedding's second
// contribution, which autograd's AccumulateGrad adds to the first while both exist.
void step_peak(const FinetuneSetup& s, const Activations& act, u64 largest_gradient, u64 second_gradient,
               FinetuneBudget& b) {
    const TrainingSetup& st = s.training;
    FinetuneBytes& x = b.bytes;
    const ActivationSplit a = split_activations(act);
    if (s.activation_offloading && st.recompute != Recompute::Full)
        throw InputError("activation_offloading",
                         "activation_offloading needs recompute full (it moves the checkpoints to host memory, "
                         "as torchtune requires enable_activation_checkpointing)");
    if (s.loss_chunks < 0 || s.loss_chunks > st.seq)
        throw InputError("loss_chunks", "loss_chunks must be a whole number in [0, " + std::to_string(st.seq) +
                                            "] (0: no chunking; at most seq), got " + std::to_string(s.loss_chunks));
    b.offloaded_bytes = s.activation_offloading ? a.layers : 0;
    const bool freed = s.grads_freed || s.optimizer_in_backward;
    // Chunked (compiled, as torchtune's training.compile_loss does: the fp32 upcast fused into the cross-entropy):
    // every chunk's logits kept in the activation dtype, and at the start of backward one chunk's gradient in that
    // dtype. Whole: the fp32 logits, and at the start of backward their fp32 gradient beside them.
    const u64 e = static_cast<u64>(st.activation_bytes);
    const u64 sbv = a.logits_fp32 / 4;  // positions × vocabulary (per GPU)
    const u64 kept_loss = s.loss_chunks > 0 ? mul(sbv, e) : a.logits_fp32;
    const u64 loss_gradient =
        s.loss_chunks > 0 ? ceil_div(mul(sbv, e), static_cast<u64>(s.loss_chunks)) : a.logits_fp32;
    b.loss_bytes = freed ? add(kept_loss, loss_gradient) : kept_loss;
    const u64 stored =
        add(add(a.layers - b.offloaded_bytes, a.outside), add(x.adapter_activations, x.quantized_inputs));
    x.activations = add(add(a.layers - b.offloaded_bytes, a.outside), add(a.recomputed, kept_loss));
    const u64 kept = add(add(add(x.frozen_weights, x.trainable_weights), add(x.master_weights, x.optimizer_states)),
                         add(x.dequant_buffer, x.other));
    if (!freed) {
        x.total = add(add(kept, x.gradients), add(add(stored, a.recomputed), kept_loss));
        b.peak_phase = PeakPhase::Sum;
        return;
    }
    // Start of backward: no gradient yet but the one optimizer_in_backward holds; the loss's backward and the top
    // layer's recomputation come one after the other, so the larger of the two.
    b.gradient_held_bytes = s.optimizer_in_backward ? largest_gradient : 0;
    b.backward_start_bytes = add(add(kept, stored), add(std::max(b.loss_bytes, a.recomputed), b.gradient_held_bytes));
    // End of backward: every activation freed, every gradient whole (none with optimizer_in_backward).
    b.backward_end_bytes =
        s.optimizer_in_backward ? add(kept, largest_gradient) : add(add(kept, x.gradients), second_gradient);
    if (s.optimizer_in_backward) x.gradients = largest_gradient;  // never more than one at once
    b.peak_phase = b.backward_start_bytes >= b.backward_end_bytes ? PeakPhase::BackwardStart : PeakPhase::BackwardEnd;
    x.total = std::max(b.backward_start_bytes, b.backward_end_bytes);
}

}  // namespace

const char* to_string(FinetuneMethod method) { return name_of(kMethodNames, method, "lora"); }

FinetuneMethod finetune_method_from_string(const std::string& text) {
    if (const auto method = value_named(kMethodNames, text)) return *method;
    throw InputError("method", "method must be one of full, lora, qlora, got \"" + text.substr(0, 40) + "\"");
}

const char* to_string(PeakPhase phase) { return name_of(kPhaseNames, phase, "sum"); }

const char* to_string(BaseStorage storage) { return name_of(kStorageNames, storage, "bf16"); }

BaseStorage base_storage_from_string(const std::string& text) {
    if (const auto storage = value_named(kStorageNames, text)) return *storage;
    throw InputError("base_dtype",
                     "base_dtype must be one of bf16, fp16, fp32, nf4, got \"" + text.substr(0, 40) + "\"");
}

unsigned lora_targets_from_string(const std::string& text) {
    unsigned set = 0;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        std::string item = text.substr(start, comma - start);
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        // PEFT spells them q_proj, ..., kv_a_proj_with_mqa: the suffix is accepted and dropped.
        if (item.ends_with("_proj")) item.resize(item.size() - 5);
        if (item == "kv_a_proj_with_mqa") item = "kv_a";
        bool known = false;
        if (item == "all-linear" || item == "all") {
            set |= kLoraAllLinear;
            known = true;
        }
        for (const TargetName& target : kTargets)
            if (item == target.id) {
                set |= target.bit;
                known = true;
            }
        if (!known)
            throw InputError("lora_targets", std::string("lora_targets must be a comma-separated list of ") +
                                                 kTargetList + ", got \"" + item.substr(0, 40) + "\"");
        start = comma + 1;
    }
    return set;
}

std::string lora_targets_to_string(unsigned targets) {
    if (targets == kLoraAllLinear) return "all-linear";
    std::string out;
    for (const TargetName& target : kTargets)
        if (targets & target.bit) {
            if (!out.empty()) out += ',';
            out += target.id;
        }
    return out;
}

LoraParams lora_params(const ModelConfig& c, const LoraConfig& lora) {
    validate(c);
    if (lora.targets == 0 || (lora.targets & ~kLoraAllLinear) != 0)
        throw InputError("lora_targets", std::string("lora_targets must name at least one of ") + kTargetList);
    if (!(lora.alpha > 0) || !(lora.alpha <= 1e6))
        throw InputError("lora_alpha", "lora_alpha must be in (0, 1e6], got " + format_number(lora.alpha));
    require_in_right_open("lora_dropout", lora.dropout, 0, 1);
    LoraParams p;
    unsigned present = 0;
    for (const Tensor& t : model_tensors(c)) {
        const TargetName* target = weight_target(t);
        if (target == nullptr) continue;
        present |= target->bit;
        if ((lora.targets & target->bit) == 0 || (t.expert && !lora.experts)) continue;
        LoraModule m{t.name,
                     target->id,
                     t.cols,
                     t.rows,
                     tensor_layers(c, t),
                     instances(c, t),
                     t.expert ? c.experts_per_token : 1};
        p.narrowest = p.narrowest == 0 ? std::min(m.in, m.out) : std::min({p.narrowest, m.in, m.out});
        p.modules.push_back(m);
    }
    // An explicit target the model lacks (gate on a GELU MLP, k on MLA) is a mistake; all-linear takes what exists.
    const unsigned missing = lora.targets == kLoraAllLinear ? 0u : lora.targets & ~present;
    if (missing != 0)
        throw InputError("lora_targets", "lora_targets names " + lora_targets_to_string(missing) + ", which " +
                                             (c.name.empty() ? std::string("this model") : c.name) +
                                             " does not have; its linear modules: " + lora_targets_to_string(present));
    if (p.modules.empty())
        throw InputError("lora_targets",
                         "lora_targets adapts no module of this model (lora_experts false leaves "
                         "only the routed experts' projections)");
    if (lora.rank < 1 || lora.rank > p.narrowest)
        throw InputError("lora_rank", "lora_rank must be a whole number in [1, " + std::to_string(p.narrowest) +
                                          "] (the narrowest adapted projection), got " + std::to_string(lora.rank));
    const u64 r = static_cast<u64>(lora.rank);
    for (LoraModule& m : p.modules) {
        const u64 one = mul(r, static_cast<u64>(m.in + m.out));
        m.params = mul(mul(one, static_cast<u64>(m.instances)), static_cast<u64>(m.layers));
        p.total = add(p.total, m.params);
        p.active = add(p.active, mul(mul(one, static_cast<u64>(m.active)), static_cast<u64>(m.layers)));
    }
    return p;
}

u64 nf4_bytes(u64 n, bool double_quant) {
    const u64 blocks = ceil_div(n, kNf4Block);
    const u64 packed = ceil_div(n, 2);
    if (!double_quant) return add(packed, mul(blocks, 4));
    return add(add(packed, blocks), add(mul(ceil_div(blocks, kNf4DoubleQuantBlock), 4), 4));
}

double nf4_bits_per_param(bool double_quant) {
    const double per_block = double_quant ? 8.0 + 32.0 / static_cast<double>(kNf4DoubleQuantBlock) : 32.0;
    return 4.0 + per_block / static_cast<double>(kNf4Block);
}

FinetuneBudget finetune_budget(const ModelConfig& c, const FinetuneSetup& s) {
    FinetuneBudget b;
    const TrainingSetup& st = s.training;
    FlopsInput in;
    in.seq = st.seq;
    in.decoder_seq = st.decoder_seq;
    in.recompute = st.recompute;
    in.recompute_ops = st.recompute_ops;
    in.recompute_layers = st.recompute_layers;
    in.flash_attention = st.flash_attention;
    in.capacity_factor = st.capacity_factor;
    in.layers_per_stage = st.pp > 1 ? pipeline_stage_layers(c.num_layers, st.pp) : 0;
    const FlopsResult flops = count_flops(c, in);
    b.forward_per_token = flops.forward_per_token;
    b.full_training_per_token = flops.training_per_token;
    b.recompute_per_token = flops.recompute_per_token;

    if (s.method == FinetuneMethod::Full) {
        b.full = memory_budget(c, st);
        const ClassBytes& m = b.full.bytes;
        b.params_total = b.full.params_total;
        b.params_trainable = b.full.params_total;
        b.trainable_fraction = 1;
        b.bytes = {.trainable_weights = m.weights,
                   .gradients = m.gradients,
                   .master_weights = m.master_weights,
                   .optimizer_states = m.optimizer_states,
                   .other = add(m.grad_accum, m.zero3_buffer)};
        const bool step_switches = s.grads_freed || s.optimizer_in_backward || s.activation_offloading;
        if (step_switches && (st.gpus != 1 || st.tp != 1 || st.pp != 1 || st.cp > 1 || st.ep != 1)) {
            const char* field = s.optimizer_in_backward ? "optimizer_in_backward"
                                : s.grads_freed         ? "grads_freed"
                                                        : "activation_offloading";
            throw InputError(field, std::string(field) + " is counted on one GPU: gpus, tp, pp, cp and ep must be 1");
        }
        // One GPU: the largest tensor's gradient (a tied embedding's, held from the LM head to the input).
        const u64 grad_256 = bytes_per_param_256(st.recipe).gradients;
        u64 largest = 0;
        for (const Tensor& t : model_tensors(c)) largest = std::max(largest, t.count());
        const u64 largest_gradient = mul(largest, grad_256) / 256;
        const u64 embedding_gradient =
            c.tied_embeddings
                ? mul(mul(static_cast<u64>(c.vocab_size), static_cast<u64>(c.hidden_size)), grad_256) / 256
                : 0;
        step_peak(s, b.full.activations, largest_gradient, embedding_gradient, b);
        b.paged_floor_bytes = s.paged ? b.bytes.total - m.optimizer_states : b.bytes.total;
        b.base_training_per_token = flops.training_per_token;
        b.training_per_token = flops.training_per_token;
        return b;
    }

    // LoRA and QLoRA are counted on one GPU (the setting of the QLoRA paper and the single-device recipes).
    const std::pair<const char*, std::int64_t> single[] = {
        {"gpus", st.gpus}, {"tp", st.tp}, {"pp", st.pp}, {"ep", st.ep}, {"zero", st.zero + 1}};
    for (const auto& [field, value] : single)
        if (value != 1)
            throw InputError(field, std::string(field) +
                                        (std::string_view(field) == "zero" ? " must be 0" : " must be 1") +
                                        " for lora and qlora (counted on one GPU; method full takes any)");
    if (s.method == FinetuneMethod::Qlora && s.base != BaseStorage::NF4)
        throw InputError("base_dtype", "qlora stores the base in nf4: base_dtype must be nf4 (or use method lora)");
    if (s.base == BaseStorage::NF4 && s.method != FinetuneMethod::Qlora)
        throw InputError("base_dtype", "base_dtype nf4 is QLoRA: use method qlora");
    b.lora = lora_params(c, s.lora);
    b.params_total = count_params(c).total;
    b.params_trainable = b.lora.total;
    b.trainable_fraction = static_cast<double>(b.lora.total) / static_cast<double>(b.params_total);
    b.lora_scaling = s.lora.alpha / static_cast<double>(s.lora.rank);

    // Frozen base: every tensor once, in its storage; NF4 quantizes each layer's linear weights tensor by tensor.
    const u64 compute_bytes = dtype_bytes(s.compute);
    const u64 base_bytes = s.base == BaseStorage::FP32 ? 4 : 2;
    u64 largest_quantized = 0;
    const u64 tokens = mul(static_cast<u64>(st.seq), static_cast<u64>(st.micro_batch));
    // quantized_inputs_kept: each distinct input of the 4-bit linears, per token in the compute dtype, in every layer
    // (one at a time under full recomputation); a routed expert's input holds the tokens sent to it (top-k in all).
    std::set<std::tuple<Component, bool, bool, LayerSet, std::string_view>> kept_inputs;
    for (const Tensor& t : model_tensors(c)) {
        if (t.component == Component::Mtp) continue;
        const u64 copies =
            mul(static_cast<u64>(instances(c, t)), t.per_layer ? static_cast<u64>(tensor_layers(c, t)) : u64{1});
        if (s.base == BaseStorage::NF4 && quantized_linear(t)) {
            b.params_quantized = add(b.params_quantized, mul(t.count(), copies));
            b.bytes.frozen_weights = add(b.bytes.frozen_weights, mul(nf4_bytes(t.count(), s.double_quant), copies));
            largest_quantized = std::max(largest_quantized, t.count());
            const std::string_view input = linear_input(t);
            if (s.quantized_inputs_kept &&
                kept_inputs.insert({t.component, t.expert, t.cross, t.layer_set, input}).second) {
                const bool shared_by_layers = input == "encoder_output" || st.recompute == Recompute::Full;
                const u64 layers = shared_by_layers ? u64{1} : static_cast<u64>(tensor_layers(c, t));
                const u64 per_token = mul(mul(static_cast<u64>(t.cols), compute_bytes),
                                          static_cast<u64>(t.expert ? c.experts_per_token : 1));
                b.bytes.quantized_inputs = add(b.bytes.quantized_inputs, mul(mul(tokens, per_token), layers));
            }
        } else {
            const u64 each = s.base == BaseStorage::NF4 ? compute_bytes : base_bytes;
            b.bytes.frozen_weights = add(b.bytes.frozen_weights, mul(mul(t.count(), copies), each));
        }
    }
    // bitsandbytes dequantizes one weight at a time to the compute dtype for its matmul, then frees it.
    b.bytes.dequant_buffer = mul(largest_quantized, compute_bytes);

    // Adapters: weights and gradients in the adapter dtype, the optimizer's states as the recipe says, no master.
    Recipe adapter{s.adapter, s.adapter, DType::None, st.recipe.optimizer, st.recipe.optimizer_state};
    validate(adapter);
    const BytesPerParam256 bpp = bytes_per_param_256(adapter);
    const u64 n = b.lora.total;
    b.bytes.trainable_weights = mul(n, bpp.weights) / 256;
    b.bytes.gradients = mul(n, bpp.gradients) / 256;
    b.bytes.optimizer_states = ceil_div(mul(n, bpp.optimizer_states), 256);
    if (adapter.optimizer == Optimizer::AdamW8bit) {
        // bitsandbytes keeps 32-bit states for tensors under min_8bit_size = 4096 elements (Optimizer8bit's
        // default): small-rank adapters of narrow models get AdamW's 8 B per parameter instead.
        const BytesPerParam256 fp32 =
            bytes_per_param_256({s.adapter, s.adapter, DType::None, Optimizer::AdamW, DType::FP32});
        u64 small = 0;
        for (const LoraModule& m : b.lora.modules) {
            const u64 copies = mul(static_cast<u64>(m.instances), static_cast<u64>(m.layers));
            const u64 r = static_cast<u64>(s.lora.rank);
            for (const u64 side : {static_cast<u64>(m.in), static_cast<u64>(m.out)})
                if (r * side < kBnbMin8bitSize) small = add(small, mul(r * side, copies));
        }
        b.bytes.optimizer_states =
            add(ceil_div(mul(n - small, bpp.optimizer_states), 256), mul(small, fp32.optimizer_states) / 256);
    }

    // Base activations: the same stored tensors as full training (the gradient must flow through every frozen
    // layer to the adapters below it); memory.h counts them. One GPU, so the setup's recipe does not matter.
    TrainingSetup one = st;
    one.recipe = Recipe{};
    const MemoryBudget base = memory_budget(c, one);
    const u64 r_adapter = static_cast<u64>(s.lora.rank);
    // Adapter activations per module and token: A·x (r values, for B's gradient) and, with dropout, the dropped
    // input (in values) and its 1-byte mask, for A's gradient. Full recomputation holds one layer's at a time.
    const u64 act = static_cast<u64>(st.activation_bytes);
    const bool one_layer = st.recompute == Recompute::Full;
    for (const LoraModule& m : b.lora.modules) {
        u64 per_token = mul(static_cast<u64>(s.lora.rank), act);
        if (s.lora.dropout > 0) per_token = add(per_token, mul(static_cast<u64>(m.in), act + 1));
        const u64 layers = one_layer ? u64{1} : static_cast<u64>(m.layers);
        // Routed experts see top-k of the tokens between them; the others see every token.
        b.bytes.adapter_activations =
            add(b.bytes.adapter_activations, mul(mul(mul(tokens, per_token), static_cast<u64>(m.active)), layers));
    }
    // optimizer_in_backward holds one adapter matrix's gradient at a time: the largest A (r × in) or B (out × r).
    u64 largest_adapter = 0;
    for (const LoraModule& m : b.lora.modules)
        largest_adapter = std::max(largest_adapter, mul(r_adapter, static_cast<u64>(std::max(m.in, m.out))));
    step_peak(s, base.activations, mul(largest_adapter, bpp.gradients) / 256, 0, b);
    b.paged_floor_bytes = s.paged ? b.bytes.total - b.bytes.optimizer_states : b.bytes.total;

    // FLOPs: backward to the inputs of every matmul (2× the forward of the weight matmuls' input gradient and
    // of the attention matmuls' both operands) minus the weight gradients of the frozen weights.
    double non_weight = 0;  // per sequence: matmuls of two activations (attention scores and values)
    for (const FlopsTerm& t : flops.terms) {
        const std::string_view id = t.id;
        if (id == "attn_scores" || id == "attn_values" || id == "indexer") non_weight += t.forward_per_sequence;
    }
    if (c.is_encoder_decoder()) {
        // Cross-attention's Q·Kᵀ and ·V over s_dec × s entries (flops.cpp's cross_core): 4 s_dec s a d L_dec.
        const double sd = static_cast<double>(st.decoder_seq > 0 ? st.decoder_seq : st.seq);
        non_weight += 4 * sd * static_cast<double>(st.seq) * static_cast<double>(c.q_dim()) *
                      static_cast<double>(c.num_decoder_layers);
    }
    const double seq = static_cast<double>(st.seq);
    b.base_training_per_token = 2 * flops.forward_per_token + non_weight / seq;
    // An adapter's forward is 2 r (in + out) per token; its backward twice that (input and weight gradients).
    b.adapter_training_per_token = 6 * static_cast<double>(b.lora.active);
    const double adapter_recompute = st.recompute == Recompute::Full ? 2 * static_cast<double>(b.lora.active) : 0;
    b.recompute_per_token = flops.recompute_per_token + adapter_recompute;
    b.training_per_token = b.base_training_per_token + b.adapter_training_per_token + b.recompute_per_token;
    return b;
}

}  // namespace tally
