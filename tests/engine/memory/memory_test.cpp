// Tests of engine/src/memory/memory.cpp: bytes per parameter, ZeRO, tensor/pipeline/sequence parallelism
// and the activation terms of Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
// Transformer Models", arXiv:2205.05198).
#include <catch2/catch.hpp>

#include <map>
#include <utility>

#include "accounting_helpers.h"
#include "tally/model/hf_config.h"
#include "tally/memory/memory.h"
#include "tally/model/params.h"

using tally::memory_budget;
using tally::Recompute;
using tally::TrainingSetup;
using tally_test::error_field;
using tally_test::preset;

namespace {

// One layer's activation bytes for one micro-batch.
std::uint64_t per_layer(const tally::ModelConfig& c, const TrainingSetup& st) {
    return tally::activation_memory(c, st, 1, 1, false, false).per_layer_bytes;
}

TrainingSetup gpt3_setup() {
    TrainingSetup st;
    st.seq = 2048;  // GPT-3's context (Brown et al. 2020)
    st.micro_batch = 1;
    return st;
}

}  // namespace

TEST_CASE("Korthikanti: a GPT layer with 16-bit activations stores 34sbh + 5as²b bytes") {
    // Eq. (1) of sec. 4.1: sbh(34 + 5as/h). GPT-3 175B: s 2048, b 1, h 12288, a 96.
    const auto c = preset("gpt3-175b");
    for (std::int64_t b : {1, 4}) {
        auto st = gpt3_setup();
        st.micro_batch = b;
        const std::uint64_t s = 2048, h = 12288, a = 96;
        CHECK(per_layer(c, st) == 34 * s * b * h + 5 * a * s * s * b);
    }
    CHECK(per_layer(c, gpt3_setup()) == 2'868'903'936u);
}

TEST_CASE("Korthikanti: tensor parallelism gives sbh(10 + 24/t + 5as/(ht)), sequence parallelism sbh(34 + 5as/h)/t") {
    // Eqs. (2) and (3), sec. 4.2.1-4.2.2, for t = 8 on GPT-3 175B.
    const auto c = preset("gpt3-175b");
    const std::uint64_t s = 2048, h = 12288, a = 96, t = 8;
    auto st = gpt3_setup();
    st.tp = 8;
    CHECK(per_layer(c, st) == s * h * (10 + 24 / t) + 5 * a * s * s / t);
    st.sequence_parallel = true;
    CHECK(per_layer(c, st) == (34 * s * h + 5 * a * s * s) / t);
}

TEST_CASE("Korthikanti: selective recomputation drops the 5as²b attention terms; full keeps 2sbh per layer") {
    // Sec. 5 and Table 2: selective 34sbh/t with TP+SP; full recomputation 2sbh per layer.
    const auto c = preset("gpt3-175b");
    const std::uint64_t s = 2048, h = 12288;
    auto st = gpt3_setup();
    st.recompute = Recompute::Selective;
    CHECK(per_layer(c, st) == 34 * s * h);
    st.tp = 8;
    st.sequence_parallel = true;
    CHECK(per_layer(c, st) == 34 * s * h / 8);
    st = gpt3_setup();
    st.recompute = Recompute::Full;
    CHECK(per_layer(c, st) == 2 * s * h);
}

TEST_CASE("FlashAttention stores no s×s terms, only 4 bytes of softmax statistics per row per head") {
    const auto c = preset("gpt3-175b");
    const std::uint64_t s = 2048, h = 12288, a = 96;
    auto st = gpt3_setup();
    st.flash_attention = true;
    CHECK(per_layer(c, st) == 34 * s * h + 4 * a * s);
}

TEST_CASE("without dropout a GPT layer stores 32sbh + 2as²b (no masks, no dropped copy)") {
    const auto c = preset("gpt3-175b");
    const std::uint64_t s = 2048, h = 12288, a = 96;
    auto st = gpt3_setup();
    st.dropout = false;
    CHECK(per_layer(c, st) == 32 * s * h + 2 * a * s * s);
}

TEST_CASE("SwiGLU stores three f-wide tensors and GQA shrinks K and V (Llama-2-70B)") {
    const auto c = preset("llama-2-70b");
    const std::uint64_t s = 4096, h = 8192, a = 64, f = 28672, kv = 8 * 128;
    TrainingSetup st;
    st.seq = 4096;
    st.dropout = false;
    st.flash_attention = true;
    // norms 2·2sh, qkv/mlp inputs 2·2sh, Q 2sh, K and V 2·2s·kv, attention output 2sh, 3 · 2sf, stats 4as.
    CHECK(per_layer(c, st) == 4 * s * h + 4 * s * h + 2 * s * h + 4 * s * kv + 2 * s * h + 6 * s * f + 4 * a * s);
}

TEST_CASE("the default recipe is 2+2+4+8 = 16 bytes per parameter; fp32 AdamW is 16 without a master copy") {
    const auto b = tally::bytes_per_param_256(tally::find_recipe(tally::kDefaultRecipe).recipe);
    CHECK(b.weights == 2 * 256);
    CHECK(b.gradients == 2 * 256);
    CHECK(b.master_weights == 4 * 256);
    CHECK(b.optimizer_states == 8 * 256);
    const auto f = tally::bytes_per_param_256(tally::find_recipe("fp32_adamw").recipe);
    CHECK(f.total() == 16 * 256);
    CHECK(f.master_weights == 0);
    CHECK(tally::bytes_per_param_256(tally::find_recipe("bf16_adamw_no_master").recipe).total() == 12 * 256);
    CHECK(tally::bytes_per_param_256(tally::find_recipe("bf16_mixed_adamw_fp32_grads").recipe).total() == 18 * 256);
    // 8-bit Adam: 2 bytes of states plus an fp32 absmax per 2048 values per state (Dettmers et al. 2022).
    CHECK(tally::bytes_per_param_256(tally::find_recipe("bf16_mixed_adamw_8bit").recipe).total() == 10 * 256 + 1);
}

TEST_CASE("a fp32 master copy on top of fp32 weights is rejected (the seed notes' double count)") {
    tally::Recipe p = tally::find_recipe("fp32_adamw").recipe;
    p.master_weights = tally::DType::FP32;
    CHECK(error_field([&] { tally::validate(p); }) == "master_weights");
}

TEST_CASE("ZeRO stages 1/2/3 divide exactly optimizer states, then gradients, then parameters") {
    // Rajbhandari et al. 2020, "ZeRO", sec. 5 and Fig. 1: P_os shards the K = 12 bytes of
    // optimizer state (fp32 master + m + v), P_os+g also the 2-byte gradients, P_os+g+p also the
    // 2-byte weights. Llama-2-7B's N is divisible by 8, so the shards are exact.
    const auto c = preset("llama-2-7b");
    const std::uint64_t N = 6'738'415'616u, dp = 8;
    TrainingSetup st;
    st.gpus = 8;
    st.zero = 0;
    const auto z0 = memory_budget(c, st);
    CHECK(z0.bytes.weights == 2 * N);
    CHECK(z0.bytes.gradients == 2 * N);
    CHECK(z0.bytes.master_weights == 4 * N);
    CHECK(z0.bytes.optimizer_states == 8 * N);
    st.zero = 1;
    const auto z1 = memory_budget(c, st);
    CHECK(z1.bytes.weights == 2 * N);
    CHECK(z1.bytes.gradients == 2 * N);
    CHECK(z1.bytes.master_weights == 4 * N / dp);
    CHECK(z1.bytes.optimizer_states == 8 * N / dp);
    st.zero = 2;
    const auto z2 = memory_budget(c, st);
    CHECK(z2.bytes.weights == 2 * N);
    CHECK(z2.bytes.gradients == 2 * N / dp);
    CHECK(z2.bytes.optimizer_states == 8 * N / dp);
    st.zero = 3;
    const auto z3 = memory_budget(c, st);
    CHECK(z3.bytes.weights == 2 * N / dp);
    CHECK(z3.bytes.gradients == 2 * N / dp);
    CHECK(z3.bytes.master_weights + z3.bytes.optimizer_states == 12 * N / dp);
    for (const auto* z : {&z0, &z1, &z2, &z3}) CHECK(z->bytes.activations == z0.bytes.activations);
}

TEST_CASE("ZeRO Figure 1: 7.5B parameters on 64 GPUs need 120, 31.4, 16.6 and 1.9 GB per GPU") {
    // Rajbhandari et al. 2020, Fig. 1 (Ψ = 7.5B, K = 12, N_d = 64), from the class bytes per parameter.
    const auto b = tally::bytes_per_param_256(tally::find_recipe(tally::kDefaultRecipe).recipe);
    const double psi = 7.5e9, nd = 64;
    const double w = b.weights / 256.0, g = b.gradients / 256.0, k = (b.master_weights + b.optimizer_states) / 256.0;
    CHECK((w + g + k) * psi / 1e9 == Approx(120));
    CHECK((w + g + k / nd) * psi / 1e9 == Approx(31.4).epsilon(0.002));
    CHECK((w + (g + k) / nd) * psi / 1e9 == Approx(16.6).epsilon(0.003));
    CHECK((w + g + k) / nd * psi / 1e9 == Approx(1.875));
}

TEST_CASE("pipeline parallelism: the first stage holds p micro-batches, L/p · p layers' worth of activations") {
    // Korthikanti et al. 2022, sec. 4.2.3 (1F1B schedule): the first stage's activation memory equals
    // that of all L layers for one micro-batch.
    const auto c = preset("gpt3-175b");
    TrainingSetup st = gpt3_setup();
    st.tp = 8;
    st.sequence_parallel = true;
    st.pp = 8;
    st.gpus = 64;
    const auto m = memory_budget(c, st);
    CHECK(m.layers_per_stage == 12);
    CHECK(std::string(m.stage) == "first");
    CHECK(m.activations.in_flight == 8);
    CHECK(m.activations.total_bytes - m.activations.outside_bytes == 96 * per_layer(c, st));
    // With 2 micro-batches per step only 2 are ever in flight.
    st.global_batch = 2;
    CHECK(memory_budget(c, st).activations.in_flight == 2);
}

TEST_CASE("the logits in fp32 are 4sbV bytes, split across tensor-parallel ranks") {
    // Korthikanti et al. 2022, sec. 4.3: the cross-entropy needs the logits in fp32, 4sbv/t.
    const auto c = preset("llama-3-8b");
    TrainingSetup st;
    st.seq = 8192;
    const auto a = tally::activation_memory(c, st, 1, 1, false, true);
    std::uint64_t logits = 0;
    for (const auto& t : a.terms)
        if (std::string(t.id) == "logits_fp32") logits = t.bytes;
    CHECK(logits == 4ull * 8192 * 128256);
}

TEST_CASE("bad setups name the field: dp must divide, tp must divide heads, pp at most the layers") {
    const auto c = preset("llama-2-7b");
    // Each bad setup (the defaults with these changes) and the field its error names.
    const std::pair<void (*)(TrainingSetup&), const char*> cases[] = {
        {[](TrainingSetup& s) { s.gpus = 6, s.tp = 4; }, "gpus"},
        {[](TrainingSetup& s) { s.tp = 3, s.gpus = 3; }, "tp"},
        {[](TrainingSetup& s) { s.pp = 33, s.gpus = 33; }, "pp"},
        {[](TrainingSetup& s) { s.zero = 4; }, "zero"},
        {[](TrainingSetup& s) { s.global_batch = 3, s.gpus = 2; }, "global_batch"},
    };
    for (const auto& [bad, field] : cases) {
        TrainingSetup st;
        bad(st);
        INFO(field);
        CHECK(error_field([&] { memory_budget(c, st); }) == field);
    }
}

TEST_CASE("activation bytes that overflow 64 bits are an error, not a wrap") {
    // a·s²·b with s = 2^30 and b = 1e9 is ~1e37 bytes.
    const auto c = preset("llama-2-7b");
    TrainingSetup st;
    st.seq = std::int64_t{1} << 30;
    st.micro_batch = 1'000'000'000;
    CHECK(error_field([&] { memory_budget(c, st); }) == "memory");
}

TEST_CASE("recompute_ops attention_scores is Korthikanti's selective recomputation, byte for byte") {
    const auto c = preset("gpt3-175b");
    auto selective = gpt3_setup();
    selective.recompute = Recompute::Selective;
    auto ops = gpt3_setup();
    ops.recompute_ops = tally::kRecomputeAttentionScores;
    CHECK(memory_budget(c, ops).bytes.activations == memory_budget(c, selective).bytes.activations);
    CHECK(per_layer(c, ops) == 34ull * 2048 * 12288);  // sec. 5: 34sbh
}

TEST_CASE("per-operation recomputation drops exactly the tensors it rebuilds (GPT layer, 16-bit)") {
    // Korthikanti et al. 2022, sec. 4.1: the 34sbh splits into norm outputs 2·2sbh, Q, K, V 3·2sbh,
    // GELU input 8sbh and down-projection input 8sbh (with s = 2048, h = 12288 of GPT-3).
    const auto c = preset("gpt3-175b");
    const std::uint64_t sbh = 2048ull * 12288;
    auto st = gpt3_setup();
    st.recompute_ops = tally::kRecomputeAttentionScores | tally::kRecomputeNorms;
    CHECK(per_layer(c, st) == 30 * sbh);
    st.recompute_ops |= tally::kRecomputeQkv;
    CHECK(per_layer(c, st) == 24 * sbh);
    st.recompute_ops |= tally::kRecomputeMlpUp | tally::kRecomputeMlpActivation;
    CHECK(per_layer(c, st) == 8 * sbh);  // attention norm input 2, attention output 2, MLP norm input 2, masks 2
}

TEST_CASE("recompute_layers k: k layers keep 2sbh, the others sbh(34 + 5as/h) (Korthikanti sec. 4.1 and 5)") {
    const auto c = preset("gpt3-175b");  // 96 layers
    const std::uint64_t s = 2048, h = 12288, a = 96;
    auto none = gpt3_setup();
    auto partial = gpt3_setup();
    partial.recompute_layers = 40;
    const auto n = memory_budget(c, none).activations;
    const auto p = memory_budget(c, partial).activations;
    const std::uint64_t layer = 34 * s * h + 5 * a * s * s;
    // Outside terms gain the 40 checkpoints and one live recomputed layer.
    CHECK(p.total_bytes == n.total_bytes - 40 * layer + 40 * 2 * s * h + layer);
    CHECK(p.full_recompute_layers == 40);
    // All layers recomputed by count is full recomputation.
    auto all = gpt3_setup();
    all.recompute_layers = 96;
    auto full = gpt3_setup();
    full.recompute = Recompute::Full;
    CHECK(memory_budget(c, all).bytes.activations == memory_budget(c, full).bytes.activations);
    CHECK(error_field([&] {
              auto bad = gpt3_setup();
              bad.recompute = Recompute::Full;
              bad.recompute_layers = 2;
              memory_budget(c, bad);
          }) == "recompute");
    CHECK(error_field([&] {
              auto bad = gpt3_setup();
              bad.recompute_layers = 97;
              memory_budget(c, bad);
          }) == "recompute_layers");
}

TEST_CASE("an fp32 gradient-accumulation buffer beside bf16 gradients makes 20 B/param (Ultra-Scale Playbook)") {
    // Nanotron's Ultra-Scale Playbook, "Mixed precision training": bf16 params 2 + bf16 grads 2 + fp32 params 4
    // + Adam states 8 + fp32 gradient accumulation 4 = 20 bytes per parameter.
    auto p = tally::find_recipe("bf16_mixed_adamw").recipe;
    p.grad_accum = tally::DType::FP32;
    CHECK(tally::bytes_per_param_256(p).total() == 20 * 256);
    const auto c = preset("llama-2-7b");
    TrainingSetup st;
    st.recipe = p;
    const auto m = memory_budget(c, st);
    CHECK(m.bytes.grad_accum == 4 * m.params_total);
    CHECK(m.bytes.total - m.bytes.activations == 20 * m.params_total);
    p.grad_accum = tally::DType::BF16;  // as narrow as the gradients: a duplicate
    CHECK(error_field([&] { tally::validate(p); }) == "grad_accum");
}

TEST_CASE("DeepSpeed's ZeRO-2 and ZeRO-3 estimators reproduce term by term (llama-2-7b, 8 GPUs)") {
    // DeepSpeed, deepspeed/runtime/zero/stage_1_and_2.py and stage3.py (estimate_zero{2,3}_model_states_mem_needs,
    // no offload): ZeRO-2 counts 4N (fp16 params and grads, unsharded) + 16N/gpus; ZeRO-3 counts 18N/gpus +
    // 4 × largest layer (its fp16 params and grads, gathered). The ZeRO-2 estimate keeps the fp16 gradients whole,
    // which is tally's ZeRO-1 layout with an fp32 accumulation partition.
    const auto c = preset("llama-2-7b");
    const std::uint64_t n = 6'738'415'616, largest = 32'000ull * 4096;  // embed_tokens / lm_head
    CHECK(tally::largest_module_params(c, 1) == largest);
    TrainingSetup st;
    st.gpus = 8;
    st.zero = 1;
    st.recipe = tally::find_recipe("bf16_mixed_adamw").recipe;
    st.recipe.grad_accum = tally::DType::FP32;
    auto states = [&](const tally::MemoryBudget& m) { return m.bytes.total - m.bytes.activations; };
    CHECK(states(memory_budget(c, st)) == 4 * n + 16 * n / 8);
    st.zero = 3;
    st.recipe = tally::find_recipe("bf16_mixed_adamw_fp32_grads").recipe;  // 2 + 4 + 4 + 8 = 18
    st.zero3_gather = TrainingSetup::Zero3Gather::Module;
    auto m = memory_budget(c, st);
    CHECK(m.bytes.zero3_buffer == 4 * largest);
    CHECK(states(m) == 18 * n / 8 + 4 * largest);
    // Prefetching one more unit holds one more gathered copy; gathering whole layers (FSDP) counts a layer.
    st.zero3_prefetch = 1;
    CHECK(memory_budget(c, st).bytes.zero3_buffer == 6 * largest);
    st.zero3_gather = TrainingSetup::Zero3Gather::Layer;
    st.zero3_prefetch = 0;
    CHECK(memory_budget(c, st).bytes.zero3_buffer == 4 * tally::count_params(c).per_layer);
    st.zero = 2;
    CHECK(error_field([&] { memory_budget(c, st); }) == "zero3_gather");
}

TEST_CASE("interleaved pipeline: the first stage holds 1 + (p−1)/(p·v) times the plain schedule's activations") {
    // Korthikanti et al. 2022 (arXiv:2205.05198), sec. 4.2.3, after Eq. (5): "the interleaving schedule developed
    // in Megatron-LM [13] requires storing activations for L(1 + (p−1)/(pm)) layers where m is the number of
    // interleaving stages" (verified against a transcription of the paper's text). GPT-3 175B, p = 8, v = m = 2:
    // 96 layers → 12 per stage, 8 micro-batches in flight, × 23/16.
    const auto c = preset("gpt3-175b");
    auto st = gpt3_setup();
    st.gpus = 8;
    st.pp = 8;
    const auto plain = memory_budget(c, st).activations;
    st.virtual_stages = 2;
    const auto inter = memory_budget(c, st).activations;
    CHECK(inter.outside_bytes == plain.outside_bytes);
    CHECK(inter.total_bytes - inter.outside_bytes == plain.per_layer_bytes * 12 * 8 * 23 / 16);
    CHECK(inter.interleave_factor == "1 + (p−1)/(p·v) = 23/16");
    CHECK(inter.interleave_extra_bytes == plain.per_layer_bytes * 12 * 8 * 7 / 16);
    st.pp = 1;  // interleaving needs a pipeline
    CHECK(error_field([&] { memory_budget(c, st); }) == "virtual_stages");
}

TEST_CASE("interleaving with p = 8, v = 4 stores 1 + 7/32 of the 1F1B activations on the first stage") {
    // Korthikanti et al. 2022 (arXiv:2205.05198), sec. 4.2.3: L(1 + (p−1)/(pm)) layers' activations, m the
    // interleaving stages. GPT-3 175B: L = 96, p = 8, m = v = 4: 96 · (1 + 7/32) = 117 layers of one micro-batch.
    const auto c = preset("gpt3-175b");
    auto st = gpt3_setup();
    st.gpus = 8, st.pp = 8, st.virtual_stages = 4;
    const double p = 8, m = 4, L = 96;
    const double paper_layers = L * (1 + (p - 1) / (p * m));
    const auto a = memory_budget(c, st).activations;
    CHECK(static_cast<double>(a.total_bytes - a.outside_bytes) == paper_layers * per_layer(c, st));
    CHECK(a.interleave_factor == "1 + (p−1)/(p·v) = 39/32");
    CHECK(static_cast<double>(a.interleave_extra_bytes) == L * (p - 1) / (p * m) * per_layer(c, st));
}

namespace {

// Megatron-LM's interleaved schedule on the first stage, step by step (schedules.py,
// forward_backward_pipelining_with_interleaving): warm-up forwards 2(p−1) + (v−1)p, capped at m·v, then one
// forward before the first backward; forward k runs chunk (k mod p·v) / p. Layers per chunk: L over p·v
// chunks, extra layers to the earliest chunks; the first stage owns chunks 0, p, 2p, ...
std::uint64_t simulated_first_stage_layers(std::int64_t L, std::int64_t p, std::int64_t v, std::int64_t m) {
    std::vector<std::int64_t> chunk(static_cast<std::size_t>(v));
    for (std::int64_t j = 0; j < v; ++j)
        chunk[static_cast<std::size_t>(j)] = L / (p * v) + (j * p < L % (p * v) ? 1 : 0);
    const std::int64_t total = m * v;
    std::int64_t held = std::min(2 * (p - 1) + (v - 1) * p, total);
    if (held < total) ++held;  // the steady state's first forward precedes its first backward
    if (m == p) held = total;  // Megatron-LM: all forwards first when m = p
    std::uint64_t layers = 0;
    if (held == total) {  // every micro-batch through every chunk
        for (std::int64_t j = 0; j < v; ++j)
            layers += static_cast<std::uint64_t>(m * chunk[static_cast<std::size_t>(j)]);
        return layers;
    }
    for (std::int64_t k = 0; k < held; ++k)
        layers += static_cast<std::uint64_t>(chunk[static_cast<std::size_t>((k % (p * v)) / p)]);
    return layers;
}

}  // namespace

TEST_CASE("the interleave factor equals a step-by-step run of Megatron-LM's schedule, even or uneven layers") {
    for (std::int64_t L : {96, 70, 126, 80})
        for (std::int64_t p : {2, 4, 8})
            for (std::int64_t v : {2, 3, 4})
                for (std::int64_t m : {p, p + 1, 2 * p, std::int64_t{64}}) {
                    if (p * v > L) continue;
                    INFO("L " << L << " p " << p << " v " << v << " m " << m);
                    const auto f = tally::interleave_activation_factor(L, p, v, m);
                    const std::uint64_t plain = static_cast<std::uint64_t>((L + p - 1) / p * std::min(p, m));
                    CHECK(f.numerator * plain == simulated_first_stage_layers(L, p, v, m) * f.denominator);
                }
    // Even chunks and many micro-batches: the paper's 1 + (p−1)/(p·v).
    const auto paper = tally::interleave_activation_factor(96, 8, 2, 0);
    CHECK((paper.numerator == 23 && paper.denominator == 16));
    const auto one = tally::interleave_activation_factor(96, 8, 1, 0);
    CHECK((one.numerator == 1 && one.denominator == 1));
}

TEST_CASE("uneven interleaving: 66 layers on 4 stages of 2 chunks hold 4 · 17 + 3 · 9 layers, not the even 11/8") {
    // Chunks of 9, 9, 8, 8, 8, 8, 8, 8 layers: the first stage owns chunks 0 and 4 (17 layers), holds 4
    // micro-batches of both and 3 more of its first chunk: 95/68 of plain 1F1B; even chunks would give 93.5/68.
    const auto c = [] {
        auto m = preset("gpt3-175b");
        m.num_layers = 66;
        return m;
    }();
    auto st = gpt3_setup();
    st.gpus = 4, st.pp = 4;
    const std::uint64_t one = per_layer(c, st);
    st.virtual_stages = 2;
    const auto a = memory_budget(c, st).activations;
    CHECK(a.total_bytes - a.outside_bytes == (4 * 17 + 3 * 9) * one);
    CHECK(a.interleave_factor == "95/68 (even chunks, many micro-batches: 1 + (p−1)/(p·v) = 11/8)");
    // With 4 micro-batches per step every forward runs before the first backward: no extra memory.
    st.global_batch = 4;
    CHECK(memory_budget(c, st).activations.interleave_extra_bytes == 0);
}

TEST_CASE(
    "freeing each stage's output saves sbhp = 2.73 GiB on the first stage of the 530B model (Korthikanti App. B)") {
    // Korthikanti et al. 2022, Appendix B: deallocating each micro-batch's output tensor "save[s] sbhr memory per
    // pipeline rank ... peaking at r = p on the first pipeline stage"; for the 530B model of their Table 3
    // (s 2048, b 1, h 20480, 128 heads, 105 layers, t 8, p 35) at 2 bytes "the theoretical savings ... is
    // sbhp = 2.73 GB" (binary: 2,936,012,800 B = 2.734 GiB). Verified against a transcription of the paper.
    auto c = preset("gpt3-175b");
    c.hidden_size = 20480;
    c.num_heads = c.num_kv_heads = 128;
    c.head_dim = 160;
    c.ffn_hidden_size = 4 * 20480;
    c.num_layers = 105;
    auto st = gpt3_setup();
    st.tp = 8;
    st.pp = 35;
    st.gpus = 280;
    const auto freed = memory_budget(c, st).activations;
    st.keep_stage_outputs = true;
    const auto kept = memory_budget(c, st).activations;
    CHECK(kept.total_bytes - freed.total_bytes == 2'936'012'800u);
    CHECK(static_cast<double>(kept.total_bytes - freed.total_bytes) / (1ull << 30) == Approx(2.73).epsilon(0.002));
}

TEST_CASE(
    "keeping each stage's output tensor costs e·s·b·h per micro-batch in flight; freeing it (default) saves that") {
    const auto c = preset("gpt3-175b");
    auto st = gpt3_setup();
    st.gpus = 8;
    st.pp = 8;
    const auto freed = memory_budget(c, st).activations;
    st.keep_stage_outputs = true;
    const auto kept = memory_budget(c, st).activations;
    CHECK(kept.total_bytes - freed.total_bytes == 8ull * 2 * 2048 * 12288);  // p = 8 in flight, 2 bytes · sbh
}

TEST_CASE("optimizer parts split Adam's states into equal m and v, SGD with momentum keeps one, plain SGD none") {
    const auto adam = tally::optimizer_parts(tally::Optimizer::AdamW, 800);
    REQUIRE(adam.size() == 2);
    CHECK(std::string(adam[0].id) == "m");
    CHECK(adam[0].bytes == 400);
    CHECK(adam[1].bytes == 400);
    REQUIRE(tally::optimizer_parts(tally::Optimizer::SgdMomentum, 800).size() == 1);
    CHECK(tally::optimizer_parts(tally::Optimizer::SgdMomentum, 800)[0].bytes == 800);
    CHECK(tally::optimizer_parts(tally::Optimizer::Sgd, 0).empty());
}

TEST_CASE(
    "the optimizer formula text follows the recipe: fp32 Adam is 2 · N_o · 4 B, 8-bit Adam adds its absmax blocks") {
    CHECK(tally::optimizer_states_formula(tally::find_recipe("bf16_mixed_adamw").recipe) == "2 · N_o · 4 B");
    CHECK(tally::optimizer_states_formula(tally::find_recipe("bf16_mixed_adamw_8bit").recipe) ==
          "2 · N_o · 1 B + 2 · 4 B · ceil(N_o / 2048)");
    CHECK(tally::bytes_per_param_formula("N_w", 2 * 256) == "N_w · 2 B");
}

TEST_CASE(
    "BertForMaskedLM's head saves its transform's 3 inputs (3·e·s·b·h) beside the 4·s·b·V logits; pretraining adds the pooler and NSP") {
    // bert-base-uncased's config.json (h 768, V 30522); the heads as transformers builds them (modeling_bert.py):
    // BertPredictionHeadTransform (dense h×h, GELU, LayerNorm) then the tied decoder; BertPooler (dense + tanh on
    // the first token); the NSP classifier (2 classes).
    const char* bert = R"({"model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
      "intermediate_size": 3072, "max_position_embeddings": 512, "type_vocab_size": 2, "vocab_size": 30522,
      "attention_probs_dropout_prob": 0.1, "hidden_dropout_prob": 0.1})";
    TrainingSetup st;
    st.seq = 512, st.micro_batch = 8;
    const std::uint64_t s = 512, b = 8, h = 768, V = 30522, e = 2;
    auto outside = [&](const std::string& head) {
        tally::ModelConfig c = tally::load_hf_config_text(bert);
        tally::apply_encoder_head(c, head);
        std::map<std::string, std::uint64_t> terms;
        for (const auto& t : tally::activation_memory(c, st, 12, 1, true, true).terms)
            if (!t.per_layer) terms[t.id] = t.bytes;
        return terms;
    };
    const auto mlm = outside("masked_lm");
    CHECK(mlm.at("mlm_transform_input") == e * s * b * h);
    CHECK(mlm.at("mlm_act_input") == e * s * b * h);
    CHECK(mlm.at("mlm_norm_input") == e * s * b * h);
    CHECK(mlm.at("lm_head_input") == e * s * b * h);
    CHECK(mlm.at("logits_fp32") == 4 * s * b * V);
    CHECK(mlm.count("final_norm_input") == 0);  // post-LN BERT has no final norm
    CHECK(mlm.count("pooler_input") == 0);      // BertForMaskedLM has no pooler
    const auto pre = outside("pretraining");
    CHECK(pre.at("pooler_input") == e * b * h);
    CHECK(pre.at("pooler_output") == e * b * h);
    CHECK(pre.at("nsp_logits_fp32") == 4 * b * 2);
    const auto bare = outside("model");
    CHECK(bare.count("mlm_transform_input") == 0);
    CHECK(bare.count("nsp_logits_fp32") == 0);
    CHECK(bare.at("pooler_input") == e * b * h);
}

