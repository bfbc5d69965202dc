/* Endpoints: their life (create, reset, destroy, the end of a
 * connection, disconnect) and their drive, which hands each direction to
 * its file: the MPA handshake to tcp_mpa.c, what arrives to tcp_rx.c,
 * what goes to tcp_tx.c.
 *
 * Every attempt ends with exactly one terminal event (tcp_ep_fail, and
 * the rule of dev->connq, udapl/conn_events.h). */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp.h"

static int queue_init(struct tcp_queue *q, uint32_t depth)
{
	memset(q, 0, sizeof(*q));
	if (!depth)
		return 0;
	q->wr = calloc(depth, sizeof(*q->wr));
	if (!q->wr)
		return -ENOMEM;
	q->depth = depth;
	return 0;
}

int tcp_ep_create(struct dapl_tpd *pd, struct dapl_tcq *scq,
		  struct dapl_tcq *rcq, struct dapl_tsrq *srq,
		  const struct dapl_tep_attr *attr, struct dapl_tep **out)
{
	struct dapl_tdev *dev = pd->dev;
	struct dapl_tep *ep;
	uint32_t sdepth = attr->max_send_wr, rdepth = srq ? 0 : attr->max_recv_wr;
	int err;

	if (!scq || !rcq || sdepth > TCP_QUEUE_MAX || rdepth > TCP_QUEUE_MAX ||
	    attr->max_send_sge > TCP_MAX_SGE || attr->max_recv_sge > TCP_MAX_SGE)
		return -EINVAL;
	if (srq && srq->pd != pd)
		return -EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	ep->rbuf = malloc(TCP_RX_BUF);
	if (!ep->rbuf || queue_init(&ep->sq, sdepth ? sdepth : 1) ||
	    queue_init(&ep->rq, rdepth)) {
		err = -ENOMEM;
		goto fail;
	}
	pthread_mutex_init(&ep->lock, NULL);
	ep->dev = dev;
	dapl_conn_event_slot_init(&ep->cev, ep);
	ep->pd = pd;
	ep->scq = scq;
	ep->rcq = rcq;
	ep->srq = srq;
	ep->owner = attr->owner;
	ep->max_send_sge = attr->max_send_sge;
	ep->max_recv_sge = attr->max_recv_sge;
	ep->fd = -1;
	ep->state = TCP_EP_IDLE;
	tcp_ep_reset_streams(ep);
	/* room in the CQs for every request, and for a bind per send slot */
	err = tcp_cq_attach(scq, ep, ep->sq.depth);
	if (err)
		goto fail_lock;
	err = tcp_cq_attach(rcq, ep, srq ? TCP_QUEUE_MAX : rdepth);
	if (err) {
		tcp_cq_detach(scq, ep, ep->sq.depth);
		goto fail_lock;
	}
	pthread_mutex_lock(&dev->lock);
	if (srq)
		srq->users++;
	ep->next = dev->eps;
	dev->eps = ep;
	pthread_mutex_unlock(&dev->lock);
	*out = ep;
	return 0;

fail_lock:
	pthread_mutex_destroy(&ep->lock);
fail:
	free(ep->sq.wr);
	free(ep->rq.wr);
	free(ep->resp);
	free(ep->rbuf);
	free(ep);
	return err;
}

/* ep->lock held: closes the socket and forgets it everywhere.  Unread
 * input is read away first: closing over it would send a reset, which
 * can destroy a Terminate we just sent before the peer reads it.
 *
 * The socket leaves our epoll sets before the close, and the FIN goes by
 * shutdown(): a thread asleep in poll() on one of those sets (the
 * progress thread, a consumer on a CQ) can hold the last reference to
 * the socket -- Linux's scan of an epoll ready list takes one for a
 * moment -- and a close() that lost that race would leave the release,
 * and with it the FIN, to whenever that thread next wakes: a peer
 * waiting for our disconnect then waits for nothing.  EPOLL_CTL_DEL
 * waits for a scan in progress; shutdown() sends the FIN whoever holds
 * the socket. */
void tcp_ep_drop_socket(struct dapl_tep *ep)
{
	char sink[4096];
	int i;

	if (ep->fd < 0)
		return;
	for (i = 0; i < 256 && !ep->rx_eof; i++)
		if (recv(ep->fd, sink, sizeof(sink), MSG_DONTWAIT) <= 0)
			break;
	tcp_dev_unwatch(ep);
	tcp_cq_unwatch(ep);
	(void)shutdown(ep->fd, SHUT_RDWR);
	close(ep->fd);
	ep->fd = -1;
	ep->excluded = false;
	ep->want_out = false;
	/* nothing can reach the peer now, so nothing is owed it: a report
	 * left owed kept the device's timer (tick) running for as long as
	 * the endpoint lived */
	ep->ack_owed = false;
	ep->force_ack = ep->nudge = false;
}

