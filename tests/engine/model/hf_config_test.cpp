// Tests of engine/src/model/hf_config.cpp for encoders (BERT, RoBERTa) and encoder-decoders (T5): their
// config.json loads to the exact parameter counts transformers reports, and FLOPs and memory follow.
#include <catch2/catch.hpp>

#include "accounting_helpers.h"
#include "tally/api.h"
#include "tally/compute/flops.h"
#include "tally/model/hf_config.h"
#include "tally/memory/memory.h"
#include "tally/model/params.h"

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

// The T5 training batch of these tests: 8 sequences of 512 input tokens.
tally::TrainingSetup t5_batch() {
    tally::TrainingSetup st;
    st.seq = 512;
    st.micro_batch = 8;
    return st;
}

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
    tally::TrainingSetup st = t5_batch();
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

// References: transformers' parameter counts of the task classes on bert-base-uncased, as printed by training
// runs and model tables that load them (e.g. a Kaggle BertForMaskedLM run: "Total Params: 109,514,298";
// SPLADE, a BertForMaskedLM: 109,514,298; RobertaForMaskedLM roberta-base: 124,697,433; BERT-large MLM:
// 335,174,458); each is also exact from the config: BertModel − pooler (h² + h) + transform (h² + h) +
// LayerNorm (2h) + decoder bias (V). BertForPreTraining adds the pooler back and the NSP head (2h + 2):
// 110,106,428, the figure lucid's BERT table lists for its BERTForPreTraining.
TEST_CASE("encoder_head masked_lm gives BertForMaskedLM's 109,514,298 (bert-base), 335,174,458 and 124,697,433") {
    tally::ModelConfig c = load_hf_config_text(kBertBase);
    tally::apply_encoder_head(c, "masked_lm");
    const tally::ParamCount p = count_params(c);
    CHECK(p.total == 109'514'298u);
    CHECK(p.pooler == 0);
    CHECK(p.mlm_head == 768u * 768 + 768 + 2 * 768 + 30522);
    tally::ModelConfig large = load_hf_config_text(kBertLarge);
    tally::apply_encoder_head(large, "masked_lm");
    CHECK(count_params(large).total == 335'174'458u);
    tally::ModelConfig roberta = load_hf_config_text(kRobertaBase);
    tally::apply_encoder_head(roberta, "masked_lm");
    CHECK(count_params(roberta).total == 124'697'433u);
}

TEST_CASE("encoder_head pretraining gives BertForPreTraining's 110,106,428; model gives BertModel back") {
    tally::ModelConfig c = load_hf_config_text(kBertBase);
    tally::apply_encoder_head(c, "pretraining");
    CHECK(count_params(c).total == 110'106'428u);
    CHECK(count_params(c).nsp_head == 2u * 768 + 2);
    tally::apply_encoder_head(c, "model");
    CHECK(count_params(c).total == 109'482'240u);
}

TEST_CASE("the API's encoder_head applies to any model source and is refused for a decoder or an unknown head") {
    const json masked =
        json::parse(tally::api::call("params", json{{"hf_config", kBertBase}, {"encoder_head", "masked_lm"}}.dump()));
    REQUIRE(masked["ok"] == true);
    CHECK(masked["result"]["total"] == 109'514'298u);
    CHECK(masked["result"]["model"]["mlm_head"] == true);
    // The printed model object carries the heads, so it loads back to the same count.
    const json again = json::parse(tally::api::call("params", json{{"model", masked["result"]["model"]}}.dump()));
    CHECK(again["result"]["total"] == 109'514'298u);
    for (const json& args : {json{{"model", "gpt2-small"}, {"encoder_head", "masked_lm"}},
                             json{{"hf_config", kBertBase}, {"encoder_head", "classifier"}},
                             json{{"hf_config", kT5Small}, {"encoder_head", "model"}}}) {
        const json r = json::parse(tally::api::call("params", args.dump()));
        CHECK(r["ok"] == false);
        CHECK(r["error"]["field"] == "encoder_head");
    }
    CHECK(error_field([] {
              tally::model_from_json(json{{"vocab_size", 100},
                                          {"hidden_size", 64},
                                          {"num_layers", 2},
                                          {"num_heads", 2},
                                          {"mlp", "gelu"},
                                          {"mlm_head", true}});
          }) == "mlm_head");
}

