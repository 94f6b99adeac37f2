#include "CTomorrowlandLoopSupport.h"

// libdispatch exports these for CoreFoundation's run loop; they are not in its public headers.
// On Linux the handle type (`dispatch_runloop_handle_t`) is an `int`: an eventfd.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *msg);

int twl_loop_main_queue_descriptor(void) {
    return _dispatch_get_main_queue_handle_4CF();
}

void twl_loop_drain_main_queue(void) {
    _dispatch_main_queue_callback_4CF(0);
}
