// The only file that includes Emscripten: it exposes the engine's JSON API to JavaScript as plain C
// functions (no Embind, whose generated invokers need eval and so 'unsafe-eval' in a page's CSP).
// Strings cross the boundary as (pointer, length) in and a malloc'd NUL-terminated string out, which
// engine/bindings/post.js copies into a JS string and hands back to tally_free: nothing is kept between
// calls, and every engine error arrives as {"ok":false,"error":{field,message}} instead of a wasm abort.
#include <emscripten/emscripten.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "tally/api.h"

namespace {

// Returned when even the reply cannot be built; the text is fixed, so it never echoes input bytes.
constexpr std::string_view kInternalError =
    R"json({"ok":false,"error":{"field":"","message":"the engine failed on this input (internal error)"}})json";

/** A malloc'd NUL-terminated copy of `text`, or nullptr when memory is exhausted. */
char* to_heap(std::string_view text) noexcept {
    auto* out = static_cast<char*>(std::malloc(text.size() + 1));
    if (out == nullptr) return nullptr;
    std::memcpy(out, text.data(), text.size());
    out[text.size()] = '\0';
    return out;
}

}  // namespace

extern "C" {

/** api::call on (method, args_json); the reply must be released with tally_free. nullptr: out of memory. */
EMSCRIPTEN_KEEPALIVE char* tally_call(const char* method, std::size_t method_length, const char* args_json,
                                      std::size_t args_length) noexcept {
    try {
        return to_heap(
            tally::api::call(std::string_view(method, method_length), std::string_view(args_json, args_length)));
    } catch (...) {  // api::call promises not to throw; this keeps a broken promise from becoming a wasm trap
        return to_heap(kInternalError);
    }
}

/** The API's method list as JSON; release with tally_free. */
EMSCRIPTEN_KEEPALIVE char* tally_methods() noexcept {
    try {
        return to_heap(tally::api::list_methods().dump());
    } catch (...) {
        return to_heap(kInternalError);
    }
}

EMSCRIPTEN_KEEPALIVE void tally_free(char* reply) noexcept { std::free(reply); }

}  // extern "C"
