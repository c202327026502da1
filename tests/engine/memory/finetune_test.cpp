// Tests of engine/src/memory/finetune.cpp: LoRA adapter counts (against HF PEFT's printed trainable parameters), QLoRA's
// NF4 storage (Dettmers et al. 2023, arXiv:2305.14314), the frozen-base FLOPs and full fine-tuning with 8-bit AdamW.
#include <catch2/catch.hpp>

#include "accounting_helpers.h"
#include "tally/memory/finetune.h"
#include "tally/model/params.h"

using tally::FinetuneMethod;
using tally::FinetuneSetup;
using tally::LoraConfig;
using tally_test::error_field;
using tally_test::error_message;
using tally_test::preset;

namespace {

// LLaMA-65B (Touvron et al. 2023, "LLaMA", Table 2: dim 8192, 64 heads, 80 layers; FFN 22016 in the released
// params.json), which the engine has no preset for.
tally::ModelConfig llama_65b() {
    return tally::resolve_model(nlohmann::json{{"model",
                                                {{"vocab_size", 32000},
                                                 {"hidden_size", 8192},
                                                 {"num_layers", 80},
                                                 {"num_heads", 64},
                                                 {"num_kv_heads", 64},
                                                 {"ffn_hidden_size", 22016},
                                                 {"mlp", "swiglu"},
                                                 {"norm", "rmsnorm"},
                                                 {"position", "rotary"},
                                                 {"tied_embeddings", false}}}});
}

LoraConfig lora(std::int64_t rank, unsigned targets) {
    LoraConfig l;
    l.rank = rank;
    l.alpha = 16;
    l.targets = targets;
    return l;
}

// QLoRA's Guanaco recipe (paper sec. 5 / Appendix B; artidoro/qlora finetune_guanaco_*.sh): r 64 on every linear
// layer, NF4 with double quantization, bf16 compute and adapters, paged 32-bit AdamW, gradient checkpointing,
// batch 1, sequence 512 (the memory breakdown's setting).
FinetuneSetup guanaco() {
    FinetuneSetup s;
    s.method = FinetuneMethod::Qlora;
    s.base = tally::BaseStorage::NF4;
    s.lora = lora(64, tally::kLoraAllLinear);
    s.lora.dropout = 0;
    s.adapter = tally::DType::BF16;
    s.paged = true;
    s.training.seq = 512;
    s.training.micro_batch = 1;
    s.training.recompute = tally::Recompute::Full;
    return s;
}

}  // namespace

TEST_CASE("LoRA parameters equal PEFT's printed trainable params for Llama-2-7B r=8 q,v and Llama-3-8B r=16 all") {
    // PEFT print_trainable_parameters, Llama-2-7B, r 8, target_modules [q_proj, v_proj]: 4,194,304.
    // Derivation: each adapter is A (r × in) + B (out × r) = 8 (4096 + 4096) = 65,536; 2 per layer × 32 layers.
    CHECK(tally::lora_params(preset("llama-2-7b"), lora(8, tally::kLoraQ | tally::kLoraV)).total == 4'194'304);
    // Llama-3-8B, r 16, every linear layer: 41,943,040. Derivation with GQA (k, v: 8 KV heads × 128 = 1024 outputs):
    // q, o 16 (4096 + 4096) = 131,072 each; k, v 16 (4096 + 1024) = 81,920 each; gate, up, down 16 (4096 + 14336)
    // = 294,912 each; 1,310,720 per layer × 32 = 41,943,040.
    const auto all = tally::lora_params(preset("llama-3-8b"), lora(16, tally::kLoraAllLinear));
    CHECK(all.total == 41'943'040);
    CHECK(all.narrowest == 1024);  // k's 1024 outputs bound the rank
}