void tcp_ep_fail(struct dapl_tep *ep, enum dapl_tcm_event_type type,
		 int status)
{
	struct dapl_tdev *dev = ep->dev;

	if (ep->state == TCP_EP_IDLE || ep->state == TCP_EP_DOWN)
		return;
	TCP_TRACE(ep, "fail: event %d status %d (state %d)", type, status,
		  ep->state);
	/* what is owed to the peer cannot be sent any more */
	tcp_ep_drop_socket(ep);
	ep->state = TCP_EP_DOWN;
	tcp_ep_flush_all(ep);
	pthread_mutex_lock(&dev->lock);
	dapl_conn_events_queue(&dev->connq, &ep->cev, type, status, NULL, 0);
	pthread_mutex_unlock(&dev->lock);
}

int tcp_ep_destroy(struct dapl_tep *ep)
{
	struct dapl_tdev *dev = ep->dev;
	struct dapl_tep **p;

	pthread_mutex_lock(&ep->lock);
	tcp_ep_drop_socket(ep);
	ep->state = TCP_EP_DOWN;
	tcp_ep_flush_all(ep);
	pthread_mutex_unlock(&ep->lock);

	pthread_mutex_lock(&dev->lock);
	dapl_conn_events_drop(&dev->connq, &ep->cev);
	for (p = &dev->eps; *p; p = &(*p)->next)
		if (*p == ep) {
			*p = ep->next;
			break;
		}
	if (ep->srq)
		ep->srq->users--;
	pthread_mutex_unlock(&dev->lock);
	tcp_cq_detach(ep->scq, ep, ep->sq.depth);
	tcp_cq_detach(ep->rcq, ep, ep->srq ? TCP_QUEUE_MAX : ep->rq.depth);
	tcp_cq_forget_ep(ep->scq, ep);
	if (ep->rcq != ep->scq)
		tcp_cq_forget_ep(ep->rcq, ep);
	/* drivers that found it before it left the lists */
	while (atomic_load(&ep->refs))
		sched_yield();

	tcp_ep_drop_unexpected(ep);
	pthread_mutex_destroy(&ep->lock);
	free(ep->sq.wr);
	free(ep->rq.wr);
	free(ep->resp);
	free(ep->rbuf);
	free(ep);
	return 0;
}

int tcp_ep_reset(struct dapl_tep *ep)
{
	struct dapl_tdev *dev = ep->dev;

	pthread_mutex_lock(&ep->lock);
	tcp_ep_drop_socket(ep);
	ep->state = TCP_EP_DOWN;
	tcp_ep_flush_all(ep);
	tcp_ep_drop_unexpected(ep);
	tcp_ep_reset_streams(ep);
	ep->state = TCP_EP_IDLE;
	pthread_mutex_lock(&dev->lock);
	dapl_conn_events_drop(&dev->connq, &ep->cev);
	pthread_mutex_unlock(&dev->lock);
	pthread_mutex_unlock(&ep->lock);
	return 0;
}

int tcp_disconnect(struct dapl_tep *ep)
{
	pthread_mutex_lock(&ep->lock);
	if (ep->state == TCP_EP_IDLE || ep->state == TCP_EP_DOWN) {
		pthread_mutex_unlock(&ep->lock);
		return -ENOTCONN;
	}
	/* what is placed is acknowledged first, so the peer's completed
	 * requests do not flush for want of the ack */
	if (ep->state == TCP_EP_CONNECTED && ep->ack_owed) {
		ep->force_ack = true;
		tcp_ep_flush(ep);
	}
	tcp_ep_fail(ep, DAPL_TCM_DISCONNECTED, 0);
	pthread_mutex_unlock(&ep->lock);
	return 0;
}

int tcp_ep_addrs(struct dapl_tep *ep, struct sockaddr_storage *local,
		 struct sockaddr_storage *peer)
{
	pthread_mutex_lock(&ep->lock);
	if (local)
		*local = ep->local;
	if (peer)
		*peer = ep->peer;
	pthread_mutex_unlock(&ep->lock);
	return 0;
}

/* Room for the Read and Atomic Responses the connection about to start
 * may owe at once: ird of them (tcp_rx.c refuses a request beyond).
 * Sized per connection, not to TCP_READS_MAX for every endpoint: 128
 * slots were 6 KiB of each, most of which never answer a Read.  A
 * reconnect keeps a ring big enough.  ep->lock held, no connection up. */
