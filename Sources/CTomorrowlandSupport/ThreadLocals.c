#include "CTomorrowlandSupport.h"

_Thread_local bool twl_is_executing_now = false;
_Thread_local void *twl_main_drain_queue = 0;
_Thread_local const void *twl_current_executor = 0;
