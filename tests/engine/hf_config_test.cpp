// Tests of engine/src/hf_config.cpp for encoders (BERT, RoBERTa) and encoder-decoders (T5): their
// config.json loads to the exact parameter counts transformers reports, and FLOPs and memory follow.
#include <catch2/catch.hpp>

#include "accounting_helpers.h"
#include "tally/flops.h"
#include "tally/hf_config.h"
#include "tally/memory.h"
#include "tally/params.h"

using nlohmann::json;
using tally::Architecture;
using tally::count_params;
using tally::load_hf_config_text;
using tally_test::error_field;

namespace {

// The config.json of google-bert/bert-base-uncased (every field, as published).
const char* kBertBase = R"({
  "architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1, "gradient_checkpointing": false,
  "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02,
  "intermediate_size": 3072, "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "model_type": "bert",
  "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 0, "position_embedding_type": "absolute",
  "transformers_version": "4.6.0.dev0", "type_vocab_size": 2, "use_cache": true, "vocab_size": 30522})";

// google-bert/bert-large-uncased: the same with 24 layers of width 1024.
const char* kBertLarge = R"({
  "architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1, "hidden_size": 1024, "intermediate_size": 4096, "max_position_embeddings": 512,
  "model_type": "bert", "num_attention_heads": 16, "num_hidden_layers": 24, "type_vocab_size": 2,
  "vocab_size": 30522})";

// FacebookAI/roberta-base: BERT's shape with one token type and 514 positions.
const char* kRobertaBase = R"({
  "architectures": ["RobertaForMaskedLM"], "attention_probs_dropout_prob": 0.1, "bos_token_id": 0,
  "eos_token_id": 2, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768,
  "initializer_range": 0.02, "intermediate_size": 3072, "layer_norm_eps": 1e-05, "max_position_embeddings": 514,
  "model_type": "roberta", "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 1,
  "type_vocab_size": 1, "vocab_size": 50265})";

// google-t5/t5-small (fields that matter, as published).
const char* kT5Small = R"({
  "architectures": ["T5ForConditionalGeneration"], "d_ff": 2048, "d_kv": 64, "d_model": 512,
  "decoder_start_token_id": 0, "dropout_rate": 0.1, "eos_token_id": 1, "initializer_factor": 1.0,
  "is_encoder_decoder": true, "layer_norm_epsilon": 1e-06, "model_type": "t5", "n_positions": 512,
  "num_heads": 8, "num_layers": 6, "output_past": true, "pad_token_id": 0, "relative_attention_num_buckets": 32,
  "vocab_size": 32128})";

// google-t5/t5-base.
const char* kT5Base = R"({
  "architectures": ["T5ForConditionalGeneration"], "d_ff": 3072, "d_kv": 64, "d_model": 768,
  "dropout_rate": 0.1, "is_encoder_decoder": true, "model_type": "t5", "n_positions": 512, "num_heads": 12,
  "num_layers": 12, "relative_attention_num_buckets": 32, "vocab_size": 32128})";

// google/t5-v1_1-base (and google/flan-t5-base, same shape): gated GELU, untied LM head.
const char* kT5V11Base = R"({
  "architectures": ["T5ForConditionalGeneration"], "d_ff": 2048, "d_kv": 64, "d_model": 768,
  "dropout_rate": 0.1, "feed_forward_proj": "gated-gelu", "is_encoder_decoder": true, "model_type": "t5",
  "num_decoder_layers": 12, "num_heads": 12, "num_layers": 12, "relative_attention_num_buckets": 32,
  "tie_word_embeddings": false, "vocab_size": 32128})";

}  // namespace

// References: sum(p.numel() for p in model.parameters()) in transformers, as published beside the models:
// BertModel bert-base-uncased 109,482,240 and bert-large-uncased 335,141,888, RobertaModel roberta-base
// 124,645,632 (the per-model summaries in public repositories, e.g. a print_model_summary listing);
// Devlin et al. 2019, sec. 3, round them to 110M and 340M.
TEST_CASE("BERT-base's config.json loads to BertModel's 109,482,240 parameters (pooler included)") {
    const tally::ModelConfig c = load_hf_config_text(kBertBase);
    CHECK(c.architecture == Architecture::Encoder);
    const tally::ParamCount p = count_params(c);
    CHECK(p.total == 109'482'240u);
    CHECK(p.embedding == 30522u * 768);
    CHECK(p.position_embedding == 512u * 768);
    CHECK(p.embedding_extras == 2u * 768 + 2 * 768);  // token types + embedding LayerNorm
    CHECK(p.pooler == 768u * 768 + 768);
    CHECK(p.final_norm == 0);  // post-LN: no norm after the last layer
    CHECK(p.lm_head == 0);     // the MLM decoder is tied to the word embeddings
}

TEST_CASE("BERT-large and RoBERTa-base load to 335,141,888 and 124,645,632 parameters") {
    CHECK(count_params(load_hf_config_text(kBertLarge)).total == 335'141'888u);
    CHECK(count_params(load_hf_config_text(kRobertaBase)).total == 124'645'632u);
}

