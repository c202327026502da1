# Accounting micro-benchmark (native only): one memory budget + FLOPs evaluation, in microseconds.
add_executable(tally_accounting_bench "${CMAKE_CURRENT_SOURCE_DIR}/accounting_bench.cpp")
target_link_libraries(tally_accounting_bench PRIVATE tally)
set_target_properties(tally_accounting_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}")
# Smoke run only (one short sample); the figure is measured by hand, not asserted in tests.
add_test(NAME accounting_bench_smoke COMMAND tally_accounting_bench --samples 1 --min-sample-ms 1)
