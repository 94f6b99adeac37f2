#ifndef C_TOMORROWLAND_LOOP_SUPPORT_H
#define C_TOMORROWLAND_LOOP_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// The descriptor libdispatch signals when `DispatchQueue.main` has work: the hook
/// CoreFoundation's run loop watches on Linux. Creating it is idempotent.
int twl_loop_main_queue_descriptor(void);

/// Drains `DispatchQueue.main` on the calling thread, which must be the main thread (libdispatch
/// crashes otherwise) and must not have called `dispatchMain()`.
void twl_loop_drain_main_queue(void);

/// Names the calling thread (at most 15 characters), as `/proc/self/task/*/comm` shows it.
void twl_loop_name_current_thread(const char *name);

/// The calling thread's kernel id (`gettid`), as `/proc/self/task` lists it.
int twl_loop_current_thread_id(void);

#endif
