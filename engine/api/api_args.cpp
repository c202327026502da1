// Argument readers shared by the API files (declared in api_args.h): the training setup, the recipe,
// the usable capacity, the FLOPs inputs, and the float-format arguments.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/hardware/hardware.h"
#include "tally/base/input.h"
#include "tally/memory/memory.h"
#include "tally/model/model.h"
#include "tally/numerics/precision_text.h"
#include "tally/compute/training.h"

namespace tally::api {

using u64 = std::uint64_t;
using namespace tally::fp;

// ---------------------------------------------------------------- argument helpers
std::int64_t int_or(const json& args, const char* field, std::int64_t fallback, std::int64_t low, std::int64_t high) {
    return optional_integer_arg(args, field, low, high).value_or(fallback);
}

std::string string_or(const json& args, const char* field, const char* fallback) {
    return optional_string_arg(args, field).value_or(fallback);
}

Recipe recipe_from_args(const json& args, json* recipe_out) {
    const RecipePreset& preset = find_recipe(arg_string(args, arg::recipe));
    const auto dtype = [&](const char* field) -> std::optional<DType> {
        if (auto v = optional_string_arg(args, field)) return dtype_from_string(*v, field, kStorageDType);
        return std::nullopt;
    };
    RecipeOverrides o;
    o.weights = dtype("weights");
    o.gradients = dtype("gradients");
    o.master_weights = dtype("master_weights");
    if (auto v = optional_string_arg(args, "optimizer")) o.optimizer = optimizer_from_string(*v);
    o.optimizer_state = dtype("optimizer_state");
    o.grad_accum = dtype("grad_accum");
    const ChosenRecipe chosen = choose_recipe(preset, o);
    const Recipe& p = chosen.recipe;
    if (recipe_out != nullptr) {
        *recipe_out = json{{"id", chosen.id()},
                           {"base", preset.id},
                           {"name", chosen.name()},
                           {"description", chosen.description()},
                           {"weights", to_string(p.weights)},
                           {"gradients", to_string(p.gradients)},
                           {"master_weights", to_string(p.master_weights)},
                           {"optimizer", to_string(p.optimizer)},
                           {"optimizer_state", to_string(p.optimizer_state)}};
        if (p.grad_accum != DType::None) (*recipe_out)["grad_accum"] = to_string(p.grad_accum);
    }
    return p;
}

TrainingSetup setup_from_args(const json& args, json* recipe_out) {
    TrainingSetup st;
    st.seq = arg_int(args, arg::seq);
    st.decoder_seq = arg_int(args, arg::decoder_seq);
    st.micro_batch = arg_int(args, arg::micro_batch);
    st.global_batch = arg_int(args, arg::global_batch);
    st.gpus = arg_int(args, arg::gpus);
    st.zero = static_cast<int>(arg_int(args, arg::zero));
    st.tp = arg_int(args, arg::tp);
    st.pp = arg_int(args, arg::pp);
    st.sequence_parallel = arg_bool(args, arg::sequence_parallel);
    st.recompute = recompute_from_string(arg_string(args, arg::recompute));
    st.recompute_ops = recompute_ops_from_string(arg_string(args, arg::recompute_ops));
    st.recompute_layers = arg_int(args, arg::recompute_layers);
    st.flash_attention = arg_bool(args, arg::flash_attention);
    // Absent (or null): the model's own dropouts decide which masks are stored.
    if (args.contains("dropout") && !args["dropout"].is_null()) st.dropout = bool_arg(args, "dropout", false);
    st.activation_bytes = arg_int(args, arg::activation_bytes);
    const std::string gather = arg_string(args, arg::zero3_gather);
    if (gather == "module")
        st.zero3_gather = TrainingSetup::Zero3Gather::Module;
    else if (gather == "layer")
        st.zero3_gather = TrainingSetup::Zero3Gather::Layer;
    else if (gather != "none")
        throw InputError("zero3_gather", "zero3_gather must be none, module or layer, got \"" + gather + "\"");
    st.zero3_prefetch = arg_int(args, arg::zero3_prefetch);
    st.virtual_stages = arg_int(args, arg::virtual_stages);
    st.keep_stage_outputs = arg_bool(args, arg::keep_stage_outputs);
    st.grad_accum_full = arg_bool(args, arg::grad_accum_full);
    st.cost_balanced_stages = arg_bool(args, arg::cost_balanced_stages);
    st.recipe = recipe_from_args(args, recipe_out);
    st.ep = arg_int(args, arg::ep);
    st.capacity_factor = arg_number(args, arg::capacity_factor);
    // Absent or 0: etp = tp and shard_group = dp·cp, the layouts before folding and HSDP.
    st.etp = arg_int(args, arg::etp);
    st.cp = arg_int(args, arg::cp);
    st.cp_load_balance = arg_bool(args, arg::cp_load_balance);
    st.shard_group = arg_int(args, arg::shard_group);
    const std::string offload = arg_string(args, arg::offload);
    if (offload == "optimizer")
        st.offload_optimizer = true;
    else if (offload == "optimizer_params")
        st.offload_optimizer = st.offload_params = true;
    else if (offload == "params")
        st.offload_params = true;
    else if (offload != "none")
        throw InputError("offload",
                         "offload must be none, optimizer, params or optimizer_params, got \"" + offload + "\"");
    return st;
}

void require_default_placement(const TrainingSetup& st, const char* method) {
    const auto refuse = [&](const char* field) {
        throw InputError(field, std::string(field) + " is read by memory_budget and fit; " + method +
                                    " does not model it yet: leave it at its default");
    };
    if (st.cp != 1) refuse("cp");
    if (st.shard_group != 0) refuse("shard_group");
    if (st.offload_optimizer || st.offload_params) refuse("offload");
    if (st.etp != 0 && st.etp != st.tp && std::string_view(method) != "step_time")
        refuse("etp");  // step_time folds the experts over tp (step_moe.h); the planner does not search etp
}

std::optional<Hardware> optional_hardware_arg(const json& args) {
    auto it = args.find("hardware");
    if (it == args.end() || it->is_null()) return std::nullopt;
    if (it->is_string()) return find_hardware(it->get<std::string>());
    if (it->is_object()) return hardware_from_json(*it);
    throw InputError("hardware",
                     "hardware must be a preset id (see presets) or an object in the preset format (docs/API.md, "
                     "\"Hardware objects\")");
}

// Capacity from capacity_bytes (usable_capacity: as given) or a hardware preset (preset_usable_capacity: the
// reported capacity less the default allowances); nullopt when neither is given.
std::optional<UsableCapacity> capacity_from_args(const json& args, json* hardware_out) {
    const auto stated = optional_number_arg(args, "capacity_bytes");
    const std::optional<Hardware> hw = stated ? std::nullopt : optional_hardware_arg(args);
    if (!stated && !hw) return std::nullopt;
    const u64 capacity = stated ? static_cast<u64>(require_integer("capacity_bytes", *stated, 1,
                                                                   static_cast<std::int64_t>(arg::capacity_bytes.high)))
                                : 0;
    if (hw && hardware_out != nullptr) *hardware_out = hardware_to_json(*hw);
    std::optional<u64> context;
    if (auto v = optional_number_arg(args, "cuda_context_bytes"))
        context = static_cast<u64>(
            require_integer("cuda_context_bytes", *v, 0, static_cast<std::int64_t>(arg::cuda_context_bytes.high)));
    const std::optional<double> fraction = optional_number_arg(args, "fragmentation_fraction");
    if (hw) return preset_usable_capacity(*hw, context, fraction);
    return usable_capacity(capacity, context.value_or(0), fraction.value_or(0));
}

// The capacity fields every method with a capacity reports.
void add_capacity(json& out, const UsableCapacity& u, const json& hardware) {
    out["capacity_bytes"] = u.capacity;
    out["cuda_context_bytes"] = u.context_bytes;
    out.update(TALLY_MEMBERS(u, fragmentation_fraction, fragmentation_bytes, allowance_bytes, usable_bytes));
    if (!hardware.is_null()) out["hardware"] = hardware;
}

json recipes_json() {
    json out = json::array();
    for (const RecipePreset& r : recipes()) {
        const BytesPerParam256 b = bytes_per_param_256(r.recipe);
        out.push_back(json{{"weights", to_string(r.recipe.weights)},
                           {"gradients", to_string(r.recipe.gradients)},
                           {"master_weights", to_string(r.recipe.master_weights)},
                           {"optimizer", to_string(r.recipe.optimizer)},
                           {"optimizer_state", to_string(r.recipe.optimizer_state)},
                           {"bytes_per_param", static_cast<double>(b.total()) / 256}});
        out.back().update(TALLY_MEMBERS(r, id, name, description));
    }
    return out;
}

// ---------------------------------------------------------------- Chinchilla reference
// The Chinchilla reference (training.h); `basis` says which N it uses: total, active (MoE) or given.
void add_chinchilla(json& out, double params, double tokens, const char* basis) {
    const Chinchilla rule = chinchilla(params, tokens);
    out["chinchilla_tokens_per_param"] = kChinchillaTokensPerParam;
    out["chinchilla_params"] = basis;
    out["chinchilla_tokens"] = rule.compute_optimal_tokens;
    out["tokens_per_param"] = rule.tokens_per_param;
}

// ---------------------------------------------------------------- flops
FlopsInput flops_input(const json& args, const ModelConfig& c) {
    FlopsInput in;
    in.seq = arg_int(args, arg::flops_seq, default_seq(c));
    in.decoder_seq = arg_int(args, arg::decoder_seq);
    in.attention = attention_flops_from_string(arg_string(args, arg::attention_flops));
    in.recompute = recompute_from_string(arg_string(args, arg::recompute));
    in.flash_attention = arg_bool(args, arg::flash_attention);
    in.recompute_ops = recompute_ops_from_string(arg_string(args, arg::recompute_ops));
    in.recompute_layers = arg_int(args, arg::recompute_layers);
    if (in.recompute_layers > 0) {
        // recompute_layers counts layers per pipeline stage (ceil(L/pp) of them).
        const std::int64_t pp = int_or(args, "pp", 1, 1, c.num_layers);
        in.layers_per_stage = pipeline_stage_layers(c.num_layers, pp);
    }
    in.capacity_factor = arg_number(args, arg::capacity_factor);
    return in;
}

// ---------------------------------------------------------------- argument readers

Format format_arg(const json& args, const char* field) {
    const std::string name = string_arg(args, field);
    if (auto f = format_from_name(name)) return *f;
    throw InputError(field, std::string(field) + " must be one of " + format_names_list() + ", got \"" + name + "\"");
}

Round round_arg(const json& args, Format f) {
    auto name = optional_string_arg(args, "rounding");
    if (!name) return Round::nearest_even;
    auto r = round_from_name(*name);
    if (!r)
        throw InputError("rounding",
                         "rounding must be one of nearest_even (rn), nearest_away (rna), toward_zero (rz), up (ru), "
                         "down (rd), got \"" +
                             *name + "\"");
    (void)f;
    return *r;
}

// saturate: true, false, or absent/null/"default" for the format's NVIDIA default.
bool saturate_arg(const json& args, Format f) {
    auto it = args.find("saturate");
    if (it == args.end() || it->is_null() || (it->is_string() && it->get<std::string>() == "default"))
        return format_info(f).default_saturate;
    return bool_arg(args, "saturate", format_info(f).default_saturate);
}

// The value to encode: a JSON number, or text ("1e-8", "-0", "inf", "nan").
ValueArg value_arg(const json& args) {
    auto it = args.find("value");
    if (it == args.end() || it->is_null())
        throw InputError("value", "value is required: a number such as 0.1, 1e-8, -0, inf or nan");
    if (it->is_number()) {
        const double v = it->get<double>();
        return {v, exact_decimal(v)};
    }
    if (it->is_string()) {
        const std::string t = it->get<std::string>();
        return {parse_value("value", t), t};
    }
    throw InputError("value",
                     "value must be a number or a string such as \"1e-8\", got " + std::string(it->type_name()));
}

// A code from "code" (integer, or hex text) or "hex" (text).
uint64_t code_arg(const json& args, Format f) {
    const FormatInfo fi = format_info(f);
    auto hex = args.find("hex");
    if (hex != args.end() && !hex->is_null()) {
        if (!hex->is_string()) throw InputError("hex", "hex must be a string such as \"0x7e\"");
        return parse_code_text("hex", f, hex->get<std::string>());
    }
    auto code = args.find("code");
    if (code == args.end() || code->is_null())
        throw InputError("code", "code or hex is required: the bit pattern to decode");
    if (code->is_string()) return parse_code_text("code", f, code->get<std::string>());
    const std::string range = "an integer in [0, " + std::to_string(code_mask(fi)) + "] for " + fi.name +
                              (fi.bits > 53 ? " (give 64-bit codes as hex text)" : "");
    if (code->is_number_unsigned()) {
        const uint64_t v = code->get<uint64_t>();
        if (v > code_mask(fi)) throw InputError("code", "code must be " + range + ", got " + std::to_string(v));
        return v;
    }
    if (code->is_number_integer()) throw InputError("code", "code must be " + range + ", got " + code->dump());
    if (code->is_number_float()) {
        const double v = code->get<double>();
        if (!(v >= 0) || v != std::floor(v) || v > (double)code_mask(fi) || v >= 18446744073709551616.0)
            throw InputError("code", "code must be " + range + ", got " + format_number(v));
        return (uint64_t)v;
    }
    throw InputError("code", "code must be " + range);
}

}  // namespace tally::api
