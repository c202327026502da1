#include "tally/base/presets.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace tally {

nlohmann::json parse_preset(const PresetSource& source) {
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

namespace {

const nlohmann::json& parsed(const PresetSource& source) {
    return source.parsed ? source.parsed() : throw std::logic_error("preset source without a parser");
}

nlohmann::json parse_all() {
    nlohmann::json out = {{"models", nlohmann::json::array()}, {"hardware", nlohmann::json::array()}};
    for (const PresetSource& source : preset_sources()) out[std::string(source.kind)].push_back(parsed(source));
    return out;
}

}  // namespace

const nlohmann::json& presets_json() {
    static const nlohmann::json all = parse_all();  // immutable cache of compiled-in data
    return all;
}

std::vector<const nlohmann::json*> presets_of(std::string_view kind) {
    // One kind's files only (the stacks, the fabrics): parsing every preset was a third of a `tally plan` process
    // (callgrind, 6.5 M of 21 M instructions) and of the page's first engine call.
    std::vector<const nlohmann::json*> out;
    for (const PresetSource& source : preset_sources())
        if (source.kind == kind) out.push_back(&parsed(source));
    return out;
}

const nlohmann::json* find_preset(std::string_view kind, std::string_view id) {
    for (const PresetSource& source : preset_sources())
        if (source.kind == kind && source.id == id) return &parsed(source);
    return nullptr;
}

}  // namespace tally
