#include "tally/step/stack.h"

#include <cmath>
#include <iterator>
#include <string>

#include "tally/base/error.h"
#include "tally/base/presets.h"

namespace tally {

namespace {

using json = nlohmann::json;

// Each enum switch's names in its enum's order; the allowed values and their order in messages are kStepSwitches'.
constexpr const char* kAttentionNames[] = {"flash-attn-2", "cudnn-fused", "sdpa"};  // AttentionKernel
constexpr const char* kCpNames[] = {"ring", "all-gather-overlap", "all-gather"};    // CpExchange

constexpr std::string_view declared_values(std::string_view name) {
    for (const StepSwitchInfo& s : kStepSwitches)
        if (name == s.name) return s.values;
    return "";
}

// Whether `names` are exactly the |-separated values kStepSwitches declares for the switch, in any order.
template <std::size_t N>
constexpr bool declares_exactly(std::string_view name, const char* const (&names)[N]) {
    std::string_view values = declared_values(name);
    std::size_t count = 0;
    while (!values.empty()) {
        const std::size_t bar = values.find('|');
        const std::string_view value = values.substr(0, bar);
        bool known = false;
        for (const char* n : names) known = known || value == n;
        if (!known) return false;
        ++count;
        values = bar == std::string_view::npos ? std::string_view{} : values.substr(bar + 1);
    }
    return count == N;
}
static_assert(declares_exactly("attention_kernel", kAttentionNames), "kAttentionNames against kStepSwitches");
static_assert(declares_exactly("cp_exchange", kCpNames), "kCpNames against kStepSwitches");

bool bool_of(std::string_view name, const json& v) {
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        if (s == "true" || s == "1") return true;
        if (s == "false" || s == "0") return false;
    }
    throw InputError(std::string(name), std::string(name) + " must be true or false");
}

double number_of(std::string_view name, const json& v, double high) {
    double x = std::nan("");
    if (v.is_number()) x = v.get<double>();
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        std::size_t used = 0;
        try {
            x = std::stod(s, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != s.size()) x = std::nan("");
    }
    if (!(x >= 0 && x <= high))  // NaN fails too
        throw InputError(std::string(name), std::string(name) + " must be a number from 0 to " +
                                                std::to_string(static_cast<long long>(high)));
    return x;
}

template <std::size_t N>
int enum_of(std::string_view name, const json& v, const char* const (&names)[N]) {
    if (v.is_string())
        for (std::size_t i = 0; i < N; ++i)
            if (v.get_ref<const std::string&>() == names[i]) return static_cast<int>(i);
    std::string listed(declared_values(name));
    for (std::size_t bar = listed.find('|'); bar != std::string::npos; bar = listed.find('|', bar))
        listed.replace(bar, 1, ", ");
    throw InputError(std::string(name), std::string(name) + " must be one of " + listed);
}

// Each switch's reader and writer, in kStepSwitches' order: the one place a switch's name meets its field.
struct SwitchAccess {
    std::string_view name;
    json (*get)(const StepSwitches&);
    void (*set)(StepSwitches&, std::string_view, const json&);
};

constexpr double kMaxBucket = 1e15;  // beyond any model's gradient bytes or parameters

#define TALLY_BOOL_SWITCH(id, field)                                                            \
    SwitchAccess {                                                                              \
        id, [](const StepSwitches& s) -> json { return s.field; },                              \
            [](StepSwitches& s, std::string_view n, const json& v) { s.field = bool_of(n, v); } \
    }

constexpr SwitchAccess kSwitchAccess[] = {
    {"attention_kernel", [](const StepSwitches& s) -> json { return kAttentionNames[static_cast<int>(s.attention)]; },
     [](StepSwitches& s, std::string_view n, const json& v) {
         s.attention = static_cast<AttentionKernel>(enum_of(n, v, kAttentionNames));
     }},
    TALLY_BOOL_SWITCH("tp_comm_overlap", tp_comm_overlap),
    TALLY_BOOL_SWITCH("fp8_tensorwise_sp_gather", fp8_tensorwise_sp_gather),
    TALLY_BOOL_SWITCH("sp_batch_first", sp_batch_first),
    {"cp_exchange", [](const StepSwitches& s) -> json { return kCpNames[static_cast<int>(s.cp_exchange)]; },
     [](StepSwitches& s, std::string_view n, const json& v) {
         s.cp_exchange = static_cast<CpExchange>(enum_of(n, v, kCpNames));
     }},
    TALLY_BOOL_SWITCH("cp_repeat_kv", cp_repeat_kv),
    TALLY_BOOL_SWITCH("per_op_sac", per_op_sac),
    TALLY_BOOL_SWITCH("eager_elementwise", eager_elementwise),
    TALLY_BOOL_SWITCH("fsdp_keep_gathered_with_pp", fsdp_keep_gathered_with_pp),
    TALLY_BOOL_SWITCH("grad_fp32", grad_sync.fp32),
    TALLY_BOOL_SWITCH("grad_reduce_after_backward", grad_sync.zero_after_backward),
    TALLY_BOOL_SWITCH("tied_grad_after_backward", grad_sync.tied_after_backward),
    {"bucket_bytes", [](const StepSwitches& s) -> json { return s.grad_sync.bucket_bytes; },
     [](StepSwitches& s, std::string_view n, const json& v) {
         const double bytes = number_of(n, v, kMaxBucket);
         if (bytes < 1) throw InputError("bucket_bytes", "bucket_bytes must be at least 1 byte");
         s.grad_sync.bucket_bytes = bytes;
     }},
    {"bucket_params", [](const StepSwitches& s) -> json { return s.grad_sync.bucket_params; },
     [](StepSwitches& s, std::string_view n, const json& v) {
         s.grad_sync.bucket_params = number_of(n, v, kMaxBucket);
     }},
    {"bucket_params_per_rank", [](const StepSwitches& s) -> json { return s.grad_sync.bucket_params_per_rank; },
     [](StepSwitches& s, std::string_view n, const json& v) {
         s.grad_sync.bucket_params_per_rank = number_of(n, v, kMaxBucket);
     }},
    TALLY_BOOL_SWITCH("torch_grouped_mm", torch_grouped_mm),
    TALLY_BOOL_SWITCH("expert_host_launches", expert_host_launches),
    TALLY_BOOL_SWITCH("separate_qkv", separate_qkv),
    TALLY_BOOL_SWITCH("pipeline_lockstep", pipeline_lockstep),
    TALLY_BOOL_SWITCH("cost_balanced_stages", cost_balanced_stages),
    {"logits_bytes", [](const StepSwitches& s) -> json { return s.logits_bytes; },
     [](StepSwitches& s, std::string_view n, const json& v) { s.logits_bytes = number_of(n, v, 1024); }},
    TALLY_BOOL_SWITCH("eager_glu", eager_glu),
};
#undef TALLY_BOOL_SWITCH

// The accessor table and the declared list (stack.h, from which the API's arguments follow) name the same
// switches in the same order.
constexpr bool same_switches() {
    if (std::size(kSwitchAccess) != std::size(kStepSwitches)) return false;
    for (std::size_t i = 0; i < std::size(kStepSwitches); ++i)
        if (kSwitchAccess[i].name != std::string_view(kStepSwitches[i].name)) return false;
    return true;
}
static_assert(same_switches(), "kSwitchAccess must list kStepSwitches' switches in its order");

const SwitchAccess& access(std::string_view name) {
    for (const SwitchAccess& a : kSwitchAccess)
        if (a.name == name) return a;
    throw InputError(std::string(name), "unknown step switch \"" + std::string(name).substr(0, 40) + "\"");
}

}  // namespace

