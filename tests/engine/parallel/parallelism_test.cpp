// Tests of the placement options of the training memory budget (memory.cpp): context parallelism, HSDP, CPU
// offload of the optimizer states and parameters, and expert parallelism folded over tensor and data ranks.
#include <catch2/catch.hpp>

#include <string>

#include "accounting_helpers.h"
#include "tally/api.h"
#include "tally/memory/fit.h"
#include "tally/memory/memory.h"
#include "tally/model/params.h"

using tally::memory_budget;
using tally::MemoryBudget;
using tally::TrainingSetup;
using tally_test::error_field;
using tally_test::error_message;
using tally_test::preset;

namespace {

// One activation term's bytes by id (0 when the budget has no such term).
std::uint64_t term_bytes(const MemoryBudget& m, const std::string& id) {
    for (const auto& t : m.activations.terms)
        if (id == t.id) return t.bytes;
    return 0;
}

std::uint64_t states(const MemoryBudget& m) { return m.bytes.total - m.bytes.activations; }

}  // namespace

TEST_CASE("context parallelism: a Llama-2-7B layer at seq 8192 on cp 2 holds 16sbh + 6sbf + 4asb of s = 4096") {
    // Derived by hand (no published per-GPU figure): with FlashAttention and no dropout a Llama layer keeps the
    // two norm inputs, the two norm outputs, Q, K, V and the attention output (8 × 2sbh), the SwiGLU gate, up and
    // down inputs (3 × 2sbf) and the fp32 log-sum-exp (4asb). Ring attention gives each of the cp GPUs s/cp
    // positions (Liu et al. 2023, arXiv:2310.01889; Megatron-Core context parallel docs), so s = 8192 / 2:
    // 16·4096·4096 + 6·4096·11008 + 4·32·4096 = 268,435,456 + 270,532,608 + 524,288 = 539,492,352 bytes.
    const auto c = preset("llama-2-7b");
    TrainingSetup st;
    st.seq = 8192;
    st.flash_attention = true;
    st.gpus = 2;
    st.cp = 2;
    const MemoryBudget m = memory_budget(c, st);
    CHECK(m.activations.per_layer_bytes == 539'492'352);
    CHECK(m.dp == 1);
    // The ring's buffers: the K, V block computed on and the one received, each with its dK, dV in the backward:
    // 4 · 2 B · 4096 · 1 · 32 heads · (128 + 128) = 268,435,456 bytes, once (one layer's attention at a time).
    CHECK(term_bytes(m, "ring_kv_buffers") == 268'435'456);
    // Everything else is the cp = 1 budget at seq 4096: the same layer bytes, logits over 4096 positions.
    TrainingSetup half = st;
    half.seq = 4096;
    half.cp = 1;
    half.gpus = 1;
    const MemoryBudget h = memory_budget(c, half);
    CHECK(h.activations.per_layer_bytes == m.activations.per_layer_bytes);
    CHECK(m.bytes.activations == h.bytes.activations + 268'435'456);
    CHECK(term_bytes(h, "ring_kv_buffers") == 0);
    // The weights are whole on each cp GPU (cp splits the sequence, not the layers).
    CHECK(m.bytes.weights == h.bytes.weights);
}

TEST_CASE("context parallelism: gpus = tp·pp·cp·dp, and ZeRO shards over the dp·cp GPUs holding the same weights") {
    // Megatron-Core reduces gradients and shards its distributed optimizer over the data-parallel group with context
    // parallelism (dp·cp ranks). 16 GPUs, tp 2, cp 4: dp = 16 / 8 = 2, the states split 8 ways.
    const auto c = preset("llama-2-7b");
    TrainingSetup st;
    st.seq = 8192;
    st.flash_attention = true;
    st.gpus = 16;
    st.tp = 2;
    st.cp = 4;
    st.zero = 1;
    const MemoryBudget m = memory_budget(c, st);
    CHECK(m.dp == 2);
    CHECK(m.shard_group == 8);
    CHECK(m.params_optimizer == (m.params_on_gpu + 7) / 8);
    // A global batch counts sequences: micro_batch · dp, not · cp (the cp GPUs share each sequence).
    st.global_batch = 6;
    CHECK(memory_budget(c, st).grad_accum_steps == 3);
}

