// `tally params | flops | memory | finetune | fit | kv-cache | presets`: the accounting engine from the shell.
// Each subcommand builds the arguments of one API method (docs/API.md "Accounting") from flags and
// prints its result as a table, or exactly the result object with --json.
#include <iostream>
#include <vector>

#include "cli.h"
#include "commands.h"
#include "tally/base/error.h"
#include "tally/model/hf_config.h"
#include "tally/base/input.h"

namespace tally::cli {

namespace {

using nlohmann::json;

}  // namespace

// --config FILE -> "hf_config" (a Hugging Face config.json, which has model_type) or "model" (a
// tally config, which has num_layers); anything else is named for what it is.
static void load_config_file(json& args) {
    auto it = args.find("config_path");
    if (it == args.end()) return;
    const std::string path = it->get<std::string>();
    args.erase("config_path");
    const std::string what = "--config \"" + printable(path, 200) + "\"";
    // A config.json saved by Python may spell infinity as Infinity (python_json_infinities).
    const json parsed =
        parse_json_input(python_json_infinities(read_config_file(path, "--config")), "config_path", what);
    if (!parsed.is_object())
        throw InputError("config_path", what + " must hold a JSON object, got " + std::string(parsed.type_name()));
    if (parsed.contains("model_type")) {
        args["hf_config"] = parsed;
    } else if (parsed.contains("num_layers")) {
        args["model"] = parsed;
    } else {
        throw InputError("config_path", what +
                                            " has no \"model_type\" (a Hugging Face config.json needs it; "
                                            "supported: " +
                                            std::string(hf_model_types()) +
                                            ") and no \"num_layers\" (a tally config object)");
    }
}

// Rules every command with the model and setup options shares.
void common_rules(const json& args, std::span<const Option> options) {
    reject_together(args, options, "model", "config_path", "give a preset or a config file");
    reject_together(args, options, "hardware", "capacity_bytes", "--capacity-bytes replaces the preset's memory");
}

void fix_flags(json& args) {
    load_config_file(args);
    if (args.contains("dropout_on") && args.contains("no_dropout"))
        throw InputError("dropout", "give either --dropout or --no-dropout, not both");
    if (args.contains("dropout_on")) {
        args.erase("dropout_on");
        args["dropout"] = true;
    }
    if (args.contains("no_dropout")) {
        args.erase("no_dropout");
        args["dropout"] = false;
    }
    if (args.contains("no_cp_load_balance")) {
        args.erase("no_cp_load_balance");
        args["cp_load_balance"] = false;
    }
}

namespace {

int run(int argc, char** argv, const char* command, const char* method, const char* usage,
        std::span<const Option> options, void (*print_human)(std::ostream&, const json&),
        void (*adjust)(json&) = nullptr, void (*rules)(const json&, std::span<const Option>) = nullptr) {
    return simple_command(argc, argv, command, method, usage, options, print_human, [=](json& args) {
        common_rules(args, options);
        if (rules != nullptr) rules(args, options);
        fix_flags(args);
        if (adjust != nullptr) adjust(args);
    });
}

std::string bytes_text(const json& value) {
    if (value.is_null()) return "-";
    const double bytes = value.get<double>();
    char buffer[64];
    if (bytes >= 1e9)
        std::snprintf(buffer, sizeof buffer, "%.2f GB", bytes / 1e9);
    else if (bytes >= 1e6)
        std::snprintf(buffer, sizeof buffer, "%.2f MB", bytes / 1e6);
    else
        std::snprintf(buffer, sizeof buffer, "%.0f B", bytes);
    return human_integer(value.get<unsigned long long>()) + "  (" + buffer + ")";
}

std::string model_line(const json& m) {
    // The name comes from the user's config file (_name_or_path): escape control characters.
    return printable(m["name"].get<std::string>(), 200) + ": V " + std::to_string(m["vocab_size"].get<long long>()) +
           ", h " + std::to_string(m["hidden_size"].get<long long>()) + ", L " +
           std::to_string(m["num_layers"].get<long long>()) + ", heads " +
           std::to_string(m["num_heads"].get<long long>()) + "/" + std::to_string(m["num_kv_heads"].get<long long>()) +
           " kv, f " + std::to_string(m["ffn_hidden_size"].get<long long>()) + " (" + m["mlp"].get<std::string>() + ")";
}

void print_params(std::ostream& out, const json& r) {
    out << model_line(r["model"]) << "\n";
    std::vector<std::pair<std::string, std::string>> rows;
    for (const auto& c : r["components"])
        rows.push_back({c["name"].get<std::string>(),
                        human_integer(c["count"].get<unsigned long long>()) + "   " + c["formula"].get<std::string>()});
    rows.push_back({"total", human_integer(r["total"].get<unsigned long long>())});
    if (r["active"] != r["total"])
        rows.push_back({"active per token (MoE)", human_integer(r["active"].get<unsigned long long>())});
    // Counted apart from the total, so a reader sees both figures and their sum is the checkpoint's.
    if (r.contains("mtp"))
        rows.push_back({"MTP modules (apart)", human_integer(r["mtp"]["count"].get<unsigned long long>())});
    if (r.contains("vision"))
        rows.push_back({"vision tower and projector (apart)", human_integer(r["vision"].get<unsigned long long>())});
    print_table(out, rows);
}

void print_flops(std::ostream& out, const json& r) {
    out << model_line(r["model"]) << "\nforward FLOPs per token at seq " << r["seq"].get<long long>() << " (attention "
        << r["attention_flops"].get<std::string>() << "):\n";
    std::vector<std::pair<std::string, std::string>> rows;
    for (const auto& c : r["components"]) {
        char share[32];
        std::snprintf(share, sizeof share, "%5.1f%%", c["share"].get<double>() * 100);
        rows.push_back({c["name"].get<std::string>(), human(c["forward_per_token"].get<double>()) + "  " + share});
    }
    rows.push_back({"forward per token", human(r["forward_per_token"].get<double>())});
    rows.push_back({"tokens D", human(r["tokens"].get<double>())});
    rows.push_back({"training FLOPs, exact (3× forward + recompute)", human(r["exact"].get<double>())});
    rows.push_back({"6ND", human(r["six_nd"].get<double>())});
    rows.push_back({"exact / 6ND (no recompute)", human(r["ratio_exact_to_six_nd"].get<double>())});
    print_table(out, rows);
    for (const auto& n : r["notes"]) out << "  note: " << n.get<std::string>() << "\n";
}

void print_memory(std::ostream& out, const json& r) {
    const json& s = r["setup"];
    out << model_line(r["model"]) << "\n"
        << "recipe " << r["recipe"]["id"].get<std::string>() << " ("
        << human(r["bytes_per_param"]["total"].get<double>()) << " B/param); gpus " << s["gpus"] << " = dp " << s["dp"]
        << " × tp " << s["tp"] << " × pp " << s["pp"] << (s["cp"].get<long long>() > 1 ? " × cp " + s["cp"].dump() : "")
        << ", ZeRO " << s["zero"]
        << (s["hsdp_replicas"].get<long long>() > 1
                ? " (HSDP: shard over " + s["shard_group"].dump() + ", " + s["hsdp_replicas"].dump() + " replicas)"
                : "")
        << (s["offload"] != "none" ? ", offload " + s["offload"].get<std::string>() : "") << ", seq " << s["seq"]
        << ", micro-batch " << s["micro_batch"] << ", recompute " << s["recompute"].get<std::string>()
        << (s["flash_attention"].get<bool>() ? ", FlashAttention" : "")
        << (s["sequence_parallel"].get<bool>() ? ", sequence parallel" : "")
        << "; busiest stage: " << s["stage"].get<std::string>() << "\n\nper GPU:\n";
    std::vector<std::pair<std::string, std::string>> rows;
    for (const auto& c : r["classes"]) rows.push_back({c["name"].get<std::string>(), bytes_text(c["bytes"])});
    rows.push_back({"total", bytes_text(r["per_gpu_bytes"]["total"])});
    if (r.contains("host_bytes")) {
        const json& host = r["host_bytes"];
        rows.push_back({"host memory per GPU (offloaded)", bytes_text(host["per_gpu"]["total"])});
        if (!host["per_node"].is_null())
            rows.push_back(
                {"host memory per node (" + host["gpus_per_node"].dump() + " GPUs)", bytes_text(host["per_node"])});
    }
    if (!r["capacity_bytes"].is_null()) {
        rows.push_back({"capacity (reported)", bytes_text(r["capacity_bytes"])});
        rows.push_back({"allowance (CUDA context + fragmentation)", bytes_text(r["allowance_bytes"])});
        rows.push_back({"usable", bytes_text(r["usable_bytes"])});
        rows.push_back({"fits (total <= usable)", r["fits"].get<bool>() ? "yes" : "no"});
        rows.push_back({"fewest GPUs that fit (same tp, pp, ZeRO)",
                        r["min_gpus"].is_null() ? "none" : std::to_string(r["min_gpus"].get<long long>())});
    }
    print_table(out, rows);
    const json& a = r["activations"];
    out << "\nactivations: " << human_integer(a["per_layer_bytes"].get<unsigned long long>()) << " B per layer × "
        << a["layers"] << " layers × " << a["microbatches_in_flight"] << " micro-batch(es) + outside terms";
    if (!a["korthikanti_formula"].get<std::string>().empty())
        out << "  [Korthikanti et al.: " << a["korthikanti_formula"].get<std::string>() << " per layer]";
    out << "\n";
    rows.clear();
    for (const auto& t : a["terms"])
        rows.push_back({(t["scope"] == "outside" ? "(outside) " : "") + t["name"].get<std::string>(),
                        human_integer(t["bytes"].get<unsigned long long>()) + "   " + t["formula"].get<std::string>()});
    print_table(out, rows);
}

void print_fit(std::ostream& out, const json& r) {
    if (r["mode"] == "largest_model") {
        std::vector<std::pair<std::string, std::string>> rows = {
            {"GPUs", std::to_string(r["gpus"].get<long long>()) + " = dp " + std::to_string(r["dp"].get<long long>()) +
                         " × tp " + std::to_string(r["tp"].get<long long>()) + " × pp " +
                         std::to_string(r["pp"].get<long long>()) + ", ZeRO " + std::to_string(r["zero"].get<int>())},
            {"memory in total (reported)", bytes_text(r["capacity_bytes_total"])},
            {"usable in total", bytes_text(r["usable_bytes_total"])},
            {"bytes per parameter", human(r["bytes_per_param"].get<double>())},
            {"largest model (parameters)", human_integer(r["max_params"].get<unsigned long long>())}};
        if (r.contains("layers")) {
            rows.push_back({"largest depth of this model (layers)",
                            r["layers"].is_null() ? "none" : std::to_string(r["layers"].get<long long>())});
            if (!r["max_params_with_activations"].is_null())
                rows.push_back({"its parameters (activations counted)",
                                human_integer(r["max_params_with_activations"].get<unsigned long long>())});
        }
        print_table(out, rows);
        out << "  assumes: " << r["assumes"].get<std::string>() << "\n";
        if (r.contains("assumes_with_model"))
            out << "  with the model: " << r["assumes_with_model"].get<std::string>() << "\n";
        return;
    }
    if (r["min_gpus"].is_null()) {
        out << "  " << r["reason"].get<std::string>() << "\n";
        return;
    }
    print_table(out, {{"fewest GPUs", std::to_string(r["min_gpus"].get<long long>())},
                      {"data parallel", std::to_string(r["dp"].get<long long>())},
                      {"per-GPU total", bytes_text(r["budget"]["per_gpu_bytes"]["total"])},
                      {"capacity", bytes_text(r["capacity_bytes"])}});
}

void print_kv(std::ostream& out, const json& r) {
    out << model_line(r["model"]) << "\n";
    std::vector<std::pair<std::string, std::string>> rows = {
        {"KV bytes per token", human_integer(r["bytes_per_token"].get<unsigned long long>())},
        {"KV cache", bytes_text(r["kv_cache_bytes"])},
        {"KV cache without GQA", bytes_text(r["mha_kv_cache_bytes"])},
        {"weights", bytes_text(r["weights_bytes"])},
        {"total", bytes_text(r["total_bytes"])}};
    if (r.contains("cross_kv_bytes_per_sequence"))
        rows.insert(rows.begin() + 2,
                    {"cross-attention K/V per sequence (fixed)", bytes_text(r["cross_kv_bytes_per_sequence"])});
    if (r.contains("fits")) {
        rows.push_back({"fits", r["fits"].get<bool>() ? "yes" : "no"});
        rows.push_back({"max batch at this context", human_integer(r["max_batch"].get<unsigned long long>())});
        rows.push_back({"max context at this batch", human_integer(r["max_context"].get<unsigned long long>())});
    }
    // One row per kind of layer: what each caches per token and how many tokens it keeps.
    for (const auto& g : r["kv_layers"]) {
        const std::string what =
            g["latent"].get<bool>()
                ? " (latent " + human_integer(g["value_values"].get<unsigned long long>()) + " + RoPE key " +
                      human_integer(g["key_values"].get<unsigned long long>()) +
                      (g.contains("index_key_bytes")
                           ? " + indexer key " + human_integer(g["index_key_bytes"].get<unsigned long long>()) +
                                 " B in FP8"
                           : std::string()) +
                      ")"
                : " (K " + human_integer(g["key_values"].get<unsigned long long>()) + " + V " +
                      human_integer(g["value_values"].get<unsigned long long>()) + ")";
        rows.push_back({human_integer(g["layers"].get<unsigned long long>()) + " " + g["kind"].get<std::string>() +
                            " layers" + what,
                        human_integer(g["bytes_per_layer_token"].get<unsigned long long>()) + " B per token each, " +
                            human_integer(g["tokens"].get<unsigned long long>()) + " tokens kept, " +
                            bytes_text(g["bytes_per_sequence"]) + " per sequence"});
    }
    print_table(out, rows);
}

void print_presets(std::ostream& out, const json& r) {
    out << "models:\n";
    std::vector<std::pair<std::string, std::string>> rows;
    for (const auto& m : r["models"])
        rows.push_back({m["id"].get<std::string>(), m["name"].get<std::string>() + ", " +
                                                        human_integer(m["params_total"].get<unsigned long long>()) +
                                                        " params"});
    print_table(out, rows);
    out << "hardware:\n";
    rows.clear();
    for (const auto& h : r["hardware"]) {
        std::string peak = h["peak_flops"].contains("bf16")
                               ? human(h["peak_flops"]["bf16"].get<double>() / 1e12) + " TFLOP/s bf16 dense"
                               : "no bf16";
        rows.push_back({h["id"].get<std::string>(), h["name"].get<std::string>() + ", " +
                                                        human(h["memory_bytes"].get<double>() / 1e9) + " GB, " + peak});
    }
    print_table(out, rows);
    out << "recipes:\n";
    rows.clear();
    for (const auto& x : r["recipes"])
        rows.push_back({x["id"].get<std::string>(), human(x["bytes_per_param"].get<double>()) +
                                                        " B/param: " + x["description"].get<std::string>()});
    print_table(out, rows);
}

}  // namespace

std::span<const Option> accounting_options(std::string_view command) {
    // Every declared argument is a flag (cli.h, declared_options); these are the ones the CLI sets another way.
    const Replace config{"hf_config", {kConfigOption}};
    const Replace dropout{"dropout", {kDropoutOn, kNoDropout}};
    const Replace cp_load_balance{"cp_load_balance", {kNoCpLoadBalance}};
    static const std::vector<Option> params = declared_options("params", {config});
    static const std::vector<Option> flops = declared_options("flops", {config});
    static const std::vector<Option> memory = declared_options("memory_budget", {config, dropout, cp_load_balance});
    static const std::vector<Option> fit = declared_options("fit", {config, dropout, cp_load_balance});
    static const std::vector<Option> finetune = declared_options("finetune", {config, dropout, cp_load_balance});
    static const std::vector<Option> kv = declared_options("kv_cache", {config});
    if (command == "params") return params;
    if (command == "flops") return flops;
    if (command == "memory") return memory;
    if (command == "fit") return fit;
    if (command == "finetune") return finetune;
    if (command == "kv-cache") return kv;
    return {};
}

int cmd_params(int argc, char** argv) {
    return run(argc, argv, "params", "params",
               "usage: tally params (--model PRESET | --config config.json) [--json]\n"
               "Exact parameter count by component; --json prints an integer `total` and the components.",
               accounting_options("params"), print_params);
}

int cmd_flops(int argc, char** argv) {
    return run(argc, argv, "flops", "flops",
               "usage: tally flops (--model PRESET | --config config.json) [--seq S] [--tokens D] [--json]\n"
               "Forward matmul FLOPs (2mnk each) by component and training FLOPs (3× forward + recompute) beside 6ND.\n"
               "--json: six_nd, exact (training FLOPs), forward_per_token, components, ratio_exact_to_six_nd.",
               accounting_options("flops"), print_flops);
}

int cmd_memory(int argc, char** argv) {
    return run(
        argc, argv, "memory", "memory_budget",
        "usage: tally memory (--model PRESET | --config config.json) [options] [--json]\n"
        "Training memory of the busiest GPU. Defaults: recipe bf16_mixed_adamw (2+2+4+8 = 16 B/param), 16-bit\n"
        "activations, the model's dropout, FlashAttention off, no recomputation, 1 GPU, ZeRO 0, seq 2048, micro-batch 1\n"
        "(Korthikanti et al. 2022's setting). --json: per_gpu_bytes {weights, gradients, master_weights,\n"
        "optimizer_states, activations, total} as integers, the activation terms, fits and min_gpus; with --offload,\n"
        "host_bytes {per_gpu, per_node} (host memory; per node from the preset's GPUs per node or --gpus-per-node).",
        accounting_options("memory"), print_memory);
}

static void print_finetune(std::ostream& out, const json& r) {
    out << model_line(r["model"]) << "\nmethod " << r["method"].get<std::string>();
    if (r.contains("lora"))
        out << ": rank " << r["lora"]["rank"].get<long long>() << " on " << r["lora"]["targets"].get<std::string>()
            << ", base " << r["base"]["dtype"].get<std::string>();
    out << "\n";
    const json& b = r["per_gpu_bytes"];
    std::vector<std::pair<std::string, std::string>> rows;
    rows.push_back({"trainable parameters", human_integer(r["params_trainable"].get<unsigned long long>()) + " of " +
                                                human_integer(r["params_total"].get<unsigned long long>())});
    const std::pair<const char*, const char*> classes[] = {{"frozen_weights", "frozen base weights"},
                                                           {"trainable_weights", "trainable weights"},
                                                           {"gradients", "gradients"},
                                                           {"master_weights", "master weights"},
                                                           {"optimizer_states", "optimizer states"},
                                                           {"activations", "activations (base)"},
                                                           {"adapter_activations", "adapter activations"},
                                                           {"dequant_buffer", "dequantized weight buffer"},
                                                           {"quantized_inputs", "4-bit linears' saved inputs"},
                                                           {"other", "other buffers"}};
    for (const auto& [id, name] : classes)
        if (b[id].get<unsigned long long>() != 0) rows.push_back({name, bytes_text(b[id])});
    rows.push_back({"total", bytes_text(b["total"])});
    // grads_freed: the total is one moment of the step, not the sum of the rows above.
    if (r["peak_phase"] != "sum") {
        rows.push_back({"peak at", r["peak_phase"].get<std::string>()});
        rows.push_back({"start of backward", bytes_text(r["backward_start_bytes"])});
        rows.push_back({"end of backward", bytes_text(r["backward_end_bytes"])});
        rows.push_back({"loss at its largest", bytes_text(r["loss_bytes"])});
    }
    if (r["offloaded_bytes"].get<unsigned long long>() != 0)
        rows.push_back({"checkpoints offloaded to host", bytes_text(r["offloaded_bytes"])});
    if (r["paged"] == true)
        rows.push_back({"GPU floor with paged optimizer states", bytes_text(r["paged_floor_bytes"])});
    if (!r["fits"].is_null()) {
        rows.push_back({"usable capacity", bytes_text(r["usable_bytes"])});
        rows.push_back(
            {"fits", r["fits"] == true ? "yes" : (r["fits_paged"] == true ? "only with paged states" : "no")});
    }
    const json& f = r["flops_per_token"];
    rows.push_back({"training FLOPs per token", human(f["training"].get<double>())});
    rows.push_back({"full fine-tuning FLOPs per token", human(f["full_training"].get<double>())});
    print_table(out, rows);
}

int cmd_finetune(int argc, char** argv) {
    return run(argc, argv, "finetune", "finetune",
               "usage: tally finetune (--model PRESET | --config config.json) [--method lora|qlora|full] [options]\n"
               "Fine-tuning memory and FLOPs on one GPU: LoRA adapters on a frozen base (no base gradients or\n"
               "states), QLoRA's NF4 base (4.127 bits with double quantization), or full fine-tuning (e.g.\n"
               "--optimizer adamw_8bit). --json: per_gpu_bytes, lora {params, modules}, flops_per_token.",
               accounting_options("finetune"), print_finetune);
}

int cmd_fit(int argc, char** argv) {
    return run(
        argc, argv, "fit", "fit",
        "usage: tally fit --gpus N --hardware ID [--recipe R] [--zero Z --tp T --pp P]  (largest model; ZeRO 3 unless\n"
        "                 --zero is given; no activations)\n"
        "       tally fit --mode largest_model --model PRESET --gpus N --hardware ID [memory options]\n"
        "                 (largest depth of the model's width that fits, activations at --seq/--micro-batch included)\n"
        "       tally fit --model PRESET --hardware ID [memory options]  (fewest GPUs that fit)",
        accounting_options("fit"), print_fit);
}

int cmd_kv_cache(int argc, char** argv) {
    return run(argc, argv, "kv-cache", "kv_cache",
               "usage: tally kv-cache (--model PRESET | --config config.json) --context T [--batch B] [--json]\n"
               "Inference memory: weights + KV cache 2 · L · n_kv · d · bytes · tokens · batch.",
               accounting_options("kv-cache"), print_kv);
}

int cmd_presets(int argc, char** argv) {
    return run(argc, argv, "presets", "presets",
               "usage: tally presets [--json]\nModel and hardware presets and recipes.", std::span<const Option>(),
               print_presets);
}

}  // namespace tally::cli
