// API of the solvers (fit.h): the largest model on N GPUs, or the fewest GPUs for a model and setup.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/memory/fit.h"
#include "tally/hardware/hardware.h"
#include "tally/memory/memory.h"
#include "tally/model/model.h"

namespace tally::api {

namespace {

using u64 = std::uint64_t;

// ---------------------------------------------------------------- fit
using namespace arg;
constexpr Arg kMode = choice("mode", "depends: min_gpus with a model, else largest_model",
                             "largest_model: the most parameters on gpus; min_gpus: the fewest GPUs for the model",
                             "largest_model|min_gpus");
constexpr Arg kReserve{"reserve_fraction",
                       Num,
                       "",
                       0,
                       1,
                       "0",
                       "largest_model: share of the memory set aside (activations, buffers), in [0, 1)"};
constexpr Arg kFitZero = integer("zero", "", 0, 3, "depends: 3 for largest_model, 0 for min_gpus", "ZeRO stage");
constexpr Arg kFitGpus = integer("gpus", "GPUs", 1, kMaxGpus, "depends: required for largest_model", "GPUs in the run");
constexpr Arg kMaxGpusArg =
    integer("max_gpus", "GPUs", 1, kMaxSearchGpus, "1048576", "min_gpus: the largest count tried");
constexpr auto kFitArgs =
    merge_args(std::array{kMode, kReserve, kFitZero, kFitGpus, kMaxGpusArg}, kModelArgs, kSetupArgs, kCapacityArgs);
constexpr std::array kFitOwnResult = std::to_array<Field>({
    {"mode", "", "largest_model or min_gpus"},
    {"max_params", "parameters", "largest_model: the most parameters whose static memory fits"},
    {"layers", "layers", "largest_model with a model: the deepest model that fits (null: none)"},
    {"max_params_with_activations", "parameters", "largest_model with a model: its parameters"},
    {"min_gpus", "GPUs", "min_gpus: the fewest GPUs (null: none up to max_gpus)"},
    {"dp", "GPUs", "data-parallel degree"},
    {"usable_bytes", "bytes", "usable memory (largest_model: all GPUs, after the reserve)"},
    {"budget", "", "the memory_budget at the answer"},
    {"assumes", "", "what the bound assumes"},
    {"gpus", "GPUs", "GPUs in the run (min_gpus: the answer)"},
    {"zero", "", "ZeRO stage"},
    {"tp", "", "tensor-parallel degree"},
    {"pp", "", "pipeline-parallel degree"},
    {"recipe", "", "the recipe used, overrides applied"},
    {"bytes_per_param", "bytes", "largest_model: static bytes per parameter of the recipe"},
    {"reserve_fraction", "", "largest_model: share of the memory set aside"},
    {"usable_bytes_total", "bytes", "largest_model: usable memory of all GPUs, before the reserve"},
    {"usable_bytes_per_gpu", "bytes", "largest_model: one GPU's usable memory"},
    {"capacity_bytes", "bytes", "one GPU's memory"},
    {"capacity_bytes_total", "bytes", "largest_model: the memory of all GPUs"},
    {"model", "", "largest_model with a model: the deepest model that fits (null: none)"},
    {"assumes_with_model", "", "largest_model with a model: what the depth search keeps and counts"},
    {"reason", "", "min_gpus with no answer: why, and what to change"},
});

// Each mode reads its own arguments; one the mode would ignore is refused by name. largest_model honours zero, tp
// and pp always (the ZeRO paper's Table 2) and, with a model, every activation setting (it grows the model's
// depth); without a model it counts no activations. min_gpus searches the global batch itself.
void refuse_other_mode(const json& args, const std::string& mode, bool model_given) {
    const bool largest = mode == "largest_model";
    const auto refuse_unless = [&](const char* name, bool applies, const char* when) {
        if (!applies && args.contains(name) && !args[name].is_null())
            throw InputError(name, std::string(name) + " applies only " + when + "; leave it out");
    };
    refuse_unless("max_gpus", !largest, "with `mode` min_gpus (the fewest GPUs for a model)");
    for (const char* name :
         {"seq", "decoder_seq", "micro_batch", "sequence_parallel", "recompute", "recompute_ops", "recompute_layers",
          "flash_attention", "dropout", "activation_bytes", "virtual_stages", "keep_stage_outputs", "encoder_head", "cp",
          "cp_load_balance", "shard_group", "offload", "etp"})
        refuse_unless(name, !largest || model_given,
                      "with `mode` largest_model beside `model` or `hf_config` (without a model no activations are "
                      "counted)");
    for (const char* name : {"gpus", "reserve_fraction"})
        refuse_unless(name, largest, "with `mode` largest_model (the largest model on `gpus` GPUs)");
    refuse_unless("global_batch", largest, "with `mode` largest_model (min_gpus sets the batch itself)");
}

json fit(const json& args) {
    // Without a mode: the fewest GPUs for a given model, else the largest model on the given GPUs.
    const bool model_given = (args.contains("model") && !args["model"].is_null()) ||
                             (args.contains("hf_config") && !args["hf_config"].is_null());
    const std::string mode = optional_string_arg(args, kMode.name).value_or(model_given ? "min_gpus" : "largest_model");
    if (mode == "largest_model" || mode == "min_gpus") refuse_other_mode(args, mode, model_given);
    json hardware;
    if (mode == "largest_model") {
        json recipe;
        const Recipe p = recipe_from_args(args, &recipe);
        const std::int64_t gpus = integer_arg(args, kFitGpus.name, 1, static_cast<std::int64_t>(kFitGpus.high));
        const auto cap = capacity_from_args(args, &hardware);
        if (!cap) throw InputError("hardware", "give hardware (a preset id) or capacity_bytes");
        const double reserve = require_in_right_open("reserve_fraction",
                                                     optional_number_arg(args, "reserve_fraction").value_or(0.0), 0, 1);
        const u64 total = checked_mul("gpus", cap->usable_bytes, static_cast<u64>(gpus));
        const u64 usable = after_reserve(total, reserve);
        // ZeRO stage 3 (FSDP full shard) unless told otherwise: the bound of the ZeRO paper's last column.
        const int zero = static_cast<int>(arg_int(args, kFitZero, 3));
        const std::int64_t tp = arg_int(args, arg::tp);
        const std::int64_t pp = arg_int(args, arg::pp);
        const u64 n = largest_model_params_sharded(usable, gpus, zero, tp, pp, p);
        const BytesPerParam256 b = bytes_per_param_256(p);
        static const char* const kZeroAssumes[] = {
            "no ZeRO: every data-parallel rank holds all weights, gradients, master weights and optimizer states of its "
            "tp·pp share",
            "ZeRO stage 1: optimizer states and master weights sharded across data-parallel ranks",
            "ZeRO stage 2: gradients, optimizer states and master weights sharded across data-parallel ranks",
            "weights, gradients, master weights and optimizer states fully sharded across all GPUs (ZeRO stage 3 / FSDP)"};
        json out{
            {"mode", mode},
            {"gpus", gpus},
            {"zero", zero},
            {"tp", tp},
            {"pp", pp},
            {"dp", gpus / (tp * pp)},
            {"usable_bytes_total", total},
            {"usable_bytes", usable},
            {"reserve_fraction", reserve},
            {"recipe", recipe},
            {"bytes_per_param", static_cast<double>(b.total()) / 256},
            {"max_params", n},
            {"assumes", std::string(kZeroAssumes[zero]) +
                            "; activations excluded unless reserve_fraction sets memory aside or a model is given"}};
        add_capacity(out, *cap, hardware);
        out["usable_bytes"] = usable;  // after the reserve, all GPUs together
        out["usable_bytes_per_gpu"] = cap->usable_bytes;
        out["capacity_bytes_total"] = checked_mul("gpus", cap->capacity, static_cast<u64>(gpus));
        // With a model: keep its width, grow its depth, count everything (activations included).
        if (model_given) {
            ModelConfig c = resolve_model(args);
            json model_recipe;
            json setup_args = args;
            setup_args["zero"] = zero;
            TrainingSetup st = setup_from_args(setup_args, &model_recipe);
            st.gpus = gpus;
            const u64 per_gpu = after_reserve(cap->usable_bytes, reserve);
            const std::int64_t layers = largest_model_layers(c, st, per_gpu);
            out["layers"] = layers == 0 ? json(nullptr) : json(layers);
            if (layers == 0) {
                out["max_params_with_activations"] = nullptr;
                out["reason"] =
                    "not even one layer per pipeline stage fits: raise the ZeRO stage, tp or pp, recompute, "
                    "or shrink seq/micro_batch";
            } else {
                c.num_layers = layers;
                const MemoryBudget m = memory_budget(c, st);
                out["max_params_with_activations"] = m.params_total;
                out["model"] = model_to_json(c);
                out["budget"] = budget_json(c, st, m, model_recipe);
            }
            out["assumes_with_model"] =
                "the model's width, heads and vocabulary kept; num_layers is the largest depth "
                "whose whole budget (activations at seq and micro_batch included) fits one GPU";
        }
        return out;
    }
    if (mode == "min_gpus") {
        const ModelConfig c = resolve_model(args);
        json recipe;
        TrainingSetup st = setup_from_args(args, &recipe);
        const auto cap = capacity_from_args(args, &hardware);
        if (!cap) throw InputError("hardware", "give hardware (a preset id) or capacity_bytes");
        const std::int64_t max_gpus = arg_int(args, kMaxGpusArg);
        st.global_batch = 0;
        const std::int64_t n = min_gpus(c, st, cap->usable_bytes, max_gpus);
        json out{{"mode", mode}, {"tp", st.tp}, {"pp", st.pp}, {"zero", st.zero}};
        add_capacity(out, *cap, hardware);
        if (n == 0) {
            out["min_gpus"] = nullptr;
            out["reason"] =
                "no data-parallel degree up to " + std::to_string(max_gpus) +
                " GPUs fits: raise the ZeRO stage, tp or pp, recompute activations, or shrink seq/micro_batch";
            return out;
        }
        st.gpus = n;
        out["min_gpus"] = n;
        out["dp"] = n / (st.tp * st.pp);
        out["budget"] = budget_json(c, st, memory_budget(c, st), recipe);
        return out;
    }
    throw InputError("mode", "mode must be largest_model or min_gpus, got \"" + mode + "\"");
}

constexpr auto kFitResult = join_args(kFitOwnResult, arg::kCapacityFields);
constexpr Method kMethods[] = {
    {"fit", fit, "largest model on N GPUs, or fewest GPUs for a model and setup", kFitArgs.span(), kFitResult, true},
};

}  // namespace

std::span<const Method> fit_methods() { return kMethods; }

}  // namespace tally::api
