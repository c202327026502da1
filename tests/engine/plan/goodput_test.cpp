// Tests of engine/src/plan/goodput.cpp: Young's and Daly's optimum checkpoint intervals against Daly (2006)'s
// published worked cases, and the complete wall-clock model against its first-order limit.
#include <catch2/catch.hpp>

#include <cmath>

#include "tally/base/error.h"
#include "tally/plan/goodput.h"

using namespace tally;

TEST_CASE("Daly's interval matches his three published cases (Daly 2006 figs. 3-5: R = 10 min, delta = 5 min)",
          "[goodput]") {
    const double minute = 60, hour = 3600;
    // "The new model predicts tau_opt = 117 min" (M = 24 h), "57 min" (M = 6 h), "9.1 min" (M = 15 min).
    CHECK(daly_interval(5 * minute, 24 * hour) / minute == Approx(117).margin(0.5));
    CHECK(daly_interval(5 * minute, 6 * hour) / minute == Approx(57).margin(0.5));
    CHECK(daly_interval(5 * minute, 15 * minute) / minute == Approx(9.1).margin(0.05));
    // Young's first-order interval is sqrt(2 delta M): 120 min for M = 24 h.
    CHECK(young_interval(5 * minute, 24 * hour) / minute == Approx(120).epsilon(1e-12));
    // A checkpoint dearer than two MTBFs: once per MTBF.
    CHECK(daly_interval(3 * hour, 1 * hour) == 1 * hour);
}

TEST_CASE("Daly's interval maximises the complete model's goodput, and the model has Young's first-order limit",
          "[goodput]") {
    for (double m : {900.0, 3 * 3600.0, 24 * 3600.0}) {
        INFO("M=" << m);
        const double d = 300, r = 600, tau = daly_interval(d, m);
        const double best = checkpoint_efficiency(tau, d, r, m);
        CHECK(best > checkpoint_efficiency(tau * 0.8, d, r, m));
        CHECK(best > checkpoint_efficiency(tau * 1.25, d, r, m));
        CHECK(best < 1);
    }
    // delta, R << M: lost share ~ delta/tau + tau/(2M) + R/M (Young 1974), sqrt(2 delta/M) + R/M at tau = Young's.
    const double m = 1e7, d = 10, r = 60, tau = young_interval(d, m);
    CHECK(1 - checkpoint_efficiency(tau, d, r, m) == Approx(std::sqrt(2 * d / m) + r / m).epsilon(0.01));
    CHECK(expected_wall_seconds(1e6, tau, d, r, m) == Approx(1e6 / checkpoint_efficiency(tau, d, r, m)));
}

TEST_CASE("goodput refuses inputs out of range, naming the field", "[goodput]") {
    const auto field = [](auto fn) {
        try {
            fn();
        } catch (const InputError& e) {
            return e.field();
        }
        return std::string();
    };
    CHECK(field([] { young_interval(0, 3600); }) == "checkpoint_seconds");
    CHECK(field([] { daly_interval(60, -1); }) == "mtbf_seconds");
    CHECK(field([] { checkpoint_efficiency(0, 60, 0, 3600); }) == "interval_seconds");
    CHECK(field([] { checkpoint_efficiency(600, 60, -5, 3600); }) == "restart_seconds");
    CHECK(field([] { expected_wall_seconds(0, 600, 60, 0, 3600); }) == "work_seconds");
}
