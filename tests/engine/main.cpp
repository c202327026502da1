// The Catch2 runner for every tests/engine/*_test.cpp.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
