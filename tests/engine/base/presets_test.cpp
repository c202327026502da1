// Tests of engine/src/base/presets.cpp: every file in content/presets is compiled in and parses.
#include <catch2/catch.hpp>

#include <filesystem>

#include "tally/base/presets.h"
#include "test_paths.h"

TEST_CASE("every preset file in content/presets is compiled into the engine and parses") {
    namespace fs = std::filesystem;
    std::size_t files = 0;
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(tally_test::source_dir()) / "content" / "presets"))
        if (entry.is_regular_file() && entry.path().extension() == ".json") ++files;
    CHECK(tally::preset_sources().size() == files);
    const auto& all = tally::presets_json();
    std::size_t parsed = 0;  // models, hardware and the step-time error bands (step-bands)
    for (const auto& [kind, items] : all.items()) parsed += items.size();
    CHECK(parsed == files);
    CHECK(all.contains("step-bands"));
    for (const auto& source : tally::preset_sources()) CHECK(tally::find_preset(source.kind, source.id) != nullptr);
    CHECK(tally::find_preset("models", "no-such-model") == nullptr);
}