TEST_CASE("the masked-LM head adds its transform's 2·s·h² forward FLOPs; its tied decoder is the LM head term") {
    tally::ModelConfig c = load_hf_config_text(kBertBase);
    tally::FlopsInput in;
    in.seq = 128;
    const double base = tally::count_flops(c, in).forward_per_sequence;
    tally::apply_encoder_head(c, "masked_lm");
    const double masked = tally::count_flops(c, in).forward_per_sequence;
    // + 2 s h² (transform), − 2 h² (no pooler).
    CHECK(masked - base == 2.0 * 128 * 768 * 768 - 2.0 * 768 * 768);
}

TEST_CASE("T5 with a shorter target: encoder terms at s, decoder terms at s_dec, cross-attention s_dec × s") {
    // Derived from the architecture (Raffel et al. 2020, sec. 2.1; Vaswani et al. 2017, sec. 3.2.3): t5-small,
    // 6 + 6 layers, h = a·d = 512, f 2048 (ReLU, 2 matrices), V 32128, inputs s = 512, targets s_dec = 114.
    const tally::ModelConfig c = load_hf_config_text(kT5Small);
    tally::FlopsInput in;
    in.seq = 512;
    const double same = tally::count_flops(c, in).forward_per_sequence;
    in.decoder_seq = 512;
    CHECK(tally::count_flops(c, in).forward_per_sequence == same);  // decoder_seq = seq changes nothing
    in.decoder_seq = 114;
    const tally::FlopsResult r = tally::count_flops(c, in);
    const double s = 512, sd = 114, h = 512, qd = 512, f = 2048, V = 32128, Le = 6, Ld = 6;
    const double positions = s * Le + sd * Ld;
    const double expected = 2 * positions * h * 3 * qd                  // Q, K, V
                            + 2 * 2 * (s * s * Le + sd * sd * Ld) * qd  // scores and ·V (full)
                            + 2 * positions * qd * h                    // output projection
                            + 2 * positions * h * f * 2                 // MLP
                            + (2 * sd * h * qd + 2 * s * h * 2 * qd + 4 * sd * s * qd + 2 * sd * qd * h) * Ld  // cross
                            + 2 * sd * h * V;  // logits over the targets
    CHECK(r.forward_per_sequence == Approx(expected).epsilon(1e-12));
    CHECK(r.forward_per_token == Approx(expected / s).epsilon(1e-12));  // per input token
    tally::FlopsInput decoder_only;
    decoder_only.decoder_seq = 64;
    CHECK(error_field([&] { tally::count_flops(load_hf_config_text(kBertBase), decoder_only); }) == "decoder_seq");
}

TEST_CASE("T5 with a shorter target stores decoder-layer tensors at s_dec, the cross-attention scores at s_dec × s") {
    // t5-small, s = 512 inputs, s_dec = 114 targets, b = 8, 16-bit activations, dropout 0.1 (its config): each
    // per-layer term is the mean over the 6 encoder layers (at s) and the 6 decoder layers (at s_dec).
    const tally::ModelConfig c = load_hf_config_text(kT5Small);
    tally::TrainingSetup st = t5_batch();
    const tally::MemoryBudget same = tally::memory_budget(c, st);
    st.decoder_seq = 512;
    CHECK(tally::memory_budget(c, st).activations.total_bytes == same.activations.total_bytes);
    st.decoder_seq = 114;
    const tally::MemoryBudget m = tally::memory_budget(c, st);
    const std::uint64_t s = 512, sd = 114, b = 8, h = 512, a = 8, V = 32128;
    auto term = [&](const char* id) {
        for (const auto& t : m.activations.terms)
            if (std::string(t.id) == id) return t.bytes;
        return std::uint64_t{0};
    };
    CHECK(term("softmax_output") == (6 * 2 * a * s * s * b + 6 * 2 * a * sd * sd * b + 11) / 12);
    CHECK(term("mlp_norm_input") == (6 * 2 * s * b * h + 6 * 2 * sd * b * h) / 12);
    // Cross-attention block of one decoder layer: norm input, Q input, Q, attention output and dropout mask at
    // s_dec; K and V at s; softmax output, its mask and dropped output at s_dec × s. Half the layers have one.
    const std::uint64_t block = 2 * sd * b * h * 2 + 2 * sd * b * h + 2 * 2 * s * b * h + (2 + 1 + 2) * a * sd * s * b +
                                2 * sd * b * h + sd * b * h;
    CHECK(term("cross_attention_block") == (6 * block + 11) / 12);
    CHECK(term("logits_fp32") == 4 * sd * b * V);  // the targets' logits
    CHECK(m.activations.total_bytes < same.activations.total_bytes);
    tally::TrainingSetup decoder;
    decoder.decoder_seq = 128;
    CHECK(error_field([&] { tally::memory_budget(load_hf_config_text(kBertBase), decoder); }) == "decoder_seq");
}