// References: T5ForConditionalGeneration parameter counts, t5-small 60,506,624 and t5-base 222,903,552
// (KerasNLP's T5 presets list the same "params"; Raffel et al. 2020, sec. 3.7, round them to 60M and 220M);
// t5-v1_1-base / flan-t5-base 247,577,856.
TEST_CASE("t5-small and t5-base load to 60,506,624 and 222,903,552 parameters (shared, tied embedding)") {
    const tally::ModelConfig small = load_hf_config_text(kT5Small);
    CHECK(small.architecture == Architecture::EncoderDecoder);
    CHECK(small.num_layers == 12);
    CHECK(small.num_decoder_layers == 6);
    const tally::ParamCount p = count_params(small);
    CHECK(p.total == 60'506'624u);
    CHECK(p.cross_attention == 6u * (4 * 512 * 512 + 512));  // Q, K, V, O and the norm in each decoder layer
    CHECK(p.embedding_extras == 2u * 32 * 8);                // a relative-position table per stack
    CHECK(count_params(load_hf_config_text(kT5Base)).total == 222'903'552u);
}

TEST_CASE("T5 v1.1 (gated GELU, untied LM head) loads to 247,577,856 parameters") {
    const tally::ModelConfig c = load_hf_config_text(kT5V11Base);
    CHECK(c.mlp == tally::MlpKind::GeGlu);
    CHECK(!c.tied_embeddings);
    CHECK(count_params(c).total == 247'577'856u);
}

TEST_CASE("unsupported encoder settings are named by their config.json key") {
    json bert = json::parse(kBertBase);
    bert["position_embedding_type"] = "relative_key";
    CHECK(error_field([&] { tally::load_hf_config(bert); }) == "position_embedding_type");
    json t5 = json::parse(kT5Small);
    t5["feed_forward_proj"] = "swish";
    CHECK(error_field([&] { tally::load_hf_config(t5); }) == "feed_forward_proj");
    t5 = json::parse(kT5Small);
    t5.erase("d_kv");
    CHECK(error_field([&] { tally::load_hf_config(t5); }) == "d_kv");
}

TEST_CASE("an encoder's attention counts every s×s score even when causal counting is asked") {
    const tally::ModelConfig bert = load_hf_config_text(kBertBase);
    tally::FlopsInput full, causal;
    full.seq = causal.seq = 512;
    causal.attention = tally::AttentionFlops::Causal;
    CHECK(tally::count_flops(bert, full).forward_per_sequence == tally::count_flops(bert, causal).forward_per_sequence);
}

TEST_CASE("T5's cross-attention FLOPs are a self-attention's per decoder layer, and 6N holds per position pair") {
    const tally::ModelConfig c = load_hf_config_text(kT5Base);
    tally::FlopsInput in;
    in.seq = 512;
    const tally::FlopsResult r = tally::count_flops(c, in);
    const double s = 512, h = 768, Ld = 12;
    double cross = 0;
    for (const auto& t : r.terms)
        if (std::string(t.id) == "cross_attention") cross = t.forward_per_sequence;
    // Q, K, V, O projections 4·2·s·h² plus Q·Kᵀ and ·V 2·2·s²·h, per decoder layer.
    CHECK(cross == (8 * s * h * h + 4 * s * s * h) * Ld);
    // Each position pair (one input, one target token) passes the 24 layers' weights once (2 FLOPs per
    // weight: 4h² attention + 2hf MLP), the decoder's cross-attention weights, every layer's s-wide
    // attention (4·s·h per layer and block) and the LM head: the 6N-per-token rule's exact form.
    const double L = 24, f = 3072, V = 32128;
    const double forward = 2 * (L * (4 * h * h + 2 * h * f) + Ld * 4 * h * h) + 4 * s * h * (L + Ld) + 2 * h * V;
    CHECK(r.forward_per_token == forward);
    CHECK(r.model_per_token == 3 * forward);
}

TEST_CASE("T5 trains through the memory budget: the cross-attention block is stored for the decoder layers") {
    const tally::ModelConfig c = load_hf_config_text(kT5Small);
    tally::TrainingSetup st;
    st.seq = 512;
    st.micro_batch = 8;
    const tally::MemoryBudget m = tally::memory_budget(c, st);
    std::uint64_t cross = 0, attention = 0;
    bool in_attention = false;
    for (const auto& t : m.activations.terms) {
        const std::string id = t.id;
        if (id == "attn_norm_input") in_attention = true;
        if (id == "cross_attention_block") in_attention = false, cross = t.bytes;
        if (in_attention) attention += t.bytes;
    }
    // Half the layers are decoder layers, so the block is spread as half a self-attention block per layer.
    CHECK(cross == (attention + 1) / 2);
    CHECK(m.params_total == 60'506'624u);
    CHECK(m.bytes.weights == 2u * 60'506'624u);
}

TEST_CASE("a pipeline stage of T5 holds the cross-attention of at most its decoder layers") {
    const tally::ModelConfig c = load_hf_config_text(kT5Small);
    const tally::ParamCount p = count_params(c);
    tally::ShardSpec stage{1, 8, false, true, false};  // 8 of the 12 layers: at most 6 are decoder layers
    const std::uint64_t layers = 8 * p.per_layer + 6 * p.per_decoder_layer_cross_attention;
    CHECK(tally::shard_params(c, stage) == layers + p.final_norm);
}
