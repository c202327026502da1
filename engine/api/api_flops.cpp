// API of the FLOP count (flops.h): forward and training FLOPs by component, beside 6ND.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/compute/flops.h"
#include "tally/model/model.h"
#include "tally/model/params.h"

namespace tally::api {

json flops_json(const ModelConfig& c, const FlopsInput& in, const FlopsResult& r, std::optional<double> tokens_arg) {
    const double tokens = tokens_arg.value_or(1.0);
    const double s = static_cast<double>(in.seq);
    json terms = json::array();
    for (const FlopsTerm& t : r.terms) {
        terms.push_back(TALLY_MEMBERS(t, id, name, formula, formula_per_token, forward_per_sequence));
        terms.back()["forward_per_token"] = t.forward_per_sequence / s;
        terms.back()["share"] = t.forward_per_sequence / r.forward_per_sequence;
    }
    const ParamCount p = count_params(c);
    const json notes = flops_notes(c, in, r);
    const double six_nd = r.six_n * tokens;
    const double model = r.model_per_token * tokens;
    const double recompute = r.recompute_per_token * tokens;
    json out{{"model", model_to_json(c)},
             {"attention_flops", to_string(in.attention)},
             {"recompute", to_string(in.recompute)},
             {"recompute_ops", recompute_ops_to_string(in.recompute_ops)},
             {"params_total", p.total},
             {"params_active", p.active},
             {"components", terms},
             {"per_token",
              {{"forward", r.forward_per_token},
               {"model", r.model_per_token},
               {"recompute", r.recompute_per_token},
               {"capacity", r.capacity_per_token},
               {"training", r.training_per_token},
               {"six_n", r.six_n},
               {"six_n_active", r.six_n_active}}},
             {"tokens", tokens},
             {"six_nd", six_nd},
             {"six_nd_active", r.six_n_active * tokens},
             {"model_flops", model},
             {"recompute_flops", recompute},
             {"exact", model + recompute},
             {"ratio_exact_to_six_nd", model / six_nd},
             {"notes", notes},
             {"forward_per_sequence", r.forward_per_sequence},
             {"forward_per_token", r.forward_per_token}};
    out.update(TALLY_MEMBERS(in, seq, recompute_layers, flash_attention));
    // Encoder-decoder: the target length the decoder ran over (per-token figures are per input token).
    if (c.is_encoder_decoder()) out["decoder_seq"] = in.decoder_seq > 0 ? in.decoder_seq : in.seq;
    if (c.is_moe()) out["ratio_exact_to_six_nd_active"] = model / (r.six_n_active * tokens);
    // MTP modules run in training but stay out of the headline figures, as their parameters stay out of N.
    if (c.mtp_modules > 0) out["per_token"]["mtp_forward"] = r.mtp_forward_per_token;
    if (tokens_arg)
        add_chinchilla(out, static_cast<double>(c.is_moe() ? p.active : p.total), tokens,
                       c.is_moe() ? "active" : "total");
    return out;
}

namespace {

constexpr Arg kTokens{
    "tokens", arg::Num, "tokens", 0, arg::kNo, "none", "training tokens: totals for the run (absent: per token)",
    nullptr,  nullptr,  true};

json flops(const json& args) {
    const ModelConfig c = resolve_model(args);
    const FlopsInput in = flops_input(args, c);
    const FlopsResult r = count_flops(c, in);
    std::optional<double> tokens = optional_number_arg(args, kTokens.name);
    if (tokens) require_positive(kTokens.name, *tokens);
    return flops_json(c, in, r, tokens);
}

constexpr auto kFlopsArgs = join_args(arg::kModelArgs, arg::kFlopsArgs, std::array{kTokens});
constexpr std::array kFlopsOwnResult = std::to_array<Field>({
    {"model", "", "the resolved tally config"},
    {"seq", "tokens", "sequence length used"},
    {"components", "FLOP", "{id, name, formula, forward_per_sequence, forward_per_token, share} per term"},
    {"forward_per_sequence", "FLOP", "one forward pass over one sequence"},
    {"forward_per_token", "FLOP", "forward FLOPs per token"},
    {"per_token", "FLOP", "forward, model, recompute, capacity, training, six_n, six_n_active per token"},
    {"tokens", "tokens", "the tokens the totals are for (1 when absent)"},
    {"six_nd", "FLOP", "6 x parameters x tokens"},
    {"model_flops", "FLOP", "exact training FLOPs (forward + backward) of the model"},
    {"recompute_flops", "FLOP", "FLOPs spent recomputing activations"},
    {"exact", "FLOP", "model_flops + recompute_flops"},
    {"ratio_exact_to_six_nd", "", "model_flops / six_nd"},
    {"notes", "", "what the count includes and leaves out"},
    {"params_total", "parameters", "every parameter"},
    {"params_active", "parameters", "parameters a token uses (MoE: the routed experts it reaches)"},
    {"six_nd_active", "FLOP", "6 x active parameters x tokens"},
    {"ratio_exact_to_six_nd_active", "", "model_flops / six_nd_active"},
    {"attention_flops", "", "how the attention score FLOPs are counted"},
    {"flash_attention", "", "whether FlashAttention is assumed"},
    {"recompute", "", "the activation recomputation scheme"},
    {"recompute_layers", "layers", "layers recomputed"},
    {"recompute_ops", "", "the operations recomputed, if selective"},
});

constexpr auto kFlopsResult = join_args(kFlopsOwnResult, kChinchillaFields);
constexpr Method kMethods[] = {
    {"flops", flops, "forward and training FLOPs by component, beside 6ND", kFlopsArgs, kFlopsResult, true},
};

}  // namespace

std::span<const Method> flops_methods() { return kMethods; }

}  // namespace tally::api
