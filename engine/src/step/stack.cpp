#include "tally/step/stack.h"

#include <cmath>
#include <string>

#include "tally/base/error.h"
#include "tally/base/presets.h"

namespace tally {

namespace {

using json = nlohmann::json;

constexpr const char* kAttentionNames[] = {"flash-attn-2", "cudnn-fused", "sdpa"};
constexpr const char* kCpNames[] = {"ring", "all-gather-overlap", "all-gather"};  // CpExchange's order

bool bool_of(std::string_view name, const json& v) {
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        if (s == "true" || s == "1") return true;
        if (s == "false" || s == "0") return false;
    }
    throw InputError(std::string(name), std::string(name) + " must be true or false");
}

double bytes_of(std::string_view name, const json& v, double high) {
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
int enum_of(std::string_view name, const json& v, const char* const (&names)[N], const char* listed) {
    if (v.is_string())
        for (std::size_t i = 0; i < N; ++i)
            if (v.get_ref<const std::string&>() == names[i]) return static_cast<int>(i);
    throw InputError(std::string(name), std::string(name) + " must be one of " + listed);
}

}  // namespace

void set_step_switch(StepSwitches& s, std::string_view name, const json& v) {
    constexpr double kMaxBucket = 1e15;  // beyond any model's gradient bytes or parameters
    if (name == "attention_kernel")
        s.attention =
            static_cast<AttentionKernel>(enum_of(name, v, kAttentionNames, "flash-attn-2, cudnn-fused, sdpa"));
    else if (name == "tp_comm_overlap")
        s.tp_comm_overlap = bool_of(name, v);
    else if (name == "fp8_tensorwise_sp_gather")
        s.fp8_tensorwise_sp_gather = bool_of(name, v);
    else if (name == "sp_batch_first")
        s.sp_batch_first = bool_of(name, v);
    else if (name == "cp_exchange")
        s.cp_exchange = static_cast<CpExchange>(enum_of(name, v, kCpNames, "all-gather, ring, all-gather-overlap"));
    else if (name == "cp_repeat_kv")
        s.cp_repeat_kv = bool_of(name, v);
    else if (name == "per_op_sac")
        s.per_op_sac = bool_of(name, v);
    else if (name == "eager_elementwise")
        s.eager_elementwise = bool_of(name, v);
    else if (name == "fsdp_keep_gathered_with_pp")
        s.fsdp_keep_gathered_with_pp = bool_of(name, v);
    else if (name == "grad_fp32")
        s.grad_sync.fp32 = bool_of(name, v);
    else if (name == "grad_reduce_after_backward")
        s.grad_sync.zero_after_backward = bool_of(name, v);
    else if (name == "tied_grad_after_backward")
        s.grad_sync.tied_after_backward = bool_of(name, v);
    else if (name == "bucket_bytes") {
        s.grad_sync.bucket_bytes = bytes_of(name, v, kMaxBucket);
        if (s.grad_sync.bucket_bytes < 1) throw InputError("bucket_bytes", "bucket_bytes must be at least 1 byte");
    } else if (name == "bucket_params")
        s.grad_sync.bucket_params = bytes_of(name, v, kMaxBucket);
    else if (name == "bucket_params_per_rank")
        s.grad_sync.bucket_params_per_rank = bytes_of(name, v, kMaxBucket);
    else if (name == "torch_grouped_mm")
        s.torch_grouped_mm = bool_of(name, v);
    else if (name == "expert_host_launches")
        s.expert_host_launches = bool_of(name, v);
    else if (name == "separate_qkv")
        s.separate_qkv = bool_of(name, v);
    else if (name == "pipeline_lockstep")
        s.pipeline_lockstep = bool_of(name, v);
    else if (name == "cost_balanced_stages")
        s.cost_balanced_stages = bool_of(name, v);
    else if (name == "logits_bytes")
        s.logits_bytes = bytes_of(name, v, 1024);
    else if (name == "eager_glu")
        s.eager_glu = bool_of(name, v);
    else
        throw InputError(std::string(name), "unknown step switch \"" + std::string(name).substr(0, 40) + "\"");
}

json step_switch_value(const StepSwitches& s, std::string_view name) {
    if (name == "attention_kernel") return kAttentionNames[static_cast<int>(s.attention)];
    if (name == "tp_comm_overlap") return s.tp_comm_overlap;
    if (name == "fp8_tensorwise_sp_gather") return s.fp8_tensorwise_sp_gather;
    if (name == "sp_batch_first") return s.sp_batch_first;
    if (name == "cp_exchange") return kCpNames[static_cast<int>(s.cp_exchange)];
    if (name == "cp_repeat_kv") return s.cp_repeat_kv;
    if (name == "per_op_sac") return s.per_op_sac;
    if (name == "eager_elementwise") return s.eager_elementwise;
    if (name == "fsdp_keep_gathered_with_pp") return s.fsdp_keep_gathered_with_pp;
    if (name == "grad_fp32") return s.grad_sync.fp32;
    if (name == "grad_reduce_after_backward") return s.grad_sync.zero_after_backward;
    if (name == "tied_grad_after_backward") return s.grad_sync.tied_after_backward;
    if (name == "bucket_bytes") return s.grad_sync.bucket_bytes;
    if (name == "bucket_params") return s.grad_sync.bucket_params;
    if (name == "bucket_params_per_rank") return s.grad_sync.bucket_params_per_rank;
    if (name == "torch_grouped_mm") return s.torch_grouped_mm;
    if (name == "expert_host_launches") return s.expert_host_launches;
    if (name == "separate_qkv") return s.separate_qkv;
    if (name == "pipeline_lockstep") return s.pipeline_lockstep;
    if (name == "cost_balanced_stages") return s.cost_balanced_stages;
    if (name == "logits_bytes") return s.logits_bytes;
    if (name == "eager_glu") return s.eager_glu;
    throw InputError(std::string(name), "unknown step switch \"" + std::string(name).substr(0, 40) + "\"");
}

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
        const auto& all = presets_json();
        if (all.contains("stacks"))
            for (const auto& file : all["stacks"]) {
                const std::string id = file.at("id").get<std::string>();
                StackProfile p = stack_from_json(id, file);
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
