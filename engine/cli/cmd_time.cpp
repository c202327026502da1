// `tally time`: training FLOPs (6ND, or the exact count for a model), wall-clock time, GPU-hours and cost.
// `tally mfu`: model FLOPs utilization from a measured throughput.
#include <ostream>

#include "cli.h"
#include "commands.h"
#include "tally/base/error.h"

namespace tally::cli {

namespace {

void print_human(std::ostream& out, const nlohmann::json& r) {
    std::vector<std::pair<std::string, std::string>> rows = {
        {"training FLOPs (" + r["flops_basis"].get<std::string>() + ")", human(r["total_flops"].get<double>())},
        {"6ND", human(r["six_nd"].get<double>())},
        {"cluster FLOP/s (achieved)", human(r["cluster_flops_per_s"].get<double>())},
        {"time (s)", human(r["seconds"].get<double>())},
        {"time (days)", human(r["seconds"].get<double>() / kSecondsPerDay)},
        {"GPU-hours", human(r["gpu_seconds"].get<double>() / kSecondsPerHour)},
    };
    if (r.contains("cost_dollars")) rows.push_back({"cost ($)", human(r["cost_dollars"].get<double>())});
    print_table(out, rows);
}

void print_mfu(std::ostream& out, const nlohmann::json& r) {
    print_table(out,
                {{"model FLOPs per token (" + r["flops_basis"].get<std::string>() + ")",
                  human(r["model_flops_per_token"].get<double>())},
                 {"hardware FLOPs per token (with recomputation)", human(r["hardware_flops_per_token"].get<double>())},
                 {"MFU", human(r["mfu"].get<double>())},
                 {"HFU", human(r["hfu"].get<double>())},
                 {"MFU by 6N", human(r["six_n_mfu"].get<double>())}});
}

// Contradictory flags and flags the chosen inputs would ignore are errors, not silent choices.
void rules(std::span<const Option> options, nlohmann::json& args) {
    const bool has_model = args.contains("model") || args.contains("config_path");
    reject_together(args, options, "params", "model", "the model's exact count replaces --params; give one");
    reject_together(args, options, "params", "config_path", "the model's exact count replaces --params; give one");
    reject_together(args, options, "model", "config_path", "give one model");
    reject_together(args, options, "peak_tflops", "peak_flops_per_s", "give the peak once");
    reject_together(args, options, "hardware", "peak_tflops", "give a hardware preset or a peak, not both");
    reject_together(args, options, "hardware", "peak_flops_per_s", "give a hardware preset or a peak, not both");
    // --predict-mfu is the CLI's spelling of mfu "predicted"; what applies only with it, the engine's declarations say.
    reject_unless(args, options, "predict_mfu", has_model,
                  "with --model or --config (the step-time model needs the model's shape)");
    fix_flags(args);
}

}  // namespace

std::span<const Option> time_options(std::string_view command) {
    // Every declared argument is a flag (cli.h, declared_options); these are the ones the CLI sets another way.
    const Replace config{"hf_config", {kConfigOption}};
    // --mfu takes a number; "predicted" is --predict-mfu, listed beside it.
    const Replace mfu{"mfu",
                      {{"--mfu", "mfu", Kind::Number, nullptr},
                       {"--predict-mfu", "predict_mfu", Kind::Flag,
                        "use the step-time model's MFU (tally step) instead of --mfu; layout below"}}};
    static const std::vector<Option> time = declared_options("training_cost", {config, mfu});
    static const std::vector<Option> mfu_options = declared_options("mfu", {config});
    if (command == "time") return time;
    if (command == "mfu") return mfu_options;
    return {};
}

int cmd_time(int argc, char** argv) {
    return simple_command(
        argc, argv, "time", "training_cost",
        "usage: tally time (--params N | --model ID | --config FILE) --tokens D --gpus G\n"
        "                  (--peak-tflops P | --hardware ID [--dtype T]) --mfu U [--price $] [--json]\n"
        "FLOPs = 6 N D (or the exact count for a model, with recomputation); seconds = FLOPs / (G * P * U).",
        time_options("time"), print_human, [](nlohmann::json& args) {
            rules(time_options("time"), args);
            if (!args.contains("predict_mfu")) return;
            args.erase("predict_mfu");
            if (args.contains("mfu")) throw InputError("--mfu", "give either --mfu or --predict-mfu, not both");
            args["mfu"] = "predicted";
        });
}

int cmd_mfu(int argc, char** argv) {
    return simple_command(argc, argv, "mfu", "mfu",
                          "usage: tally mfu (--params N | --model ID | --config FILE) --tokens-per-second T --gpus G\n"
                          "                 (--peak-tflops P | --hardware ID [--dtype T]) [--json]\n"
                          "MFU = model FLOPs per token × tokens/s ÷ (G × peak) (PaLM, App. B); HFU adds recomputation.",
                          time_options("mfu"), print_mfu,
                          [](nlohmann::json& args) { rules(time_options("mfu"), args); });
}

}  // namespace tally::cli
