#include "CTomorrowlandSupport.h"

#include <stdlib.h>

uint32_t twl_promise_tracking_interval = 0;
uint32_t twl_promise_tracking_environment_interval = 0;
_Thread_local uint32_t twl_promise_tracking_counter = 0;

uint32_t twl_parse_promise_tracking_interval(const char *value) {
    if (value == NULL || *value == 0) return 0;
    uint64_t interval = 0;
    for (const char *digit = value; *digit != 0; digit++) {
        if (*digit < '0' || *digit > '9') return 0;
        interval = interval * 10 + (uint64_t)(*digit - '0');
        if (interval > 1000000000) return 0;
    }
    return (uint32_t)interval;
}

/// Runs when the library is loaded, before main: a process started with the variable set tracks
/// from its first promise, and the switch needs no lazy check on the hot path.
__attribute__((constructor)) static void twl_read_promise_tracking_environment(void) {
    uint32_t interval = twl_parse_promise_tracking_interval(getenv("TOMORROWLAND_PENDING_PROMISES"));
    twl_promise_tracking_environment_interval = interval;
    twl_set_promise_tracking_interval(interval);
}
