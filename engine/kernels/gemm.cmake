# Per-source flags of the GEMM ladder (included by the top-level CMakeLists after the `tally_kernels`
# target exists). Only the kernel files get ISA flags; the rest of the engine keeps the portable
# defaults so native and wasm give the same doubles. All rungs get the same flags, so they differ
# only in their code.
# TALLY_GEMM_NATIVE_ISA is set in the options block of the top-level CMakeLists.txt.

set(TALLY_GEMM_KERNEL_SOURCES
    "${CMAKE_SOURCE_DIR}/engine/kernels/gemm_loops.cpp"
    "${CMAKE_SOURCE_DIR}/engine/kernels/gemm_simd.cpp")

if(TALLY_WASM)
  # No exceptions in the kernel files: with -fexceptions every call that may throw from a frame with a
  # destructor (the micro-kernel inside the packed driver, ~10^5 calls per 1024^3 GEMM) goes through
  # Emscripten's JS invoke_* trampoline. The kernels never throw; errors are raised outside them.
  set_property(SOURCE ${TALLY_GEMM_KERNEL_SOURCES} APPEND PROPERTY COMPILE_OPTIONS -fno-exceptions)
endif()

if(NOT TALLY_WASM)
  # simd-mt (engine/kernels/gemm.cpp) uses std::thread.
  find_package(Threads REQUIRED)
  target_link_libraries(tally_kernels PUBLIC Threads::Threads)
  if(TALLY_GEMM_NATIVE_ISA)
    include(CheckCXXCompilerFlag)
    check_cxx_compiler_flag(-march=native TALLY_HAS_MARCH_NATIVE)
  endif()
  if(TALLY_GEMM_NATIVE_ISA AND TALLY_HAS_MARCH_NATIVE)
    # gemm_simd.cpp picks AVX-512F if the build machine has it, else AVX2+FMA, else the portable
    # vector-extension kernel, from the compiler's predefined macros.
    set_property(SOURCE ${TALLY_GEMM_KERNEL_SOURCES} APPEND PROPERTY COMPILE_OPTIONS -march=native)
    message(STATUS "tally: GEMM kernels built with -march=native")
  else()
    message(STATUS "tally: GEMM kernels built portable (SSE2 baseline, GCC vector extensions)")
  endif()
endif()
