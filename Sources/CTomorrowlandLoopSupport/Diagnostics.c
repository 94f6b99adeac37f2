#define _GNU_SOURCE
#include "CTomorrowlandLoopSupport.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

int twl_loop_locate_function(const void *address, const char **file, const void **fileBase,
                             const char **symbol, const void **symbolAddress) {
    Dl_info info;
    if (dladdr(address, &info) == 0) return 0;
    *file = info.dli_fname;
    *fileBase = info.dli_fbase;
    *symbol = info.dli_sname;
    *symbolAddress = info.dli_saddr;
    return 1;
}

void twl_loop_name_current_thread(const char *name) {
    pthread_setname_np(pthread_self(), name);
}

int twl_loop_current_thread_id(void) {
    return (int)gettid();
}
