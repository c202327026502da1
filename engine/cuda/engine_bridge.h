// engine_bridge.h: what the CUDA programs ask of the tally engine, as plain C++ types.
//
// The .cu files include only this header (no nlohmann, no engine internals), and
// engine_bridge.cpp, compiled by the host C++ compiler and linked with the `tally` library,
// answers from the engine: hardware presets (content/presets/hardware/*.json, compiled into the
// engine) and the training memory budget. Keeping JSON parsing out of nvcc keeps the CUDA
// compile fast and the engine the single source of every predicted number.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tally/numerics/dtype.h"  // the engine's one dtype table (plain C++, no JSON)

namespace tally_cuda {

// Peak rates of one hardware preset, dense (no 2:4 sparsity), in FLOP/s and bytes/s.
// A value of 0 means the preset does not list it.
struct HardwarePeaks {
    bool found = false;
    std::string preset_id;    // file stem under content/presets/hardware/
    std::string preset_name;  // its display name
    std::string source;       // its citation
    double fp32_flops = 0;    // non-tensor fp32 FMA peak
    double tf32_flops = 0;    // dense tf32 tensor-core peak
    double bf16_flops = 0;    // dense bf16 tensor-core peak
    double fp16_flops = 0;    // dense fp16 tensor-core peak
    double fp8_flops = 0;     // dense fp8 tensor-core peak
    double memory_bandwidth_bytes_per_s = 0;
    double memory_bytes = 0;
};

// The dense peak FLOP/s of `dtype` on `hw`, looked up by the engine (tally::Hardware::peak over the dtype
// table's peak role); 0 when the dtype has no peak role or `hw` lists no such peak.
double peak_flops_per_s(const HardwarePeaks& hw, tally::DType dtype);

// All hardware preset ids the engine knows, sorted.
std::vector<std::string> hardware_preset_ids();

// The preset with this id; found == false if there is none.
HardwarePeaks hardware_peaks(const std::string& preset_id);

// Best preset for a device as the CUDA runtime names it (e.g. "NVIDIA H100 80GB HBM3", total
// memory in bytes): matched by the tokens of the preset's name/id and memory size. found == false
// when nothing matches well enough; callers then print how to pass --hardware or peaks by hand.
HardwarePeaks match_device(const std::string& device_name, double total_memory_bytes);

// The matcher behind match_device, exposed for the self-tests: a preset's identity and a score
// (higher is better, < 50 means "no match") of how well a CUDA device name fits it.
struct PresetName {
    std::string id, name;
    double memory_bytes = 0;
};
int match_score(const PresetName& preset, const std::string& device_name, double device_memory_bytes);
// Lower-case alphanumeric tokens of a name: "NVIDIA A100-SXM4-80GB" -> nvidia, a100, sxm4, 80gb.
std::vector<std::string> tokens_of(const std::string& s);

// ---------------------------------------------------------------------------------------------
// GEMM counts for the roofline program: the engine's roofline::matmul_min_traffic.

// FLOPs (2mnk) and compulsory DRAM bytes of C(m,n) = A(m,k) B(k,n): A and B read once with in_bytes
// per element, C written once with out_bytes per element.
struct GemmTraffic {
    double flops = 0;
    double bytes = 0;
};
GemmTraffic gemm_traffic(double m, double n, double k, double in_bytes, double out_bytes);

// ---------------------------------------------------------------------------------------------
// Training memory budget (the engine's prediction) for the memory_budget program.

struct BudgetRequest {
    std::string model;   // model preset id, e.g. "gpt2-medium"
    std::string recipe;  // recipe name as the engine's memory API accepts it ("" = engine default)
};

// One buffer the program will cudaMalloc: the engine's per-GPU byte count of a tensor class.
struct BudgetBuffer {
    std::string name;  // weights, gradients, master_weights, optimizer_states
    std::uint64_t bytes = 0;
};

struct BudgetPrediction {
    bool ok = false;
    std::string error;                     // the engine's error message when !ok
    std::string engine_json;               // the engine's full result, verbatim, for the report
    std::vector<BudgetBuffer> buffers;     // the static (non-activation) classes, in engine order
    std::uint64_t static_total_bytes = 0;  // sum of buffers (= engine's total minus activations)
    std::uint64_t activation_bytes = 0;    // the engine's activation estimate (not allocated)
};

BudgetPrediction predict_budget(const BudgetRequest& request);

// The engine's per-layer activation bytes for one transformer layer of `model` at sequence length
// `seq` and micro-batch `micro_batch` (no recomputation, no FlashAttention, 1 GPU), with
// `activation_bytes` per stored value and dropout masks on or off; terms as (id, bytes).
struct LayerActivations {
    bool ok = false;
    std::string error;
    std::uint64_t per_layer_bytes = 0;
    std::vector<BudgetBuffer> terms;  // per-layer terms only
};
LayerActivations predict_layer_activations(const std::string& model, int seq, int micro_batch, int activation_bytes,
                                           bool dropout);

// Ids of the engine's training recipes and model presets, in the engine's order.
std::vector<std::string> recipe_ids();
std::vector<std::string> model_preset_ids();

// ---------------------------------------------------------------------------------------------
// JSON checks for the self-tests (the programs write their reports by hand, without nlohmann).

// The value at a JSON pointer ("/points/0/mfu") of `text`, serialized compactly ("null", "1.5",
// "\"bf16\""); "" when the text does not parse (message in *error) or the pointer is absent.
std::string json_at(const std::string& text, const std::string& pointer, std::string* error = nullptr);

}  // namespace tally_cuda
