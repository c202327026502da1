// The JSON API: one protocol for the CLI's --json output, the wasm bindings and the tests.
// call("training_cost", R"({"params":70e9,...})") returns {"ok":true,"result":{...}} or
// {"ok":false,"error":{"field":"mfu","message":"mfu must be in (0, 1], got 1.5"}}; it never throws.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tally/model.h"

namespace tally {

// Resolves the API's model argument: "model": preset id | tally object | HF object (has
// "model_type"), or "hf_config": text or object, then encoder_head. Throws InputError naming "model",
// "hf_config" or "encoder_head" (engine/api/api_model.cpp).
ModelConfig resolve_model(const nlohmann::json& args);

}  // namespace tally

namespace tally::api {

using json = nlohmann::json;

struct Method {
    const char* name;
    json (*fn)(const json& args);
    const char* summary;
};

// One list per engine module, each defined in engine/api/api_<module>.cpp.
std::span<const Method> presets_methods();     // presets, model, assumptions
std::span<const Method> params_methods();      // params
std::span<const Method> flops_methods();       // flops
std::span<const Method> training_methods();    // training_cost, mfu
std::span<const Method> memory_methods();      // recipes, memory_budget
std::span<const Method> finetune_methods();    // finetune (LoRA, QLoRA, full on one GPU)
std::span<const Method> fit_methods();         // fit
std::span<const Method> kvcache_methods();     // kv_cache
std::span<const Method> tensor_methods();      // tensor_bytes
std::span<const Method> precision_methods();   // float formats
std::span<const Method> blockscale_methods();  // block scaling
std::span<const Method> gemm_methods();        // GEMM ladder
std::span<const Method> roofline_methods();    // roofline
std::span<const Method> probe_methods();       // probes
std::span<const Method> step_methods();        // step time, layout planner
std::span<const Method> inference_methods();   // serving: decode, prefill, crossover; units; checkpoints
std::span<const Method> schedule_methods();    // pipeline_schedule (GPipe, 1F1B, interleaved, ZB-H1, DualPipe)

// collective, comm_roofline (api_collectives.cpp)
std::span<const Method> collectives_methods();
// overlap (api_overlap.cpp); moe_routing (api_moe.cpp); context_parallel (api_context.cpp)
std::span<const Method> overlap_methods();
std::span<const Method> moe_methods();
std::span<const Method> context_methods();
// checkpoint_interval (api_goodput.cpp)
std::span<const Method> goodput_methods();

// Looks a method up across all areas; nullptr if unknown.
const Method* find_method(std::string_view name);
// Every method of every area, for `tally methods` and the JS API's self-description.
json list_methods();

// Runs a method on parsed arguments; throws InputError on bad input (for the CLI). A result with a
// number that is not finite is an InputError too, naming the input that most likely caused it.
json invoke(std::string_view method, const json& args);
// Runs a method on a JSON text and wraps the outcome; never throws, for any bytes (for wasm and
// scripts). The text is checked before parsing: at most kMaxJsonBytes, valid UTF-8, nested at most
// kMaxJsonDepth deep (tally/input.h). Error messages are escaped and capped, never raw input.
std::string call(std::string_view method, std::string_view args_json);

// Appends {field, message} to result["warnings"]: a legal but implausible input or result
// (an MFU above 100 %), which the CLI prints on stderr and a widget shows beside the result.
void add_warning(json& result, const std::string& field, const std::string& message);

// Argument readers: each throws InputError naming the field when it is missing or of the wrong kind.
// Numbers may be given as JSON numbers or as strings in C syntax ("70e9"), strictly parsed.
double number_arg(const json& args, const char* field);
std::optional<double> optional_number_arg(const json& args, const char* field);
std::int64_t integer_arg(const json& args, const char* field, std::int64_t low, std::int64_t high);
std::optional<std::int64_t> optional_integer_arg(const json& args, const char* field, std::int64_t low,
                                                 std::int64_t high);
bool bool_arg(const json& args, const char* field, bool fallback);
std::string string_arg(const json& args, const char* field);
std::optional<std::string> optional_string_arg(const json& args, const char* field);

}  // namespace tally::api
