// Clocks and memory readings for the benchmark harness.
#define _GNU_SOURCE
#include "CBenchSupport.h"

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

clockid_t cbench_current_thread_cpu_clock(void) {
    clockid_t clock;
    if (pthread_getcpuclockid(pthread_self(), &clock) != 0) {
        return CLOCK_THREAD_CPUTIME_ID;
    }
    return clock;
}

uint64_t cbench_clock_ns(clockid_t clock) {
    struct timespec now;
    clock_gettime(clock, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

uint64_t cbench_rss_bytes(void) {
    FILE *statm = fopen("/proc/self/statm", "r");
    if (statm == NULL) {
        return 0;
    }
    unsigned long size = 0, resident = 0;
    int matched = fscanf(statm, "%lu %lu", &size, &resident);
    fclose(statm);
    if (matched != 2) {
        return 0;
    }
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

uint64_t cbench_malloc_in_use_bytes(void) {
    struct mallinfo2 info = mallinfo2();
    return (uint64_t)info.uordblks + (uint64_t)info.hblkhd;
}
