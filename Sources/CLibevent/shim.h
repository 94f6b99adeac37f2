#ifndef CLIBEVENT_SHIM_H
#define CLIBEVENT_SHIM_H

// libevent's event-config.h defines _GNU_SOURCE. If it came first, glibc's feature macros would
// differ from the ones Swift's Glibc module was built with (fd_set's member is then `fds_bits`
// instead of `__fds_bits`), and a clean build fails with "'__fds_bits' from module 'SwiftGlibc'
// is not present in definition of 'fd_set' in module 'CLibevent'". Settle the feature macros
// with the system headers first.
#include <sys/types.h>
#include <sys/time.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>

#include <event2/event.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <sys/eventfd.h>

/// `evutil_socket_t` is a macro (Swift cannot import it); this typedef names the same type.
typedef int clibevent_socket_t;

#endif
