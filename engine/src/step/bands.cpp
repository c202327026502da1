#include "tally/step/bands.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace tally {

namespace {

constexpr const char* kKnownLevels[] = {"stack/precision/hardware/regime", "stack/hardware/regime",
                                        "stack/precision/regime", "stack/regime"};
constexpr const char* kAnyLevels[] = {"any stack/hardware/regime", "any stack/regime", "any stack"};
constexpr const char* kHardwareMedian = "hardware median";  // not a band: the widening of an unseen GPU
constexpr std::size_t kHardwareMinRuns = 3;                 // a GPU's median error needs a few runs to mean anything
constexpr const char* kGeneric = "generic";

std::string known_key(int level, const std::string& stack, const std::string& precision, const std::string& hardware,
                      const std::string& regime) {
    switch (level) {
        case 0: return stack + " / " + precision + " / " + hardware + " / " + regime;
        case 1: return stack + " / " + hardware + " / " + regime;
        case 2: return stack + " / " + precision + " / " + regime;
        default: return stack + " / " + regime;
    }
}

std::string any_key(int level, const std::string& hardware, const std::string& regime) {
    switch (level) {
        case 0: return hardware + " / " + regime;
        case 1: return regime;
        default: return "all";
    }
}

double median_of(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The order-statistic interval [x(j), x(k)] with (k - j) / (n + 1) >= kBandCoverage, equal tails.
BandEntry interval(const std::string& level, const std::string& key, std::vector<double> errors) {
    std::sort(errors.begin(), errors.end());
    const double n1 = static_cast<double>(errors.size() + 1);
    const double tail = (1 - kBandCoverage) / 2;
    const auto j = static_cast<std::size_t>(std::max(1.0, std::floor(tail * n1 + 1e-9)));
    const auto k = static_cast<std::size_t>(
        std::min<double>(static_cast<double>(errors.size()), std::ceil((1 - tail) * n1 - 1e-9)));
    return BandEntry{level, key, errors.size(), errors[j - 1], errors[k - 1]};
}

const BandEntry* lookup(const std::vector<BandEntry>& table, const char* level, const std::string& key) {
    for (const BandEntry& e : table)
        if (e.level == level && e.key == key) return &e;
    return nullptr;
}

}  // namespace

bool is_compute_part(const std::string& id) { return id == "matmul" || id == "memory_bound" || id == "fp8_cast"; }

const char* band_regime(double compute_seconds, double step_seconds) {
    return step_seconds > 0 && 1 - compute_seconds / step_seconds > kOverheadBoundShare ? "overhead-bound"
                                                                                        : "compute-bound";
}

std::vector<BandEntry> band_table(const std::vector<BandRun>& runs) {
    std::vector<BandEntry> out;
    const auto add_groups = [&](const char* level, const std::map<std::string, std::vector<double>>& groups) {
        for (const auto& [key, errors] : groups)
            if (errors.size() >= kBandMinRuns) out.push_back(interval(level, key, errors));
    };
    for (int level = 0; level < 4; ++level) {
        std::map<std::string, std::vector<double>> groups;
        for (const BandRun& r : runs)
            if (r.known_stack) groups[known_key(level, r.stack, r.precision, r.hardware, r.regime)].push_back(r.error);
        add_groups(kKnownLevels[level], groups);
    }
    for (int level = 0; level < 3; ++level) {
        std::map<std::string, std::vector<double>> groups;
        for (const BandRun& r : runs)
            if (!r.known_stack) groups[any_key(level, r.hardware, r.regime)].push_back(r.error);
        add_groups(kAnyLevels[level], groups);
    }
    std::map<std::string, std::vector<double>> by_hardware;
    for (const BandRun& r : runs)
        if (!r.known_stack) by_hardware[r.hardware].push_back(r.error);
    for (const auto& [hardware, errors] : by_hardware)
        if (errors.size() >= kHardwareMinRuns) {
            const double m = median_of(errors);
            out.push_back(BandEntry{kHardwareMedian, hardware, errors.size(), m, m});
        }
    return out;
}

std::optional<Band> find_band(const std::vector<BandEntry>& table, const BandQuery& q) {
    const BandEntry* found = nullptr;
    if (q.stack != kGeneric)
        for (int level = 0; level < 4 && found == nullptr; ++level)
            found = lookup(table, kKnownLevels[level], known_key(level, q.stack, q.precision, q.hardware, q.regime));
    for (int level = 0; level < 3 && found == nullptr; ++level)
        found = lookup(table, kAnyLevels[level], any_key(level, q.hardware, q.regime));
    if (found == nullptr) return std::nullopt;
    Band band{found->lower, found->upper, found->level, found->key, found->runs, false};
    // An unseen GPU: its offset from the others is unknown, so the band takes the spread of the known GPUs' offsets
    // from their median (an A100's constants say little of an MI300X).
    std::vector<double> medians;
    bool seen = false;
    for (const BandEntry& e : table)
        if (e.level == kHardwareMedian) {
            medians.push_back(e.lower);
            seen = seen || e.key == q.hardware;
        }
    if (!seen && medians.size() >= 2) {
        const double centre = median_of(medians);
        const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
        band.lower += std::min(0.0, *lo - centre);
        band.upper += std::max(0.0, *hi - centre);
        band.widened = true;
    }
    return band;
}

BandCoverage leave_one_source_out(const std::vector<BandRun>& runs) {
    BandCoverage c;
    c.bands.resize(runs.size());
    std::set<std::string> sources;
    for (const BandRun& r : runs) sources.insert(r.source);
    for (const std::string& source : sources) {
        std::vector<BandRun> others;
        for (const BandRun& r : runs)
            if (r.source != source) others.push_back(r);
        const std::vector<BandEntry> table = band_table(others);
        for (std::size_t i = 0; i < runs.size(); ++i) {
            const BandRun& r = runs[i];
            if (r.source != source) continue;
            const std::optional<Band> b =
                find_band(table, {r.known_stack ? r.stack : kGeneric, r.precision, r.hardware, r.regime});
            c.bands[i] = b;
            const bool inside = b && r.error >= b->lower && r.error <= b->upper;
            (r.known_stack ? c.runs : c.generic_runs) += 1;
            (r.known_stack ? c.with_band : c.generic_with_band) += b ? 1 : 0;
            (r.known_stack ? c.inside : c.generic_inside) += inside ? 1 : 0;
        }
    }
    return c;
}

ErrorSummary error_summary(const std::vector<double>& errors) {
    ErrorSummary s;
    s.count = errors.size();
    if (errors.empty()) return s;
    std::vector<double> abs_errors;
    for (std::size_t i = 0; i < errors.size(); ++i) {
        abs_errors.push_back(std::fabs(errors[i]));
        if (std::fabs(errors[i]) > std::fabs(errors[s.worst_index])) s.worst_index = i;
    }
    const double n = static_cast<double>(errors.size());
    s.median_abs_error = median_of(abs_errors);
    s.median_error = median_of(errors);
    s.within_20_percent =
        static_cast<double>(std::count_if(abs_errors.begin(), abs_errors.end(), [](double e) { return e <= 0.20; })) /
        n;
    s.faster_share =
        static_cast<double>(std::count_if(errors.begin(), errors.end(), [](double e) { return e > 0; })) / n;
    s.worst_error = errors[s.worst_index];
    return s;
}

}  // namespace tally
