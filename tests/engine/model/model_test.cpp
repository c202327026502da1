// Tests of engine/src/model/model.cpp and hf_config.cpp: configs, presets and Hugging Face config.json.
#include <catch2/catch.hpp>

#include "accounting_helpers.h"
#include "tally/api.h"
#include "tally/model/hf_config.h"
#include "tally/model/params.h"

using nlohmann::json;
using tally_test::error_field;
using tally_test::error_message;

namespace {

// The config.json of openai-community/gpt2 (fields that matter, as published).
const char* kGpt2Config = R"({
  "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
  "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256, "initializer_range": 0.02,
  "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024, "n_embd": 768, "n_head": 12,
  "n_layer": 12, "n_positions": 1024, "resid_pdrop": 0.1, "vocab_size": 50257})";

// The config.json of meta-llama/Llama-2-7b-hf.
const char* kLlama2Config = R"({
  "architectures": ["LlamaForCausalLM"], "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
  "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 11008, "max_position_embeddings": 4096,
  "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": null, "tie_word_embeddings": false,
  "torch_dtype": "float16", "transformers_version": "4.31.0.dev0", "use_cache": true, "vocab_size": 32000})";

// The config.json of Qwen/Qwen2-0.5B (tied embeddings, biases on Q, K, V only).
const char* kQwen2Config = R"({
  "architectures": ["Qwen2ForCausalLM"], "hidden_act": "silu", "hidden_size": 896, "intermediate_size": 4864,
  "max_position_embeddings": 131072, "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24,
  "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "tie_word_embeddings": true,
  "vocab_size": 151936})";

// The config.json of mistralai/Mixtral-8x7B-v0.1.
const char* kMixtralConfig = R"({
  "architectures": ["MixtralForCausalLM"], "hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 14336,
  "max_position_embeddings": 32768, "model_type": "mixtral", "num_attention_heads": 32, "num_experts_per_tok": 2,
  "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8, "rms_norm_eps": 1e-05,
  "tie_word_embeddings": false, "vocab_size": 32000})";

json parsed(const char* text) { return json::parse(text); }

}  // namespace

TEST_CASE("GPT-2's Hugging Face config.json loads to 124,439,808 parameters (tied LM head)") {
    const auto c = tally::load_hf_config_text(kGpt2Config);
    CHECK(c.tied_embeddings);
    CHECK(c.ffn_hidden_size == 3072);  // n_inner absent: 4 · n_embd
    CHECK(tally::count_params(c).total == 124'439'808u);
}

