#include "CTomorrowlandSupport.h"

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#elif defined(__APPLE__)
#include <pthread.h>
#endif

// 0 until the calling thread first asks, then 1 on the main thread and -1 elsewhere: a thread
// does not change identity, so the system call runs once per thread. (A child of fork() that
// asked before forking would keep the parent's answer; the library does not fork.)
static _Thread_local signed char twl_main_thread_state = 0;

bool twl_is_main_thread(void) {
    if (twl_main_thread_state == 0) {
#if defined(__linux__)
        bool isMain = (pid_t)syscall(SYS_gettid) == getpid();
#elif defined(__APPLE__)
        bool isMain = pthread_main_np() != 0;
#else
        bool isMain = false;
#endif
        twl_main_thread_state = isMain ? 1 : -1;
    }
    return twl_main_thread_state > 0;
}
