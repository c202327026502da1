// Error bands of step_time's predictions (issue 24 item 5): for a kind of run (stack / precision / hardware and
// regime, falling back to stack / hardware / regime, stack / precision / regime, stack / regime, the regime, then
// every run), the 80th percentile of |predicted - published| / published over the held-out runs of
// content/validation/runs-modern.json of that kind; a regime without held-out runs takes the fit half's runs of
// that regime before every run's band.
// The regime says whether the prediction is mostly compute or mostly what the model prices least
// well (exposed communication, pipeline bubble, fixed per-step passes), so runs outside the regime the constants
// were fitted in carry the wider band their kind earned. Written by
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
    std::string stack, precision, hardware, regime, source;
    double error = 0;
    bool heldout = true;  // false: a fit-half run, used only for the regime fallback
};

inline constexpr double kBandQuantile = 0.8;    // the target: 80 % of runs inside their band
inline constexpr std::size_t kBandMinRuns = 3;  // a kind with fewer runs falls back to the coarser one
// A step is "overhead-bound" when more than a quarter of it is not compute (matmuls, memory-bound kernels, FP8
// casts). Chosen on the fit half only: the smallest share, in steps of 0.05, past which the fit half's runs have a
// median |error| above 20 % (0.25: 10 runs at 51.7 % against 6.8 % for the other 62); BENCHMARKS.md, issue 24.
inline constexpr double kOverheadBoundShare = 0.25;
// The breakdown components that are compute; every other exposed component is overhead.
bool is_compute_part(const std::string& id);
// "compute-bound" or "overhead-bound" from the exposed compute seconds and the step.
const char* band_regime(double compute_seconds, double step_seconds);

struct Band {
    double half_width = 0;  // relative: the prediction ± half_width
    std::string level;      // "stack/precision/hardware/regime", "stack/hardware/regime", "stack/precision/regime",
                            // "stack/regime", "regime", "regime (fit half)" or "all"
    std::string key;        // the kind it was taken from, e.g. "nanotron / bf16 / h100-sxm / compute-bound"
    std::size_t runs = 0;
};

// Every kind at every level with at least kBandMinRuns runs: the bands file's "bands" array.
nlohmann::json step_bands(const std::vector<BandRun>& runs);
// The band of a run of this kind from a "bands" array (the finest level that has one); nullopt when none.
std::optional<Band> find_band(const nlohmann::json& bands, const std::string& stack, const std::string& precision,
                              const std::string& hardware, const std::string& regime);
// The compiled-in bands (content/presets/step-bands/heldout.json), an empty array when absent.
const nlohmann::json& stored_step_bands();

}  // namespace tally
