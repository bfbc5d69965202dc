/* The device: ia_params, the RDMA device behind an address, the progress
 * fds, and listeners. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "env.h"
#include "ia_params.h"
#include "verbs.h"

#define VERBS_ADDR_TIMEOUT_MS 2000
#define VERBS_ROUTE_TIMEOUT_MS 2000
#define VERBS_SWEEP_MS 50
/* The shortest wait a sender is asked to make when no receive is posted
 * here, in the IB encoding (12 = 0.64 ms; 0 would be 655 ms). */
#define VERBS_RNR_TIMER 12

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

static void addr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const void *a = ss->ss_family == AF_INET6 ?
		(const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr :
		(const void *)&((const struct sockaddr_in *)ss)->sin_addr;

	if (!inet_ntop(ss->ss_family, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

/* The largest inline size the device gives a QP (it is not an attribute
 * of the device). */
static uint32_t probe_inline(struct dapl_tdev *dev)
{
	static const uint32_t tries[] = { 1024, 512, 256, 128, 64, 32, 0 };
	struct ibv_qp_init_attr ia;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint32_t got = 0;
	size_t i;

	pd = ibv_alloc_pd(dev->ctx);
	cq = pd ? ibv_create_cq(dev->ctx, 1, NULL, NULL, 0) : NULL;
	for (i = 0; cq && i < sizeof(tries) / sizeof(tries[0]); i++) {
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = cq;
		ia.recv_cq = cq;
		ia.cap.max_send_wr = 1;
		ia.cap.max_recv_wr = 1;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		ia.cap.max_inline_data = tries[i];
		ia.qp_type = IBV_QPT_RC;
		qp = ibv_create_qp(pd, &ia);
		if (qp) {
			got = ia.cap.max_inline_data;
			ibv_destroy_qp(qp);
			break;
		}
	}
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	return got;
}

static enum ibv_mw_type pick_mw(const struct ibv_device_attr *a)
{
	int want = (int)dapl_env_number("DAPL_VERBS_MW", -1, 0, 2);

	/* Type 1 rebinds in one request; type 2 must be invalidated first */
	if (want == 0)
		return 0;
	if ((want == -1 || want == 1) &&
	    (a->device_cap_flags & IBV_DEVICE_MEM_WINDOW) && a->max_mw)
		return IBV_MW_TYPE_1;
	if ((want == -1 || want == 2) &&
	    (a->device_cap_flags & (IBV_DEVICE_MEM_WINDOW_TYPE_2A |
				    IBV_DEVICE_MEM_WINDOW_TYPE_2B)) && a->max_mw)
		return IBV_MW_TYPE_2;
	return 0;
}

static bool is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >>
			24) == 127;
	return ss->ss_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

static void dev_free(struct dapl_tdev *dev)
{
	if (dev->ctx)
		ibv_close_device(dev->ctx);
	if (dev->anchor)
		rdma_destroy_id(dev->anchor);
	if (dev->ch)
		rdma_destroy_event_channel(dev->ch);
	if (dev->notify_fd >= 0)
		close(dev->notify_fd);
	if (dev->timer_fd >= 0)
		close(dev->timer_fd);
	dapl_conn_events_destroy(&dev->connq);
	free(dev->cqs);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

int verbs_dev_open(const char *ia_params, struct dapl_tdev **out, char *why,
		   size_t whylen)
{
	struct ibv_device **list;
	struct dapl_tdev *dev;
	struct dapl_ia_params p;
	const char *where = p.where;    /* the address as ia_params wrote it */
	char astr[INET6_ADDRSTRLEN];
	int n = 0, err;

	if (why && whylen)
		why[0] = '\0';
	if (!out)
		return -EINVAL;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	pthread_mutex_init(&dev->lock, NULL);
	dev->notify_fd = -1;
	dev->timer_fd = -1;
	dev->connq.fd = -1;
	atomic_init(&dev->faults, false);
	/* Our own descriptors first: when the process has none left this
	 * fails with EMFILE, where rdma-core's failures read as "no device". */
	dev->notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	dev->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (dev->notify_fd < 0 || dev->timer_fd < 0) {
		err = -errno;
		dapl_why(why, whylen, "cannot set up event fds: %s", strerror(-err));
		goto fail;
	}
	err = dapl_conn_events_init(&dev->connq);
	if (err) {
		dapl_why(why, whylen, "cannot set up event fds: %s", strerror(-err));
		goto fail;
	}
	err = dapl_ia_params_parse(ia_params, &dapl_verbs_ia_form, &p, why, whylen);
	if (err)
		goto fail;
	dev->addr = p.addr;
	addr_str(&dev->addr, astr, sizeof(astr));
	/* rdma_cm would bind a loopback address to any device, and then
	 * fail to route over it */
	if (is_loopback(&dev->addr)) {
		dapl_why(why, whylen, "%s (%s) is a loopback address, which has no "
		    "RDMA device behind it: name the RDMA netdev or its address",
		    astr, where);
		err = -ENODEV;
		goto fail;
	}

	/* Asked first, so librdmacm never complains on a host without RDMA */
	list = ibv_get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
	if (n <= 0) {
		dapl_why(why, whylen, "this host has no RDMA device (libibverbs "
		    "finds none: is the driver, e.g. rdma_rxe or mlx5_ib, "
		    "loaded?)");
		err = -ENODEV;
		goto fail;
	}
	dev->ch = rdma_create_event_channel();
	if (!dev->ch) {
		err = -(errno ? errno : ENODEV);
		dapl_why(why, whylen, "cannot open the RDMA CM (%s): is rdma_ucm "
		    "loaded and /dev/infiniband/rdma_cm accessible?",
		    strerror(-err));
		goto fail;
	}
	if (rdma_create_id(dev->ch, &dev->anchor, NULL, RDMA_PS_TCP)) {
		err = -errno;
		dapl_why(why, whylen, "rdma_create_id: %s", strerror(-err));
		goto fail;
	}
	dev->addr_len = p.addr_len;
	if (rdma_bind_addr(dev->anchor, (struct sockaddr *)&dev->addr)) {
		err = -errno;
		if (err == -ENODEV || err == -EINVAL)
			dapl_why(why, whylen, "address %s (%s) has no RDMA device "
			    "behind it", astr, where);
		else if (err == -EADDRNOTAVAIL)
			dapl_why(why, whylen, "%s (%s) is not an address of this host",
			    astr, where);
		else
			dapl_why(why, whylen, "cannot bind the RDMA CM to %s (%s): %s",
			    astr, where, strerror(-err));
		if (err == -EINVAL)
			err = -ENODEV;
		goto fail;
	}
	if (!dev->anchor->verbs) {
		dapl_why(why, whylen, "address %s (%s) has no RDMA device behind it",
		    astr, where);
		err = -ENODEV;
		goto fail;
	}
	dev->port_num = dev->anchor->port_num;
	/* An open of our own: its async events are this IA's alone. */
	dev->ctx = ibv_open_device(dev->anchor->verbs->device);
	if (!dev->ctx) {
		err = -(errno ? errno : ENODEV);
		dapl_why(why, whylen, "cannot open RDMA device %s: %s",
		    ibv_get_device_name(dev->anchor->verbs->device),
		    strerror(-err));
		goto fail;
	}
	if (ibv_query_device(dev->ctx, &dev->attr) ||
	    ibv_query_port(dev->ctx, dev->port_num ? dev->port_num : 1,
			   &dev->port_attr)) {
		err = -(errno ? errno : EIO);
		dapl_why(why, whylen, "cannot query RDMA device %s: %s",
		    ibv_get_device_name(dev->ctx->device), strerror(-err));
		goto fail;
	}
	/* The anchor's last use: every QP's INIT attributes (port, P_Key
	 * index), the same for all.  Then it goes: a bound cm_id holds an
	 * ephemeral port of rdma_cm's TCP space while it lives, and a
	 * consumer's dat_psp_create on that port was refused with
	 * DAT_CONN_QUAL_IN_USE (dapltest -T L met it). */
	dev->qp_init_attr.qp_state = IBV_QPS_INIT;
	if (rdma_init_qp_attr(dev->anchor, &dev->qp_init_attr,
			      &dev->qp_init_mask)) {
		err = -errno;
		dapl_why(why, whylen, "rdma_init_qp_attr: %s", strerror(-err));
		goto fail;
	}
	dev->anchor_port = ntohs(rdma_get_src_port(dev->anchor));
	rdma_destroy_id(dev->anchor);
	dev->anchor = NULL;
	if ((err = set_nonblock(dev->ch->fd)) ||
	    (err = set_nonblock(dev->ctx->async_fd))) {
		dapl_why(why, whylen, "cannot set up event fds: %s", strerror(-err));
		goto fail;
	}
	dev->iwarp = dev->ctx->device->transport_type == IBV_TRANSPORT_IWARP;
	if (dev->iwarp) {
		dev->max_pdata_connect = VERBS_IW_PDATA;
		dev->max_pdata_accept = VERBS_IW_PDATA;
		dev->max_pdata_reject = VERBS_IW_PDATA;
	} else {
		dev->max_pdata_connect = VERBS_IB_PDATA_REQ;
		dev->max_pdata_accept = VERBS_IB_PDATA_REP;
		dev->max_pdata_reject = VERBS_IB_PDATA_REJ;
	}
	dev->mw_type = pick_mw(&dev->attr);
	/* The DAT 2.0 IB extensions: InfiniBand and RoCE have Write with
	 * immediate, and atomics where the device says so (rxe does);
	 * iWARP has neither (RFC 5040 has no immediate data, siw no
	 * atomics), and an atomic needs the responder resources of a Read. */
	if (!dev->iwarp) {
		dev->ext |= DAPL_TDEV_WRITE_IMM;
		if (dev->attr.atomic_cap != IBV_ATOMIC_NONE &&
		    dev->attr.max_qp_rd_atom > 0 &&
		    dev->attr.max_qp_init_rd_atom > 0)
			dev->ext |= DAPL_TDEV_ATOMICS;
	}
	dev->max_inline = probe_inline(dev);
	dev->default_inline = (uint32_t)dapl_env_number("DAPL_VERBS_INLINE",
							 VERBS_DEFAULT_INLINE, 0, 65536);
	if (dev->default_inline > dev->max_inline)
		dev->default_inline = dev->max_inline;
	dev->addr_timeout_ms = (int)dapl_env_number("DAPL_CM_ARP_TIMEOUT_MS",
						    VERBS_ADDR_TIMEOUT_MS, 1, 600000);
	dev->route_timeout_ms = (int)dapl_env_number("DAPL_CM_ROUTE_TIMEOUT_MS",
						     VERBS_ROUTE_TIMEOUT_MS, 1,
						     600000);
	dev->sweep_ms = (int)dapl_env_number("DAPL_VERBS_SWEEP_MS",
					     VERBS_SWEEP_MS, 1, 60000);
	dev->retry = (uint8_t)dapl_env_number("DAPL_VERBS_RETRY", 7, 0, 7);
	dev->rnr_retry = (uint8_t)dapl_env_number("DAPL_VERBS_RNR_RETRY", 7, 0, 7);
	dev->rnr_timer = (uint8_t)dapl_env_number("DAPL_VERBS_RNR_TIMER",
						  VERBS_RNR_TIMER, 0, 31);
	dev->ack_timeout = (uint8_t)dapl_env_number("DAPL_VERBS_ACK_TIMEOUT",
						    0, 0, 31);
	/* IBV_MTU_256 (1) .. IBV_MTU_4096 (5) */
	if (dev->port_attr.active_mtu >= IBV_MTU_256 &&
	    dev->port_attr.active_mtu <= IBV_MTU_4096)
		snprintf(dev->mtu, sizeof(dev->mtu), "%u",
			 128u << dev->port_attr.active_mtu);
	snprintf(dev->name, sizeof(dev->name), "%s",
		 ibv_get_device_name(dev->ctx->device));
	snprintf(dev->vendor, sizeof(dev->vendor),
		 "verbs vendor 0x%x part %u hw %u", dev->attr.vendor_id,
		 dev->attr.vendor_part_id, dev->attr.hw_ver);
	*out = dev;
	return 0;
fail:
	dev_free(dev);
	return err;
}

int verbs_dev_query(struct dapl_tdev *dev, struct dapl_tdev_attr *a)
{
	const struct ibv_device_attr *d = &dev->attr;
	uint32_t sge = (uint32_t)d->max_sge;

	if (!dev || !a)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", dev->name);
	snprintf(a->vendor, sizeof(a->vendor), "%s", dev->vendor);
	memcpy(&a->addr, &dev->addr, sizeof(a->addr));
	a->max_qp = (uint32_t)d->max_qp;
	a->max_qp_wr = (uint32_t)d->max_qp_wr;
	a->max_cq = (uint32_t)d->max_cq;
	a->max_cqe = (uint32_t)d->max_cqe;
	a->max_sge = sge > VERBS_MAX_SGE ? VERBS_MAX_SGE : sge;
	/* 0 from a device that does not say: as for any request */
	if (d->max_sge_rd > 0 && (uint32_t)d->max_sge_rd < a->max_sge)
		a->max_sge_rd = (uint32_t)d->max_sge_rd;
	a->max_srq = (uint32_t)d->max_srq;
	a->max_srq_wr = (uint32_t)d->max_srq_wr;
	a->max_mr = (uint32_t)d->max_mr;
	/* emulated windows are registrations */
	a->max_mw = dev->mw_type ? (uint32_t)d->max_mw : (uint32_t)d->max_mr;
	a->max_pd = (uint32_t)d->max_pd;
	a->max_inline = dev->max_inline;
	a->max_mr_size = d->max_mr_size;
	a->max_msg_size = dev->port_attr.max_msg_sz;
	a->max_rdma_size = dev->port_attr.max_msg_sz;
	/* rdma_conn_param carries them in 8 bits */
	a->max_ird = (uint16_t)(d->max_qp_rd_atom > 255 ? 255 : d->max_qp_rd_atom);
	a->max_ord = (uint16_t)(d->max_qp_init_rd_atom > 255 ? 255 :
				d->max_qp_init_rd_atom);
	a->max_pdata_connect = dev->max_pdata_connect;
	a->max_pdata_accept = dev->max_pdata_accept;
	a->max_pdata_reject = dev->max_pdata_reject;
	a->flags = DAPL_TDEV_SOLICITED_EVENTS | DAPL_TDEV_FENCE;
	/* iWARP completes a Write once TCP took it and flushes a refused
	 * Read when the peer's Terminate ends the connection: the
	 * initiator never learns the error as its request's status */
	if (!dev->iwarp)
		a->flags |= DAPL_TDEV_REMOTE_ACCESS_ERRORS;
	if (dev->mw_type)
		a->flags |= DAPL_TDEV_MEMORY_WINDOWS;
	a->flags |= dev->ext;
	/* OpenFabrics' name for the path MTU: dtestsrq sizes its messages
	 * by it and refuses to run without it */
	if (dev->mtu[0]) {
		a->specific[a->nspecific].name = "DAT_IB_TRANSPORT_MTU";
		a->specific[a->nspecific].value = dev->mtu;
		a->nspecific++;
	}
	return 0;
}

void verbs_conn_free(struct dapl_tconn *conn)
{
	struct dapl_tdev *dev = conn->dev;
	struct dapl_tconn **pp;

	for (pp = &dev->conns; *pp; pp = &(*pp)->next)
		if (*pp == conn) {
			*pp = conn->next;
			break;
		}
	if (conn->id)
		rdma_destroy_id(conn->id);
	free(conn);
}

void verbs_dev_close(struct dapl_tdev *dev)
{
	struct dapl_tlisten *l;

	if (!dev)
		return;
	pthread_mutex_lock(&dev->lock);
	/* requests nobody answered are refused */
	while (dev->conns) {
		rdma_reject(dev->conns->id, NULL, 0);
		verbs_conn_free(dev->conns);
	}
	while ((l = dev->listeners)) {
		dev->listeners = l->next;
		rdma_destroy_id(l->id);
		free(l);
	}
	pthread_mutex_unlock(&dev->lock);
	dev_free(dev);
}

int verbs_progress_fds(struct dapl_tdev *dev, int *fds, int max)
{
	int all[5] = { dev->ch->fd, dev->ctx->async_fd, dev->notify_fd,
		       dev->timer_fd, dapl_conn_events_fd(&dev->connq) };
	int i;

	for (i = 0; i < 5 && i < max; i++)
		fds[i] = all[i];
	return i;
}

void verbs_dev_track(struct dapl_tdev *dev, enum verbs_ep_state old,
		     enum verbs_ep_state st)
{
	struct itimerspec its;
	long ns = (long)dev->sweep_ms * 1000000L;

	if ((old == VERBS_EP_CONNECTED) == (st == VERBS_EP_CONNECTED))
		return;
	memset(&its, 0, sizeof(its));
	if (st == VERBS_EP_CONNECTED) {
		if (dev->nconnected++ > 0)
			return;
		its.it_interval.tv_sec = ns / 1000000000L;
		its.it_interval.tv_nsec = ns % 1000000000L;
		its.it_value = its.it_interval;
	} else if (--dev->nconnected > 0) {
		return;
	}
	timerfd_settime(dev->timer_fd, 0, &its, NULL);
}

int verbs_dev_add_cq(struct dapl_tdev *dev, struct dapl_tcq *cq)
{
	if (dev->ncqs == dev->cqs_cap) {
		int cap = dev->cqs_cap ? 2 * dev->cqs_cap : 8;
		struct dapl_tcq **n = realloc(dev->cqs, (size_t)cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		dev->cqs = n;
		dev->cqs_cap = cap;
	}
	dev->cqs[dev->ncqs++] = cq;
	return 0;
}

void verbs_dev_remove_cq(struct dapl_tdev *dev, struct dapl_tcq *cq)
{
	int i;

	for (i = 0; i < dev->ncqs; i++)
		if (dev->cqs[i] == cq) {
			dev->cqs[i] = dev->cqs[--dev->ncqs];
			return;
		}
}

void verbs_dev_sweep(struct dapl_tdev *dev)
{
	uint64_t n;
	int i;

	if (read(dev->timer_fd, &n, sizeof(n)) <= 0)
		return;
	for (i = 0; i < dev->ncqs; i++) {
		struct dapl_tcq *cq = dev->cqs[i];

		/* a CQ its consumer is busy with needs nobody else */
		if (pthread_mutex_trylock(&cq->lock))
			continue;
		if (cq->polls == cq->polls_seen) {
			verbs_cq_drain(cq);
			verbs_cq_kick(cq);
		}
		cq->polls_seen = cq->polls;
		pthread_mutex_unlock(&cq->lock);
	}
}

void verbs_dev_notify(struct dapl_tdev *dev)
{
	uint64_t one = 1;

	if (write(dev->notify_fd, &one, sizeof(one)) < 0)
		return;         /* saturated: readable anyway */
}

int verbs_listen(struct dapl_tdev *dev, uint16_t *port, struct dapl_tlisten **out)
{
	struct sockaddr_storage ss = dev->addr;
	struct dapl_tlisten *l;
	int err;

	if (!port || !out)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->kind = VERBS_KIND_LISTENER;
	l->dev = dev;
	if (ss.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(*port);
	else
		((struct sockaddr_in *)&ss)->sin_port = htons(*port);
	pthread_mutex_lock(&dev->lock);
	if (rdma_create_id(dev->ch, &l->id, l, RDMA_PS_TCP)) {
		err = -errno;
		goto fail;
	}
	if (rdma_bind_addr(l->id, (struct sockaddr *)&ss) ||
	    rdma_listen(l->id, VERBS_LISTEN_BACKLOG)) {
		err = -errno;
		rdma_destroy_id(l->id);
		goto fail;
	}
	l->port = ntohs(rdma_get_src_port(l->id));
	l->next = dev->listeners;
	dev->listeners = l;
	pthread_mutex_unlock(&dev->lock);
	*port = l->port;
	*out = l;
	return 0;
fail:
	pthread_mutex_unlock(&dev->lock);
	free(l);
	return err;
}

void verbs_unlisten(struct dapl_tlisten *l)
{
	struct dapl_tdev *dev;
	struct dapl_tlisten **pp;
	struct dapl_tconn *c;

	if (!l)
		return;
	dev = l->dev;
	pthread_mutex_lock(&dev->lock);
	for (pp = &dev->listeners; *pp; pp = &(*pp)->next)
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	/* Requests already reported stay answerable; their ids are their
	 * own.  New ones find nobody listening. */
	for (c = dev->conns; c; c = c->next)
		if (c->listener == l)
			c->listener = NULL;
	rdma_destroy_id(l->id);
	pthread_mutex_unlock(&dev->lock);
	free(l);
}
