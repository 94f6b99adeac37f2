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

/// Where the function at `address` lives (`dladdr`): the file that maps it and where it is
/// loaded, and the nearest exported symbol at or before it (NULL if none). Returns 0 when no
/// loaded file maps `address`.
int twl_loop_locate_function(const void *address, const char **file, const void **fileBase,
                             const char **symbol, const void **symbolAddress);

/// Names the calling thread (at most 15 characters), as `/proc/self/task/*/comm` shows it.
void twl_loop_name_current_thread(const char *name);

/// The calling thread's kernel id (`gettid`), as `/proc/self/task` lists it.
int twl_loop_current_thread_id(void);

/// The Swift runtime's demangler (exported by libswiftCore): returns the demangled form of
/// `mangledName` in a buffer the caller frees with `free`, or NULL when it is not a Swift name.
/// Called with a NULL output buffer and flags 0.
char *swift_demangle(const char *mangledName, size_t mangledNameLength, char *outputBuffer,
                     size_t *outputBufferSize, uint32_t flags);

#endif
