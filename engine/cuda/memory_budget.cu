/*
The training memory budget on the device: allocate what the engine says a training run keeps
resident per GPU (working weights, gradients, fp32 master weights, optimizer states) with
cudaMalloc, and compare what cudaMemGetInfo says disappeared with the engine's prediction.

This checks the static part of the budget (the bytes-per-parameter arithmetic of each recipe:
16 B/param for mixed-precision AdamW, 12 without a master copy, ...) against a real allocator, on
one GPU without sharding (gpus = 1, ZeRO 0). Activations are printed from the engine but not
allocated: a measured forward/backward of a transformer layer is not implemented here.

Build: part of the normal CMake build when nvcc is found, or scripts/bench/verify-gpu.sh.
Run:
  ./memory_budget                              largest model preset that fits, every recipe
  ./memory_budget --model gpt2-medium --recipes bf16_mixed_adamw,fp32_adamw
  ./memory_budget --json out.json
  ./memory_budget --quick                      gpt2-small, the first two recipes (what ctest runs)
Then, except in --quick, the other side of "will it fit?": the smallest model preset the engine says
exceeds the free memory is allocated buffer by buffer, and cudaMalloc must refuse it.
  ./memory_budget --self-test                  host only: engine predictions and the verdict rule
Without a CUDA device it prints "no CUDA device: skipped" and exits 0.
*/
#include <cuda_runtime.h>

#include <algorithm>
#include <cinttypes>
#include <string>
#include <vector>

#include "common.cuh"
#include "engine_bridge.h"

// ----------------------------------------------------------------------------
// CPU code reference: what the allocator should show for a set of buffers

// cudaMalloc hands out device memory in pages; allocations of 2 MiB and up are rounded up to a
// multiple of 2 MiB (the large-page granularity of the CUDA allocator on current GPUs; smaller
// ones share pages). The expected drop in free memory is the sum of the rounded sizes.
constexpr uint64_t kGranularity = 2ull << 20;
inline uint64_t round_up(uint64_t bytes, uint64_t to) { return (bytes + to - 1) / to * to; }

inline uint64_t expected_allocated(const std::vector<tally_cuda::BudgetBuffer>& buffers) {
    uint64_t sum = 0;
    for (const auto& b : buffers) sum += round_up(b.bytes, kGranularity);
    return sum;
}

// Verdict: the measured drop of free memory matches the rounded prediction within
// max(32 MiB, 1%): cudaMemGetInfo also moves with driver bookkeeping (page tables for the new
// mappings), which is small but not zero. A wrong bytes-per-parameter term is off by >= 1/16 of
// the total (the smallest class, 2 B of 16), far outside this.
inline uint64_t tolerance_bytes(uint64_t expected) { return std::max<uint64_t>(32ull << 20, expected / 100); }
inline bool within(uint64_t measured, uint64_t expected) {
    uint64_t diff = measured > expected ? measured - expected : expected - measured;
    return diff <= tolerance_bytes(expected);
}

// ----------------------------------------------------------------------------
// engine helpers

// The largest model preset whose heaviest recipe fits in `budget_bytes` (by static bytes).
static std::string pick_model(const std::vector<std::string>& recipes, uint64_t budget_bytes) {
    std::string best;
    uint64_t best_bytes = 0;
    for (const std::string& id : tally_cuda::model_preset_ids()) {
        uint64_t worst = 0;
        for (const auto& r : recipes) {
            tally_cuda::BudgetPrediction pred = tally_cuda::predict_budget({id, r});
            if (pred.ok) worst = std::max(worst, expected_allocated(pred.buffers));
        }
        if (worst > 0 && worst <= budget_bytes && worst > best_bytes) best = id, best_bytes = worst;
    }
    return best;
}

