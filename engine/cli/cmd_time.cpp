// `tally time`: training FLOPs (6ND, or the exact count for a model), wall-clock time, GPU-hours and cost.
// `tally mfu`: model FLOPs utilization from a measured throughput.
#include <ostream>

#include "cli.h"
#include "commands.h"
#include "tally/error.h"

namespace tally::cli {

namespace {

// Flags shared by time and mfu: the model or params, the FLOPs count and the peak.
#define FLOPS_PEAK_OPTIONS                                                                                            \
    {"--params", "params", Kind::Number, "model parameters N, e.g. 70e9 (or --model / --config)"},                    \
        {"--model", "model", Kind::String, "model preset id (tally presets); FLOPs are then the exact count"},        \
        {"--config", "config_path", Kind::String, "path to a Hugging Face config.json or a tally config object"},     \
        {"--seq", "seq", Kind::Integer, "sequence length for the exact count (with --model)"},                        \
        {"--decoder-seq", "decoder_seq", Kind::Integer, "encoder-decoder: target length (default: --seq)"},           \
        {"--encoder-head", "encoder_head", Kind::String, "encoder (BERT) heads: model | masked_lm | pretraining"},    \
        {"--flops-basis", "flops_basis", Kind::String,                                                                \
         "six_nd | exact (default: six_nd with --params, exact with --model)"},                                       \
        {"--attention-flops", "attention_flops", Kind::String,                                                        \
         "full (default) | causal: attention score entries counted"},                                                 \
        {"--recompute", "recompute", Kind::String,                                                                    \
         "none (default) | selective | full (with --params alone: full adds 2N)"},                                    \
        {"--recompute-ops", "recompute_ops", Kind::String,                                                            \
         "comma list: attention_scores,qkv,norms,mlp_up,mlp_activation"},                                             \
        {"--recompute-layers", "recompute_layers", Kind::Integer, "layers per stage recomputed in full (default 0)"}, \
        {"--pp", "pp", Kind::Integer,                                                                                 \
         "pipeline stages (default 1): recompute-layers counts per stage; the layout with --predict-mfu"},            \
        {"--flash-attn", "flash_attention", Kind::Flag, "FlashAttention: its backward recomputes Q·Kᵀ"},              \
        {"--capacity-factor", "capacity_factor", Kind::Number,                                                        \
         "MoE: expert slots per routed token (default 0: no limit)"},                                                 \
        {"--gpus", "gpus", Kind::Integer, "number of GPUs, whole number >= 1 (required)"},                            \
        {"--hardware", "hardware", Kind::String, "hardware preset id, e.g. h100-sxm (gives the dense peak)"},         \
        {"--dtype", "dtype", Kind::String,                                                                            \
         "matmul dtype for the hardware's peak: bf16 (default), fp16, fp8, fp4, tf32, fp32"},                         \
        {"--peak-tflops", "peak_tflops", Kind::Number,                                                                \
         "dense peak TFLOP/s of one GPU, e.g. 989.5 (instead of --hardware)"},                                        \
    {                                                                                                                 \
        "--peak-flops", "peak_flops_per_s", Kind::Number,                                                             \
            "dense peak FLOP/s of one GPU (alternative to --peak-tflops)"                                             \
    }

constexpr Option kOptions[] = {
    FLOPS_PEAK_OPTIONS,
    {"--tokens", "tokens", Kind::Number, "training tokens D, e.g. 15e12 (required)"},
    {"--mfu", "mfu", Kind::Number, "model FLOPs utilization in (0, 1] (required)"},
    {"--price", "dollars_per_gpu_hour", Kind::Number, "dollars per GPU-hour (optional: adds the cost)"},
    {"--predict-mfu", "predict_mfu", Kind::Flag,
     "use the step-time model's MFU (tally step) instead of --mfu; layout below"},
    {"--tp", "tp", Kind::Integer, "with --predict-mfu: tensor parallel degree (default 1)"},
    {"--zero", "zero", Kind::Integer, "with --predict-mfu: ZeRO stage (default 0)"},
    {"--micro-batch", "micro_batch", Kind::Integer, "with --predict-mfu: micro-batch (default 1)"},
    {"--global-batch", "global_batch", Kind::Integer, "with --predict-mfu: sequences per step"},
    {"--sequence-parallel", "sequence_parallel", Kind::Flag, "with --predict-mfu: sequence parallelism"},
    {"--interleave", "interleave", Kind::Integer, "with --predict-mfu: virtual pipeline chunks per stage"},
};

constexpr Option kMfuOptions[] = {
    FLOPS_PEAK_OPTIONS,
    {"--tokens-per-second", "tokens_per_second", Kind::Number, "measured training throughput of all GPUs (required)"},
};

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
    reject_unless(args, options, "seq", has_model,
                  "with --model or --config (6ND from --params has no sequence length)");
    reject_together(args, options, "peak_tflops", "peak_flops_per_s", "give the peak once");
    reject_together(args, options, "hardware", "peak_tflops", "give a hardware preset or a peak, not both");
    reject_together(args, options, "hardware", "peak_flops_per_s", "give a hardware preset or a peak, not both");
    reject_unless(args, options, "dtype", args.contains("hardware"), "with --hardware (it picks the preset's peak)");
    const std::string model_only = "with --model or --config (6ND from --params counts no model shape)";
    for (const char* key : {"decoder_seq", "encoder_head", "capacity_factor"})
        reject_unless(args, options, key, has_model, model_only);
    // The layout flags feed only the step-time model; without --predict-mfu the given --mfu stands alone.
    const bool predict = args.contains("predict_mfu");
    reject_unless(args, options, "predict_mfu", has_model,
                  "with --model or --config (the step-time model needs the model's shape)");
    for (const char* key : {"tp", "zero", "micro_batch", "global_batch", "sequence_parallel", "interleave"})
        reject_unless(args, options, key, predict, "with --predict-mfu (the layout of the step-time model)");
    reject_unless(args, options, "pp", predict || (has_model && args.contains("recompute_layers")),
                  "with --predict-mfu, or with --model or --config and --recompute-layers (counted per stage)");
    fix_flags(args);
}

}  // namespace

std::span<const Option> time_options(std::string_view command) {
    if (command == "time") return kOptions;
    if (command == "mfu") return kMfuOptions;
    return {};
}

int cmd_time(int argc, char** argv) {
    return simple_command(
        argc, argv, "time", "training_cost",
        "usage: tally time (--params N | --model ID | --config FILE) --tokens D --gpus G\n"
        "                  (--peak-tflops P | --hardware ID [--dtype T]) --mfu U [--price $] [--json]\n"
        "FLOPs = 6 N D (or the exact count for a model, with recomputation); seconds = FLOPs / (G * P * U).",
        kOptions, print_human, [](nlohmann::json& args) {
            rules(kOptions, args);
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
                          kMfuOptions, print_mfu, [](nlohmann::json& args) { rules(kMfuOptions, args); });
}

}  // namespace tally::cli
