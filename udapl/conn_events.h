/* The queue of connection events a transport makes up itself.
 *
 * Most connection events come from a transport's connection manager (a
 * libfabric EQ, rdma_cm, the tcp provider's own handshake), but some are
 * synthesised: a local disconnect's DISCONNECTED, UNREACHABLE or REJECTED
 * when a connect fails at once, CONN_ERROR after a data-path fault, and on
 * tcp every endpoint event.  Such an event waits here, per device, until
 * the transport's cm_get_event hands it out.  The rules, the same for every
 * transport:
 *
 *  - First come, first out, across the endpoints of a device.
 *  - An attempt (from one dapl_conn_events_drop of the endpoint to the
 *    next) has at most one terminal event (anything but ESTABLISHED) through
 *    the queue: once one is queued, later events of that attempt are
 *    ignored, ESTABLISHED included.  That it has one at all is the
 *    transport's part (it queues one wherever an attempt ends).
 *  - A terminal event that comes while the attempt's ESTABLISHED is still
 *    queued is not lost and does not overtake it: it is handed out after
 *    ESTABLISHED (it then goes to the back of the queue).  It keeps no
 *    private data (only REJECTED carries any, and it never follows
 *    ESTABLISHED).
 *  - Apart from that waiting end, an endpoint has at most one event
 *    queued: an ESTABLISHED that comes while one is queued is ignored.
 *  - Private data is copied, up to DAPL_CONN_EVENT_PDATA_MAX bytes (more is
 *    cut); the event handed out points at the queue's own copy, valid
 *    until the next dapl_conn_events_pop.
 *  - The queue's eventfd (dapl_conn_events_fd, for the transport's progress
 *    fds) is readable exactly while something is queued, but for events a
 *    thread queued while the queue was quiet for it (dapl_conn_events_quiet):
 *    that thread takes them itself before anyone else needs to hear of
 *    them.  Nobody but this unit reads or writes it.
 *
 * Locking: the queue has no lock of its own.  The transport names one lock
 * (all three use dev->lock) that it holds around every call below except
 * dapl_conn_events_init, dapl_conn_events_destroy, dapl_conn_events_fd and
 * dapl_conn_event_slot_init; that lock also protects every slot on the
 * queue.
 *
 * A transport includes this header next to transport.h; the code is in the
 * core (udapl/conn_events.c), which every provider links. */
#ifndef UDAPL_CONN_EVENTS_H
#define UDAPL_CONN_EVENTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport.h"

/* The most private data an event keeps (MPA's 512, the largest a
 * transport reads). */
#define DAPL_CONN_EVENT_PDATA_MAX 512

/* One per endpoint, embedded in the transport's struct dapl_tep. */
struct dapl_conn_event_slot {
	struct dapl_tep *ep;            /* what the event names (ev->ep) */
	struct dapl_conn_event_slot *next;
	bool queued;
	bool terminal_sent;             /* this attempt's terminal event is queued or out */
	bool term_waiting;              /* a terminal event waits behind ESTABLISHED */
	uint8_t type, term_type;        /* enum dapl_tcm_event_type */
	int status, term_status;
	uint16_t len;
	uint8_t data[DAPL_CONN_EVENT_PDATA_MAX];
};

/* One per device. */
struct dapl_conn_events {
	struct dapl_conn_event_slot *head, *tail;
	int fd;                         /* eventfd: readable while head != NULL */
	bool fd_set;                    /* written since it was last read away */
	bool quiet;                     /* quiet_for queues without writing it */
	pthread_t quiet_for;
	uint8_t pdata[DAPL_CONN_EVENT_PDATA_MAX]; /* of the event popped last */
};

/* Makes the eventfd: 0 or a negative errno (q is then as after destroy). */
int dapl_conn_events_init(struct dapl_conn_events *q);
/* Closes the eventfd; queued events are forgotten.  Safe on a queue whose
 * init failed, or that was zeroed and given fd -1. */
void dapl_conn_events_destroy(struct dapl_conn_events *q);
/* The eventfd to poll: readable while an event is queued. */
int dapl_conn_events_fd(const struct dapl_conn_events *q);

/* An endpoint's slot, empty, naming ep. */
void dapl_conn_event_slot_init(struct dapl_conn_event_slot *s,
			       struct dapl_tep *ep);
/* True while an event of the slot is queued (or waits behind one). */
bool dapl_conn_event_slot_queued(const struct dapl_conn_event_slot *s);

/* Queues an event of s's endpoint (ESTABLISHED .. CONN_ERROR) under the
 * rules above; pdata may be NULL when len is 0. */
void dapl_conn_events_queue(struct dapl_conn_events *q,
			    struct dapl_conn_event_slot *s,
			    enum dapl_tcm_event_type type, int status,
			    const void *pdata, size_t len);
/* Forgets whatever s has queued and starts a new attempt for it: call
 * when the endpoint is destroyed or reset, or starts a new connect or
 * accept. */
void dapl_conn_events_drop(struct dapl_conn_events *q,
			   struct dapl_conn_event_slot *s);
/* on: what the calling thread queues from now on does not make the
 * eventfd readable (nor keep it so), as that thread pops until the queue
 * is empty before it calls this with off; events other threads queue
 * meanwhile make it readable as usual.  For a consumer's call after which
 * it collects the events the call made (transport.h's cm_self_pump): the
 * transport's progress thread is not woken for them. */
void dapl_conn_events_quiet(struct dapl_conn_events *q, bool on);
/* Takes the oldest event: true with ev's type, ep, status, pdata and
 * pdata_len set (its other fields untouched), false when none is queued.
 * ev->pdata points into q, valid until the next pop. */
bool dapl_conn_events_pop(struct dapl_conn_events *q,
			  struct dapl_tcm_event *ev);

#endif
