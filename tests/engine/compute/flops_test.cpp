// Tests of engine/src/compute/flops.cpp: matmul FLOPs against the closed forms in the literature.
#include <catch2/catch.hpp>

#include "accounting_helpers.h"
#include "tally/compute/flops.h"
#include "tally/model/params.h"
#include "tally/compute/training.h"

using tally::AttentionFlops;
using tally::count_flops;
using tally::Recompute;
using tally_test::error_field;
using tally_test::preset;

namespace {
// Weights that take part in a matmul (everything but embeddings, norms and biases), counting the
// LM head once (tied or not: it is a matmul either way).
double matmul_params(const tally::ModelConfig& c) {
    double n = 0;
    for (const auto& t : tally::model_tensors(c))
        if (t.rows > 1 && t.cols > 1 && t.component != tally::Component::Embedding &&
            t.component != tally::Component::PositionEmbedding)
            n += static_cast<double>(t.count()) * (t.expert ? static_cast<double>(c.num_experts) : 1.0) *
                 (t.per_layer ? static_cast<double>(c.num_layers) : 1.0);
    if (c.tied_embeddings) n += static_cast<double>(c.vocab_size * c.hidden_size);
    return n;
}
}  // namespace

TEST_CASE("1B parameters × 100B tokens is 6e20 FLOPs by 6ND") {
    // CS336 lecture 2 worked example; 6ND from Kaplan et al. 2020, sec. 2.1.
    CHECK(tally::training_flops(1e9, 100e9) == 6e20);
}

TEST_CASE("Megatron-LM's 72·B·s·l·h²·(1 + s/6h + V/12lh) equals tally's model FLOPs for GPT-3 175B") {
    // Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters", sec. 5.1
    // (the 96 version includes full recomputation; 72 = 96 · 3/4 without it). Full attention, no biases.
    const auto c = preset("gpt3-175b");
    const double s = 2048, l = 96, h = 12288, V = 50257;
    const auto r = count_flops(c, {2048, AttentionFlops::Full, Recompute::None, false});
    CHECK(r.model_per_token * s == Approx(72 * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h))).epsilon(1e-12));
    const auto full = count_flops(c, {2048, AttentionFlops::Full, Recompute::Full, false});
    CHECK(full.training_per_token * s ==
          Approx(96 * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))).epsilon(1e-12));
}

TEST_CASE("PaLM's model FLOPs per token 6N + 12·L·H·Q·T hold exactly for Llama-2-7B at T = 4096") {
    // Chowdhery et al. 2022, "PaLM", App. B: N = matmul parameters, H·Q = heads × head dim, T = seq.
    const auto c = preset("llama-2-7b");
    const auto r = count_flops(c, {4096, AttentionFlops::Full, Recompute::None, false});
    CHECK(r.model_per_token == 6 * matmul_params(c) + 12.0 * 32 * 4096 * 4096);
}

TEST_CASE("Kaplan's forward 2N + 2·n_layer·n_ctx·d_attn is the causal convention") {
    // Kaplan et al. 2020, Table 1: attention scores cost 2·n_layer·n_ctx·d_attn per token forward,
    // i.e. the two s×s matmuls over the causal half. tally's causal count uses s(s+1)/2 entries.
    const auto c = preset("gpt2-small");
    const double s = 1024, L = 12, d_attn = 768;
    const auto causal = count_flops(c, {1024, AttentionFlops::Causal, Recompute::None, false});
    CHECK(causal.forward_per_token == 2 * matmul_params(c) + 2 * L * (s + 1) * d_attn);
    const auto full = count_flops(c, {1024, AttentionFlops::Full, Recompute::None, false});
    CHECK(full.forward_per_token - causal.forward_per_token == 2 * L * (s - 1) * d_attn);
}

TEST_CASE("6ND underestimates long-context training: the exact/6ND ratio grows with seq") {
    const auto c = preset("llama-3-8b");
    double previous = 0;
    for (std::int64_t s : {512, 2048, 8192, 32768, 131072}) {
        const auto r = count_flops(c, {s, AttentionFlops::Full, Recompute::None, false});
        const double ratio = r.model_per_token / r.six_n;
        CHECK(ratio > previous);
        previous = ratio;
    }
    CHECK(previous > 2);  // at 128k context attention dominates
}

TEST_CASE("recomputation adds forward work: selective adds the two s×s matmuls, full adds every layer") {
    const auto c = preset("llama-2-7b");
    const auto none = count_flops(c, {4096, AttentionFlops::Full, Recompute::None, false});
    const auto sel = count_flops(c, {4096, AttentionFlops::Full, Recompute::Selective, false});
    const auto full = count_flops(c, {4096, AttentionFlops::Full, Recompute::Full, false});
    CHECK(none.recompute_per_token == 0);
    CHECK(sel.recompute_per_token * 4096 == 2 * (2.0 * 4096 * 4096 * 4096 * 32));
    CHECK(full.recompute_per_token == none.forward_per_token - 2.0 * 4096 * 32000);
    CHECK(full.model_per_token == none.model_per_token);  // MFU never counts recomputation
}

