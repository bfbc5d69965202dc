/* MPA connection establishment (RFC 5044 revision 2, RFC 6581): the
 * request and reply of an endpoint, and the request of a connection a
 * listener accepted (tcp_listen.c), read up to its end.
 *
 * Active side: a non-blocking TCP connect, then the MPA request
 * (revision 2, RFC 6581 IRD/ORD, peer-to-peer with a zero-length RDMA
 * Write as ready-to-receive, the libdat trailer with ACKS|EARLY), sent
 * from connect() itself when the TCP handshake is done by then, then the
 * reply; with the reply read, the RTR goes out if the responder asked for
 * one, and the endpoint is ESTABLISHED.
 * Passive side (accept): the reply goes out; the endpoint is ESTABLISHED
 * at once for a libdat initiator (EARLY: it takes FPDUs right behind the
 * reply, so no RTR is asked), when the initiator's RTR arrives for
 * another peer-to-peer one (tcp_rx.c checks the first FPDU is that RTR),
 * or at once for an initiator that asked for no RTR (it then speaks
 * first: RFC 5044 has the responder wait for its first FPDU before
 * sending, hold_tx).
 *
 * Every attempt ends with exactly one terminal event (tcp_ep_fail, and
 * the rule of dev->connq, udapl/conn_events.h). */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp.h"

static void send_reject(struct dapl_tconn *conn, const void *pdata, size_t len);

/* An IRD or ORD we offer, within the 14 bits RFC 6581 has for it. */
static uint16_t clamp_limit(uint16_t v)
{
	return v > MPA_V2_LIMIT_MASK ? MPA_V2_LIMIT_MASK : v;
}

/* ---- active side ---------------------------------------------------------- */

/* A connection comes from the IA's address (dapl_tcp(7)), not from the
 * one the route to the peer would pick on a host with several: bound
 * before connect, the port left to connect (IP_BIND_ADDRESS_NO_PORT,
 * so that many connections do not exhaust the ports bind would take).
 * An address of the other family: the kernel's choice. */
static int bind_local(const struct dapl_tdev *dev, int fd, sa_family_t family)
{
	struct sockaddr_storage a = dev->addr;
	int one = 1;

	if (a.ss_family != family)
		return 0;
	if (family == AF_INET)
		((struct sockaddr_in *)&a)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&a)->sin6_port = 0;
	setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
	return bind(fd, (struct sockaddr *)&a,
		    family == AF_INET ? sizeof(struct sockaddr_in)
				      : sizeof(struct sockaddr_in6));
}

int tcp_connect(struct dapl_tep *ep, const struct sockaddr *addr,
		uint16_t port, const void *pdata, size_t len, uint16_t ird,
		uint16_t ord)
{
	struct sockaddr_storage to;
	socklen_t tolen;
	int fd, one = 1, err = 0;
	size_t pd;

	if (len > TCP_PDATA_MAX)
		return -EINVAL;
	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	tolen = addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					    : sizeof(struct sockaddr_in);
	memset(&to, 0, sizeof(to));
	memcpy(&to, addr, tolen);
	if (to.ss_family == AF_INET)
		((struct sockaddr_in *)&to)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&to)->sin6_port = htons(port);

	pthread_mutex_lock(&ep->lock);
	if (ep->state != TCP_EP_IDLE && ep->state != TCP_EP_DOWN) {
		pthread_mutex_unlock(&ep->lock);
		return -EISCONN;
	}
	err = tcp_ep_size_responses(ep, ird);
	if (err) {
		pthread_mutex_unlock(&ep->lock);
		return err;
	}
	/* a new attempt on an endpoint whose last one ended */
	pthread_mutex_lock(&ep->dev->lock);
	dapl_conn_events_drop(&ep->dev->connq, &ep->cev);
	pthread_mutex_unlock(&ep->dev->lock);
	fd = socket(to.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		pthread_mutex_unlock(&ep->lock);
		return err;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	dapl_sock_peer_timeout(fd, ep->dev->peer_timeout_ms);
	tcp_ep_reset_streams(ep);
	tcp_ep_new_salt(ep);
	ep->fd = fd;
	ep->active = true;
	ep->peer = to;
	ep->ird = ird;
	ep->ord = ord;
	/* the request: v2 parameters, the core's bytes, our trailer */
	pd = MPA_V2_LEN + len + TCP_EXT_LEN;
	mpa_put_hdr(ep->hs_buf, true, MPA_FLAG_ENHANCED | 2, (uint32_t)pd);
	mpa_put_v2(ep->hs_buf + MPA_HDR_LEN, clamp_limit(ird), clamp_limit(ord),
		   MPA_V2_P2P, MPA_V2_WRITE_RTR);
	if (len)
		memcpy(ep->hs_buf + MPA_HDR_LEN + MPA_V2_LEN, pdata, len);
	mpa_put_ext(ep->hs_buf + MPA_HDR_LEN + MPA_V2_LEN + len,
		    TCP_EXT_F_ACKS | TCP_EXT_F_EARLY | TCP_EXT_F_RFC7306);
	ep->handshake_len = (uint32_t)(MPA_HDR_LEN + pd);
	ep->handshake_done = 0;
	ep->state = TCP_EP_CONNECTING;
	if ((bind_local(ep->dev, fd, to.ss_family) ||
	     connect(fd, (struct sockaddr *)&to, tolen)) && errno != EINPROGRESS) {
		err = errno;
		/* reported as the attempt's outcome, like an async failure */
		tcp_ep_drop_socket(ep);
		ep->state = TCP_EP_DOWN;
		pthread_mutex_lock(&ep->dev->lock);
		dapl_conn_events_queue(&ep->dev->connq, &ep->cev,
				       err == ECONNREFUSED ? DAPL_TCM_REJECTED
							   : DAPL_TCM_UNREACHABLE,
				       -err, NULL, 0);
		pthread_mutex_unlock(&ep->dev->lock);
		pthread_mutex_unlock(&ep->lock);
		return 0;
	}
	/* on a near peer (loopback) the TCP handshake is often over by now:
	 * the request goes at once, not from the progress thread on
	 * EPOLLOUT */
	tcp_ep_handshake(ep);
	tcp_dev_watch(ep);
	pthread_mutex_unlock(&ep->lock);
	return 0;
}

