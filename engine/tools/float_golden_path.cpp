// Where tally_float_check finds float_golden.txt by default (--golden PATH overrides it). CMake passes the tree's
// path to this file only (engine/tools/CMakeLists.txt).
#ifndef TALLY_GOLDEN_PATH
#define TALLY_GOLDEN_PATH "engine/tools/float_golden.txt"
#endif

const char* tally_float_golden_path() { return TALLY_GOLDEN_PATH; }
