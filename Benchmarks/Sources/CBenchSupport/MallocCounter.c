// Counts allocation calls by interposing the allocator entry points in the benchmark executable.
//
// Why this way: the executable's definitions of malloc & co. take precedence over glibc's for
// every shared object in the process (the Swift runtime, Foundation, NIO's code is linked in
// statically anyway), without LD_PRELOAD and without any package that is not mirrored here.
// Each definition forwards to glibc's own entry points (`__libc_malloc` etc., exported by glibc
// for exactly this purpose), so the allocator and its behaviour are unchanged.
//
// Counting is off unless a measurement turns it on: then the cost when off is one relaxed load
// and a predictable branch per call, the same for both libraries, and timed runs are unaffected.
#define _GNU_SOURCE
#include "CBenchSupport.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static bool counting_enabled;
static uint64_t allocation_calls;

static inline void count_call(void) {
    if (__atomic_load_n(&counting_enabled, __ATOMIC_RELAXED)) {
        __atomic_fetch_add(&allocation_calls, 1, __ATOMIC_RELAXED);
    }
}

void cbench_malloc_counting_start(void) {
    __atomic_store_n(&allocation_calls, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&counting_enabled, true, __ATOMIC_SEQ_CST);
}

uint64_t cbench_malloc_counting_stop(void) {
    __atomic_store_n(&counting_enabled, false, __ATOMIC_SEQ_CST);
    return __atomic_load_n(&allocation_calls, __ATOMIC_SEQ_CST);
}

void *malloc(size_t size) {
    count_call();
    return __libc_malloc(size);
}

void free(void *pointer) {
    __libc_free(pointer);
}

void *calloc(size_t count, size_t size) {
    count_call();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    count_call();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    count_call();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_call();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    // The checks glibc makes: a power of two, and a multiple of sizeof(void *).
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) {
        return EINVAL;
    }
    count_call();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL && size != 0) {
        return ENOMEM;
    }
    *result = pointer;
    return 0;
}
