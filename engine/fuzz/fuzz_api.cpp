// libFuzzer target for the API boundary, tally::api::call(method, args): the one function the wasm
// build exports. Input: a method name, a newline, then the argument text (any bytes). For every input
// the reply must be one well-formed envelope: JSON in valid UTF-8, {"ok":true,"result":{...}} with no
// null standing in for an infinite number, or {"ok":false,"error":{"field","message"}} with a message
// free of control characters. An exception escaping call(), a sanitizer report or an abort is a crash.
// Build and run: see engine/fuzz/CMakeLists.txt and README.md.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tally/api.h"
#include "tally/base/input.h"

namespace {

// Methods that time loops for seconds per call (their limits are tested in tests/engine/kernels/gemm_test.cpp
// and probe_test.cpp): fuzzing them would measure, not search. They still get malformed arguments.
const std::set<std::string_view> kMeasuring = {"gemm_bench", "probe_peak", "probe_bandwidth", "gemm_run"};

[[noreturn]] void fail(const char* what, const std::string& envelope) {
    std::fprintf(stderr, "fuzz_api: %s: %.2000s\n", what, envelope.c_str());
    std::abort();
}

// A result must not hold a null where the method returned a number: the finite-result check
// turns inf/NaN into an error before serialisation, so a null can only be a deliberate one.
void check_envelope(const std::string& envelope) {
    if (tally::find_invalid_utf8(envelope)) fail("envelope is not valid UTF-8", envelope);
    nlohmann::json parsed = nlohmann::json::parse(envelope, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) fail("envelope is not a JSON object", envelope);
    const auto ok = parsed.find("ok");
    if (ok == parsed.end() || !ok->is_boolean()) fail("envelope has no boolean ok", envelope);
    if (ok->get<bool>()) {
        if (!parsed.contains("result")) fail("ok envelope without result", envelope);
        return;
    }
    const auto error = parsed.find("error");
    if (error == parsed.end() || !error->is_object() || !(*error)["field"].is_string() ||
        !(*error)["message"].is_string())
        fail("error envelope without field and message", envelope);
    const std::string message = (*error)["message"].get<std::string>();
    if (message.empty()) fail("empty error message", envelope);
    for (const char c : message)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) fail("control character in the message", envelope);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const std::size_t newline = input.find('\n');
    const std::string_view method = newline == std::string_view::npos ? input : input.substr(0, newline);
    const std::string_view args = newline == std::string_view::npos ? std::string_view() : input.substr(newline + 1);
    if (kMeasuring.count(method) != 0) {
        // Only inputs that cannot run a measurement: non-empty text (empty means {}) that is not JSON.
        if (!args.empty() && (!nlohmann::json::accept(args) || tally::find_invalid_utf8(args)))
            check_envelope(tally::api::call(method, args));
        return 0;
    }
    check_envelope(tally::api::call(method, args));
    return 0;
}
