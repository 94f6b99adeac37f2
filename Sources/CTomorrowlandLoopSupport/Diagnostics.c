#define _GNU_SOURCE
#include "CTomorrowlandLoopSupport.h"

#include <pthread.h>
#include <unistd.h>

void twl_loop_name_current_thread(const char *name) {
    pthread_setname_np(pthread_self(), name);
}

int twl_loop_current_thread_id(void) {
    return (int)gettid();
}
