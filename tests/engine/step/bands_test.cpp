// Tests of engine/src/step/bands.cpp: the error bands' order-statistic intervals, their fallback levels, the
// widening of a GPU without rows, leave-one-source-out coverage and the validation summary.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tally/step/bands.h"

using namespace tally;

namespace {

std::vector<BandRun> kind(const std::string& stack, const std::string& hardware, const std::string& source,
                          const std::vector<double>& errors, bool known_stack = true) {
    std::vector<BandRun> out;
    for (double e : errors) out.push_back({stack, "bf16", hardware, "compute-bound", source, e, known_stack});
    return out;
}

void append(std::vector<BandRun>& to, const std::vector<BandRun>& more) {
    to.insert(to.end(), more.begin(), more.end());
}

}  // namespace

TEST_CASE("band regime: overhead-bound past a quarter of the step outside compute") {
    CHECK(std::string(band_regime(0.76, 1.0)) == "compute-bound");
    CHECK(std::string(band_regime(0.74, 1.0)) == "overhead-bound");
    CHECK(is_compute_part("matmul"));
    CHECK(is_compute_part("fp8_cast"));
    CHECK_FALSE(is_compute_part("dp_comm"));
}

TEST_CASE("nine residuals make an 80 % band from their smallest to their largest; nineteen drop one at each end") {
    // (k - j) / (n + 1): 9 runs, [x(1), x(9)] holds 8/10 of a new one; 19 runs, [x(2), x(18)] holds 16/20.
    std::vector<double> nine{-0.3, -0.1, 0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.4};
    const auto table = band_table(kind("nanotron", "h100-sxm", "a", nine));
    const auto b = find_band(table, {"nanotron", "bf16", "h100-sxm", "compute-bound"});
    REQUIRE(b);
    CHECK(b->level == "stack/precision/hardware/regime");
    CHECK(b->runs == 9);
    CHECK(b->lower == -0.3);
    CHECK(b->upper == 0.4);
    std::vector<double> nineteen;
    for (int i = 0; i < 19; ++i) nineteen.push_back(0.01 * i);
    const auto b19 = find_band(band_table(kind("nanotron", "h100-sxm", "a", nineteen)),
                               {"nanotron", "bf16", "h100-sxm", "compute-bound"});
    REQUIRE(b19);
    CHECK(b19->lower == Approx(0.01));
    CHECK(b19->upper == Approx(0.17));
    // Asymmetric residuals give an asymmetric band: a model that predicts too fast has a band above zero.
    CHECK(b19->lower > 0);
}

TEST_CASE("a kind with fewer than nine runs falls back; a generic query takes the residuals of generic predictions") {
    std::vector<BandRun> runs = kind("nanotron", "h100-sxm", "a", {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1});  // 8
    append(runs, kind("nanotron", "a100-80gb", "b", {0.2, 0.2, 0.2}));
    append(runs, kind("generic", "h100-sxm", "a", std::vector<double>(11, 0.3), false));
    const auto table = band_table(runs);
    const auto own = find_band(table, {"nanotron", "bf16", "h100-sxm", "compute-bound"});
    REQUIRE(own);
    CHECK(own->level == "stack/precision/regime");  // 8 on this GPU, 11 of the stack in bf16
    CHECK(own->upper == Approx(0.2));
    const auto generic = find_band(table, {"generic", "bf16", "h100-sxm", "compute-bound"});
    REQUIRE(generic);
    CHECK(generic->level == "any stack/hardware/regime");
    CHECK(generic->lower == Approx(0.3));
    // A stack without rows is treated as an unknown one.
    const auto unknown = find_band(table, {"deepspeed", "bf16", "h100-sxm", "compute-bound"});
    REQUIRE(unknown);
    CHECK(unknown->level == generic->level);
    CHECK_FALSE(find_band(band_table({}), {"generic", "bf16", "h100-sxm", "compute-bound"}));
}

TEST_CASE("a GPU without rows gets its band widened by the spread of the known GPUs' median errors") {
    std::vector<BandRun> runs = kind("generic", "h100-sxm", "a", std::vector<double>(9, 0.0), false);
    append(runs, kind("generic", "a100-80gb", "b", std::vector<double>(9, 0.2), false));
    append(runs, kind("generic", "b200", "c", std::vector<double>(9, -0.1), false));
    const auto table = band_table(runs);
    const auto seen = find_band(table, {"generic", "bf16", "a100-80gb", "compute-bound"});
    REQUIRE(seen);
    CHECK_FALSE(seen->widened);
    const auto unseen = find_band(table, {"generic", "bf16", "mi300x", "compute-bound"});
    REQUIRE(unseen);
    CHECK(unseen->widened);
    CHECK(unseen->level == "any stack/regime");
    // Medians -0.1, 0, 0.2 around 0: the 27-run band [-0.1, 0.2] grows by -0.1 below and +0.2 above.
    CHECK(unseen->lower == Approx(-0.2));
    CHECK(unseen->upper == Approx(0.4));
}

TEST_CASE("leave one source out: a run's own source never sets its band") {
    // Source "a" is 50 % off, source "b" is right: with all runs the band of the kind holds a's runs; with each
    // source left out, a's runs are judged by b's band only and fall outside it.
    std::vector<BandRun> runs = kind("torchtitan", "h100-sxm", "a", std::vector<double>(9, 0.5));
    append(runs, kind("torchtitan", "h100-sxm", "b", {-0.02, -0.01, 0.0, 0.0, 0.01, 0.01, 0.02, 0.02, 0.03}));
    const auto all = find_band(band_table(runs), {"torchtitan", "bf16", "h100-sxm", "compute-bound"});
    REQUIRE(all);
    CHECK(all->upper == Approx(0.5));
    const BandCoverage c = leave_one_source_out(runs);
    CHECK(c.runs == 18);
    CHECK(c.with_band == 18);
    CHECK(c.inside == 0);  // a's runs outside b's band, b's outside a's
    CHECK(c.generic_runs == 0);
}

TEST_CASE("the validation summary: median |error|, signed median, within 20 %, predicted faster, worst") {
    const ErrorSummary s = error_summary({-0.3, 0.1, 0.15, 0.25, -0.05});
    CHECK(s.count == 5);
    CHECK(s.median_abs_error == Approx(0.15));
    CHECK(s.median_error == Approx(0.1));
    CHECK(s.within_20_percent == Approx(0.6));
    CHECK(s.faster_share == Approx(0.6));
    CHECK(s.worst_error == Approx(-0.3));
    CHECK(s.worst_index == 0);
    CHECK(error_summary({}).count == 0);
}