TEST_CASE("interleaved_budget_bytes gives memory_budget's total and extra for every v from one budget") {
    // The planner's O(1) path: the same bytes as a budget computed with virtual_stages = v, whichever stage is larger.
    for (const char* id : {"gpt3-175b", "llama-3-8b", "gpt2-small"}) {
        const auto c = preset(id);
        for (std::int64_t pp : {1, 2, 4})
            for (std::int64_t gb : {0, 4, 64})
                for (bool flash : {false, true}) {
                    TrainingSetup st;
                    st.seq = 1024, st.gpus = 4, st.pp = pp, st.global_batch = gb, st.flash_attention = flash;
                    const auto plain = memory_budget(c, st);
                    for (std::int64_t v : {1, 2, 3, 4, 6}) {
                        if (v > 1 && (pp == 1 || pp * v > c.num_layers)) continue;
                        INFO(id << " pp " << pp << " global batch " << gb << " flash " << flash << " v " << v);
                        st.virtual_stages = v;
                        const auto direct = memory_budget(c, st);
                        const auto fast = tally::interleaved_budget_bytes(c, st, plain, v);
                        CHECK(fast.total == direct.bytes.total);
                        CHECK(fast.extra == direct.activations.interleave_extra_bytes);
                        CHECK(tally::interleaved_budget_bytes(c, st, direct, v).total == direct.bytes.total);
                        st.virtual_stages = 1;
                    }
                }
    }
}

