// Tests of engine/src/api.cpp: the JSON envelope every front end shares.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <sys/wait.h>
#include <memory>
#include <string>

#include "tally/api.h"

using nlohmann::json;

TEST_CASE("call wraps a result in ok:true and the numbers match the C++ function") {
    const json out = json::parse(tally::api::call(
        "training_time", R"({"params":70e9,"tokens":15e12,"gpus":1024,"peak_tflops":989.5,"mfu":0.5})"));
    REQUIRE(out["ok"] == true);
    CHECK(out["result"]["six_nd_flops"].get<double>() == 6.0 * 70e9 * 15e12);
    CHECK(out["result"]["days"].get<double>() == Approx(143.93).epsilon(1e-4));
}

TEST_CASE("call reports bad input as ok:false with the field, never throws") {
    const json bad_mfu = json::parse(tally::api::call(
        "training_time", R"({"params":70e9,"tokens":15e12,"gpus":1024,"peak_tflops":989.5,"mfu":1.5})"));
    CHECK(bad_mfu["ok"] == false);
    CHECK(bad_mfu["error"]["field"] == "mfu");
    CHECK(bad_mfu["error"]["message"].get<std::string>().find("(0, 1]") != std::string::npos);

    const json missing = json::parse(tally::api::call("training_time", R"({"params":70e9})"));
    CHECK(missing["error"]["field"] == "tokens");

    const json text = json::parse(tally::api::call("training_time", R"({"params":"abc","tokens":1})"));
    CHECK(text["error"]["field"] == "params");

    const json fractional_gpus = json::parse(tally::api::call(
        "training_time", R"({"params":1e9,"tokens":1e9,"gpus":1.5,"peak_tflops":100,"mfu":0.5})"));
    CHECK(fractional_gpus["error"]["field"] == "gpus");

    const json malformed = json::parse(tally::api::call("training_time", "{\"params\": 1,"));
    CHECK(malformed["error"]["field"] == "args");
    CHECK(malformed["error"]["message"].get<std::string>().find("column") != std::string::npos);  // parse position

    const json unknown = json::parse(tally::api::call("no_such_method", "{}"));
    CHECK(unknown["error"]["field"] == "method");
}

TEST_CASE("numeric strings are parsed strictly: \"70e9\" is a number, \"70e9x\" is not") {
    const json ok = json::parse(tally::api::call(
        "training_time", R"({"params":"70e9","tokens":"15e12","gpus":"1024","peak_tflops":"989.5","mfu":"0.5"})"));
    CHECK(ok["ok"] == true);
    const json bad = json::parse(tally::api::call(
        "training_time", R"({"params":"70e9x","tokens":"15e12","gpus":"1024","peak_tflops":"989.5","mfu":"0.5"})"));
    CHECK(bad["error"]["field"] == "params");
}

TEST_CASE("the CLI's time --json prints the training_cost result object exactly") {
    const std::string command = std::string(TALLY_CLI_PATH) +
                                " time --params 70e9 --tokens 15e12 --gpus 1024 --peak-tflops 989.5 --mfu 0.5 --json";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    REQUIRE(pipe != nullptr);
    std::string text;
    char buffer[4096];
    while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe.get())) text.append(buffer, n);
    const json cli = json::parse(text);
    const json api = json::parse(tally::api::call(
        "training_cost", R"({"params":70e9,"tokens":15e12,"gpus":1024,"peak_tflops":989.5,"mfu":0.5})"))["result"];
    CHECK(cli == api);
    CHECK(cli["days"].get<double>() == Approx(143.93).epsilon(1e-4));
}

TEST_CASE("a bad CLI value exits with status 2") {
    const std::string command = std::string(TALLY_CLI_PATH) +
                                " time --params 70e9 --tokens 15e12 --gpus 0 --peak-tflops 989.5 --mfu 0.5 2>/dev/null";
    const int status = std::system(command.c_str());
    CHECK(WEXITSTATUS(status) == 2);
    const std::string unknown = std::string(TALLY_CLI_PATH) + " time --bogus 1 2>/dev/null";
    CHECK(WEXITSTATUS(std::system(unknown.c_str())) == 2);
}
