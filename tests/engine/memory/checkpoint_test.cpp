// Tests of engine/src/memory/checkpoint.cpp: what an inference checkpoint and a resumable one hold.
#include <catch2/catch.hpp>

#include "tally/memory/checkpoint.h"
#include "tally/model/params.h"
#include "accounting_helpers.h"

TEST_CASE("a resumable bf16 mixed-precision checkpoint is 14 bytes per parameter, an inference one 2", "[checkpoint]") {
    // bf16 weights (2) + fp32 master (4) + Adam m and v in fp32 (8); gradients are not saved
    // (Rajbhandari et al. 2020, sec. 3.1: 2 + 2 + 12 bytes in training, less the 2 of the gradients).
    const tally::ModelConfig c = tally_test::preset("llama-2-7b");
    const tally::CheckpointSize s = tally::checkpoint_size(c, tally::find_recipe("bf16_mixed_adamw").recipe);
    const double n = static_cast<double>(tally::count_params(c).total);
    CHECK(s.params == n);
    CHECK(s.resume_bytes_per_param == 14);
    CHECK(s.inference_bytes == 2 * n);
    CHECK(s.master_bytes == 4 * n);
    CHECK(s.optimizer_bytes == 8 * n);
    CHECK(s.resume_bytes == 14 * n);
}

TEST_CASE("fp32 weights are their own master copy: a resumable fp32 AdamW checkpoint is 12 bytes per parameter",
          "[checkpoint]") {
    const tally::ModelConfig c = tally_test::preset("llama-2-7b");
    const tally::CheckpointSize s = tally::checkpoint_size(c, tally::find_recipe("fp32_adamw").recipe);
    CHECK(s.master_bytes == 0);
    CHECK(s.resume_bytes_per_param == 12);
    CHECK(s.inference_bytes == 4 * s.params);
}
