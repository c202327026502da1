// Error bands of step_time's predictions (issue 24 item 5): for a kind of run (stack / precision / hardware,
// falling back to stack / precision, stack, then every run), the 80th percentile of |predicted - published| /
// published over the held-out runs of content/validation/runs-modern.json of that kind. Written by
// `tally step --validate --runs FILE --write-bands OUT` into content/presets/step-bands/heldout.json and read
// by step_time's result ("band").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tally {

// One predicted run: its kind and its signed relative error.
struct BandRun {
    std::string stack, precision, hardware, source;
    double error = 0;
};

inline constexpr double kBandQuantile = 0.8;    // the target: 80 % of runs inside their band
inline constexpr std::size_t kBandMinRuns = 3;  // a kind with fewer runs falls back to the coarser one

struct Band {
    double half_width = 0;  // relative: the prediction ± half_width
    std::string level;      // "stack/precision/hardware", "stack/precision", "stack" or "all"
    std::string key;        // the kind it was taken from, e.g. "nanotron / bf16 / h100-sxm"
    std::size_t runs = 0;
};

// Every kind at every level with at least kBandMinRuns runs: the bands file's "bands" array.
nlohmann::json step_bands(const std::vector<BandRun>& runs);
// The band of a run of this kind from a "bands" array (the finest level that has one); nullopt when none.
std::optional<Band> find_band(const nlohmann::json& bands, const std::string& stack, const std::string& precision,
                              const std::string& hardware);
// The compiled-in bands (content/presets/step-bands/heldout.json), an empty array when absent.
const nlohmann::json& stored_step_bands();

}  // namespace tally
