/* The queue of synthesised connection events (conn_events.h). */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "conn_events.h"

int dapl_conn_events_init(struct dapl_conn_events *q)
{
	memset(q, 0, sizeof(*q));
	q->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return q->fd < 0 ? -errno : 0;
}

void dapl_conn_events_destroy(struct dapl_conn_events *q)
{
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
	q->head = q->tail = NULL;
}

int dapl_conn_events_fd(const struct dapl_conn_events *q)
{
	return q->fd;
}

void dapl_conn_event_slot_init(struct dapl_conn_event_slot *s,
			       struct dapl_tep *ep)
{
	memset(s, 0, offsetof(struct dapl_conn_event_slot, data));
	s->ep = ep;
}

bool dapl_conn_event_slot_queued(const struct dapl_conn_event_slot *s)
{
	return s->queued;
}

/* The eventfd follows the queue: set when it stops being empty, read
 * away when it becomes empty (the caller's lock orders the two). */
static void fd_set_ready(struct dapl_conn_events *q)
{
	uint64_t one = 1;

	if (q->fd_set ||
	    (q->quiet && pthread_equal(q->quiet_for, pthread_self())))
		return;
	q->fd_set = true;
	if (write(q->fd, &one, sizeof(one)) < 0) {
		/* only when the count is at its maximum: readable anyway */
	}
}

static void fd_clear(struct dapl_conn_events *q)
{
	uint64_t v;

	if (!q->fd_set)
		return;
	q->fd_set = false;
	if (read(q->fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing to read */
	}
}

void dapl_conn_events_quiet(struct dapl_conn_events *q, bool on)
{
	q->quiet = on;
	q->quiet_for = pthread_self();
}

static void append(struct dapl_conn_events *q, struct dapl_conn_event_slot *s)
{
	s->queued = true;
	s->next = NULL;
	if (q->tail)
		q->tail->next = s;
	else
		q->head = s;
	q->tail = s;
	/* (a no-op while it is readable already: the first of a queue
	 * that was quiet for its thread did not write it) */
	fd_set_ready(q);
}

void dapl_conn_events_queue(struct dapl_conn_events *q,
			    struct dapl_conn_event_slot *s,
			    enum dapl_tcm_event_type type, int status,
			    const void *pdata, size_t len)
{
	bool terminal = type != DAPL_TCM_ESTABLISHED;

	if (s->terminal_sent)
		return;         /* one terminal event per attempt, then nothing */
	if (s->queued) {
		/* ESTABLISHED not handed out yet: the end follows it */
		if (terminal && s->type == DAPL_TCM_ESTABLISHED) {
			s->terminal_sent = true;
			s->term_waiting = true;
			s->term_type = (uint8_t)type;
			s->term_status = status;
		}
		return;
	}
	if (terminal)
		s->terminal_sent = true;
	if (!pdata || len > sizeof(s->data))
		len = pdata ? sizeof(s->data) : 0;
	s->type = (uint8_t)type;
	s->status = status;
	s->len = (uint16_t)len;
	if (len)
		memcpy(s->data, pdata, len);
	append(q, s);
}

void dapl_conn_events_drop(struct dapl_conn_events *q,
			   struct dapl_conn_event_slot *s)
{
	struct dapl_conn_event_slot **p, *prev = NULL;

	s->terminal_sent = false;
	s->term_waiting = false;
	if (!s->queued)
		return;
	for (p = &q->head; *p; prev = *p, p = &(*p)->next) {
		if (*p != s)
			continue;
		*p = s->next;
		if (q->tail == s)
			q->tail = prev;
		break;
	}
	s->queued = false;
	s->next = NULL;
	if (!q->head)
		fd_clear(q);
}

bool dapl_conn_events_pop(struct dapl_conn_events *q,
			  struct dapl_tcm_event *ev)
{
	struct dapl_conn_event_slot *s = q->head;

	if (!s)
		return false;
	q->head = s->next;
	if (!q->head)
		q->tail = NULL;
	s->queued = false;
	s->next = NULL;
	ev->type = (enum dapl_tcm_event_type)s->type;
	ev->ep = s->ep;
	ev->status = s->status;
	memcpy(q->pdata, s->data, s->len);
	ev->pdata = q->pdata;
	ev->pdata_len = s->len;
	if (s->term_waiting) {
		/* its end, next (behind what is queued already) */
		s->term_waiting = false;
		s->type = s->term_type;
		s->status = s->term_status;
		s->len = 0;
		append(q, s);
	}
	if (!q->head)
		fd_clear(q);
	return true;
}
