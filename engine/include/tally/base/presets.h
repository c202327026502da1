// Preset data (models, hardware) from content/presets/, compiled into the engine at build time
// so the native and wasm builds read the same JSON with nlohmann_json.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tally {

struct PresetSource {
    std::string_view kind;  // folder under content/presets: "models" or "hardware"
    std::string_view id;    // file stem, e.g. "llama-2-7b"
    std::string_view text;  // the file's JSON text, verbatim
    // The file parsed, with "id": a function-local static per file (generated), so each is parsed on first use,
    // once, thread-safely by the language's static initialisation.
    const nlohmann::json& (*parsed)() = nullptr;
};

// A preset file's object plus "id" (its stem). Throws, naming the file, if the text is not valid JSON.
nlohmann::json parse_preset(const PresetSource& source);

// Every preset file, in path order (generated source).
std::span<const PresetSource> preset_sources();

// {"models":[...], "hardware":[...]}: each element is the file's object plus "id" (the file stem).
// Parsed once on first use and immutable afterwards. Throws if a preset file is not valid JSON.
const nlohmann::json& presets_json();

// The presets of one kind ("stacks", "fabrics", ...), in path order, each parsed on first use.
std::vector<const nlohmann::json*> presets_of(std::string_view kind);

// The preset object of a kind and id (only that file is parsed), or nullptr.
const nlohmann::json* find_preset(std::string_view kind, std::string_view id);

}  // namespace tally
