// libFuzzer target for the model config loaders (Hugging Face config.json and tally config objects)
// and everything downstream of a loaded config: parameter counts, FLOPs, the memory budget and the
// KV cache. Bad input must end in tally::InputError; any other exception, a sanitizer report or an
// abort is a bug. Build and run: see engine/fuzz/CMakeLists.txt.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/compute/flops.h"
#include "tally/model/hf_config.h"
#include "tally/memory/kvcache.h"
#include "tally/memory/memory.h"
#include "tally/model/model.h"
#include "tally/model/params.h"

namespace {

void exercise(const tally::ModelConfig& c, std::uint64_t seed) {
    (void)tally::count_params(c);
    tally::FlopsInput in;
    in.seq = 1 + static_cast<std::int64_t>(seed % 65536);
    in.attention = (seed & 1) ? tally::AttentionFlops::Causal : tally::AttentionFlops::Full;
    in.recompute = static_cast<tally::Recompute>((seed >> 1) % 3);
    in.flash_attention = (seed >> 3) & 1;
    (void)tally::count_flops(c, in);
    tally::TrainingSetup st;
    st.seq = in.seq;
    st.micro_batch = 1 + static_cast<std::int64_t>((seed >> 4) % 8);
    st.tp = 1 + static_cast<std::int64_t>((seed >> 8) % 8);
    st.pp = 1 + static_cast<std::int64_t>((seed >> 12) % 4);
    st.gpus = st.tp * st.pp * (1 + static_cast<std::int64_t>((seed >> 16) % 16));
    st.zero = static_cast<int>((seed >> 20) % 4);
    st.sequence_parallel = (seed >> 22) & 1;
    st.recompute = in.recompute;
    st.flash_attention = in.flash_attention;
    st.dropout = (seed >> 23) & 1;
    st.recipe = tally::recipes()[(seed >> 24) % tally::recipes().size()].recipe;
    try {
        (void)tally::memory_budget(c, st);
    } catch (const tally::InputError&) {}
    try {
        (void)tally::kv_cache(c, in.seq, st.micro_batch, tally::DType::BF16, tally::DType::BF16);
    } catch (const tally::InputError&) {}
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::uint64_t seed = 1469598103934665603ull;  // FNV-1a of the input picks the setup
    for (unsigned char ch : text) seed = (seed ^ ch) * 1099511628211ull;
    try {
        exercise(tally::load_hf_config_text(text), seed);
    } catch (const tally::InputError&) {}
    // The same bytes as a tally config object.
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_discarded()) {
        try {
            exercise(tally::resolve_model(nlohmann::json{{"model", j}}), seed);
        } catch (const tally::InputError&) {}
    }
    return 0;
}
