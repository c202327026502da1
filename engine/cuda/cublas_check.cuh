// cuBLAS status check shared by the programs that call cuBLAS (llm.c's cublasCheck pattern).
#pragma once

#include <cublas_v2.h>

#include <cstdio>
#include <cstdlib>

#define cublasCheck(status) cublas_check((status), __FILE__, __LINE__)
inline void cublas_check(cublasStatus_t status, const char* file, int line) {
    if (status != CUBLAS_STATUS_SUCCESS) {
        std::fprintf(stderr, "[cuBLAS ERROR] %d at %s:%d\n", (int)status, file, line);
        std::exit(EXIT_FAILURE);
    }
}
