// Tests of engine/api/step_validation.cpp through the API method step_validation: each run's error is step_time's
// own prediction against the published figure, summaries and the leave-one-source-out band follow from those
// errors, and a malformed run is refused naming `runs`.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "api_helpers.h"
#include "cli_runner.h"
#include "test_paths.h"

using nlohmann::json;
using tally_test::error;
using tally_test::ok;

namespace {

json run(const std::string& id, const std::string& source, double published, std::int64_t gpus) {
    return {{"id", id},
            {"source_key", source},
            {"args",
             {{"model", "llama-2-7b"},
              {"hardware", "h100-sxm"},
              {"gpus", gpus},
              {"tp", 1},
              {"pp", 1},
              {"seq", 4096},
              {"global_batch", 4 * gpus},
              {"micro_batch", 1}}},
            {"published", {{"metric", "mfu"}, {"value", published}}}};
}

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

TEST_CASE("step_validation scores each run as step_time predicts it: error = (predicted - published) / published") {
    const json file{{"runs", {run("a", "one", 0.40, 8), run("b", "two", 0.50, 16), run("c", "two", 0.30, 32)}}};
    const json report = ok("step_validation", {{"runs", file}});
    REQUIRE(report["runs"].size() == 3);
    std::vector<double> abs_errors;
    for (const json& row : report["runs"]) {
        INFO(row.dump());
        const json& given = file["runs"][&row - &report["runs"][0]];
        const double predicted = ok("step_time", given["args"])["mfu"].get<double>();
        CHECK(row["predicted"].get<double>() == Approx(predicted).epsilon(1e-12));
        const double published = given["published"]["value"].get<double>();
        CHECK(row["error"].get<double>() == Approx((predicted - published) / published).epsilon(1e-12));
        abs_errors.push_back(std::fabs(row["error"].get<double>()));
    }
    std::sort(abs_errors.begin(), abs_errors.end());
    CHECK(report["median_abs_error"].get<double>() == Approx(abs_errors[1]));
    CHECK(report["worst_abs_error"].get<double>() == Approx(abs_errors[2]));
    CHECK(report["sources"]["two"]["count"] == 2);
    CHECK(report["halves"]["all"]["count"] == 3);
    // The same file as JSON text gives the same report.
    CHECK(ok("step_validation", {{"runs", file.dump()}}) == report);
}

TEST_CASE("step_validation and tally step --validate --json give the same report for the project's runs file") {
    const std::string path = std::string(tally_test::source_dir()) + "/content/validation/runs.json";
    const json api = ok("step_validation", {{"runs", read_text(path)}});
    const tally::test::CliRun cli = tally::test::run_cli_argv({"step", "--validate", "--runs", path, "--json"});
    REQUIRE(cli.exit_code == 0);
    CHECK(json::parse(cli.out) == api);
    CHECK(api["runs"].size() >= 10);
}

TEST_CASE("step_validation refuses a malformed runs file naming runs and the run") {
    CHECK(error("step_validation", json::object())["field"] == "runs");
    CHECK(error("step_validation", {{"runs", json::array()}})["field"] == "runs");
    const json bad = error("step_validation", {{"runs", {{"runs", {{{"id", "x"}}}}}}});
    CHECK(bad["field"] == "runs");
    CHECK_THAT(bad["message"].get<std::string>(), Catch::Contains("run 0 needs \"args\""));
    json wrong = run("a", "one", 0.4, 8);
    wrong["args"]["tp"] = 3;  // does not divide the heads
    const json refused = error("step_validation", {{"runs", {{"runs", {wrong}}}}});
    CHECK(refused["field"] == "runs");
    CHECK_THAT(refused["message"].get<std::string>(), Catch::Contains("run \"a\""));
    CHECK(error("step_validation", {{"runs", "{"}})["field"] == "runs");
}
