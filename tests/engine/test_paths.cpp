// The two paths of test_paths.h; CMakeLists.txt passes TALLY_SOURCE_DIR and TALLY_CLI_PATH to this file only.
#include "test_paths.h"

namespace tally_test {
const char* source_dir() { return TALLY_SOURCE_DIR; }
const char* cli_path() { return TALLY_CLI_PATH; }
}  // namespace tally_test
