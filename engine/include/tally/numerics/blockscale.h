// Block-scaled formats: a vector quantized to small elements that share a scale per block.
//   block_quantize(Scheme::mxfp4, values) -> codes, per-block scales, dequantized values, errors.
// MX (OCP Microscaling Formats v1.0, 2023, section 6.3): blocks of 32, scale X = 2^(floor(log2 amax) - emax_elem)
// stored as E8M0, elements = round_to_nearest_even(V / X) saturated to the element's max normal.
// NVFP4 (NVIDIA, "Introducing NVFP4 for Efficient and Accurate Low-Precision Inference", 2025, and the
// Transformer Engine recipe): E2M1 elements, one E4M3 scale per 16 values, one fp32 scale per tensor chosen so
// the largest block scale lands at E4M3's max: tensor_scale = amax / (448 * 6).
// Per-tensor fp8: one fp32 scale amax / 448 and E4M3 elements (the "delayed/current scaling" fp8 recipe).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "tally/numerics/precision.h"

namespace tally::fp {

enum class Scheme : uint8_t { mxfp8_e4m3, mxfp8_e5m2, mxfp6_e2m3, mxfp6_e3m2, mxfp4, nvfp4, fp8_tensor };
inline constexpr int kSchemeCount = 7;

struct SchemeInfo {
    const char* name;
    const char* display_name;  // how a page calls it: "MXFP4 (E2M1, E8M0 scale / 32)"
    Format element;
    Format scale;       // per-block scale format (fp32 for the per-tensor scheme, whose one block is the tensor)
    int block_size;     // 0: the whole tensor is one block
    bool tensor_scale;  // an extra fp32 scale per tensor (NVFP4)
};
SchemeInfo scheme_info(Scheme s);
std::optional<Scheme> scheme_from_name(std::string_view name);
std::span<const Scheme> all_schemes();

struct BlockResult {
    Scheme scheme;
    std::vector<uint64_t> codes;        // element codes
    std::vector<double> dequantized;    // code value * block scale (* tensor scale)
    std::vector<uint64_t> scale_codes;  // one per block
    std::vector<double> scale_values;   // decoded block scales (for NVFP4: the E4M3 value, before the tensor scale)
    double tensor_scale = 1.0;          // NVFP4 and fp8_tensor: the fp32 scale; 1 otherwise
    double max_abs_error = 0;
    double rms_error = 0;
    double relative_error = 0;  // ||x - q||_2 / ||x||_2 (0 when x is all zeros)
    uint64_t zeroed = 0;        // non-zero inputs that became zero
    uint64_t saturated = 0;     // elements clamped to the element format's max
    double bits_per_value = 0;  // element bits + scale bits amortised over the vector
};

// values must be finite (the API checks and names the field).
BlockResult block_quantize(Scheme s, std::span<const double> values);

// A demonstration vector without transcendental functions (same numbers natively and in wasm): an
// Irwin-Hall approximation of N(0, 1) (sum of 4 uniforms, centred and scaled) from splitmix64, times `scale`,
// with one element (index `outlier_index`) replaced by `outlier` when outlier != 0.
std::vector<double> demo_vector(uint64_t seed, int n, double scale, double outlier, int outlier_index);

}  // namespace tally::fp
