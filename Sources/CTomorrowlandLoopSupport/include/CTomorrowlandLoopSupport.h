#ifndef C_TOMORROWLAND_LOOP_SUPPORT_H
#define C_TOMORROWLAND_LOOP_SUPPORT_H

#include <stdbool.h>

/// Whether the calling thread is the process's main thread (on Linux: its thread id equals the
/// process id). Foundation's `Thread.isMainThread` answers for the thread that first touched
/// CoreFoundation, which is not always the same thing.
bool twl_loop_is_main_thread(void);

/// The descriptor libdispatch signals when `DispatchQueue.main` has work: the hook
/// CoreFoundation's run loop watches on Linux. Creating it is idempotent.
int twl_loop_main_queue_descriptor(void);

/// Drains `DispatchQueue.main` on the calling thread, which must be the main thread (libdispatch
/// crashes otherwise) and must not have called `dispatchMain()`.
void twl_loop_drain_main_queue(void);

#endif
