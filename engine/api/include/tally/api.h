// The JSON API: one protocol for the CLI's --json output, the wasm bindings and the tests.
// call("training_cost", R"({"params":70e9,...})") returns {"ok":true,"result":{...}} or
// {"ok":false,"error":{"field":"mfu","message":"mfu must be in (0, 1], got 1.5"}}; it never throws.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tally/model/model.h"

namespace tally {

// Resolves the API's model argument: "model": preset id | tally object | HF object (has
// "model_type"), or "hf_config": text or object, then encoder_head. Throws InputError naming "model",
// "hf_config" or "encoder_head" (engine/api/api_model.cpp).
ModelConfig resolve_model(const nlohmann::json& args);

}  // namespace tally

namespace tally::api {

using json = nlohmann::json;

// ---------------------------------------------------------------- the contract as data
// Each method declares its arguments and result fields once, beside its code (engine/api/api_<area>.cpp).
// invoke() refuses an undeclared argument and checks each declared one's type and static range before the
// method runs; the readers (arg_int, arg_number, ...) take default and range from the same declaration;
// `tally methods --json` prints them, and scripts/gen-contract.mjs writes docs/API.md's tables, the CLI's
// help and web/tally-api.d.ts from that output.
enum class ArgType : unsigned char {
    Integer,  // a whole number (JSON number or decimal text), checked against [low, high]
    Number,   // a finite number (JSON number or decimal text), checked against [low, high]
    Boolean,  // true/false (or "true"/"false"/"1"/"0")
    String,   // free text or an id (a preset, a dtype: the values are listed by `presets`)
    Enum,     // one of `values` (checked by the method's own parser, whose message lists them)
    Object,   // a JSON object (a model config, a hardware object, generate {...})
    Array,    // a JSON array (or, where the doc says so, comma-separated text)
    Any,      // several JSON shapes (a preset id or an object; a number or text such as "inf")
};

inline constexpr double kNoBound = std::numeric_limits<double>::infinity();

// When an argument applies: a test on another argument of the same call. An argument given (not null) where none of
// its tests holds is refused before the method runs, with a message naming it and the tests ("cost_balanced_stages
// applies only with `pp` > 1": the other names in backquotes, which the CLI turns into its flags), so the CLI, `tally call` and the page refuse the same calls the same way; the contract
// prints the tests beside the argument and the CLI's help from them. Where the other argument is absent, its declared
// default is tested; a default that "depends: ..." counts as passing (only a given value can be known to fail).
enum class Test : unsigned char {
    None,   // no test: the argument always applies
    Given,  // `other` is given (not null)
    Above,  // `other`, a number, is > `above`
    OneOf,  // `other` is one of `values` ("lora|qlora")
    Never,  // never: the method sets it itself (plan searches tp); `other` unused
};
struct Cond {
    Test test = Test::None;
    const char* other = "";
    double above = 0;
    const char* values = "";
};
// Applies when any of the tests holds (unused ones are Test::None); no test at all: always.
struct Applies {
    std::array<Cond, 2> any_of{};
    constexpr bool always() const { return any_of[0].test == Test::None && any_of[1].test == Test::None; }
};

struct Arg {
    const char* name = "";
    ArgType type = ArgType::Any;
    const char* unit = "";         // "tokens", "bytes", "FLOP/s", "" when a count or a name
    double low = -kNoBound;        // inclusive range of an Integer or Number; a bound that depends on other
    double high = kNoBound;        // arguments (pp <= layers) stays in the method and its doc says so
    const char* fallback = "";     // the default as text ("2048"), "required", or "depends: <why>"
    const char* doc = "";          // one line
    const char* flag = nullptr;    // the CLI flag where it is not --<name with - for _>
    const char* values = nullptr;  // Enum: "none|selective|full"
    bool low_open = false;         // Number: (low, high] rather than [low, high]
    // The default as a number, where it is a core constant (overlap::Input{}.layers): fallback stays "" and the
    // contract prints this value, so the declaration cannot drift from the core.
    double constant = std::numeric_limits<double>::quiet_NaN();
    Applies applies = {};  // when it applies (above); by default always
};

// One-line declarations of the common kinds, without unit or range (Arg's own fields declare the rest):
// free text, several JSON shapes, a boolean, one of `values` ("a|b|c"), an unbounded number, an integer in [low, high].
namespace arg {
constexpr Arg text(const char* name, const char* fallback, const char* doc) {
    return {.name = name, .type = ArgType::String, .fallback = fallback, .doc = doc};
}
constexpr Arg any(const char* name, const char* fallback, const char* doc) {
    return {.name = name, .type = ArgType::Any, .fallback = fallback, .doc = doc};
}
constexpr Arg boolean(const char* name, const char* fallback, const char* doc, const char* flag = nullptr) {
    return {.name = name, .type = ArgType::Boolean, .fallback = fallback, .doc = doc, .flag = flag};
}
constexpr Arg choice(const char* name, const char* fallback, const char* doc, const char* values,
                     const char* flag = nullptr) {
    return {.name = name, .type = ArgType::Enum, .fallback = fallback, .doc = doc, .flag = flag, .values = values};
}
constexpr Arg number(const char* name, const char* unit, const char* fallback, const char* doc,
                     const char* flag = nullptr) {
    return {.name = name, .type = ArgType::Number, .unit = unit, .fallback = fallback, .doc = doc, .flag = flag};
}
constexpr Arg integer(const char* name, const char* unit, double low, double high, const char* fallback,
                      const char* doc) {
    return {name, ArgType::Integer, unit, low, high, fallback, doc};
}
// The tests of `applies`: `only(arg, above("pp", 1))` applies with pp > 1; two tests: either holds.
constexpr Cond given(const char* other) { return {.test = Test::Given, .other = other}; }
constexpr Cond above(const char* other, double bound) { return {.test = Test::Above, .other = other, .above = bound}; }
constexpr Cond one_of(const char* other, const char* values) {
    return {.test = Test::OneOf, .other = other, .values = values};
}
constexpr Arg only(Arg a, Cond first, Cond second = {}) {
    a.applies.any_of = {first, second};
    return a;
}
}  // namespace arg

struct Field {
    const char* name = "";
    const char* unit = "";
    const char* doc = "";
};

// An argument (or result field) list made of shared groups (the model, the training setup, the capacity) and a
// method's own.
template <typename T, std::size_t... N>
constexpr std::array<T, (N + ... + 0)> join_args(const std::array<T, N>&... parts) {
    std::array<T, (N + ... + 0)> out{};
    std::size_t i = 0;
    ((std::copy(parts.begin(), parts.end(), out.begin() + static_cast<std::ptrdiff_t>(i)), i += N), ...);
    return out;
}

// The union of argument lists, the first declaration of a name winning (a method that hands its arguments on
// to another accepts the other's too); `size` of `items` are used.
template <std::size_t N>
struct ArgList {
    std::array<Arg, N> items{};
    std::size_t size = 0;
    constexpr std::span<const Arg> span() const { return {items.data(), size}; }
};
template <std::size_t... N>
constexpr ArgList<(N + ... + 0)> merge_args(const std::array<Arg, N>&... parts) {
    ArgList<(N + ... + 0)> out{};
    const auto add = [&](const Arg& arg) {
        for (std::size_t i = 0; i < out.size; ++i)
            if (std::string_view(out.items[i].name) == arg.name) return;
        out.items[out.size++] = arg;
    };
    (std::for_each(parts.begin(), parts.end(), add), ...);
    return out;
}

// A method: name, function, one-line summary, then its declaration. The declaration members are trailing
// and defaulted, so a method added the old way ({name, fn, summary}) still builds; api_contract_test names
// every method without one.
struct Method {
    const char* name;
    json (*fn)(const json& args);
    const char* summary;
    std::span<const Arg> args = {};
    std::span<const Field> result = {};
    bool declared = false;  // true once args (possibly none) and result are declared
};

// One list per engine module, each defined in engine/api/api_<module>.cpp.
std::span<const Method> presets_methods();     // presets, model, assumptions
std::span<const Method> params_methods();      // params
std::span<const Method> flops_methods();       // flops
std::span<const Method> training_methods();    // training_cost, mfu
std::span<const Method> memory_methods();      // recipes, memory_budget
std::span<const Method> finetune_methods();    // finetune (LoRA, QLoRA, full on one GPU)
std::span<const Method> fit_methods();         // fit
std::span<const Method> kvcache_methods();     // kv_cache
std::span<const Method> tensor_methods();      // tensor_bytes
std::span<const Method> precision_methods();   // float formats
std::span<const Method> blockscale_methods();  // block scaling
std::span<const Method> gemm_methods();        // GEMM ladder
std::span<const Method> roofline_methods();    // roofline
std::span<const Method> probe_methods();       // probes
std::span<const Method> step_methods();        // step time, layout planner
std::span<const Method> inference_methods();   // serving: decode, prefill, crossover; units; checkpoints
std::span<const Method> schedule_methods();    // pipeline_schedule (GPipe, 1F1B, interleaved, ZB-H1, DualPipe)

// collective, comm_roofline (api_collectives.cpp)
std::span<const Method> collectives_methods();
// overlap (api_overlap.cpp); moe_routing (api_moe.cpp); context_parallel (api_context.cpp)
std::span<const Method> overlap_methods();
std::span<const Method> moe_methods();
std::span<const Method> context_methods();
// checkpoint_interval (api_goodput.cpp)
std::span<const Method> goodput_methods();

// Looks a method up across all areas; nullptr if unknown.
const Method* find_method(std::string_view name);
// Every method of every area, for `tally methods` and the JS API's self-description; with `detail`, each
// method's declared arguments and result fields (the contract as data).
json list_methods(bool detail = false);
// One declaration as JSON: {name, type, unit, low, high, default, doc, flag, values}.
// The CLI flag of an argument: declared, else --<name> with '_' as '-' (arg_to_json's "flag").
std::string flag_name(const Arg& arg);
json arg_to_json(const Arg& arg);
// The default as the contract prints it: arg.fallback, or arg.constant as a number ("8", "0.001").
std::string default_text(const Arg& arg);
// The arguments of `args` that `method` declares (for a method that hands its arguments on to another).
json declared_only(const json& args, std::string_view method);
// Checks `args` against `method`'s declaration: an undeclared key, a wrong type or a value outside the static
// range is an InputError naming the field (with the same messages as the readers). Called by invoke().
void check_declared_args(const Method& method, const json& args);
// "with pp > 1", "with hardware or capacity_bytes given", "never in plan (it searches tp)": the condition of
// arg.applies in words ("" when it always applies).
std::string applies_text(const Arg& arg, std::string_view method);
// Checks that every argument `args` gives applies (arg.applies); an InputError naming the first that does not:
// "<name> applies only <applies_text>". Called by check_declared_args, after the types and ranges.
void check_applies(const Method& method, const json& args);

// Runs a method on parsed arguments; throws InputError on bad input (for the CLI). A result with a
// number that is not finite is an InputError too, naming the input that most likely caused it.
json invoke(std::string_view method, const json& args);
// Runs a method on a JSON text and wraps the outcome; never throws, for any bytes (for wasm and
// scripts). The text is checked before parsing: at most kMaxJsonBytes, valid UTF-8, nested at most
// kMaxJsonDepth deep (tally/input.h). Error messages are escaped and capped, never raw input.
std::string call(std::string_view method, std::string_view args_json);

// Appends {field, message} to result["warnings"]: a legal but implausible input or result
// (an MFU above 100 %), which the CLI prints on stderr and a widget shows beside the result.
void add_warning(json& result, const std::string& field, const std::string& message);

// Argument readers: each throws InputError naming the field when it is missing or of the wrong kind.
// Numbers may be given as JSON numbers or as strings in C syntax ("70e9"), strictly parsed.
double number_arg(const json& args, const char* field);
std::optional<double> optional_number_arg(const json& args, const char* field);
std::int64_t integer_arg(const json& args, const char* field, std::int64_t low, std::int64_t high);
std::optional<std::int64_t> optional_integer_arg(const json& args, const char* field, std::int64_t low,
                                                 std::int64_t high);
bool bool_arg(const json& args, const char* field, bool fallback);
// Readers from a declaration: range from arg.low/high and the default from arg.fallback (a number, true/false
// or text); `fallback` overrides it where the declaration says "depends: ...".
std::int64_t arg_int(const json& args, const Arg& arg);
std::int64_t arg_int(const json& args, const Arg& arg, std::int64_t fallback);
std::optional<std::int64_t> optional_arg_int(const json& args, const Arg& arg);
double arg_number(const json& args, const Arg& arg);
bool arg_bool(const json& args, const Arg& arg);
std::string arg_string(const json& args, const Arg& arg);
std::string string_arg(const json& args, const char* field);
std::optional<std::string> optional_string_arg(const json& args, const char* field);

}  // namespace tally::api