void tcp_ep_go_connected(struct dapl_tep *ep)
{
	socklen_t l = sizeof(ep->local);

	/* a passive side knows its address: its listener's */
	if (ep->active)
		getsockname(ep->fd, (struct sockaddr *)&ep->local, &l);
	ep->state = TCP_EP_CONNECTED;
	ep->deadline_ms = 0;
	/* the CQs' epoll sets take the socket when a consumer arms them,
	 * or polls a CQ of many endpoints */
	tcp_dev_watch(ep);
	tcp_cq_connected(ep);
}

/* Active side, ep->lock held: the TCP connect finished (or failed), the
 * request goes out, the reply comes in. */
void tcp_ep_handshake(struct dapl_tep *ep)
{
	struct dapl_tdev *dev = ep->dev;
	uint32_t bits = 0, pd_len = 0, start, len, want;
	ssize_t n;

	if (ep->state == TCP_EP_CONNECTING) {
		/* a failed connect makes send() return its error (what
		 * SO_ERROR holds), one still in progress EAGAIN */
		while (ep->handshake_done < ep->handshake_len) {
			n = send(ep->fd, ep->hs_buf + ep->handshake_done,
				 ep->handshake_len - ep->handshake_done,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n < 0) {
				if (errno == EAGAIN || errno == ENOTCONN)
					return;   /* connect still in progress */
				tcp_ep_fail(ep, errno == ECONNREFUSED ?
					    DAPL_TCM_REJECTED : DAPL_TCM_UNREACHABLE,
					    -errno);
				return;
			}
			ep->handshake_done += (uint32_t)n;
		}
		ep->state = TCP_EP_MPA_REQ;
		ep->handshake_done = 0;
		tcp_dev_watch(ep);   /* no more EPOLLOUT */
		return;              /* the reply cannot be there yet */
	}
	if (ep->state != TCP_EP_MPA_REQ)
		return;
	/* the reply, header then private data, in as few reads as it
	 * takes; what follows it in the same read (the first FPDUs of a
	 * responder that need not wait for our RTR) goes to the staging
	 * buffer */
	for (;;) {
		want = MPA_HDR_LEN;
		if (ep->handshake_done >= MPA_HDR_LEN) {
			if (!mpa_get_hdr(ep->hs_buf, false, &bits, &pd_len)) {
				tcp_ep_fail(ep, DAPL_TCM_CONN_ERROR, -EPROTO);
				return;
			}
			want += pd_len;
		}
		if (ep->handshake_done >= want)
			break;
		n = recv(ep->fd, ep->hs_buf + ep->handshake_done,
			 sizeof(ep->hs_buf) - ep->handshake_done, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			/* the peer went away before it answered */
			tcp_ep_fail(ep, DAPL_TCM_CONN_ERROR,
				    n == 0 ? -ECONNRESET : -errno);
			return;
		}
		if (n < 0)
			return;
		ep->handshake_done += (uint32_t)n;
	}
	ep->rbuf_rd = 0;
	ep->rbuf_wr = ep->handshake_done - want;
	if (ep->rbuf_wr)
		memcpy(ep->rbuf, ep->hs_buf + want, ep->rbuf_wr);
	start = ((bits & MPA_REV_MASK) == 2 && (bits & MPA_FLAG_ENHANCED) &&
		 pd_len >= MPA_V2_LEN) ? MPA_V2_LEN : 0;
	len = pd_len - start;
	if (bits & MPA_FLAG_REJECT) {
		const uint8_t *pd = ep->hs_buf + MPA_HDR_LEN + start;

		tcp_ep_drop_socket(ep);
		ep->state = TCP_EP_DOWN;
		tcp_ep_flush_all(ep);
		pthread_mutex_lock(&dev->lock);
		dapl_conn_events_queue(&dev->connq, &ep->cev,
				       DAPL_TCM_REJECTED, 0, pd, len);
		pthread_mutex_unlock(&dev->lock);
		return;
	}
	if (bits & (MPA_FLAG_MARKERS | MPA_FLAG_CRC)) {
		/* we asked for neither; a responder that insists is refused */
		tcp_ep_fail(ep, DAPL_TCM_CONN_ERROR, -EPROTO);
		return;
	}
	if (start) {
		uint32_t ird = get16(ep->hs_buf + MPA_HDR_LEN);
		uint32_t ord = get16(ep->hs_buf + MPA_HDR_LEN + 2);

		if (ird & MPA_V2_P2P) {
			/* we offered a zero-length Write only */
			if (!(ord & MPA_V2_WRITE_RTR)) {
				tcp_ep_fail(ep, DAPL_TCM_CONN_ERROR, -EPROTO);
				return;
			}
			ep->rtr_write = true;
		}
	}
	if (len >= TCP_EXT_LEN) {
		const uint8_t *end = ep->hs_buf + MPA_HDR_LEN + pd_len;

		if (get32(end - TCP_EXT_LEN) == TCP_EXT_MAGIC &&
		    (get16(end - 2) & TCP_EXT_F_ACKS)) {
			ep->ext_acks = true;
			/* a responder that takes RFC 7306 echoes the flag */
			ep->ext_7306 = (get16(end - 2) & TCP_EXT_F_RFC7306) != 0;
			len -= TCP_EXT_LEN;
		}
	}
	tcp_ep_go_connected(ep);
	ep->got_fpdu = true;     /* the initiator may send at once */
	/* the RTR goes first, before anything the consumer posts */
	tcp_ep_flush(ep);
	pthread_mutex_lock(&dev->lock);
	dapl_conn_events_queue(&dev->connq, &ep->cev, DAPL_TCM_ESTABLISHED, 0,
			       ep->hs_buf + MPA_HDR_LEN + start, len);
	pthread_mutex_unlock(&dev->lock);
	/* FPDUs read with the reply: the socket may have nothing more to
	 * wake anyone for them */
	if (ep->state == TCP_EP_CONNECTED && ep->rbuf_wr)
		tcp_ep_drive(ep);
}

