// Envelope helpers of the API tests: the result of a call that must succeed, the error of one that must fail.
#pragma once

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tally/api.h"

namespace tally_test {

inline nlohmann::json ok(const char* method, const nlohmann::json& args) {
    const nlohmann::json envelope = nlohmann::json::parse(tally::api::call(method, args.dump()));
    INFO(envelope.dump());
    REQUIRE(envelope["ok"] == true);
    return envelope["result"];
}

inline nlohmann::json error(const char* method, const nlohmann::json& args) {
    const nlohmann::json envelope = nlohmann::json::parse(tally::api::call(method, args.dump()));
    REQUIRE(envelope["ok"] == false);
    return envelope["error"];
}

}  // namespace tally_test
