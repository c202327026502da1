// Where the tests find the source tree and the built CLI. Defined in test_paths.cpp, the one test source that
// is compiled with these paths: every other test object is the same whatever folder the tree is cloned into,
// so a compiler cache (ccache, used by scripts/lib.sh when installed) serves a fresh clone from an earlier build.
#pragma once

namespace tally_test {
const char* source_dir();  // the repository root (TALLY_SOURCE_DIR)
const char* cli_path();    // the built `tally` CLI (TALLY_CLI_PATH)
}  // namespace tally_test
