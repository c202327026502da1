# Step-time and planner benchmark (native); the wasm figure comes from step_bench.mjs.
add_executable(tally_step_bench "${CMAKE_CURRENT_SOURCE_DIR}/step_bench.cpp")
target_link_libraries(tally_step_bench PRIVATE tally)
set_target_properties(tally_step_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}")