TEST_CASE("context parallelism refuses cp that does not cut the sequence, names cp and lists the allowed values") {
    const auto c = preset("llama-2-7b");
    TrainingSetup st;
    st.seq = 24;
    st.flash_attention = true;
    st.gpus = 8;
    // Causal load balancing cuts each sequence into 2·cp chunks: 2·cp must divide 24, so cp in {1, 2, 3, 4, 6, 12}.
    st.cp = 8;
    CHECK(error_field([&] { memory_budget(c, st); }) == "cp");
    CHECK(error_message([&] { memory_budget(c, st); }).find("{1, 2, 3, 4, 6, 12}") != std::string::npos);
    // Without load balancing cp only needs to divide seq: 8 | 24.
    st.cp_load_balance = false;
    CHECK(memory_budget(c, st).activations.layers == 32);
    st.cp = 5;
    st.gpus = 5;
    CHECK(error_message([&] { memory_budget(c, st); }).find("{1, 2, 3, 4, 6, 8, 12, 24}") != std::string::npos);
    // gpus must be a multiple of tp·pp·cp.
    st.cp = 4;
    st.gpus = 6;
    CHECK(error_field([&] { memory_budget(c, st); }) == "gpus");
    CHECK(error_message([&] { memory_budget(c, st); }).find("tp·pp·cp = 4") != std::string::npos);
    // Ring attention is blockwise: without FlashAttention the s×s scores would be stored.
    st.gpus = 4;
    st.flash_attention = false;
    CHECK(error_field([&] { memory_budget(c, st); }) == "cp");
    st.flash_attention = true;
    st.cp = 0;
    CHECK(error_field([&] { memory_budget(c, st); }) == "cp");
    st.cp = 25;
    CHECK(error_field([&] { memory_budget(c, st); }) == "cp");
}

TEST_CASE("HSDP: 16 GPUs sharding in groups of 8 hold the states of an 8-GPU ZeRO-3, not of a 16-GPU one") {
    // PyTorch FSDP HYBRID_SHARD (FSDP2: a 2-D mesh, replicate × shard): full sharding inside each group of
    // shard_group GPUs, replicas across groups. Llama-2-7B, N = 6,738,415,616 = 8 · 842,301,952: the bf16 mixed
    // AdamW states (2 + 2 + 4 + 8 = 16 B) of 842,301,952 parameters are 13,476,831,232 bytes per GPU.
    const auto c = preset("llama-2-7b");
    TrainingSetup st;
    st.gpus = 16;
    st.zero = 3;
    st.shard_group = 8;
    const MemoryBudget m = memory_budget(c, st);
    CHECK(m.params_weights == 842'301'952);
    CHECK(states(m) == 16 * std::uint64_t{842'301'952});
    CHECK(m.shard_group == 8);
    TrainingSetup eight = st;
    eight.gpus = 8;
    eight.shard_group = 0;
    CHECK(states(memory_budget(c, eight)) == states(m));
    TrainingSetup full = st;
    full.shard_group = 0;
    CHECK(states(memory_budget(c, full)) == states(m) / 2);  // 16 · N / 16
    // shard_group = dp is plain ZeRO.
    st.shard_group = 16;
    CHECK(states(memory_budget(c, st)) == states(memory_budget(c, full)));
}

TEST_CASE("HSDP refuses a shard group that does not divide dp, naming shard_group and the allowed sizes") {
    const auto c = preset("llama-2-7b");
    TrainingSetup st;
    st.gpus = 12;
    st.zero = 3;
    st.shard_group = 5;
    CHECK(error_field([&] { memory_budget(c, st); }) == "shard_group");
    CHECK(error_message([&] { memory_budget(c, st); }).find("{1, 2, 3, 4, 6, 12}") != std::string::npos);
    st.shard_group = 24;
    CHECK(error_field([&] { memory_budget(c, st); }) == "shard_group");
    st.shard_group = -1;
    CHECK(error_field([&] { memory_budget(c, st); }) == "shard_group");
    // Sharding needs a ZeRO stage.
    st.shard_group = 4;
    st.zero = 0;
    CHECK(error_field([&] { memory_budget(c, st); }) == "shard_group");
    // MoE: each replica must hold every expert, so the replicas must divide the expert data-parallel group.
    const auto moe = preset("mixtral-8x7b");
    TrainingSetup e;
    e.gpus = 8;
    e.zero = 1;
    e.ep = 8;  // edp = 8 / 8 = 1
    e.shard_group = 4;
    CHECK(error_field([&] { memory_budget(moe, e); }) == "shard_group");
    e.ep = 4;  // edp = 2: 2 replicas of 4, each holding the experts over 4 GPUs, expert shard group 1
    CHECK(memory_budget(moe, e).expert_shard_group == 1);
}

