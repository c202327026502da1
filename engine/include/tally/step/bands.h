// How far to trust a step-time prediction: distribution-free prediction intervals from the signed residuals of
// published runs of the same kind, never including a run's own source (leave one source out), asymmetric when the
// residuals are. The statistics `tally step --validate` reports (median, share within 20 %, coverage) live here too.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace tally {

// One predicted published run: its kind, its source and its signed relative error (predicted - published) /
// published of a throughput-like metric (tokens/s, TFLOP/s, MFU: higher is faster).
struct BandRun {
    std::string stack, precision, hardware, regime, source;
    double error = 0;
    // false: the run predicted under the "generic" stack, i.e. what tally says of a run whose software it does not
    // know; those residuals are the bands of a query whose stack has no rows.
    bool known_stack = true;
};

// The share of published runs a band promises to hold.
inline constexpr double kBandCoverage = 0.8;
// Order statistics x(j) <= x(k) of n residuals hold a new one with probability (k - j) / (n + 1) (Wilks 1941;
// split conformal prediction, Vovk et al. 2005): 80 % needs n >= 9, so a kind with fewer runs falls back.
inline constexpr std::size_t kBandMinRuns = 9;
// A step is "overhead-bound" when more than a quarter of it is not compute (matmuls, memory-bound kernels, FP8
// casts). Chosen on the fit half only (issue 24): the smallest share, in steps of 0.05, past which the fit half's
// runs have a median |error| above 20 % (0.25: 10 runs at 51.7 % against 6.8 % for the other 62).
inline constexpr double kOverheadBoundShare = 0.25;
// The breakdown components that are compute; every other exposed component is overhead.
bool is_compute_part(const std::string& id);
// "compute-bound" or "overhead-bound" from the exposed compute seconds and the step.
const char* band_regime(double compute_seconds, double step_seconds);

// One kind's interval: published = predicted / (1 + e) with e in [lower, upper] for kBandCoverage of its runs.
struct BandEntry {
    std::string level, key;
    std::size_t runs = 0;
    double lower = 0, upper = 0;
};

struct Band {
    double lower = 0, upper = 0;  // relative errors (predicted - published) / published
    std::string level, key;
    std::size_t runs = 0;
    // The query's GPU has no rows: the interval is widened by the spread of the other GPUs' median errors.
    bool widened = false;
};

struct BandQuery {
    std::string stack, precision, hardware, regime;
};

// Every kind at every level with at least kBandMinRuns runs, plus the per-GPU median errors ("hardware" level)
// that widen the band of a GPU without rows. Levels, finest first: stack/precision/hardware/regime,
// stack/hardware/regime, stack/precision/regime, stack/regime (the runs predicted with their own stack), then
// any-stack/hardware/regime, any-stack/regime, any-stack (the runs predicted as "generic").
std::vector<BandEntry> band_table(const std::vector<BandRun>& runs);
// The finest band for a query; a "generic" query (or a stack without rows) takes the any-stack levels.
std::optional<Band> find_band(const std::vector<BandEntry>& table, const BandQuery& query);

// Each run's band from the other sources' runs only: the share inside, over the known-stack runs and over the
// same runs predicted as generic.
struct BandCoverage {
    std::size_t runs = 0, with_band = 0, inside = 0;
    std::size_t generic_runs = 0, generic_with_band = 0, generic_inside = 0;
    std::vector<std::optional<Band>> bands;  // each run's, in the order given
};
BandCoverage leave_one_source_out(const std::vector<BandRun>& runs);

// Median |error|, median signed error, share within 20 %, share predicted faster than published, worst.
struct ErrorSummary {
    std::size_t count = 0;
    double median_abs_error = 0, median_error = 0, within_20_percent = 0, faster_share = 0, worst_error = 0;
    std::size_t worst_index = 0;  // into the errors given
};
ErrorSummary error_summary(const std::vector<double>& errors);

}  // namespace tally