TEST_CASE("each memory class's description names the setup it describes: dtype, ZeRO stage, layers in flight") {
    using tally::MemoryClass;
    const auto c = preset("llama-2-7b");
    TrainingSetup st;
    st.gpus = 8;
    st.zero = 3;
    st.zero3_gather = TrainingSetup::Zero3Gather::Module;
    st.zero3_prefetch = 1;
    const auto m = memory_budget(c, st);
    const auto text = [&](MemoryClass k) { return tally::memory_class_description(k, st, m); };
    CHECK(text(MemoryClass::Weights).find("bf16 weights") != std::string::npos);
    CHECK(text(MemoryClass::Weights).find("(ZeRO stage 3)") != std::string::npos);
    CHECK(text(MemoryClass::MasterWeights).find("A fp32 copy") == 0);
    CHECK(text(MemoryClass::OptimizerStates).find("adamw: ") == 0);
    CHECK(text(MemoryClass::Activations).find(std::to_string(m.activations.layers) + " layers × 1 micro-batch") !=
          std::string::npos);
    CHECK(text(MemoryClass::Zero3Buffer).find("largest module being computed (and 1 prefetched") != std::string::npos);
    CHECK(tally::zero3_buffer_formula(st) == "N_unit · (1 + prefetch + 1) · 2 B");
    st.recipe = tally::find_recipe("bf16_adamw_no_master").recipe;
    CHECK(text(MemoryClass::MasterWeights) == "None: the optimizer updates the working weights directly.");
}