TEST_CASE("Llama-2-7B's Hugging Face config.json loads to 6,738,415,616 parameters") {
    const auto c = tally::load_hf_config_text(kLlama2Config);
    CHECK(c.mlp == tally::MlpKind::SwiGlu);
    CHECK(c.norm == tally::NormKind::RmsNorm);
    CHECK(tally::count_params(c).total == 6'738'415'616u);
}

TEST_CASE("Qwen2-0.5B's config.json loads to 494,032,768 parameters (QKV biases, tied, GQA 14/2)") {
    // Hugging Face Qwen/Qwen2-0.5B: 494,032,768 parameters ("0.49B" on the model card).
    const auto c = tally::load_hf_config_text(kQwen2Config);
    CHECK(c.qkv_bias);
    CHECK_FALSE(c.attn_out_bias);
    CHECK(tally::count_params(c).total == 494'032'768u);
}

TEST_CASE("Mixtral's config.json and the Mixtral preset give the same counts") {
    const auto hf = tally::count_params(tally::load_hf_config_text(kMixtralConfig));
    const auto pre = tally::count_params(tally_test::preset("mixtral-8x7b"));
    CHECK(hf.total == pre.total);
    CHECK(hf.active == pre.active);
}

TEST_CASE("the model argument accepts a preset id, a tally config object or HF config.json text") {
    const auto by_id = tally::resolve_model(json{{"model", "llama-2-7b"}});
    const auto by_object = tally::resolve_model(json{{"model", tally::model_to_json(by_id)}});
    const auto by_hf_text = tally::resolve_model(json{{"hf_config", kLlama2Config}});
    const auto by_hf_object = tally::resolve_model(json{{"model", parsed(kLlama2Config)}});
    for (const auto& c : {by_object, by_hf_text, by_hf_object})
        CHECK(tally::count_params(c).total == tally::count_params(by_id).total);
}

TEST_CASE("unknown model types and missing config.json fields are named in the error") {
    json j = parsed(kLlama2Config);
    j["model_type"] = "bart";  // t5 loads since issue 13 item 6; BART's encoder-decoder is not supported
    CHECK(error_field([&] { tally::load_hf_config(j); }) == "model_type");
    CHECK(error_message([&] { tally::load_hf_config(j); }).find("bart") != std::string::npos);
    j = parsed(kLlama2Config);
    j.erase("hidden_size");
    CHECK(error_field([&] { tally::load_hf_config(j); }) == "hidden_size");
    j = parsed(kGpt2Config);
    j.erase("n_layer");
    CHECK(error_field([&] { tally::load_hf_config(j); }) == "n_layer");
    CHECK(error_field([&] { tally::resolve_model(json{{"model", "llama-9"}}); }) == "model");
}

TEST_CASE("malformed config.json reports the byte position of the parse error") {
    const std::string message =
        error_message([] { tally::load_hf_config_text(R"({"model_type": "llama", "hidden_size": })"); });
    CHECK(message.find("byte 40") != std::string::npos);
    CHECK(error_field([] { tally::load_hf_config_text("{"); }) == "hf_config");
}

TEST_CASE("zero, negative, fractional, boolean and absurd sizes are rejected with the field and range") {
    json j = parsed(kLlama2Config);
    for (const json& bad : {json(0), json(-4096), json(4096.5), json(true), json("4096"), json(1e300)}) {
        j["hidden_size"] = bad;
        CHECK(error_field([&] { tally::load_hf_config(j); }) == "hidden_size");
    }
    j = parsed(kLlama2Config);
    j["hidden_size"] = 4096.0;  // a whole number written as a float is fine
    CHECK(tally::count_params(tally::load_hf_config(j)).total == 6'738'415'616u);
    CHECK(error_message([&] {
              j["num_hidden_layers"] = -1;
              tally::load_hf_config(j);
          }).find("[1, 100000]") != std::string::npos);
}

TEST_CASE("heads must divide the hidden size and KV heads must divide the heads") {
    json j = parsed(kLlama2Config);
    j["num_attention_heads"] = 30;  // 4096 / 30 is not whole
    CHECK(error_field([&] { tally::load_hf_config(j); }) == "num_attention_heads");
    j = parsed(kLlama2Config);
    j["num_key_value_heads"] = 5;  // 32 / 5 is not whole
    CHECK(error_field([&] { tally::load_hf_config(j); }) == "num_key_value_heads");
    json t = tally::model_to_json(tally_test::preset("gpt2-small"));
    t.erase("head_dim");
    t.erase("num_kv_heads");
    t["num_heads"] = 7;
    CHECK(error_field([&] { tally::model_from_json(t); }) == "num_heads");
}

TEST_CASE("every model preset cites a source and loads") {
    const auto& models = tally::presets_json().at("models");
    CHECK(models.size() >= 13);
    for (const auto& m : models) {
        INFO(m.at("id").get<std::string>());
        CHECK(m.at("source").get<std::string>().size() > 20);
        CHECK(tally::count_params(tally::model_from_json(m.at("config"))).total > 0);
    }
}

TEST_CASE("a Hugging Face config object without model_type is named as such, not as a missing field") {
    // used to say "vocab_size is required", the tally config's first field
    CHECK(error_field([&] {
              tally::resolve_model(json{{"model", {{"hidden_size", 4096}, {"num_hidden_layers", 32}}}});
          }) == "model_type");
    CHECK(error_field([&] {
              tally::resolve_model(json{{"model", {{"n_embd", 768}, {"n_layer", 12}}}});
          }) == "model_type");
}

TEST_CASE("an unknown preset id is quoted escaped and capped in the message") {
    const std::string message = error_message([&] {
        tally::resolve_model(json{{"model", "\x1b[2J" + std::string(500, 'x')}});
    });
    CHECK(message.find("\\x1b[2J") != std::string::npos);
    CHECK(message.size() < 600);
}

TEST_CASE("config.json dropouts: GPT-2 defaults to 0.1 everywhere, Llama-family configs have only attention_dropout") {
    const auto gpt2 = tally::load_hf_config_text(
        R"({"model_type":"gpt2","n_embd":768,"n_layer":12,"n_head":12,"n_positions":1024,"vocab_size":50257})");
    CHECK(gpt2.attention_dropout == 0.1);
    CHECK(gpt2.residual_dropout == 0.1);
    CHECK(gpt2.embedding_dropout == 0.1);
    const auto no_drop = tally::load_hf_config_text(
        R"({"model_type":"gpt2","n_embd":768,"n_layer":12,"n_head":12,"n_positions":1024,"vocab_size":50257,"attn_pdrop":0,"resid_pdrop":0,"embd_pdrop":0})");
    CHECK_FALSE(no_drop.has_dropout());
    const auto llama = tally::load_hf_config_text(
        R"({"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"intermediate_size":11008,"vocab_size":32000})");
    CHECK_FALSE(llama.has_dropout());
    const auto llama_drop = tally::load_hf_config_text(
        R"({"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"intermediate_size":11008,"vocab_size":32000,"attention_dropout":0.1})");
    CHECK(llama_drop.attention_dropout == 0.1);
    CHECK(llama_drop.residual_dropout == 0);
    CHECK(
        error_field([] {
            tally::load_hf_config_text(
                R"({"model_type":"gpt2","n_embd":768,"n_layer":12,"n_head":12,"n_positions":1024,"vocab_size":50257,"attn_pdrop":1.5})");
        }) == "attn_pdrop");
}

TEST_CASE("presets carry the dropout of their config.json: none for Llama, Mistral and Mixtral, 0.1 for GPT-2") {
    for (const char* id : {"llama-2-7b", "llama-3-8b", "mistral-7b", "mixtral-8x7b", "llama-3-405b"})
        CHECK_FALSE(tally::resolve_model(nlohmann::json{{"model", id}}).has_dropout());
    for (const char* id : {"gpt2-small", "gpt2-xl"}) {
        const auto c = tally::resolve_model(nlohmann::json{{"model", id}});
        CHECK(c.attention_dropout == 0.1);
        CHECK(c.embedding_dropout == 0.1);
    }
}