TEST_CASE("offload: DeepSpeed's ZeRO-2 and ZeRO-3 estimators with offload reproduce on the GPU and the host") {
    // DeepSpeed, estimate_zero2_model_states_mem_needs (cpu_offload): GPU 2N (the fp16 parameters), the host 16N
    // per node (fp32 master, Adam m, v and fp32 gradients: ZeRO-Offload, Ren et al. 2021, arXiv:2101.06840, sec.
    // 4.1); estimate_zero3_model_states_mem_needs: GPU 4 × largest layer + 2N/gpus (offload_optimizer) or 4 ×
    // largest layer alone (also offload_param), host 16N or 18N per node. DeepSpeed's CPU column is the larger of
    // these and 4 B × GPUs per node (each process's fp32 copy while loading), times 1.5; tally counts training.
    const auto c = preset("llama-2-7b");
    const std::uint64_t n = 6'738'415'616, largest = 32'000ull * 4096;
    TrainingSetup st;
    st.gpus = 8;
    st.zero = 2;
    st.offload_optimizer = true;
    MemoryBudget m = memory_budget(c, st);
    CHECK(states(m) == 2 * n);  // 13,476,831,232 B: the docs' "5.31GB per GPU" for 2851M parameters is 2N too
    CHECK(m.bytes.gradients == 0);
    CHECK(m.bytes.master_weights == 0);
    CHECK(m.bytes.optimizer_states == 0);
    CHECK(m.host.total * 8 == 16 * n);
    CHECK(m.host.gradients == 4 * n / 8);  // the fp32 gradient partition the CPU Adam reads
    // ZeRO 3 with the ZeRO-3 buffer as DeepSpeed counts it (4 B × the largest layer).
    st.zero = 3;
    st.zero3_gather = TrainingSetup::Zero3Gather::Module;
    m = memory_budget(c, st);
    CHECK(states(m) == 4 * largest + 2 * n / 8);
    CHECK(m.host.total * 8 == 16 * n);
    st.offload_params = true;
    m = memory_budget(c, st);
    CHECK(states(m) == 4 * largest);
    CHECK(m.bytes.weights == 0);
    CHECK(m.host.total * 8 == 18 * n);
    // ZeRO 1 all-reduces the whole gradient on the GPU before its partition leaves.
    TrainingSetup one;
    one.gpus = 8;
    one.zero = 1;
    one.offload_optimizer = true;
    m = memory_budget(c, one);
    CHECK(m.bytes.gradients == 2 * n);
    CHECK(states(m) == 4 * n);
    // An fp32 accumulation buffer is the host's gradient copy, not a second one: still 16 B on the host.
    one.recipe.grad_accum = tally::DType::FP32;
    m = memory_budget(c, one);
    CHECK(m.host.gradients == 0);
    CHECK(m.host.total * 8 == 16 * n);
}

TEST_CASE("offload refuses the stages DeepSpeed cannot offload, naming the field") {
    const auto c = preset("llama-2-7b");
    TrainingSetup st;
    st.offload_optimizer = true;
    CHECK(error_field([&] { memory_budget(c, st); }) == "offload");
    st.zero = 2;
    st.offload_params = true;
    CHECK(error_field([&] { memory_budget(c, st); }) == "offload");
    st.zero = 3;
    CHECK(error_field([&] { memory_budget(c, st); }).empty());
}

TEST_CASE("expert parallelism folded over tp: Mixtral on 8 GPUs with tp 2 takes ep 8, one whole expert per GPU") {
    // Megatron-Core MoE parallel folding (Liu et al. 2025, arXiv:2504.14960; --expert-tensor-parallel-size): the
    // expert layout ep·etp·edp spans the tp·cp·dp GPUs of a stage. Mixtral-8x7B routes over 8 experts of
    // 3·4096·14336 = 176,160,768 parameters per layer, 32 layers: 45,097,156,608 routed parameters; ep 8 with
    // etp 1 leaves 1/8 of them on each GPU, 5,637,144,576 (the dense part stays split by tp 2).
    const auto c = preset("mixtral-8x7b");
    const std::uint64_t routed = 8ull * 32 * 176'160'768;
    TrainingSetup st;
    st.gpus = 8;
    st.tp = 2;
    st.zero = 1;
    st.ep = 8;
    // Before folding ep had to divide dp = 4; with etp = tp it still does.
    CHECK(error_field([&] { memory_budget(c, st); }) == "ep");
    st.etp = 1;
    MemoryBudget m = memory_budget(c, st);
    CHECK(m.expert_params_on_gpu == routed / 8);
    CHECK(m.expert_dp == 1);
    // The old layout (ep 4, experts split by tp 2) holds the same expert share, replicated over edp = 1.
    TrainingSetup old = st;
    old.ep = 4;
    old.etp = 0;
    const MemoryBudget o = memory_budget(c, old);
    CHECK(o.expert_params_on_gpu == routed / 8);
    CHECK(o.params_on_gpu == m.params_on_gpu);
    // ep 2, etp 1: 4 experts whole on each GPU, replicated over edp = 8 / 2 = 4 GPUs that ZeRO shards them over.
    st.ep = 2;
    m = memory_budget(c, st);
    CHECK(m.expert_params_on_gpu == routed / 2);
    CHECK(m.expert_dp == 4);
    CHECK(m.params_optimizer == (m.params_on_gpu - routed / 2 + 3) / 4 + routed / 2 / 4);
    // Folded below tp, each GPU computes etp/tp of the expert rows: e·k·s·b·h/2 dispatched-token bytes.
    CHECK(term_bytes(m, "expert_input") == 2ull * 2 * 2048 * 4096 / 2);
}

