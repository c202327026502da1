// Tests of engine/kernels/probe.cpp: the probes return finite positive rates and reject bad arguments.
// They do not assert speeds (a shared 2-core machine is no place for timed tests).
#include <catch2/catch.hpp>

#include <cmath>

#include "tally/api.h"
#include "tally/probe.h"

using nlohmann::json;

TEST_CASE("peak probe: finite positive FLOP/s, min <= median <= max, names its ISA") {
    const auto r = tally::probe::peak(3, 0.005);
    CHECK(std::isfinite(r.flops_per_s));
    CHECK(r.flops_per_s > 0);
    CHECK(r.flops_per_s_min <= r.flops_per_s);
    CHECK(r.flops_per_s <= r.flops_per_s_max);
    CHECK(r.lanes >= 4);
    CHECK(std::string(r.isa).size() > 0);
}

TEST_CASE("bandwidth probe: finite positive bytes/s for read and triad over a 4 MiB buffer") {
    const auto r = tally::probe::bandwidth(4 << 20, 2);
    CHECK(std::isfinite(r.read_bytes_per_s));
    CHECK(r.read_bytes_per_s > 0);
    CHECK(std::isfinite(r.triad_bytes_per_s));
    CHECK(r.triad_bytes_per_s > 0);
    CHECK(r.bytes == 4 << 20);
}

TEST_CASE("probe APIs name the field on bad input") {
    CHECK(json::parse(tally::api::call("probe_peak", R"({"samples":0})"))["error"]["field"] == "samples");
    CHECK(json::parse(tally::api::call("probe_peak", R"({"min_sample_ms":0.1})"))["error"]["field"] == "min_sample_ms");
    CHECK(json::parse(tally::api::call("probe_bandwidth", R"({"mib":0})"))["error"]["field"] == "mib");
    CHECK(json::parse(tally::api::call("probe_bandwidth", R"({"mib":2048})"))["error"]["field"] == "mib");
}

TEST_CASE("probe APIs bound one call: bandwidth buffer <= 256 MiB, peak samples x min_sample_ms <= 10 s") {
    // 1024 MiB used to leave a 1 GB wasm heap behind (WebAssembly memory never shrinks)
    CHECK(json::parse(tally::api::call("probe_bandwidth", R"({"mib":1024})"))["error"]["field"] == "mib");
    CHECK(json::parse(tally::api::call("probe_bandwidth", R"({"mib":257})"))["error"]["field"] == "mib");
    const json peak = json::parse(tally::api::call("probe_peak", R"({"samples":50,"min_sample_ms":5000})"));
    CHECK(peak["error"]["field"] == "samples");
}
