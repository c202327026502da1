// The model argument every API method shares (model, hf_config, encoder_head): which source, which loader.
// Lives in the API floor because it reads API argument names; the loaders it calls are core.
#include <string>

#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/model/hf_config.h"
#include "tally/model/model.h"
#include "tally/base/presets.h"

namespace tally {

using json = nlohmann::json;

namespace {

ModelConfig resolve_model_source(const json& args);

}  // namespace

// The model, then the encoder's heads when encoder_head is given (any source: preset, object, config.json).
ModelConfig resolve_model(const json& args) {
    ModelConfig c = resolve_model_source(args);
    auto head = args.find("encoder_head");
    if (head != args.end() && !head->is_null()) {
        if (!head->is_string())
            throw InputError("encoder_head", "encoder_head must be a string: model, masked_lm or pretraining");
        apply_encoder_head(c, head->get<std::string>());
    }
    return c;
}

namespace {

ModelConfig resolve_model_source(const json& args) {
    const bool has_model = args.contains("model") && !args["model"].is_null();
    const bool has_hf = args.contains("hf_config") && !args["hf_config"].is_null();
    if (has_model && has_hf) throw InputError("model", "give either model or hf_config, not both");
    if (has_hf) {
        const json& hf = args["hf_config"];
        if (hf.is_string()) return load_hf_config_text(hf.get<std::string>());
        if (hf.is_object()) return load_hf_config(hf);
        throw InputError("hf_config", "hf_config must be the text of a config.json or its object");
    }
    if (!has_model) throw InputError("model", "model is required: a preset id, a config object or hf_config");
    const json& m = args["model"];
    if (m.is_string()) return model_from_preset(m.get<std::string>());
    if (m.is_object()) {
        if (m.contains("model_type")) return load_hf_config(m);
        // A Hugging Face config.json without model_type: say so, not "vocab_size is required".
        if (!m.contains("num_layers") && (m.contains("num_hidden_layers") || m.contains("n_layer")))
            throw InputError("model_type", std::string("config.json field \"model_type\" is missing; supported: ") +
                                               hf_model_types());
        return model_from_json(m);
    }
    throw InputError("model", "model must be a preset id (string) or a config object");
}

}  // namespace

}  // namespace tally
