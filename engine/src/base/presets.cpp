#include "tally/base/presets.h"

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace tally {

namespace {

nlohmann::json parse_one(const PresetSource& source) {
    nlohmann::json item;
    try {
        item = nlohmann::json::parse(source.text);
    } catch (const nlohmann::json::parse_error& error) {
        throw std::runtime_error("content/presets/" + std::string(source.kind) + "/" + std::string(source.id) +
                                 ".json: " + error.what());
    }
    item["id"] = std::string(source.id);
    return item;
}

nlohmann::json parse_all() {
    nlohmann::json out = {{"models", nlohmann::json::array()}, {"hardware", nlohmann::json::array()}};
    for (const PresetSource& source : preset_sources()) out[std::string(source.kind)].push_back(parse_one(source));
    return out;
}

}  // namespace

const nlohmann::json& presets_json() {
    static const nlohmann::json parsed = parse_all();  // immutable cache of compiled-in data
    return parsed;
}

const nlohmann::json& presets_of(std::string_view kind) {
    // One kind parsed on first use (the stacks, the fabrics), not every preset file.
    static std::mutex guard;
    static std::map<std::string, std::unique_ptr<const nlohmann::json>> parsed;
    const std::lock_guard<std::mutex> lock(guard);
    auto& slot = parsed[std::string(kind)];
    if (!slot) {
        nlohmann::json list = nlohmann::json::array();
        for (const PresetSource& source : preset_sources())
            if (source.kind == kind) list.push_back(parse_one(source));
        slot = std::make_unique<const nlohmann::json>(std::move(list));
    }
    return *slot;
}

const nlohmann::json* find_preset(std::string_view kind, std::string_view id) {
    // One file parsed on first use, not every preset: parsing all of them was a third of a `tally plan` process
    // (callgrind, 6.5 M of 21 M instructions) and the page's first engine call.
    static std::mutex guard;
    static std::map<std::pair<std::string, std::string>, std::unique_ptr<const nlohmann::json>> parsed;
    for (const PresetSource& source : preset_sources()) {
        if (source.kind != kind || source.id != id) continue;
        const std::lock_guard<std::mutex> lock(guard);
        auto& slot = parsed[{std::string(kind), std::string(id)}];
        if (!slot) slot = std::make_unique<const nlohmann::json>(parse_one(source));
        return slot.get();
    }
    return nullptr;
}

}  // namespace tally