void set_step_switch(StepSwitches& s, std::string_view name, const json& v) { access(name).set(s, name, v); }

json step_switch_value(const StepSwitches& s, std::string_view name) { return access(name).get(s); }

StackProfile stack_from_json(const std::string& id, const json& file) {
    const std::string where = "stack." + id;
    if (!file.is_object() || !file.contains("name") || !file["name"].is_string())
        throw InputError(where, where + " needs a name");
    StackProfile p{id, file["name"].get<std::string>(), {}};
    if (!file.contains("defaults")) return p;
    if (!file["defaults"].is_object()) throw InputError(where, where + ".defaults must be an object");
    for (const auto& [name, entry] : file["defaults"].items()) {
        const std::string field = where + "." + name;
        // Every default names where its framework sets it: a value without a source is refused.
        if (!entry.is_object() || !entry.contains("value") || !entry.contains("source") ||
            !entry["source"].is_string() || entry["source"].get_ref<const std::string&>().size() < 10)
            throw InputError(field, field + " must be {\"value\": ..., \"source\": \"where the framework sets it\"}");
        try {
            set_step_switch(p.defaults, name, entry["value"]);
        } catch (const InputError& e) {
            throw InputError(field, field + ": " + e.what());
        }
    }
    return p;
}

const std::vector<StackProfile>& stack_profiles() {
    static const std::vector<StackProfile> profiles = [] {  // immutable cache of compiled-in data
        std::vector<StackProfile> out;
        for (const nlohmann::json* file : presets_of("stacks")) {
            const std::string id = file->at("id").get<std::string>();
            StackProfile p = stack_from_json(id, *file);
            if (id == "generic")
                out.insert(out.begin(), std::move(p));
            else
                out.push_back(std::move(p));
        }
        if (out.empty() || out.front().id != "generic") out.insert(out.begin(), {"generic", "generic", {}});
        return out;
    }();
    return profiles;
}

const StackProfile& stack_profile(const std::string& id) {
    if (id.empty()) return stack_profiles().front();  // the planner's default: no string built per layout
    for (const StackProfile& p : stack_profiles())
        if (id == p.id) return p;
    std::string ids;
    for (const StackProfile& p : stack_profiles()) ids += (ids.empty() ? "" : ", ") + p.id;
    throw InputError("stack", "stack must be one of " + ids + ", got \"" + id.substr(0, 40) + "\"");
}

}  // namespace tally
