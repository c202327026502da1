// The only file that includes Emscripten: it exposes the engine's JSON API to JavaScript.
// Strings cross the boundary, never C++ objects, so JS cannot leak Embind handles and every
// engine error arrives as {"ok":false,"error":{field,message}} instead of a wasm abort.
#include <emscripten/bind.h>

#include <string>

#include "tally/api.h"

namespace {

std::string tally_call(const std::string& method, const std::string& args_json) {
    return tally::api::call(method, args_json);
}

std::string tally_methods() { return tally::api::list_methods().dump(); }

}  // namespace

EMSCRIPTEN_BINDINGS(tally) {
    emscripten::function("tally_call", &tally_call);
    emscripten::function("tally_methods", &tally_methods);
}
