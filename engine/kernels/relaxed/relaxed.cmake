# The relaxed-SIMD GEMM module (wasm build only): tally-relaxed.wasm beside tally.wasm, built by clang-16
# and wasm-ld-16 because Emscripten 3.1.6 emits only the pre-standard relaxed-SIMD opcodes (browsers reject
# them) and its binaryen 108 rejects the final ones. Freestanding: no C library, no data, no stack, the
# engine's memory imported (see engine/kernels/relaxed/gemm_relaxed.cpp). Debian packages: clang-16, lld-16.
find_program(TALLY_CLANG16 clang-16)
find_program(TALLY_WASM_LD16 wasm-ld-16)
if(NOT TALLY_CLANG16 OR NOT TALLY_WASM_LD16)
  message(WARNING "tally: clang-16/wasm-ld-16 not found (apt-get install clang-16 lld-16): no relaxed-SIMD kernel; "
                  "the page falls back to kernel 5")
  return()
endif()
set(TALLY_RELAXED_SRC "${CMAKE_SOURCE_DIR}/engine/kernels/relaxed/gemm_relaxed.cpp")
set(TALLY_RELAXED_OBJ "${CMAKE_BINARY_DIR}/gemm_relaxed.o")
set(TALLY_RELAXED_WASM "${CMAKE_BINARY_DIR}/tally-relaxed.wasm")
add_custom_command(
  OUTPUT "${TALLY_RELAXED_WASM}"
  # -fno-jump-tables: a switch lowered to a table would be a data segment, written into the engine's memory.
  # -pre-RA-sched=source: keep the source order of the k loop (splat a row, two madds), so at most 15 vectors
  # are live (12 accumulators, 2 of B, 1 splat) and V8 need not spill; the default scheduler hoists all six
  # splats first (20 live).
  COMMAND "${TALLY_CLANG16}" --target=wasm32 -std=c++20 -O3 -msimd128 -mrelaxed-simd -ffreestanding -fno-exceptions
          -fno-rtti -fno-jump-tables -mllvm -pre-RA-sched=source -ffp-contract=off -Wall -Wextra -Werror -nostdlib
          -I "${CMAKE_SOURCE_DIR}/engine/kernels" -c "${TALLY_RELAXED_SRC}" -o "${TALLY_RELAXED_OBJ}"
  COMMAND "${TALLY_WASM_LD16}" --no-entry --import-memory -z stack-size=0 --strip-all
          "${TALLY_RELAXED_OBJ}" -o "${TALLY_RELAXED_WASM}"
  DEPENDS "${TALLY_RELAXED_SRC}" "${CMAKE_SOURCE_DIR}/engine/kernels/gemm_driver.h"
          "${CMAKE_SOURCE_DIR}/engine/kernels/gemm_relaxed_tiling.h"
  COMMENT "Building tally-relaxed.wasm (clang-16, final relaxed-SIMD encoding)"
  VERBATIM)
add_custom_target(tally_relaxed ALL DEPENDS "${TALLY_RELAXED_WASM}")
message(STATUS "tally: relaxed-SIMD module tally-relaxed.wasm (${TALLY_CLANG16})")