/* ---- passive side --------------------------------------------------------- */

/* A reply with the reject bit and no private data of the consumer's:
 * what an MPA request we cannot take gets (markers, CRC). */
static void conn_refuse(struct dapl_tconn *c)
{
	uint8_t f[MPA_HDR_LEN + MPA_V2_LEN];
	size_t len = MPA_HDR_LEN;
	uint32_t bits = MPA_FLAG_REJECT | 1;

	if (c->v2) {
		bits = MPA_FLAG_REJECT | MPA_FLAG_ENHANCED | 2;
		put16(f + MPA_HDR_LEN, 0);
		put16(f + MPA_HDR_LEN + 2, 0);
		len += MPA_V2_LEN;
	}
	mpa_put_hdr(f, false, bits, (uint32_t)(len - MPA_HDR_LEN));
	if (send(c->fd, f, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		len = 0;
}

/* dev->lock held: reads more of a passive handshake.  Returns 1 when the
 * request is complete and acceptable, 0 for more to come, -1 to drop. */
int tcp_conn_read(struct dapl_tconn *c)
{
	uint32_t want;
	ssize_t n;

	/* as much as the buffer takes: the request in one read, and what
	 * came behind it (an initiator that did not wait for the reply)
	 * is kept for the endpoint (tcp_accept) */
	for (;;) {
		want = MPA_HDR_LEN;
		if (c->have >= MPA_HDR_LEN) {
			if (!mpa_get_hdr(c->buf, true, &c->bits, &c->pd_len))
				return -1;   /* not an MPA request: a stranger */
			want += c->pd_len;
		}
		if (c->have >= want)
			break;
		n = recv(c->fd, c->buf + c->have, sizeof(c->buf) - c->have,
			 MSG_DONTWAIT);
		if (n == 0)
			return -1;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		c->have += (uint32_t)n;
	}
	if ((c->bits & MPA_REV_MASK) != 1 && (c->bits & MPA_REV_MASK) != 2)
		return -1;
	c->v2 = (c->bits & MPA_REV_MASK) == 2 &&
		(c->bits & MPA_FLAG_ENHANCED) && c->pd_len >= MPA_V2_LEN;
	if (c->v2) {
		c->peer_ird = (uint16_t)get16(c->buf + MPA_HDR_LEN);
		c->peer_ord = (uint16_t)get16(c->buf + MPA_HDR_LEN + 2);
	}
	/* markers and CRC we do not do; a reject bit has no place in a
	 * request */
	if (c->bits & (MPA_FLAG_MARKERS | MPA_FLAG_CRC | MPA_FLAG_REJECT)) {
		conn_refuse(c);
		return -1;
	}
	{
		const uint8_t *end = c->buf + MPA_HDR_LEN + c->pd_len;
		uint32_t start = c->v2 ? MPA_V2_LEN : 0;

		if (c->pd_len >= start + TCP_EXT_LEN &&
		    get32(end - TCP_EXT_LEN) == TCP_EXT_MAGIC &&
		    (get16(end - 2) & TCP_EXT_F_ACKS)) {
			c->ext_acks = true;
			c->ext_early = (get16(end - 2) & TCP_EXT_F_EARLY) != 0;
			c->ext_7306 = (get16(end - 2) & TCP_EXT_F_RFC7306) != 0;
		}
	}
	return 1;
}


int tcp_accept(struct dapl_tconn *conn, struct dapl_tep *ep,
	       const void *pdata, size_t len, uint16_t ird, uint16_t ord)
{
	struct dapl_tdev *dev = conn->dev;
	uint8_t f[MPA_HDR_LEN + MPA_PD_MAX];
	uint32_t ird_flags = 0, ord_flags = 0;
	size_t pd, off;
	ssize_t n;

	if (len > TCP_PDATA_MAX) {
		/* refused, and the request ends as a reject without data */
		if (tcp_conn_take(dev, conn))
			send_reject(conn, NULL, 0);
		return -EINVAL;
	}
	pthread_mutex_lock(&ep->lock);
	if (ep->state != TCP_EP_IDLE && ep->state != TCP_EP_DOWN) {
		pthread_mutex_unlock(&ep->lock);
		return -EISCONN;
	}
	if (tcp_ep_size_responses(ep, ird)) {
		pthread_mutex_unlock(&ep->lock);
		return -ENOMEM;
	}
	if (!tcp_conn_take(dev, conn)) {
		pthread_mutex_unlock(&ep->lock);
		return -ENOENT;
	}
	/* a new attempt: what the last one left queued goes */
	pthread_mutex_lock(&ep->dev->lock);
	dapl_conn_events_drop(&ep->dev->connq, &ep->cev);
	pthread_mutex_unlock(&ep->dev->lock);
	tcp_ep_reset_streams(ep);
	tcp_ep_new_salt(ep);
	ep->active = false;
	ep->ird = ird;
	ep->ord = ord;
	ep->ext_acks = conn->ext_acks;
	ep->ext_7306 = conn->ext_acks && conn->ext_7306;
	ep->peer = conn->peer;
	ep->local = conn->local;
	/* bytes read behind the request are the stream's next */
	ep->rbuf_wr = conn->have - (MPA_HDR_LEN + conn->pd_len);
	if (ep->rbuf_wr)
		memcpy(ep->rbuf, conn->buf + MPA_HDR_LEN + conn->pd_len,
		       ep->rbuf_wr);
	ep->fd = conn->fd;
	conn->fd = -1;
	/* a libdat initiator that takes FPDUs right behind the reply needs
	 * no RTR: we are connected once the reply is out */
	if (conn->v2 && (conn->peer_ird & MPA_V2_P2P) && !conn->ext_early) {
		if (conn->peer_ord & MPA_V2_WRITE_RTR)
			ord_flags = MPA_V2_WRITE_RTR;
		else if (conn->peer_ord & MPA_V2_READ_RTR)
			ord_flags = MPA_V2_READ_RTR;
		if (ord_flags) {
			ird_flags = MPA_V2_P2P;
			ep->rtr_pending = true;
		}
	}
	/* without an RTR the initiator speaks first (RFC 5044), unless it
	 * said it needs not */
	ep->hold_tx = !ep->rtr_pending && !conn->ext_early;
	off = MPA_HDR_LEN;
	pd = len + (conn->v2 ? MPA_V2_LEN : 0) + (ep->ext_acks ? TCP_EXT_LEN : 0);
	mpa_put_hdr(f, false, conn->v2 ? (MPA_FLAG_ENHANCED | 2) : 1,
		    (uint32_t)pd);
	if (conn->v2) {
		mpa_put_v2(f + off, clamp_limit(ird), clamp_limit(ord), ird_flags,
			   ord_flags);
		off += MPA_V2_LEN;
	}
	if (len)
		memcpy(f + off, pdata, len);
	off += len;
	if (ep->ext_acks) {
		mpa_put_ext(f + off, TCP_EXT_F_ACKS |
			    (conn->ext_early ? TCP_EXT_F_EARLY : 0) |
			    (ep->ext_7306 ? TCP_EXT_F_RFC7306 : 0));
		off += TCP_EXT_LEN;
	}
	free(conn);
	/* a fresh socket's buffer takes the whole reply */
	n = send(ep->fd, f, off, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n != (ssize_t)off) {
		ep->state = TCP_EP_ACCEPTING;
		tcp_ep_fail(ep, DAPL_TCM_CONN_ERROR, n < 0 ? -errno : -EIO);
		pthread_mutex_unlock(&ep->lock);
		return 0;
	}
	if (ep->rtr_pending) {
		ep->state = TCP_EP_ACCEPTING;
		ep->deadline_ms = tcp_now_ms() + dev->handshake_ms;
		tcp_dev_watch(ep);
		tcp_dev_need_tick(dev);   /* the timer watches the deadline */
	} else {
		tcp_ep_go_connected(ep);
		pthread_mutex_lock(&dev->lock);
		dapl_conn_events_queue(&dev->connq, &ep->cev,
				       DAPL_TCM_ESTABLISHED, 0, NULL, 0);
		pthread_mutex_unlock(&dev->lock);
	}
	/* what came behind the request is driven now (nothing may come
	 * after it to wake anyone); the rest, in answer to our reply, wakes
	 * the progress thread on the socket, now watched */
	if (ep->rbuf_wr)
		tcp_ep_drive(ep);
	pthread_mutex_unlock(&ep->lock);
	return 0;
}

/* Ends a request with a reject; conn has been taken. */
static void send_reject(struct dapl_tconn *conn, const void *pdata, size_t len)
{
	uint8_t f[MPA_HDR_LEN + MPA_PD_MAX];
	size_t off = MPA_HDR_LEN;

	mpa_put_hdr(f, false, MPA_FLAG_REJECT |
		    (conn->v2 ? (MPA_FLAG_ENHANCED | 2) : 1),
		    (uint32_t)(len + (conn->v2 ? MPA_V2_LEN : 0)));
	if (conn->v2) {
		mpa_put_v2(f + off, 0, 0, 0, 0);
		off += MPA_V2_LEN;
	}
	if (len)
		memcpy(f + off, pdata, len);
	off += len;
	if (send(conn->fd, f, off, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		off = 0;
	tcp_conn_free(conn);
}

int tcp_reject(struct dapl_tconn *conn, const void *pdata, size_t len)
{
	if (!tcp_conn_take(conn->dev, conn))
		return -ENOENT;
	/* too much data: refused, and the request still ends (without it) */
	if (len > TCP_PDATA_MAX) {
		send_reject(conn, NULL, 0);
		return -EINVAL;
	}
	send_reject(conn, pdata, len);
	return 0;
}

void tcp_ep_become_connected(struct dapl_tep *ep)
{
	struct dapl_tdev *dev = ep->dev;

	tcp_ep_go_connected(ep);
	pthread_mutex_lock(&dev->lock);
	dapl_conn_events_queue(&dev->connq, &ep->cev, DAPL_TCM_ESTABLISHED, 0,
			       NULL, 0);
	pthread_mutex_unlock(&dev->lock);
}
