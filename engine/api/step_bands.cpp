#include "tally/step_bands.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "tally/base/presets.h"

namespace tally {

namespace {

// stack/hardware/regime comes before stack/precision/regime: one machine's unknowns (a power limit, a software
// version) move every precision run on it alike, so its other precisions say more than the stack's other machines.
constexpr const char* kLevels[] = {"stack/precision/hardware/regime",
                                   "stack/hardware/regime",
                                   "stack/precision/regime",
                                   "stack/regime",
                                   "regime",
                                   "regime (fit half)",
                                   "all"};
constexpr int kLevelCount = 7;
constexpr int kFitLevel = 5;  // the only level made of fit-half runs: a regime the held-out half lacks

std::string key_of(int level, const BandRun& r) {
    switch (level) {
        case 0: return r.stack + " / " + r.precision + " / " + r.hardware + " / " + r.regime;
        case 1: return r.stack + " / " + r.hardware + " / " + r.regime;
        case 2: return r.stack + " / " + r.precision + " / " + r.regime;
        case 3: return r.stack + " / " + r.regime;
        case 4:
        case kFitLevel: return r.regime;
        default: return "all";
    }
}

// Nearest-rank quantile: the smallest value with at least q of the values at or below it.
double quantile(std::vector<double> values, double q) {
    std::sort(values.begin(), values.end());
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
    return values[std::max<std::size_t>(rank, 1) - 1];
}

}  // namespace

bool is_compute_part(const std::string& id) { return id == "matmul" || id == "memory_bound" || id == "fp8_cast"; }

const char* band_regime(double compute_seconds, double step_seconds) {
    return step_seconds > 0 && 1 - compute_seconds / step_seconds > kOverheadBoundShare ? "overhead-bound"
                                                                                        : "compute-bound";
}

nlohmann::json step_bands(const std::vector<BandRun>& runs) {
    nlohmann::json out = nlohmann::json::array();
    for (int level = 0; level < kLevelCount; ++level) {
        std::map<std::string, std::vector<double>> groups;
        for (const BandRun& r : runs)
            if (r.heldout == (level != kFitLevel)) groups[key_of(level, r)].push_back(std::fabs(r.error));
        for (const auto& [key, errors] : groups) {
            if (errors.size() < kBandMinRuns) continue;
            out.push_back({{"level", kLevels[level]},
                           {"key", key},
                           {"runs", errors.size()},
                           {"half_width", quantile(errors, kBandQuantile)}});
        }
    }
    return out;
}

std::optional<Band> find_band(const nlohmann::json& bands, const std::string& stack, const std::string& precision,
                              const std::string& hardware, const std::string& regime) {
    const BandRun run{stack, precision, hardware, regime, "", 0};
    for (int level = 0; level < kLevelCount; ++level) {
        const std::string key = key_of(level, run);
        for (const auto& b : bands)
            if (b.value("level", "") == kLevels[level] && b.value("key", "") == key)
                return Band{b.at("half_width").get<double>(), kLevels[level], key, b.at("runs").get<std::size_t>()};
    }
    return std::nullopt;
}

const nlohmann::json& stored_step_bands() {
    static const nlohmann::json bands = [] {
        const nlohmann::json* file = find_preset("step-bands", "heldout");
        return file != nullptr && file->contains("bands") ? file->at("bands") : nlohmann::json::array();
    }();
    return bands;
}

}  // namespace tally