TEST_CASE("MoE forward FLOPs follow active parameters, not total") {
    const auto c = preset("mixtral-8x7b");
    const auto r = count_flops(c, {4096, AttentionFlops::Full, Recompute::None, false});
    CHECK(r.forward_per_token < r.six_n_active / 3 * 1.2);
    CHECK(r.forward_per_token < r.six_n / 3 / 2);
}

TEST_CASE("bad FLOPs inputs name the field") {
    const auto c = preset("gpt2-small");
    CHECK(error_field([&] { count_flops(c, {0, AttentionFlops::Full, Recompute::None, false}); }) == "seq");
    CHECK(error_field([] { tally::attention_flops_from_string("half"); }) == "attention_flops");
    CHECK(error_field([] { tally::recompute_from_string("some"); }) == "recompute");
}

TEST_CASE("partial recomputation adds the forward work it redoes: k of L layers in full, or chosen operations") {
    const auto c = preset("gpt3-175b");
    tally::FlopsInput full_in;
    full_in.recompute = Recompute::Full;
    const double full = count_flops(c, full_in).recompute_per_token;
    tally::FlopsInput half;
    half.recompute_layers = 48;  // of 96 (pp = 1)
    CHECK(count_flops(c, half).recompute_per_token == Approx(full / 2).epsilon(1e-12));
    half.recompute_layers = 96;
    CHECK(count_flops(c, half).recompute_per_token == full);
    // Per-operation: attention_scores is selective's 2·2s²ad·L; qkv the Q, K, V projections 2s·h·3h·L;
    // mlp_up GELU's up projection 2s·h·4h·L (Korthikanti et al. 2022, sec. 5 and Narayanan et al. 2021, App.).
    tally::FlopsInput sel;
    sel.recompute = Recompute::Selective;
    tally::FlopsInput ops;
    ops.recompute_ops = tally::kRecomputeAttentionScores;
    CHECK(count_flops(c, ops).recompute_per_token == count_flops(c, sel).recompute_per_token);
    const double s = 2048, h = 12288, L = 96;
    ops.recompute_ops = tally::kRecomputeQkv;
    CHECK(count_flops(c, ops).recompute_per_token == Approx(2 * s * h * 3 * h * L / s).epsilon(1e-12));
    ops.recompute_ops = tally::kRecomputeMlpUp | tally::kRecomputeNorms | tally::kRecomputeMlpActivation;
    CHECK(count_flops(c, ops).recompute_per_token == Approx(2 * s * h * 4 * h * L / s).epsilon(1e-12));
    CHECK(tally::recompute_ops_from_string("qkv,mlp_up") == (tally::kRecomputeQkv | tally::kRecomputeMlpUp));
    CHECK(error_field([] { tally::recompute_ops_from_string("qkv,softmax"); }) == "recompute_ops");
}

TEST_CASE("the default sequence is the learned position table capped at 2048, and 2048 for rotary models") {
    CHECK(tally::default_seq(tally_test::preset("gpt2-small")) == 1024);
    CHECK(tally::default_seq(tally_test::preset("llama-2-7b")) == 2048);
}

TEST_CASE("flops notes: attention and LM-head shares of the forward FLOPs, and untied embeddings' share of N") {
    const tally::ModelConfig c = tally_test::preset("llama-2-7b");
    tally::FlopsInput in;
    in.seq = 4096;
    const tally::FlopsResult r = tally::count_flops(c, in);
    const tally::FlopsShares share = tally::flops_shares(c, r);
    CHECK(share.attention > 0);
    CHECK(share.lm_head > 0);
    CHECK(share.attention + share.lm_head < 1);
    // Llama 2 7B's untied 32000 x 4096 embedding is 131M of 6.74B parameters.
    CHECK(share.embedding_params == Approx(32000.0 * 4096 / 6'738'415'616));
    const auto notes = tally::flops_notes(c, in, r);
    REQUIRE(notes.size() == 3);
    CHECK(notes[0].find("at seq 4096") != std::string::npos);
    // GPT-2 ties its embedding to the LM head, so 6ND is not said to overcount it: two notes.
    const tally::ModelConfig gpt2 = tally_test::preset("gpt2-small");
    CHECK(tally::flops_notes(gpt2, in, tally::count_flops(gpt2, in)).size() == 2);
}
