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

/// The pending-promise report's switch (PendingPromiseTracking.swift): 0 when off, otherwise the
/// sampling interval N (one root promise in N is recorded). Process-wide, read on every root
/// promise's creation, so a plain global read with one relaxed atomic load: no lazy initialisation
/// to check. Set at start-up from the environment (PromiseTracking.c), then by the Swift API.
extern uint32_t twl_promise_tracking_interval;

static inline uint32_t twl_get_promise_tracking_interval(void) {
    return __atomic_load_n(&twl_promise_tracking_interval, __ATOMIC_RELAXED);
}
static inline void twl_set_promise_tracking_interval(uint32_t interval) {
    __atomic_store_n(&twl_promise_tracking_interval, interval, __ATOMIC_RELAXED);
}

/// The interval the environment variable asked for at start-up (0: unset, or not a number).
extern uint32_t twl_promise_tracking_environment_interval;

/// Reads ``twl_promise_tracking_environment_interval`` (written once, before main).
static inline uint32_t twl_get_promise_tracking_environment_interval(void) {
    return __atomic_load_n(&twl_promise_tracking_environment_interval, __ATOMIC_RELAXED);
}

/// Parses a value of the TOMORROWLAND_PENDING_PROMISES environment variable: a positive decimal
/// number N is "one root promise in N" ("1": every one); anything else (unset, empty, "0", "off",
/// a sign, trailing characters, more than 1,000,000,000) is 0, off.
uint32_t twl_parse_promise_tracking_interval(const char *_Nullable value);

/// Per-thread count of root promises made while tracking is on, for sampling.
extern _Thread_local uint32_t twl_promise_tracking_counter;

/// Counts one root promise on this thread; returns whether it is the one in `interval` to record.
static inline bool twl_promise_tracking_take_sample(uint32_t interval) {
    uint32_t count = ++twl_promise_tracking_counter;
    if (count < interval) return false;
    twl_promise_tracking_counter = 0;
    return true;
}

/// The context-propagation switch (CallbackContextPropagation.swift): nonzero while promise
/// callbacks carry the task-local context current where they were registered. Read on every
/// callback registration, so a plain global with one atomic load, like the tracking switch. The
/// load acquires: the capture function is published before the switch is first turned on.
extern uint32_t twl_context_propagation;

static inline uint32_t twl_get_context_propagation(void) {
    return __atomic_load_n(&twl_context_propagation, __ATOMIC_ACQUIRE);
}
static inline void twl_set_context_propagation(uint32_t value) {
    __atomic_store_n(&twl_context_propagation, value, __ATOMIC_RELEASE);
}

#endif
