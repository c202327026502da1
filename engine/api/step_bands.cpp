#include "tally/step_bands.h"

#include "tally/base/error.h"
#include "tally/base/presets.h"

namespace tally {

nlohmann::json band_table_json(const std::vector<BandEntry>& table) {
    nlohmann::json out = nlohmann::json::array();
    for (const BandEntry& e : table)
        out.push_back({{"level", e.level}, {"key", e.key}, {"runs", e.runs}, {"lower", e.lower}, {"upper", e.upper}});
    return out;
}

std::vector<BandEntry> band_table_from_json(const nlohmann::json& bands) {
    std::vector<BandEntry> out;
    if (!bands.is_array()) throw InputError("bands", "bands must be an array of {level, key, runs, lower, upper}");
    for (const auto& b : bands) {
        if (!b.is_object() || !b.contains("level") || !b.contains("key") || !b.contains("runs") ||
            !b.contains("lower") || !b.contains("upper"))
            throw InputError("bands", "each band needs level, key, runs, lower and upper");
        out.push_back(BandEntry{b.at("level").get<std::string>(), b.at("key").get<std::string>(),
                                b.at("runs").get<std::size_t>(), b.at("lower").get<double>(),
                                b.at("upper").get<double>()});
    }
    return out;
}

const std::vector<BandEntry>& stored_step_bands() {
    static const std::vector<BandEntry> table = [] {
        const nlohmann::json* file = find_preset("step-bands", "heldout");
        return file != nullptr && file->contains("bands") ? band_table_from_json(file->at("bands"))
                                                          : std::vector<BandEntry>{};
    }();
    return table;
}

}  // namespace tally
