#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/// Starts counting calls to malloc, calloc, realloc and the aligned allocators, on every thread.
void cbench_malloc_counting_start(void);
/// Stops counting and returns the number of allocation calls since the matching start.
uint64_t cbench_malloc_counting_stop(void);

/// The CPU-time clock of the calling thread; read it from any thread with `cbench_clock_ns`.
clockid_t cbench_current_thread_cpu_clock(void);
/// `clock_gettime(clock)` in nanoseconds.
uint64_t cbench_clock_ns(clockid_t clock);

/// Resident set size of the process in bytes (`/proc/self/statm` resident pages × page size).
uint64_t cbench_rss_bytes(void);
/// Bytes malloc has handed out and not taken back, all arenas (`mallinfo2`: uordblks + hblkhd).
uint64_t cbench_malloc_in_use_bytes(void);