TEST_CASE("QLoRA on LLaMA-7B r=64 all linear reproduces qlora.py's printed 79,953,920.0 of 3,660,320,768 params") {
    // artidoro/qlora's qlora.py on LLaMA-7B (llama-7b-hf, 33 shards) logs "trainable params: 79953920.0 || all params:
    // 3660320768": its print_trainable_parameters halves the trainable count when bits == 4, and torch's numel() of
    // a Params4bit of n weights is n/2 packed bytes. Derivation: adapters 64 (4·(4096 + 4096) + 3·(4096 + 11008)) =
    // 4,997,120 per layer × 32 = 159,907,840 (halved: 79,953,920); linear weights 32 (4·4096² + 3·4096·11008) =
    // 6,476,005,376, packed 3,238,002,688; embedding, head and norms 262,410,240 unquantized.
    auto s = guanaco();
    const auto b = tally::finetune_budget(preset("llama-2-7b"), s);  // LLaMA-7B's shape (Llama 2 Table 1)
    CHECK(b.params_trainable == 159'907'840);
    CHECK(b.params_trainable / 2 == 79'953'920);
    CHECK(b.params_quantized == 6'476'005'376);
    CHECK(b.params_quantized / 2 + (b.params_total - b.params_quantized) + b.params_trainable == 3'660'320'768);
}

TEST_CASE("LoRA on a MoE adapts each routed expert, a token's FLOPs only the top-k; MLA has no k or v") {
    // Mixtral 8x7B, r 8, all linear: attention 8 (2·8192 + 2·5120) = 212,992 per layer; 8 experts × 3 × 8 (4096 +
    // 14336) = 3,538,944 per layer; (212,992 + 3,538,944) × 32 = 120,061,952. Active: 2 of 8 experts.
    const auto mixtral = preset("mixtral-8x7b");
    const auto all = tally::lora_params(mixtral, lora(8, tally::kLoraAllLinear));
    CHECK(all.total == 120'061'952);
    CHECK(all.active == (212'992 + 3'538'944 / 4) * 32);
    auto attention_only = lora(8, tally::kLoraAllLinear);
    attention_only.experts = false;
    CHECK(tally::lora_params(mixtral, attention_only).total == 212'992 * 32);
    // DeepSeek-V3 (MLA): q_a, q_b, kv_a, kv_b and o; asking for k names the field and lists what exists.
    const auto v3 = preset("deepseek-v3");
    CHECK(error_field([&] { tally::lora_params(v3, lora(8, tally::kLoraK)); }) == "lora_targets");
    CHECK_THAT(error_message([&] { tally::lora_params(v3, lora(8, tally::kLoraK)); }),
               Catch::Contains("q_a,q_b,kv_a,kv_b"));
    CHECK(tally::lora_params(v3, lora(8, tally::kLoraQA | tally::kLoraKvA)).total > 0);
}

TEST_CASE("NF4 with double quantization costs 0.127 bits per weight over 4, saving 0.373 bits, ~3 GB at 65B") {
    // QLoRA sec. 3, Double Quantization: 32/64 = 0.5 bits of fp32 absmax per weight become 8/64 + 32/(64·256) =
    // 0.127 bits, "a reduction of 0.373 bits per parameter", "approximately 3 GB for a 65B model".
    CHECK(tally::nf4_bits_per_param(true) == 4.126953125);
    CHECK(tally::nf4_bits_per_param(false) == 4.5);
    CHECK(tally::nf4_bits_per_param(false) - tally::nf4_bits_per_param(true) == Approx(0.373).margin(0.0005));
    // One 4096 × 4096 matrix: 8,388,608 packed bytes + 262,144 absmax bytes + 4 × 1,024 scales + 4 (offset).
    CHECK(tally::nf4_bytes(4096 * 4096, true) == 8'388'608 + 262'144 + 4'096 + 4);
    CHECK(tally::nf4_bytes(4096 * 4096, false) == 8'388'608 + 4 * 262'144);
    auto s = guanaco();
    const auto dq = tally::finetune_budget(llama_65b(), s);
    s.double_quant = false;
    const auto plain = tally::finetune_budget(llama_65b(), s);
    const double saved = static_cast<double>(plain.bytes.frozen_weights - dq.bytes.frozen_weights);
    CHECK(saved > 2.9e9);
    CHECK(saved < 3.1e9);
}

TEST_CASE("QLoRA fits LLaMA-65B on one 48 GB GPU with the paper's settings; 16-bit LoRA needs over 130 GB") {
    // QLoRA abstract: "finetune a 65B parameter model on a single 48GB GPU" (Guanaco settings above). A measured fit
    // bounds the total from above; tally leaves out the CUDA context and allocator slack, which only add to the
    // measurement, so 48e9 bytes (less than the 48 GiB of an A6000/A40) is the ceiling. The lower bound: the NF4
    // weights alone are 64.76e9 × 4.127 / 8 = 33.4e9 bytes, and the paper needs paged optimizers to fit.
    const auto q = tally::finetune_budget(llama_65b(), guanaco());
    CHECK(q.bytes.total < 48e9);
    CHECK(q.bytes.total > 40e9);
    CHECK(q.bytes.frozen_weights > 33.4e9);
    CHECK(q.paged_floor_bytes == q.bytes.total - q.bytes.optimizer_states);
    // 799,539,200 adapters = 64 (4·(8192 + 8192) + 3·(8192 + 22016)) × 80; paged 32-bit AdamW: 8 B each.
    CHECK(q.params_trainable == 799'539'200);
    CHECK(q.bytes.optimizer_states == 799'539'200ull * 8);
    auto s = guanaco();
    s.method = FinetuneMethod::Lora;
    s.base = tally::BaseStorage::BF16;
    CHECK(tally::finetune_budget(llama_65b(), s).bytes.frozen_weights > 130e9);
}

TEST_CASE("LoRA training FLOPs: 4N plus the attention matmuls' both operands, plus 6 per adapter parameter") {
    // Frozen weights need no weight-gradient GEMM: the backward keeps only the input gradient (2N per token) of
    // each weight matmul, so 2N + 2N = 4N instead of 6N; Q·Kᵀ and ·V still need both operands' gradients (3A).
    // Llama-2-7B, s 2048: weight matmuls N = 6,476,005,376 (layers) + 131,072,000 (LM head); A = 2·2·s·a·d·L =
    // 4 · 2048 · 4096 · 32 = 1,073,741,824 per token (full s×s). Adapters r 8 on q, v: 4,194,304, 6 FLOPs each.
    FinetuneSetup s;
    s.lora = lora(8, tally::kLoraQ | tally::kLoraV);
    s.training.seq = 2048;
    const auto b = tally::finetune_budget(preset("llama-2-7b"), s);
    const double n = 6'476'005'376.0 + 131'072'000.0, a = 1'073'741'824.0;
    CHECK(b.base_training_per_token == 4 * n + 3 * a);
    CHECK(b.adapter_training_per_token == 6 * 4'194'304.0);
    CHECK(b.training_per_token == 4 * n + 3 * a + 6 * 4'194'304.0);
    CHECK(b.full_training_per_token == 6 * n + 3 * a);
}

TEST_CASE("LoRA memory: frozen base without gradients or states, adapters with fp32 AdamW, adapter activations") {
    // Llama-2-7B bf16 base: 6,738,415,616 params × 2 B; adapters r 8 q,v: 4,194,304 × (4 + 4 + 8) B (PEFT keeps
    // adapters in fp32). With dropout each adapted input is stored again (bf16 + 1-byte mask) for A's gradient.
    FinetuneSetup s;
    s.lora = lora(8, tally::kLoraQ | tally::kLoraV);
    s.training.seq = 1024;
    const auto b = tally::finetune_budget(preset("llama-2-7b"), s);
    CHECK(b.bytes.frozen_weights == 6'738'415'616ull * 2);
    CHECK(b.bytes.trainable_weights == 4'194'304ull * 4);
    CHECK(b.bytes.gradients == 4'194'304ull * 4);
    CHECK(b.bytes.optimizer_states == 4'194'304ull * 8);
    CHECK(b.bytes.dequant_buffer == 0);
    // The frozen layers store what full training stores: the gradient flows through each of them.
    CHECK(b.bytes.activations == tally::memory_budget(preset("llama-2-7b"), s.training).bytes.activations);
    // A·x: s · r values per adapted module and layer, 2 bytes each: 1024 · 8 · 2 · 2 modules · 32 layers.
    CHECK(b.bytes.adapter_activations == 1024ull * 8 * 2 * 2 * 32);
    s.lora.dropout = 0.05;
    const auto dropped = tally::finetune_budget(preset("llama-2-7b"), s);
    CHECK(dropped.bytes.adapter_activations == b.bytes.adapter_activations + 1024ull * 4096 * 3 * 2 * 32);
    // 8-bit AdamW on the adapters: 2 B + an fp32 absmax per 2048 values (bitsandbytes).
    s.training.recipe.optimizer = tally::Optimizer::AdamW8bit;
    s.training.recipe.optimizer_state = tally::DType::INT8;
    CHECK(tally::finetune_budget(preset("llama-2-7b"), s).bytes.optimizer_states == 4'194'304ull * 2 + 4'194'304 / 256);
    // bitsandbytes' min_8bit_size = 4096: GPT-2 small's r 4 adapters on q, v (A 4 × 768, B 768 × 4 = 3,072
    // elements each) keep 32-bit states, 8 B per parameter; r 8 (6,144 each) gets the 8-bit states.
    const auto gpt2 = preset("gpt2-small");
    s.lora = lora(4, tally::kLoraQ | tally::kLoraV);
    const std::uint64_t n4 = 4ull * (768 + 768) * 2 * 12;
    CHECK(tally::finetune_budget(gpt2, s).bytes.optimizer_states == n4 * 8);
    s.lora = lora(8, tally::kLoraQ | tally::kLoraV);
    CHECK(tally::finetune_budget(gpt2, s).bytes.optimizer_states == 2 * n4 * 2 + 2 * n4 / 256);
}

TEST_CASE(
    "bitsandbytes before 0.43.2 keeps each 4-bit linear's input: the attention input, o's, the MLP input, down's") {
    // MatMul4Bit saved ctx.tensors = (A, B) until bitsandbytes PR #1270 (commit 9e75374, 2024-07-16). Llama-2-7B
    // (h 4096, FFN 11008, 32 layers): q, k, v share one input, gate and up another, o and down read their own:
    // (3 · 4096 + 11008) bf16 values per token and layer.
    FinetuneSetup s;
    s.method = FinetuneMethod::Qlora;
    s.base = tally::BaseStorage::NF4;
    s.training.seq = 1304;
    const auto today = tally::finetune_budget(preset("llama-2-7b"), s);
    CHECK(today.bytes.quantized_inputs == 0);
    s.quantized_inputs_kept = true;
    const auto kept = tally::finetune_budget(preset("llama-2-7b"), s);
    const std::uint64_t expected = 1304ull * (3 * 4096 + 11008) * 2 * 32;
    CHECK(kept.bytes.quantized_inputs == expected);
    CHECK(kept.bytes.total == today.bytes.total + expected);
    // Full recomputation holds one layer's inputs at a time; a 16-bit base has no 4-bit linears to keep them.
    s.training.recompute = tally::Recompute::Full;
    CHECK(tally::finetune_budget(preset("llama-2-7b"), s).bytes.quantized_inputs == expected / 32);
    s.training.recompute = tally::Recompute::None;
    s.method = FinetuneMethod::Lora;
    s.base = tally::BaseStorage::BF16;
    CHECK(tally::finetune_budget(preset("llama-2-7b"), s).bytes.quantized_inputs == 0);
    // Mixtral: the router reads the MLP input; each token's gathered copy reaches top-2 experts (gate/up, down).
    s.method = FinetuneMethod::Qlora;
    s.base = tally::BaseStorage::NF4;
    const auto mixtral = preset("mixtral-8x7b");
    const auto moe = tally::finetune_budget(mixtral, s);
    const auto h = static_cast<std::uint64_t>(mixtral.hidden_size);
    const auto f = static_cast<std::uint64_t>(mixtral.ffn_hidden_size);
    const std::uint64_t per_layer = 3 * h + 2 * (h + f);  // attention in, o in, router in, top-2 × (expert in, down in)
    CHECK(moe.bytes.quantized_inputs == 1304ull * per_layer * 2 * static_cast<std::uint64_t>(mixtral.num_layers));
}

TEST_CASE("full fine-tuning with 8-bit AdamW: 2 B of state per parameter, a quarter of AdamW's 8 B") {
    // HF Transformers, "Efficient training on a single GPU" (perf_train_gpu_one): for a 3B-parameter model AdamW's
    // states need 24 GB, bitsandbytes' 8-bit AdamW 6 GB; Dettmers et al. 2022 sec. 2: int8 m and v with one fp32
    // absmax per 2048-value block, 2 + 8/2048 B per parameter. Pure bf16 weights and gradients on one GPU: 6.0039 B.
    FinetuneSetup s;
    s.method = FinetuneMethod::Full;
    s.training.recipe = tally::Recipe{tally::DType::BF16, tally::DType::BF16, tally::DType::None,
                                      tally::Optimizer::AdamW8bit, tally::DType::INT8};
    s.training.recompute = tally::Recompute::Full;
    s.paged = true;
    const auto c = preset("llama-2-7b");
    const auto b = tally::finetune_budget(c, s);
    const std::uint64_t n = 6'738'415'616;
    CHECK(b.params_trainable == n);
    CHECK(b.bytes.optimizer_states == n * 513 / 256);
    CHECK(b.bytes.trainable_weights + b.bytes.gradients == n * 4);
    CHECK(b.paged_floor_bytes == b.bytes.total - b.bytes.optimizer_states);
    s.training.recipe.optimizer = tally::Optimizer::AdamW;
    s.training.recipe.optimizer_state = tally::DType::FP32;
    CHECK(static_cast<double>(tally::finetune_budget(c, s).bytes.optimizer_states) /
              static_cast<double>(b.bytes.optimizer_states) ==
          Approx(4.0).epsilon(0.002));
}

TEST_CASE("bad fine-tuning input names the field and the allowed range") {
    const auto c = preset("llama-3-8b");
    FinetuneSetup s;
    s.lora = lora(2048, tally::kLoraAllLinear);  // above k's 1024 outputs
    CHECK(error_field([&] { tally::finetune_budget(c, s); }) == "lora_rank");
    CHECK_THAT(error_message([&] { tally::finetune_budget(c, s); }), Catch::Contains("[1, 1024]"));
    s.lora = lora(8, tally::kLoraGate);
    CHECK(error_field([&] { tally::finetune_budget(preset("gpt2-small"), s); }) == "lora_targets");
    CHECK(error_field([] { tally::lora_targets_from_string("q,qq"); }) == "lora_targets");
    CHECK_THAT(error_message([] { tally::lora_targets_from_string("q,qq"); }), Catch::Contains("all-linear"));
    CHECK(tally::lora_targets_from_string("q_proj, v_proj") == (tally::kLoraQ | tally::kLoraV));
    s.lora = lora(8, tally::kLoraQ);
    s.lora.alpha = 0;
    CHECK_THAT(error_message([&] { tally::finetune_budget(c, s); }), Catch::Contains("lora_alpha must be in (0, 1e6]"));
    s.lora.alpha = 16;
    s.lora.dropout = 1;
    CHECK(error_field([&] { tally::finetune_budget(c, s); }) == "lora_dropout");
    s.lora.dropout = 0;
    s.method = FinetuneMethod::Qlora;  // base still bf16
    CHECK(error_field([&] { tally::finetune_budget(c, s); }) == "base_dtype");
    s.method = FinetuneMethod::Lora;
    s.training.gpus = 2;
    CHECK(error_field([&] { tally::finetune_budget(c, s); }) == "gpus");
    s.training.gpus = 1;
    s.training.zero = 1;
    CHECK(error_field([&] { tally::finetune_budget(c, s); }) == "zero");
}

namespace {

// Llama 3.2 3B as torchtune builds it (pytorch/torchtune@1814feb17a9038e1a8053ce93111bd26774a8db6,
// torchtune/models/llama3_2/_model_builders.py llama3_2_3b; TiedLinear output in _component_builders.py).
tally::ModelConfig llama32_3b() {
    return tally::resolve_model(nlohmann::json{{"model",
                                                {{"vocab_size", 128256},
                                                 {"hidden_size", 3072},
                                                 {"num_layers", 28},
                                                 {"num_heads", 24},
                                                 {"num_kv_heads", 8},
                                                 {"head_dim", 128},
                                                 {"ffn_hidden_size", 8192},
                                                 {"mlp", "swiglu"},
                                                 {"norm", "rmsnorm"},
                                                 {"position", "rotary"},
                                                 {"tied_embeddings", true}}}});
}

// torchtune's full_finetune_single_device in bf16: bf16 weights, gradients and AdamW states, batch 2 × 4096 packed.
FinetuneSetup torchtune_full() {
    FinetuneSetup s;
    s.method = FinetuneMethod::Full;
    s.training.recipe = tally::Recipe{tally::DType::BF16, tally::DType::BF16, tally::DType::None,
                                      tally::Optimizer::AdamW, tally::DType::BF16};
    s.training.seq = 4096;
    s.training.micro_batch = 2;
    s.training.flash_attention = true;
    s.training.recompute = tally::Recompute::Full;
    return s;
}

}  // namespace

TEST_CASE("grads_freed: the peak is the end of backward, every gradient and a tied embedding's second one") {
    // 3,212,749,824 parameters (embeddings 128,256 × 3,072 + 28 layers of 3,072 × (3,072 + 2 · 1,024 + 3,072) +
    // 3 · 3,072 · 8,192 + 2 · 3,072 norms, + the final norm); bf16 weights 2 + states 4 + gradients 2 B.
    const auto c = llama32_3b();
    FinetuneSetup s = torchtune_full();
    const auto summed = tally::finetune_budget(c, s);
    CHECK(summed.peak_phase == tally::PeakPhase::Sum);
    const std::uint64_t n = 3'212'749'824;
    CHECK(summed.params_total == n);
    s.grads_freed = true;
    s.loss_chunks = 8;  // torchtune's CEWithChunkedOutputLoss default
    const auto b = tally::finetune_budget(c, s);
    const std::uint64_t embedding_grad = 128256ull * 3072 * 2;
    CHECK(b.backward_end_bytes == n * 8 + embedding_grad);
    // Checkpointed layers hold 28 layer inputs of 8,192 × 3,072 bf16: far below the gradients, so the end wins.
    CHECK(b.peak_phase == tally::PeakPhase::BackwardEnd);
    CHECK(b.bytes.total == b.backward_end_bytes);
    CHECK(b.bytes.total < summed.bytes.total);
    // The start holds no gradient: weights and states, the 28 checkpoints, the final norm's and LM head's inputs and
    // the larger of the loss (bf16 logits and one eighth's bf16 gradient) and one recomputed layer.
    const std::uint64_t loss = 8192ull * 128256 * 2 + 8192ull * 128256 * 2 / 8;
    CHECK(b.loss_bytes == loss);
    CHECK(b.backward_start_bytes == n * 6 + 30ull * 8192 * 3072 * 2 + loss);
}

TEST_CASE("optimizer_in_backward holds one gradient, the tied embedding's; offloading moves the checkpoints to host") {
    const auto c = llama32_3b();
    FinetuneSetup s = torchtune_full();
    s.optimizer_in_backward = true;
    const auto b = tally::finetune_budget(c, s);
    const std::uint64_t n = 3'212'749'824, embedding_grad = 128256ull * 3072 * 2;
    CHECK(b.gradient_held_bytes == embedding_grad);
    CHECK(b.bytes.gradients == embedding_grad);
    CHECK(b.backward_end_bytes == n * 6 + embedding_grad);
    CHECK(b.peak_phase == tally::PeakPhase::BackwardStart);
    // The start: weights and states, the stored activations, the larger of loss and one recomputed layer, and the
    // held gradient. The unchunked loss is the fp32 logits and their fp32 gradient: 2 · 4 · 8,192 · 128,256 B.
    CHECK(b.loss_bytes == 2ull * 4 * 8192 * 128256);
    CHECK(b.bytes.total == b.backward_start_bytes);
    s.activation_offloading = true;
    const auto off = tally::finetune_budget(c, s);
    // Each of the 28 checkpoints is one layer input, 8,192 positions × 3,072 × 2 B.
    CHECK(off.offloaded_bytes == 28ull * 8192 * 3072 * 2);
    CHECK(b.bytes.total - off.bytes.total == off.offloaded_bytes);
    s.training.recompute = tally::Recompute::None;
    CHECK(error_field([&] { tally::finetune_budget(c, s); }) == "activation_offloading");
    s.activation_offloading = false;
    s.training.gpus = 2;
    CHECK(error_field([&] { tally::finetune_budget(c, s); }) == "optimizer_in_backward");
}

TEST_CASE("loss_chunks keeps the logits in bf16 and stores no fp32 copy") {
    // CEWithChunkedOutputLoss, compiled: 8 chunks of Llama-2-7B's 1,024 × 32,000 logits kept in bf16, no fp32 copy.
    FinetuneSetup s;
    s.lora = lora(8, tally::kLoraQ | tally::kLoraV);
    s.training.seq = 1024;
    const auto c = preset("llama-2-7b");
    const auto whole = tally::finetune_budget(c, s);
    CHECK(whole.loss_bytes == 1024ull * 32000 * 4);
    CHECK(whole.bytes.activations == tally::memory_budget(c, s.training).bytes.activations);
    s.loss_chunks = 8;
    const auto chunked = tally::finetune_budget(c, s);
    CHECK(chunked.loss_bytes == 1024ull * 32000 * 2);
    CHECK(whole.bytes.total - chunked.bytes.total == whole.loss_bytes - chunked.loss_bytes);
    s.loss_chunks = 1025;
    CHECK(error_field([&] { tally::finetune_budget(c, s); }) == "loss_chunks");
    CHECK_THAT(error_message([&] { tally::finetune_budget(c, s); }), Catch::Contains("[0, 1024]"));
}
