#include "tally/base/presets.h"

#include <stdexcept>
#include <string>

namespace tally {

namespace {

nlohmann::json parse_all() {
    nlohmann::json out = {{"models", nlohmann::json::array()}, {"hardware", nlohmann::json::array()}};
    for (const PresetSource& source : preset_sources()) {
        nlohmann::json item;
        try {
            item = nlohmann::json::parse(source.text);
        } catch (const nlohmann::json::parse_error& error) {
            throw std::runtime_error("content/presets/" + std::string(source.kind) + "/" + std::string(source.id) +
                                     ".json: " + error.what());
        }
        item["id"] = std::string(source.id);
        out[std::string(source.kind)].push_back(std::move(item));
    }
    return out;
}

}  // namespace

const nlohmann::json& presets_json() {
    static const nlohmann::json parsed = parse_all();  // immutable cache of compiled-in data
    return parsed;
}

const nlohmann::json* find_preset(std::string_view kind, std::string_view id) {
    const auto& all = presets_json();
    auto list = all.find(std::string(kind));
    if (list == all.end()) return nullptr;
    for (const auto& item : *list)
        if (item.at("id").get_ref<const std::string&>() == id) return &item;
    return nullptr;
}

}  // namespace tally
