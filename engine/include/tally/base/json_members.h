// A JSON object whose keys are a struct's member names, each name written once: TALLY_MEMBERS(s, a, b) is
// {{"a", s.a}, {"b", s.b}}. The list expands as nlohmann's own NLOHMANN_DEFINE_TYPE_* macros expand theirs.
#pragma once

#include <nlohmann/json.hpp>

#define TALLY_JSON_MEMBER(member) {#member, tally_json_source.member},
#define TALLY_MEMBERS(source, ...)                                                                        \
    [&](const auto& tally_json_source) {                                                                  \
        return nlohmann::json{NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(TALLY_JSON_MEMBER, __VA_ARGS__))}; \
    }(source)
