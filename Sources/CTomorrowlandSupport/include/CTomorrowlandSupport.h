#ifndef C_TOMORROWLAND_SUPPORT_H
#define C_TOMORROWLAND_SUPPORT_H

#include <stdbool.h>
#include <stdint.h>

/// Per-thread flag behind `PromiseContext.isExecutingNow`.
extern _Thread_local bool twl_is_executing_now;

/// Per-thread pointer to the drain queue of the `.main` context while a `.main` block runs
/// (NULL otherwise). Owned by the Swift side; see MainQueueExecutor.swift.
extern _Thread_local void *_Nullable twl_main_drain_queue;

/// Per-thread pointer to the executor whose work this thread is running (NULL when none).
/// Executors set it around the work they run so `isCurrent` is one load and a compare.
extern _Thread_local const void *_Nullable twl_current_executor;

static inline bool twl_get_is_executing_now(void) { return twl_is_executing_now; }
static inline void twl_set_is_executing_now(bool value) { twl_is_executing_now = value; }

static inline void *_Nullable twl_get_main_drain_queue(void) { return twl_main_drain_queue; }
static inline void twl_set_main_drain_queue(void *_Nullable queue) { twl_main_drain_queue = queue; }

static inline const void *_Nullable twl_get_current_executor(void) { return twl_current_executor; }
static inline void twl_set_current_executor(const void *_Nullable executor) { twl_current_executor = executor; }

/// Whether the calling thread is the process's main thread, the one `DispatchQueue.main` drains
/// on: on Linux, the thread whose id equals the process id. The library's one definition of "the
/// main thread" (`.auto`, the `.main` context, an `EventLoop` draining the main queue).
/// Foundation's `Thread.isMainThread` answers for the thread that first touched CoreFoundation,
/// which is not always the same thing. One thread-local load after the first call on a thread.
bool twl_is_main_thread(void);

/// The Swift runtime's reference-counting entry points behind `unowned` and `weak` (plain C
/// functions exported by libswiftCore). The core uses them for references that must not keep
/// their object alive but must not cost it a weak-reference side table either: counted unowned
/// references (UnownedReference.swift: `when`'s inputs, a second upstream, a loop's timer handles
/// and watchers), and the try-retain of a child's uncounted link to its upstream (UpstreamLink.swift,
/// whose link rule is in the Tomorrowland module's CoreInvariants article).
extern void *_Nonnull swift_unownedRetain(void *_Nonnull object);
extern void swift_unownedRelease(void *_Nonnull object);
/// Returns the object with its strong count incremented, or NULL if it is being deinitialized.
extern void *_Nullable swift_tryRetain(void *_Nonnull object);

static inline void twl_unowned_retain(void *_Nonnull object) { (void)swift_unownedRetain(object); }
static inline void twl_unowned_release(void *_Nonnull object) { swift_unownedRelease(object); }
static inline bool twl_try_retain(void *_Nonnull object) { return swift_tryRetain(object) != 0; }

#endif