// The smallest model preset whose static bytes under `recipe` exceed `bytes`: the first one the
// engine says cannot fit ("" if every preset fits).
static std::string pick_smallest_over(const std::string& recipe, uint64_t bytes, uint64_t* its_bytes) {
    std::string best;
    uint64_t best_bytes = 0;
    for (const std::string& id : tally_cuda::model_preset_ids()) {
        tally_cuda::BudgetPrediction pred = tally_cuda::predict_budget({id, recipe});
        if (!pred.ok) continue;
        uint64_t b = expected_allocated(pred.buffers);
        if (b > bytes && (best.empty() || b < best_bytes)) best = id, best_bytes = b;
    }
    if (its_bytes) *its_bytes = best_bytes;
    return best;
}

static std::vector<std::string> split_csv(const char* s) {
    std::vector<std::string> out;
    std::string cur;
    for (const char* p = s;; p++) {
        if (*p == ',' || *p == 0) {
            if (!cur.empty()) out.push_back(cur);
            cur.clear();
            if (*p == 0) break;
        } else {
            cur += *p;
        }
    }
    return out;
}

// ----------------------------------------------------------------------------
// the report (schema tally.gpu-memory/1)

struct Row {
    std::string recipe;
    bool ran = false;
    std::string note;
    tally_cuda::BudgetPrediction pred;
    uint64_t expected = 0, measured = 0;
    bool ok = false;
};

// The other side of "will it fit?": a model the engine says exceeds free memory must be refused.
struct Overflow {
    bool ran = false;
    std::string note, model, recipe, refused_at;
    uint64_t predicted = 0, free_bytes = 0;
    bool refused = false, ok = false;
};

static std::string report_json(const std::string& gpu_name, uint64_t total, uint64_t free0, const std::string& model,
                               const std::vector<Row>& rows, const Overflow& over, bool all_ok) {
    std::string j = "{\n  \"schema\": \"tally.gpu-memory/1\",\n  \"program\": \"memory_budget\",\n";
    j += "  \"gpu\": {\"name\": " + json_str(gpu_name) + ", \"memory_bytes\": " + json_int((long long)total) +
         ", \"free_bytes_at_start\": " + json_int((long long)free0) + "},\n";
    j += "  \"model\": " + json_str(model) + ",\n  \"granularity_bytes\": " + json_int((long long)kGranularity) +
         ",\n  \"all_match\": " + json_bool(all_ok) + ",\n  \"recipes\": [\n";
    for (size_t i = 0; i < rows.size(); i++) {
        const Row& r = rows[i];
        j += "    {\"recipe\": " + json_str(r.recipe) + ", \"ran\": " + json_bool(r.ran);
        if (!r.note.empty()) j += ", \"note\": " + json_str(r.note);
        if (r.pred.ok) {
            j += ", \"predicted_static_bytes\": " + json_int((long long)r.pred.static_total_bytes) +
                 ", \"predicted_activation_bytes\": " + json_int((long long)r.pred.activation_bytes) +
                 ", \"buffers\": {";
            for (size_t k = 0; k < r.pred.buffers.size(); k++)
                j += (k ? ", " : "") + json_str(r.pred.buffers[k].name) + ": " +
                     json_int((long long)r.pred.buffers[k].bytes);
            j += "}";
        }
        if (r.ran)
            j += ", \"expected_allocated_bytes\": " + json_int((long long)r.expected) +
                 ", \"measured_bytes\": " + json_int((long long)r.measured) +
                 ", \"tolerance_bytes\": " + json_int((long long)tolerance_bytes(r.expected)) +
                 ", \"match\": " + json_bool(r.ok);
        j += std::string("}") + (i + 1 < rows.size() ? ",\n" : "\n");
    }
    j += "  ],\n  \"does_not_fit\": {\"ran\": " + json_bool(over.ran);
    if (!over.note.empty()) j += ", \"note\": " + json_str(over.note);
    if (over.ran)
        j += ", \"model\": " + json_str(over.model) + ", \"recipe\": " + json_str(over.recipe) +
             ", \"expected_allocated_bytes\": " + json_int((long long)over.predicted) +
             ", \"free_bytes\": " + json_int((long long)over.free_bytes) + ", \"refused\": " + json_bool(over.refused) +
             ", \"refused_at\": " + (over.refused ? json_str(over.refused_at) : std::string("null")) +
             ", \"match\": " + json_bool(over.ok);
    j += "}\n}\n";
    return j;
}

