// Tests of engine/src/parallel/moe.cpp and of expert parallelism in the memory budget, FLOPs and step time.
#include <catch2/catch.hpp>

#include "accounting_helpers.h"
#include "tally/compute/flops.h"
#include "tally/memory/memory.h"
#include "tally/parallel/moe.h"
#include "tally/model/params.h"
#include "tally/step/step.h"

using tally::moe_layer;
using tally::MoeSetup;
using tally_test::error_field;
using tally_test::preset;

namespace {

// A top-1 router over 3 experts, as in Fedus et al. 2022 (Switch Transformer), Fig. 3.
tally::ModelConfig three_experts() {
    tally::ModelConfig c = preset("mixtral-8x7b");
    c.num_experts = 3;
    c.experts_per_token = 1;
    return c;
}

}  // namespace

// Fedus et al. 2022, Fig. 3: 6 tokens over 3 experts give each expert 2 slots at capacity factor 1.0 and
// 3 slots at 1.5; capacity = tokens per batch / experts × capacity factor (their eq. 3).
TEST_CASE("Switch Transformer's example: 6 tokens, 3 experts, capacity 2 at cf 1.0 and 3 at cf 1.5") {
    MoeSetup st;
    st.seq = 6;
    st.capacity_factor = 1.0;
    CHECK(moe_layer(three_experts(), st).expert_capacity == 2);
    st.capacity_factor = 1.5;
    const tally::MoeLayer m = moe_layer(three_experts(), st);
    CHECK(m.expert_capacity == 3);
    CHECK(m.expert_slots_per_gpu == 9);  // 3 experts × 3 slots: 1.5 × the 6 tokens
    CHECK(m.dropped_fraction_balanced == 0);
    st.capacity_factor = 0.5;
    CHECK(moe_layer(three_experts(), st).dropped_fraction_balanced == 0.5);
}

TEST_CASE("expert parallelism: each GPU holds E/ep experts and sends (ep-1)/ep of its rows both ways") {
    const tally::ModelConfig c = preset("mixtral-8x7b");  // 8 experts, top-2, h 4096
    MoeSetup st;
    st.seq = 4096;
    st.ep = 8;
    const tally::MoeLayer m = moe_layer(c, st);
    CHECK(m.local_experts == 1);
    CHECK(m.tokens_per_expert == 2.0 * 4096);  // balanced: k·s·b·ep/E
    // Dispatch + combine of 2·4096 rows of 4096 bf16 values, 7/8 of them to other GPUs.
    CHECK(m.all_to_all_bytes_forward == 2 * (2.0 * 4096) * 4096 * 2 * 7 / 8);
    CHECK(m.all_to_all_bytes_per_step_layer == 2 * m.all_to_all_bytes_forward);
    CHECK(m.router_params_per_layer == 8u * 4096);
    CHECK(m.router_activation_bytes == 4096u * 8 * 4 + 4096u * 2 * 8);
    st.ep = 1;
    CHECK(moe_layer(c, st).all_to_all_bytes_forward == 0);
    st.ep = 3;
    CHECK(error_field([&] { moe_layer(c, st); }) == "ep");
}

TEST_CASE("EP shards expert weights, and ZeRO shards expert states over dp/ep only") {
    const tally::ModelConfig c = preset("mixtral-8x7b");
    const tally::ParamCount p = count_params(c);
    const std::uint64_t experts = static_cast<std::uint64_t>(c.num_layers) *
                                  (p.per_layer_mlp - static_cast<std::uint64_t>(c.num_experts * c.hidden_size));
    tally::TrainingSetup st;
    st.gpus = 16;
    st.zero = 1;
    st.seq = 4096;
    st.ep = 8;
    const tally::MemoryBudget m = tally::memory_budget(c, st);
    CHECK(m.expert_dp == 2);
    CHECK(m.expert_params_on_gpu == experts / 8);
    CHECK(m.params_on_gpu == p.total - experts + experts / 8);
    const std::uint64_t dense = m.params_on_gpu - m.expert_params_on_gpu;
    CHECK(m.params_optimizer == (dense + 15) / 16 + (m.expert_params_on_gpu + 1) / 2);
    st.ep = 1;
    CHECK(tally::memory_budget(c, st).params_on_gpu == p.total);
    st.ep = 8;
    st.gpus = 4;  // dp 4: an EP group of 8 does not fit in it
    CHECK(error_field([&] { tally::memory_budget(c, st); }) == "ep");
}

TEST_CASE("a capacity factor scales the expert activations and the executed expert FLOPs") {
    const tally::ModelConfig c = preset("mixtral-8x7b");
    tally::TrainingSetup st;
    st.seq = 4096;
    const tally::MemoryBudget dropless = tally::memory_budget(c, st);
    st.capacity_factor = 2.0;
    const tally::MemoryBudget padded = tally::memory_budget(c, st);
    auto bytes = [](const tally::MemoryBudget& m, const std::string& id) {
        for (const auto& t : m.activations.terms)
            if (id == t.id) return t.bytes;
        return std::uint64_t{0};
    };
    CHECK(bytes(padded, "expert_input") == 2 * bytes(dropless, "expert_input"));
    CHECK(bytes(padded, "mlp_down_input") == 2 * bytes(dropless, "mlp_down_input"));
    CHECK(bytes(dropless, "router_probs") == 4096u * 8 * 4 + 4096u * 2 * 8);

    tally::FlopsInput in;
    in.seq = 4096;
    const tally::FlopsResult base = tally::count_flops(c, in);
    in.capacity_factor = 1.25;
    const tally::FlopsResult cf = tally::count_flops(c, in);
    const double expert_matmuls = 3.0 * 2 * 4096 * 14336 * 3 * 32;  // 3 passes · 2hf · 3 matrices · L, per slot
    CHECK(cf.capacity_per_token == Approx(expert_matmuls * 0.25 * 2).epsilon(1e-12));
    CHECK(cf.model_per_token == base.model_per_token);  // padding is not model work
    CHECK(error_field([&] {
              tally::FlopsInput dense;
              dense.capacity_factor = 1;
              tally::count_flops(preset("llama-2-7b"), dense);
          }) == "capacity_factor");
}

TEST_CASE("the step model times the all-to-all of expert parallelism and nothing for dense models") {
    const tally::ModelConfig c = preset("mixtral-8x7b");
    tally::StepLayout l;
    l.setup.gpus = 64;
    l.setup.tp = 2;
    l.setup.seq = 4096;
    l.setup.zero = 1;
    l.setup.global_batch = 256;
    auto ep_seconds = [&](std::int64_t ep) {
        l.setup.ep = ep;
        for (const auto& part : tally::step_time(c, tally::find_hardware("h100-sxm"), l).breakdown)
            if (std::string(part.id) == "ep_comm") return part.seconds;
        return -1.0;
    };
    CHECK(ep_seconds(1) == 0);
    const double in_node = ep_seconds(4), across = ep_seconds(8);  // tp·ep = 8 fits a node, 16 does not
    CHECK(in_node > 0);
    CHECK(across > in_node);
}
