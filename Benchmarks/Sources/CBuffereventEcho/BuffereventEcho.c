// The baseline for TCPEchoBench: the echo server libevent's own documentation shows, written
// directly against libevent (bufferevents moving input to output), to compare with our
// TCPListener/TCPConnection server on the same client.
#include "CBuffereventEcho.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>

static void echo_read(struct bufferevent *bev, void *context) {
    (void)context;
    bufferevent_write_buffer(bev, bufferevent_get_input(bev));
}

static void echo_event(struct bufferevent *bev, short events, void *context) {
    (void)context;
    if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) bufferevent_free(bev);
}

static void echo_accept(struct evconnlistener *listener, evutil_socket_t fd, struct sockaddr *address, int length,
                        void *context) {
    (void)address;
    (void)length;
    (void)context;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct bufferevent *bev =
        bufferevent_socket_new(evconnlistener_get_base(listener), fd, BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(bev, echo_read, NULL, echo_event, NULL);
    bufferevent_enable(bev, EV_READ | EV_WRITE);
}

static void *run_base(void *base) {
    event_base_dispatch(base);
    return NULL;
}

int cbench_start_bufferevent_echo(void) {
    struct event_base *base = event_base_new();
    if (!base) return 0;
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct evconnlistener *listener =
        evconnlistener_new_bind(base, echo_accept, NULL, LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_FREE, -1,
                                (struct sockaddr *)&address, sizeof address);
    if (!listener) return 0;
    struct sockaddr_in bound;
    socklen_t length = sizeof bound;
    getsockname(evconnlistener_get_fd(listener), (struct sockaddr *)&bound, &length);
    pthread_t thread;
    if (pthread_create(&thread, NULL, run_base, base) != 0) return 0;
    pthread_detach(thread);
    return ntohs(bound.sin_port);
}
