#ifndef CBUFFEREVENT_ECHO_H
#define CBUFFEREVENT_ECHO_H

/// Starts the baseline echo server: plain libevent (evconnlistener + bufferevent_socket, the
/// textbook echo) on 127.0.0.1, port 0, with its own event_base on a new thread. Returns the
/// port, or 0 on failure. The server runs until the process exits.
int cbench_start_bufferevent_echo(void);

#endif
