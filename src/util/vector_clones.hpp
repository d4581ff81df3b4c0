#pragma once

// TRAINIO_VECTOR_CLONES before a function builds it for AVX-512, AVX2 and the baseline; the
// loader picks the best for the CPU (an ifunc). Under ThreadSanitizer the function is built once:
// the instrumented resolver runs before the sanitizer's runtime is up and crashes the program at
// load (clang 14, glibc 2.36).
#if defined(__SANITIZE_THREAD__)
#define TRAINIO_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TRAINIO_THREAD_SANITIZER 1
#endif
#endif

#ifdef TRAINIO_THREAD_SANITIZER
#define TRAINIO_VECTOR_CLONES
#else
#define TRAINIO_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