TEST_CASE("NVFP4 weights and MXFP8 gradients count their block scales: 0.5625 and 1.03125 bytes a parameter") {
    // NVFP4: 4.5 bits a value (E4M3 scale per 16); MXFP8: 8.25 bits (E8M0 scale per 32, OCP MX v1.0).
    const auto c = preset("llama-2-7b");
    TrainingSetup st;
    st.recipe.weights = tally::DType::NVFP4;
    st.recipe.gradients = tally::DType::MXFP8;
    const auto m = memory_budget(c, st);
    const std::uint64_t n = m.params_on_gpu;
    CHECK(m.bytes.weights == (n * 144 + 255) / 256);
    CHECK(m.bytes.gradients == (n * 264 + 255) / 256);
    CHECK(m.bytes.master_weights == 4 * n);
    const auto bpp = tally::bytes_per_param_256(st.recipe);
    CHECK(bpp.weights == 144);
    CHECK(bpp.gradients == 264);
    // A master copy must be wider than the weights: MXFP8 over NVFP4 passes, NVFP4 over MXFP8 does not.
    st.recipe.master_weights = tally::DType::MXFP8;
    CHECK_NOTHROW(memory_budget(c, st));
    st.recipe.weights = tally::DType::MXFP8;
    st.recipe.master_weights = tally::DType::NVFP4;
    CHECK(error_field([&] { memory_budget(c, st); }) == "master_weights");
}
