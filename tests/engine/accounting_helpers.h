// Shared helpers of the accounting tests (model, params, flops, memory, fit, kv cache).
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/compute/flops.h"
#include "tally/model/model.h"
#include "tally/base/presets.h"
#include "test_paths.h"

namespace tally_test {

inline tally::ModelConfig preset(const std::string& id) { return tally::resolve_model(nlohmann::json{{"model", id}}); }

// The InputError fn throws, or nullopt when it throws none.
inline std::optional<tally::InputError> input_error(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const tally::InputError& error) {
        return error;
    }
    return std::nullopt;
}

// The field an InputError names, or "" when fn does not throw one.
inline std::string error_field(const std::function<void()>& fn) {
    const auto error = input_error(fn);
    return error ? error->field() : "";
}

// The message of the InputError fn throws, or "" when it throws none.
inline std::string error_message(const std::function<void()>& fn) {
    const auto error = input_error(fn);
    return error ? error->what() : "";
}

// A run of content/validation/runs-modern.json by id, its args cut to what step_time declares (the sources' own
// figures, such as dp, set aside); an empty object when there is none (callers REQUIRE what they need).
inline nlohmann::json modern_run(const std::string& id) {
    std::ifstream in(std::string(tally_test::source_dir()) + "/content/validation/runs-modern.json");
    const nlohmann::json file = nlohmann::json::parse(in);
    for (const auto& run : file["runs"])
        if (run["id"] == id) {
            nlohmann::json copy = run;
            copy["args"] = tally::api::declared_only(run["args"], "step_time");
            return copy;
        }
    return nlohmann::json::object();
}

// The FLOPs term `id` of a count, nullptr when it has none.
inline const tally::FlopsTerm* flops_term(const tally::FlopsResult& r, const std::string& id) {
    for (const auto& t : r.terms)
        if (t.id == id) return &t;
    return nullptr;
}

// A config.json fixture under tests/fixtures/hf, written from the published values.
inline nlohmann::json hf_fixture(const std::string& name) {
    std::ifstream in(std::string(tally_test::source_dir()) + "/tests/fixtures/hf/" + name + ".json");
    REQUIRE(in.good());
    return nlohmann::json::parse(in);
}

// A fit-half run of the modern set, expressible: mechanisms are checked on the half their constants were chosen on.
inline nlohmann::json fit_run(const std::string& id) {
    const nlohmann::json run = modern_run(id);
    REQUIRE(run.value("split", "") == "fit");
    REQUIRE(run["expressible_today"] == true);
    return run;
}

// The seconds of one part of a step_time result's breakdown, by id (NaN when absent, which fails any comparison).
inline double breakdown_seconds(const nlohmann::json& result, const std::string& id) {
    for (const auto& p : result["breakdown"])
        if (p["id"] == id) return p["seconds"].get<double>();
    return std::nan("");
}

}  // namespace tally_test