int tcp_ep_size_responses(struct dapl_tep *ep, uint32_t ird)
{
	uint32_t cap = ird ? ird : 1;
	struct tcp_read_resp *r;

	if (cap > TCP_READS_MAX)
		cap = TCP_READS_MAX;
	if (ep->resp && ep->resp_cap >= cap)
		return 0;
	r = calloc(cap, sizeof(*r));
	if (!r)
		return -ENOMEM;
	free(ep->resp);
	ep->resp = r;
	ep->resp_cap = cap;
	return 0;
}

void tcp_ep_reset_streams(struct dapl_tep *ep)
{
	ep->msn_send = ep->msn_read = ep->msn_term = ep->msn_aresp = 0;
	ep->rx_msn_send = ep->rx_msn_read = ep->rx_msn_term = 1;
	ep->rx_msn_aresp = 1;
	ep->rx_write_len = 0;
	ep->rx_write_open = false;
	ep->tx_seq = ep->peer_placed = 0;
	ep->stall_drives = 0;
	ep->rx_seq = ep->rx_placed = ep->told_placed = 0;
	ep->reads_out = 0;
	ep->read_head = ep->sq.head;
	ep->sq.frame = ep->sq.head;
	ep->tx_pos = ep->tx_queued = 0;
	ep->iov_at = ep->iov_n = 0;
	ep->resp_head = ep->resp_tail = 0;
	ep->term_queued = ep->term_sent = false;
	ep->ack_owed = ep->force_ack = ep->nudge = false;
	ep->ack_age = 0;
	ep->rx_unacked = 0;
	ep->got_fpdu = ep->hold_tx = false;
	ep->rtr_write = ep->rtr_pending = false;
	ep->stalled = false;
	ep->ext_acks = ep->ext_7306 = ep->remote_error = false;
	ep->phase = RX_HDR;
	ep->hdr_have = 0;
	ep->rbuf_rd = ep->rbuf_wr = 0;
	ep->rx_big = false;
	ep->rx_eof = false;
	ep->dst = DST_NONE;
	ep->dst_off = 0;
	ep->in_send = false;
	ep->deadline_ms = 0;
}

void tcp_ep_new_salt(struct dapl_tep *ep)
{
	struct dapl_tdev *dev = ep->dev;

	/* getrandom() output kept for the next connections: one call for
	 * TCP_SALTS of them */
	pthread_mutex_lock(&dev->lock);
	if (!dev->salts_left &&
	    getrandom(dev->salts, sizeof(dev->salts), GRND_NONBLOCK) ==
	    (ssize_t)sizeof(dev->salts))
		dev->salts_left = TCP_SALTS;
	if (dev->salts_left) {
		ep->sink_salt = dev->salts[--dev->salts_left];
		dev->salts[dev->salts_left] = 0;
	} else {
		ep->sink_salt = (uint32_t)(uintptr_t)ep;
	}
	pthread_mutex_unlock(&dev->lock);
}

/* One drive of the endpoint, in the protocol's order: the handshake
 * (tcp_mpa.c) until it is over, then what arrived (tcp_rx.c), then what
 * waits to go (tcp_tx.c). */
bool tcp_ep_drive(struct dapl_tep *ep)
{
	uint64_t before;

	if (ep->state == TCP_EP_CONNECTING || ep->state == TCP_EP_MPA_REQ) {
		tcp_ep_handshake(ep);
		return ep->state != TCP_EP_DOWN;
	}
	if (ep->state != TCP_EP_CONNECTED && ep->state != TCP_EP_ACCEPTING)
		return false;
	/* an ack the consumer had two drives to carry on a reply of its
	 * own goes out bare */
	if (ep->ack_owed && ++ep->ack_age >= 2)
		ep->force_ack = true;
	before = ep->rx_bytes;
	if (!tcp_rx_drive(ep))
		return false;
	/* Waiting long for the peer's placement report: its consumer may
	 * have left it owed, to ride on a reply, and stopped calling.  One
	 * bare report of ours (harmless, a count it has) is an arrival its
	 * progress thread wakes for, and the thread sends what it owes. */
	if (ep->rx_bytes != before || !ep->ext_acks ||
	    ep->tx_seq == ep->peer_placed) {
		ep->stall_drives = 0;
	} else if (++ep->stall_drives == TCP_NUDGE_DRIVES &&
		   ep->state == TCP_EP_CONNECTED) {
		TCP_TRACE(ep, "no report for %u drives: nudging", TCP_NUDGE_DRIVES);
		ep->nudge = true;
	}
	/* nothing read and nothing to send: nothing can complete either
	 * (what completes a request comes in, or goes out) */
	if (ep->rx_bytes != before || tcp_tx_pending(ep))
		tcp_ep_flush(ep);
	return ep->state == TCP_EP_CONNECTED || ep->state == TCP_EP_ACCEPTING;
}