TEST_CASE("folded expert layouts that do not divide the ranks are refused, naming ep or etp") {
    const auto c = preset("mixtral-8x7b");
    TrainingSetup st;
    st.gpus = 8;
    st.tp = 2;
    st.ep = 8;
    st.etp = 2;  // 16 does not divide tp·dp = 8
    CHECK(error_field([&] { memory_budget(c, st); }) == "etp");
    CHECK(error_message([&] { memory_budget(c, st); }).find("tp·cp·dp = 8") != std::string::npos);
    st.etp = 9;
    CHECK(error_field([&] { memory_budget(c, st); }) == "etp");
    st.etp = 1;
    st.ep = 3;  // ep must divide the 8 experts
    CHECK(error_field([&] { memory_budget(c, st); }) == "ep");
    // etp means nothing without routed experts.
    TrainingSetup dense;
    dense.gpus = 2;
    dense.tp = 2;
    dense.etp = 1;
    CHECK(error_field([&] { memory_budget(preset("llama-2-7b"), dense); }) == "etp");
}

TEST_CASE("the defaults (cp 1, shard_group dp, no offload, etp tp) leave the budget as it was") {
    const auto c = preset("mixtral-8x7b");
    TrainingSetup st;
    st.gpus = 16;
    st.tp = 2;
    st.zero = 3;
    st.ep = 4;
    const MemoryBudget a = memory_budget(c, st);
    TrainingSetup explicit_defaults = st;
    explicit_defaults.cp = 1;
    explicit_defaults.shard_group = 8;
    explicit_defaults.etp = 2;
    const MemoryBudget b = memory_budget(c, explicit_defaults);
    CHECK(a.bytes.total == b.bytes.total);
    CHECK(a.params_weights == b.params_weights);
    CHECK(a.host.total == 0);
    CHECK(a.expert_dp == 2);
}

TEST_CASE("step_time, plan and finetune refuse the placement options they do not model by name, never ignore them") {
    const nlohmann::json placements[] = {{{"cp", 2}}, {{"shard_group", 1}}, {{"offload", "optimizer"}}, {{"etp", 2}}};
    const nlohmann::json bases[] = {{{"method", "step_time"}, {"model", "llama-2-7b"}, {"hardware", "h100-sxm"}},
                                    {{"method", "plan"}, {"model", "llama-2-7b"}, {"hardware", "h100-sxm"}},
                                    {{"method", "finetune"}, {"model", "llama-2-7b"}}};
    for (const auto& base : bases)
        for (const auto& placement : placements) {
            // step_time and plan model context parallelism (step_cp.h, tests/engine/step/step_cp_test.cpp).
            if (placement.contains("cp") && base["method"] != "finetune") continue;
            nlohmann::json args = base;
            args.erase("method");
            args.update(placement);
            const std::string field = placement.begin().key();
            INFO(base["method"] << " " << placement.dump());
            CHECK(error_field([&] { tally::api::invoke(base["method"].get<std::string>(), args); }) == field);
        }
}

TEST_CASE("min_gpus searches only layouts that divide: multiples of ep for experts, of tp·pp·cp with cp") {
    // Before, the search tried dp = 1 first and failed on "ep must divide dp" for any ep > 1.
    const auto c = preset("mixtral-8x7b");
    TrainingSetup st;
    st.zero = 3;
    st.ep = 4;
    const std::uint64_t capacity = 80'000'000'000;
    const std::int64_t n = tally::min_gpus(c, st, capacity, 1 << 20);
    REQUIRE(n > 4);
    CHECK(n % 4 == 0);
    st.gpus = n;
    CHECK(memory_budget(c, st).bytes.total <= capacity);
    st.gpus = n - 4;
    CHECK(memory_budget(c, st).bytes.total > capacity);
    // Context parallel: the GPU count is a multiple of cp, and ZeRO shards over dp·cp.
    TrainingSetup cp;
    cp.seq = 32768;
    cp.flash_attention = true;
    cp.zero = 3;
    cp.cp = 4;
    const std::int64_t m = tally::min_gpus(preset("llama-2-7b"), cp, capacity, 1 << 20);
    CHECK(m % 4 == 0);
    cp.gpus = m;
    CHECK(memory_budget(preset("llama-2-7b"), cp).bytes.total <= capacity);
}
