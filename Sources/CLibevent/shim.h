#ifndef CLIBEVENT_SHIM_H
#define CLIBEVENT_SHIM_H

#include <event2/event.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <sys/eventfd.h>

/// `evutil_socket_t` is a macro (Swift cannot import it); this typedef names the same type.
typedef int clibevent_socket_t;

#endif