// ----------------------------------------------------------------------------
// host self-test

static int self_test() {
    SelfTest t;
    std::printf("memory_budget self-test (host only)\n");

    t.expect(round_up(1, kGranularity) == kGranularity && round_up(kGranularity, kGranularity) == kGranularity &&
                 round_up(kGranularity + 1, kGranularity) == 2 * kGranularity,
             "round_up to 2 MiB: 1 B -> 2 MiB, 2 MiB -> 2 MiB, 2 MiB + 1 -> 4 MiB");
    t.expect(within(1000ull << 20, 1010ull << 20) && !within(1000ull << 20, 1100ull << 20),
             "verdict: 10 MiB off 1010 MiB passes, 100 MiB off fails");
    t.expect(tolerance_bytes(100ull << 30) == (1ull << 30), "tolerance is 1% of 100 GiB = 1 GiB");

    // GPT-2 small has 124,439,808 parameters (tied embeddings; issue 3 and Radford et al. 2019's
    // released checkpoint). The engine's default recipe, bf16 mixed-precision AdamW with fp32
    // master weights, keeps 2 + 2 + 4 + 8 = 16 bytes per parameter.
    const uint64_t n = 124439808ull;
    tally_cuda::BudgetPrediction p = tally_cuda::predict_budget({"gpt2-small", "bf16_mixed_adamw"});
    t.expect(p.ok, ("engine predicts a budget for gpt2-small (" + p.error + ")").c_str());
    if (p.ok) {
        t.expect(p.buffers.size() == 4, "bf16 mixed AdamW allocates four buffers");
        uint64_t want[] = {2 * n, 2 * n, 4 * n, 8 * n};
        bool each = p.buffers.size() == 4;
        for (size_t i = 0; each && i < 4; i++) each = p.buffers[i].bytes == want[i];
        t.expect(each, "weights 2N, gradients 2N, master 4N, optimizer states 8N bytes");
        t.expect(p.static_total_bytes == 16 * n, "gpt2-small static total = 16 x 124,439,808 = 1,991,036,928 bytes");
        t.expect(p.activation_bytes > 0, "the engine also predicts activations (printed, not allocated)");
        t.expect(expected_allocated(p.buffers) >= p.static_total_bytes &&
                     expected_allocated(p.buffers) < p.static_total_bytes + 4 * kGranularity,
                 "rounding four buffers up to 2 MiB adds less than 8 MiB");
    }
    tally_cuda::BudgetPrediction bad = tally_cuda::predict_budget({"no-such-model", ""});
    t.expect(!bad.ok && !bad.error.empty(), "an unknown model gives the engine's error, not a budget");
    std::vector<std::string> recipes = tally_cuda::recipe_ids();
    t.expect(recipes.size() >= 3, "the engine lists at least three recipes");
    // Llama-2-7B has 6,738,415,616 parameters (Touvron et al. 2023; issue 3): 16 B/param is 107.8 GB,
    // the smallest preset above 80 GB (GPT-2 XL, 1.56e9 params, is 25 GB; Mistral 7B is 7.24e9 params)
    uint64_t over_bytes = 0;
    std::string over = pick_smallest_over("bf16_mixed_adamw", 80ull * 1000 * 1000 * 1000, &over_bytes);
    t.expect(
        over == "llama-2-7b" && over_bytes >= 16 * 6738415616ull && over_bytes < 16 * 6738415616ull + (16ull << 20),
        ("the smallest preset that does not fit 80 GB under 16 B/param is llama-2-7b (got " + over + ")").c_str());
    std::string pick = pick_model(recipes, 80ull * 1000 * 1000 * 1000);
    t.expect(!pick.empty(), ("a model preset fits an 80 GB budget under every recipe (picked " + pick + ")").c_str());
    // the report is valid JSON (a synthetic row: the writer is checked, not a measurement)
    if (p.ok) {
        std::vector<Row> rows(2);
        rows[0].recipe = "bf16_mixed_adamw", rows[0].pred = p, rows[0].ran = true;
        rows[0].expected = expected_allocated(p.buffers), rows[0].measured = rows[0].expected + (4ull << 20);
        rows[0].ok = within(rows[0].measured, rows[0].expected);
        rows[1].recipe = "x", rows[1].note = "engine: \"x\" is not a recipe";
        Overflow over;
        over.ran = true, over.model = "llama-2-7b", over.recipe = "bf16_mixed_adamw", over.refused = true;
        over.refused_at = "optimizer_states", over.ok = true, over.predicted = 107814649856ull;
        std::string j = report_json("Test GPU", 85000000000ull, 80000000000ull, "gpt2-small", rows, over, true), err;
        using tally_cuda::json_at;
        t.expect(json_at(j, "/schema", &err) == "\"tally.gpu-memory/1\"", ("report parses as JSON " + err).c_str());
        t.expect(json_at(j, "/recipes/0/predicted_static_bytes") == "1991036928" &&
                     json_at(j, "/recipes/0/buffers/master_weights") == "497759232",
                 "byte counts are exact integers (16 N and 4 N for gpt2-small)");
        t.expect(json_at(j, "/recipes/0/match") == "true", "4 MiB over the rounded prediction matches");
        t.expect(json_at(j, "/recipes/1/ran") == "false" && json_at(j, "/recipes/1/measured_bytes").empty(),
                 "a recipe that did not run has no measurement");
        t.expect(json_at(j, "/does_not_fit/refused_at") == "\"optimizer_states\"" &&
                     json_at(j, "/does_not_fit/match") == "true",
                 "the does-not-fit result names the buffer cudaMalloc refused");
    }
    return t.finish("memory_budget");
}

