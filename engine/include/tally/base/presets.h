// Preset data (models, hardware) from content/presets/, compiled into the engine at build time
// so the native and wasm builds read the same JSON with nlohmann_json.
#pragma once

#include <span>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tally {

struct PresetSource {
    std::string_view kind;  // folder under content/presets: "models" or "hardware"
    std::string_view id;    // file stem, e.g. "llama-2-7b"
    std::string_view text;  // the file's JSON text, verbatim
};

// Every preset file, in path order (generated source).
std::span<const PresetSource> preset_sources();

// {"models":[...], "hardware":[...]}: each element is the file's object plus "id" (the file stem).
// Parsed once on first use and immutable afterwards. Throws if a preset file is not valid JSON.
const nlohmann::json& presets_json();

// The preset object of a kind and id, or nullptr.
// The presets of one kind ("stacks", "fabrics", ...) as a JSON array, each with its "id"; parsed once.
const nlohmann::json& presets_of(std::string_view kind);
const nlohmann::json* find_preset(std::string_view kind, std::string_view id);

}  // namespace tally