// ----------------------------------------------------------------------------
// device run

int main(int argc, char** argv) {
    Args args{argc, argv};
    if (args.has("--help")) {
        std::printf(
            "usage: memory_budget [--self-test] [--quick] [--model PRESET] [--recipes a,b,...] [--json PATH]\n");
        return 0;
    }
    if (args.has("--self-test")) return self_test();

    DeviceProbe dev = probe_device();
    if (!dev.available) return skip_no_device(dev);

    cudaCheck(cudaFree(nullptr));  // create the context now, so its own memory is not in the measurement
    size_t free0 = 0, total = 0;
    cudaCheck(cudaMemGetInfo(&free0, &total));

    std::vector<std::string> recipes =
        args.value("--recipes") ? split_csv(args.value("--recipes")) : tally_cuda::recipe_ids();
    if (args.has("--quick") && !args.value("--recipes") && recipes.size() > 2) recipes.resize(2);
    std::string model = args.value("--model") ? args.value("--model")
                        : args.has("--quick") ? std::string("gpt2-small")
                                              : pick_model(recipes, (uint64_t)(free0 * 0.8));
    if (model.empty()) {
        std::printf("no model preset fits in 80%% of the %.1f GiB free on %s; pass --model\n", free0 / 1073741824.0,
                    dev.prop.name);
        return 1;
    }
    std::printf("device: %s, %.2f GiB free of %.2f GiB\n", dev.prop.name, free0 / 1073741824.0, total / 1073741824.0);
    std::printf("model: %s (1 GPU, no sharding)\n\n", model.c_str());
    std::printf("%-24s %16s %16s %16s %8s  %s\n", "recipe", "engine bytes", "expected alloc", "measured", "diff",
                "verdict");

    std::vector<Row> rows;
    bool all_ok = true;
    for (const std::string& recipe : recipes) {
        Row row;
        row.recipe = recipe;
        row.pred = tally_cuda::predict_budget({model, recipe});
        if (!row.pred.ok) {
            row.note = "engine: " + row.pred.error;
            std::printf("%-24s  skipped (%s)\n", recipe.c_str(), row.note.c_str());
            rows.push_back(row);
            all_ok = false;
            continue;
        }
        row.expected = expected_allocated(row.pred.buffers);
        size_t free_now = 0;
        cudaCheck(cudaMemGetInfo(&free_now, &total));
        if (row.expected > free_now * 0.9) {
            row.note = "does not fit in 90% of free memory";
            std::printf("%-24s %16" PRIu64 "  skipped (%s)\n", recipe.c_str(), row.pred.static_total_bytes,
                        row.note.c_str());
            rows.push_back(row);
            continue;
        }
        size_t before = 0, after = 0;
        cudaCheck(cudaDeviceSynchronize());
        cudaCheck(cudaMemGetInfo(&before, &total));
        std::vector<void*> ptrs;
        for (const auto& b : row.pred.buffers) {
            void* p = nullptr;
            cudaCheck(cudaMalloc(&p, b.bytes));
            cudaCheck(cudaMemset(p, 0, b.bytes));  // touch every byte: nothing lazily uncommitted
            ptrs.push_back(p);
        }
        cudaCheck(cudaDeviceSynchronize());
        cudaCheck(cudaMemGetInfo(&after, &total));
        for (void* p : ptrs) cudaCheck(cudaFree(p));
        row.measured = before > after ? before - after : 0;
        row.ran = true;
        row.ok = within(row.measured, row.expected);
        all_ok = all_ok && row.ok;
        double diff = ((double)row.measured - (double)row.expected) / (double)row.expected;
        std::printf("%-24s %16" PRIu64 " %16" PRIu64 " %16" PRIu64 " %+7.2f%%  %s\n", recipe.c_str(),
                    row.pred.static_total_bytes, row.expected, row.measured, diff * 100, row.ok ? "ok" : "MISMATCH");
        for (const auto& b : row.pred.buffers) std::printf("    %-20s %16" PRIu64 " bytes\n", b.name.c_str(), b.bytes);
        std::printf("    (activations, not allocated: %" PRIu64 " bytes predicted)\n", row.pred.activation_bytes);
        rows.push_back(row);
    }
    // does-not-fit: the smallest preset the engine says exceeds free memory must be refused by cudaMalloc
    // (skipped in --quick: it briefly takes nearly all device memory)
    Overflow over;
    over.recipe = std::find(recipes.begin(), recipes.end(), "bf16_mixed_adamw") != recipes.end() ? "bf16_mixed_adamw"
                  : recipes.empty()                                                              ? ""
                                                                                                 : recipes[0];
    size_t free_now = 0;
    cudaCheck(cudaMemGetInfo(&free_now, &total));
    over.free_bytes = free_now;
    over.model =
        args.has("--quick") || over.recipe.empty() ? "" : pick_smallest_over(over.recipe, free_now, &over.predicted);
    if (args.has("--quick")) {
        over.note = "skipped in --quick";
    } else if (over.model.empty()) {
        over.note = "no model preset exceeds the free memory";
    } else {
        tally_cuda::BudgetPrediction pred = tally_cuda::predict_budget({over.model, over.recipe});
        std::vector<void*> ptrs;
        for (const auto& b : pred.buffers) {
            void* p = nullptr;
            cudaError_t err = cudaMalloc(&p, b.bytes);
            if (err != cudaSuccess) {
                (void)cudaGetLastError();  // an out-of-memory error is not sticky: clear it and go on
                over.refused = true;
                over.refused_at = b.name;
                break;
            }
            ptrs.push_back(p);
        }
        for (void* p : ptrs) cudaCheck(cudaFree(p));
        over.ran = true;
        over.ok = over.refused;
        all_ok = all_ok && over.ok;
        std::printf("\ndoes not fit: %s under %s needs %" PRIu64 " bytes, %zu free: cudaMalloc %s  %s\n",
                    over.model.c_str(), over.recipe.c_str(), over.predicted, free_now,
                    over.refused ? ("refused at " + over.refused_at).c_str() : "accepted every buffer",
                    over.ok ? "ok" : "MISMATCH");
    }
    if (!over.note.empty()) std::printf("\ndoes not fit: %s\n", over.note.c_str());

    std::printf("\n%s\n", all_ok ? "All results match" : "SOME BUDGETS DO NOT MATCH");

    if (const char* path = args.value("--json")) {
        std::string j = report_json(dev.prop.name, total, free0, model, rows, over, all_ok);
        if (!write_text_file(path, j)) return 1;
        std::printf("wrote %s\n", path);
    }
    return all_ok ? 0 : 1;
}
