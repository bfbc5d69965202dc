/* The device: ia_params, fabric + domain + the endpoints' EQ, and the
 * progress fd.  Listeners are in ofi_listen.c. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "env.h"
#include "ia_params.h"
#include "ofi.h"

_Static_assert(sizeof(((struct dapl_tdev *)0)->prov) == DAPL_OFI_PROV_MAX,
	       "dapl_ofi_ia_form's word_max is the size of dev->prov");

#define OFI_API_VERSION FI_VERSION(1, 17)

int ofi_err(ssize_t ret)
{
	if (ret >= 0)
		return 0;
	switch (-ret) {
	case FI_ETRUNC:
	case FI_ETOOSMALL:
		return -EMSGSIZE;
	case FI_ENOKEY:
		return -ENOKEY;
	case FI_EBADFLAGS:
	case FI_ENOEQ:
	case FI_EDOMAIN:
	case FI_ENOCQ:
		return -EINVAL;
	case FI_EOPBADSTATE:
		return -EBUSY;
	case FI_EAVAIL:
		return -EAGAIN;
	case FI_EOTHER:
	case FI_ECRC:
		return -EIO;
	default:
		return ret < -4095 ? -EIO : (int)ret;
	}
}

size_t ofi_sa_len(int family)
{
	if (family == AF_INET)
		return sizeof(struct sockaddr_in);
	if (family == AF_INET6)
		return sizeof(struct sockaddr_in6);
	return 0;
}

bool ofi_sa_copy(struct sockaddr_storage *out, const void *sa, size_t len)
{
	sa_family_t family;
	size_t need;

	memset(out, 0, sizeof(*out));
	if (!sa || len < sizeof(family))
		return false;
	memcpy(&family, (const uint8_t *)sa +
	       offsetof(struct sockaddr, sa_family), sizeof(family));
	need = ofi_sa_len(family);
	if (!need || len < need)
		return false;
	memcpy(out, sa, need);
	return true;
}

void ofi_sa_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

uint16_t ofi_sa_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

/* The address as text (no port). */
static void addr_text(const struct sockaddr_storage *ss, char *buf,
		      size_t len)
{
	const void *a = ss->ss_family == AF_INET6 ?
		(const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr :
		(const void *)&((const struct sockaddr_in *)ss)->sin_addr;

	if (!inet_ntop(ss->ss_family, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

static struct fi_info *make_hints(const char *prov,
				  const struct sockaddr_storage *ss)
{
	struct fi_info *h = fi_allocinfo();
	size_t len = ofi_sa_len(ss->ss_family);

	if (!h)
		return NULL;
	h->fabric_attr->prov_name = strdup(prov);
	h->src_addr = malloc(len);
	if (!h->fabric_attr->prov_name || !h->src_addr) {
		fi_freeinfo(h);
		return NULL;
	}
	memcpy(h->src_addr, ss, len);
	h->src_addrlen = len;
	h->addr_format = ss->ss_family == AF_INET6 ? FI_SOCKADDR_IN6 :
			 FI_SOCKADDR_IN;
	h->ep_attr->type = FI_EP_MSG;
	h->caps = FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ |
		  FI_REMOTE_WRITE;
	/* Virtual addresses, keys we choose (see get_info) */
	h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED;
	h->domain_attr->threading = FI_THREAD_SAFE;
	h->tx_attr->size = OFI_QUEUE_MAX;
	h->rx_attr->size = OFI_QUEUE_MAX;
	return h;
}

/* Finds the fi_info, telling "no such provider" from "cannot do it". */
/* *own_keys: the provider takes the keys we ask for (ofi_mem.c makes
 * them unpredictable), else it picks them (FI_MR_BASIC, tcp's are 1, 2,
 * 3 ...).  tcp 1.17 answers the modern mode with mr_mode 0, which would
 * mean offset addressing: the domain is opened with FI_MR_VIRT_ADDR set
 * again, which it honours. */
static int get_info(const char *prov, const struct sockaddr_storage *ss,
		    struct fi_info **info, bool *own_keys, char *why,
		    size_t whylen)
{
	struct fi_info *h, *any = NULL;
	char addr[INET6_ADDRSTRLEN];
	int ret;

	addr_text(ss, addr, sizeof(addr));
	h = make_hints(prov, ss);
	if (!h) {
		dapl_why(why, whylen, "out of memory");
		return -ENOMEM;
	}
	ret = fi_getinfo(OFI_API_VERSION, NULL, NULL, 0, h, info);
	if (!ret && ((*info)->domain_attr->mr_mode & FI_MR_PROV_KEY)) {
		fi_freeinfo(*info);
		*info = NULL;
		ret = -FI_ENODATA;
	}
	if (!ret) {
		(*info)->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED;
		*own_keys = true;
		fi_freeinfo(h);
		return 0;
	}
	h->domain_attr->mr_mode = FI_MR_BASIC;
	ret = fi_getinfo(OFI_API_VERSION, NULL, NULL, 0, h, info);
	fi_freeinfo(h);
	*own_keys = false;
	if (!ret)
		return 0;

	h = fi_allocinfo();
	if (h) {
		h->fabric_attr->prov_name = strdup(prov);
		if (h->fabric_attr->prov_name &&
		    fi_getinfo(OFI_API_VERSION, NULL, NULL, 0, h, &any) == 0) {
			fi_freeinfo(any);
			dapl_why(why, whylen,
			    "libfabric provider \"%s\" has no FI_EP_MSG "
			    "endpoint with messages, RDMA read/write, "
			    "FI_MR_BASIC and %d-deep queues on %s (fi_getinfo:"
			    " %s); use \"tcp\"", prov, OFI_QUEUE_MAX, addr,
			    fi_strerror(-ret));
		} else {
			dapl_why(why, whylen,
			    "libfabric has no provider \"%s\" (fi_getinfo: %s);"
			    " \"fi_info -l\" lists the installed ones, e.g. "
			    "tcp", prov, fi_strerror(-ret));
		}
		fi_freeinfo(h);
	}
	return ret == -FI_ENODATA ? -ENODEV : ofi_err(ret);
}

static int epoll_add(int epfd, int fd)
{
	struct epoll_event e = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e) ? -errno : 0;
}

int ofi_dev_open(const char *ia_params, struct dapl_tdev **devp, char *why,
		 size_t whylen)
{
	struct fi_eq_attr eqa;
	struct dapl_tdev *dev;
	struct dapl_ia_params p;
	char addr[INET6_ADDRSTRLEN];
	uint32_t v;
	int ret;

	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		dapl_why(why, whylen, "out of memory");
		return -ENOMEM;
	}
	dev->eq_fd = dev->epfd = dev->notify_fd = dev->timer_fd = -1;
	dev->leq_fd = dev->lstop_fd = dev->watch_fd = -1;
	dev->connq.fd = -1;
	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->progress_lock, NULL);
	pthread_mutex_init(&dev->quiet_lock, NULL);
	dev->peer_timeout_ms = (unsigned)dapl_env_number(
		"DAPL_OFI_PEER_TIMEOUT_MS", OFI_PEER_TIMEOUT_MS, 0, 3600000);
	dev->sock_hint = -1;
	/* a debug knob: 0 shows what only the tick would rescue */
	dev->tick_ns = (uint64_t)dapl_env_number("DAPL_OFI_TICK_MS", OFI_TICK_MS,
						 0, 60000) * 1000000u;

	/* Our own descriptors first: when the process has none left this
	 * fails with EMFILE, where libfabric's failures lose the errno. */
	dev->epfd = epoll_create1(EPOLL_CLOEXEC);
	dev->notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	dev->timer_fd = timerfd_create(CLOCK_MONOTONIC,
				       TFD_NONBLOCK | TFD_CLOEXEC);
	if (dev->epfd < 0 || dev->notify_fd < 0 || dev->timer_fd < 0) {
		ret = -errno;
		dapl_why(why, whylen, "cannot make the progress fd: %s",
		    strerror(errno));
		goto err;
	}
	ret = dapl_conn_events_init(&dev->connq);
	if (ret) {
		dapl_why(why, whylen, "cannot make the progress fd: %s",
		    strerror(-ret));
		goto err;
	}

	ret = dapl_ia_params_parse(ia_params, &dapl_ofi_ia_form, &p, why, whylen);
	if (ret)
		goto err;
	/* shorter than word_max, dev->prov's size */
	memcpy(dev->prov, p.word, strlen(p.word) + 1);
	dev->addr = p.addr;
	ret = get_info(dev->prov, &dev->addr, &dev->info, &dev->own_keys, why,
		       whylen);
	if (ret)
		goto err;
	/* the address it answered with (ours) with no port: fid_eps bind
	 * to it, a listener sets its own port with fi_setname */
	if (dev->info->src_addr) {
		struct sockaddr_storage src;

		if (ofi_sa_copy(&src, dev->info->src_addr,
				dev->info->src_addrlen) &&
		    src.ss_family == dev->addr.ss_family) {
			ofi_sa_set_port(&src, 0);
			memcpy(dev->info->src_addr, &src,
			       ofi_sa_len(src.ss_family));
		}
	}
	dev->info_srx = fi_dupinfo(dev->info);
	if (!dev->info_srx) {
		dapl_why(why, whylen, "out of memory");
		ret = -ENOMEM;
		goto err;
	}
	dev->info_srx->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;

	ret = ofi_err(fi_fabric(dev->info->fabric_attr, &dev->fabric, NULL));
	if (ret) {
		dapl_why(why, whylen, "libfabric fi_fabric failed: %s",
		    fi_strerror(-ret));
		goto err;
	}
	ret = ofi_err(fi_domain(dev->fabric, dev->info, &dev->domain, NULL));
	if (ret) {
		dapl_why(why, whylen, "libfabric fi_domain failed: %s",
		    fi_strerror(-ret));
		goto err;
	}
	memset(&eqa, 0, sizeof(eqa));
	eqa.size = 1024;
	eqa.wait_obj = FI_WAIT_FD;
	ret = ofi_err(fi_eq_open(dev->fabric, &eqa, &dev->eq, NULL));
	if (!ret)
		ret = ofi_err(fi_control(&dev->eq->fid, FI_GETWAIT,
					 &dev->eq_fd));
	if (ret) {
		dapl_why(why, whylen, "libfabric event queue failed: %s",
		    fi_strerror(-ret));
		goto err;
	}
	ret = ofi_listen_init(dev);
	if (ret) {
		dapl_why(why, whylen, "libfabric event queue for listeners failed: %s",
		    fi_strerror(-ret));
		goto err;
	}
	ret = epoll_add(dev->epfd, dev->eq_fd);
	if (!ret)
		ret = epoll_add(dev->epfd, dev->notify_fd);
	if (!ret)
		ret = epoll_add(dev->epfd, dapl_conn_events_fd(&dev->connq));
	if (!ret)
		ret = epoll_add(dev->epfd, dev->timer_fd);
	if (!ret)
		ret = ofi_dev_sync_waits(dev);
	if (ret) {
		dapl_why(why, whylen, "cannot make the progress fd: %s",
		    strerror(-ret));
		goto err;
	}

	addr_text(&dev->addr, addr, sizeof(addr));
	snprintf(dev->name, sizeof(dev->name), "ofi %s %s",
		 dev->info->fabric_attr->prov_name, addr);
	v = fi_version();
	snprintf(dev->vendor, sizeof(dev->vendor), "libfabric %u.%u",
		 FI_MAJOR(v), FI_MINOR(v));
	snprintf(dev->rma_hole, sizeof(dev->rma_hole),
		 "libfabric %u.%u checks an incoming RDMA Read or Write range "
		 "without guarding against wrap-around (as every release "
		 "before ofiwg/libfabric pull request 12826, Sept. 2026): a "
		 "peer holding a remote-write rmr_context of this process "
		 "can write past the end of that region, or crash the "
		 "process "
		 "(dapl_ofi(3))", FI_MAJOR(v), FI_MINOR(v));
	*devp = dev;
	return 0;
err:
	ofi_dev_close(dev);
	return ret < 0 ? ret : -EINVAL;
}

int ofi_dev_query(struct dapl_tdev *dev, struct dapl_tdev_attr *a)
{
	const struct fi_info *fi = dev->info;
	uint64_t msg = fi->ep_attr->max_msg_size;

	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", dev->name);
	snprintf(a->vendor, sizeof(a->vendor), "%s", dev->vendor);
	memcpy(&a->addr, &dev->addr, sizeof(dev->addr));
	a->max_qp = fi->domain_attr->ep_cnt ? (uint32_t)
		    (fi->domain_attr->ep_cnt > 65536 ? 65536 :
		     fi->domain_attr->ep_cnt) : 65536;
	a->max_qp_wr = (uint32_t)(fi->tx_attr->size < fi->rx_attr->size ?
				  fi->tx_attr->size : fi->rx_attr->size);
	a->max_cq = fi->domain_attr->cq_cnt ? (uint32_t)
		    (fi->domain_attr->cq_cnt > 65536 ? 65536 :
		     fi->domain_attr->cq_cnt) : 65536;
	a->max_cqe = 1u << 20;          /* software CQ: bounded by slots */
	a->max_sge = (uint32_t)(fi->tx_attr->iov_limit < OFI_MAX_SGE ?
				fi->tx_attr->iov_limit : OFI_MAX_SGE);
	if (fi->rx_attr->iov_limit < a->max_sge)
		a->max_sge = (uint32_t)fi->rx_attr->iov_limit;
	a->max_srq = 65536;
	a->max_srq_wr = (uint32_t)fi->rx_attr->size;
	a->max_mr = fi->domain_attr->mr_cnt ? (uint32_t)
		    (fi->domain_attr->mr_cnt > UINT32_MAX ? UINT32_MAX :
		     fi->domain_attr->mr_cnt) : 65536;
	a->max_mw = a->max_mr;          /* emulated by registrations */
	a->max_pd = 65536;              /* tokens */
	a->max_inline = 0;              /* fi_inject is never used */
	a->max_mr_size = UINT64_MAX >> 1;   /* no pinning: any mapped range */
	a->max_msg_size = msg > UINT32_MAX ? UINT32_MAX : msg;
	a->max_rdma_size = a->max_msg_size;
	a->max_ird = OFI_READS_MAX;
	a->max_ord = OFI_READS_MAX;
	a->max_pdata_connect = OFI_CM_DATA_MAX;
	a->max_pdata_accept = OFI_CM_DATA_MAX;
	a->max_pdata_reject = OFI_CM_DATA_MAX;
	a->flags = DAPL_TDEV_FENCE;     /* posts held until earlier reads are in */
	a->specific[0].name = "rma_target_range_check";
	a->specific[0].value = dev->rma_hole;
	a->specific[1].name = "protection_zones";
	a->specific[1].value = "enforced for incoming RDMA: each PZ is a "
		"libfabric domain of its own";
	a->specific[2].name = "remote_access_errors";
	a->specific[2].value = "none: a bad rmr_context, range or right at "
		"the target ends the connection instead";
	a->nspecific = 3;
	return 0;
}

void ofi_dev_close(struct dapl_tdev *dev)
{
	if (!dev)
		return;
	/* the listeners and their threads first: they use the fabric */
	ofi_listen_fini(dev);
	ofi_srq_free_all(dev);
	if (dev->eq)
		fi_close(&dev->eq->fid);
	if (dev->domain)
		fi_close(&dev->domain->fid);
	if (dev->fabric)
		fi_close(&dev->fabric->fid);
	if (dev->info)
		fi_freeinfo(dev->info);
	if (dev->info_srx)
		fi_freeinfo(dev->info_srx);
	if (dev->epfd >= 0)
		close(dev->epfd);
	if (dev->notify_fd >= 0)
		close(dev->notify_fd);
	if (dev->timer_fd >= 0)
		close(dev->timer_fd);
	dapl_conn_events_destroy(&dev->connq);
	free(dev->cqs);
	free(dev->wait_fids);
	pthread_mutex_destroy(&dev->lock);
	pthread_mutex_destroy(&dev->progress_lock);
	pthread_mutex_destroy(&dev->quiet_lock);
	free(dev);
}

int ofi_progress_fds(struct dapl_tdev *dev, int *fds, int max)
{
	int i;

	if (max < 1 || !fds)
		return -EINVAL;
	/* A consumer thread about to wait for a connection event (the
	 * core's waiter sleeps on these fds) is not spinning on the CQs it
	 * polled last: take them back now, or a disconnect on their
	 * endpoints would be noticed only at the tick. */
	pthread_mutex_lock(&dev->lock);
	for (i = 0; i < dev->ncqs; i++) {
		struct dapl_tcq *cq = dev->cqs[i];

		pthread_mutex_lock(&cq->lock);
		if (pthread_equal(cq->poller, pthread_self())) {
			/* its empty polls so far are the past */
			cq->empty_seen = cq->empty_polls;
			ofi_cq_drive(cq, false);
		}
		pthread_mutex_unlock(&cq->lock);
	}
	pthread_mutex_unlock(&dev->lock);
	fds[0] = dev->epfd;
	return 1;
}

void ofi_dev_notify(struct dapl_tdev *dev)
{
	uint64_t one = 1;

	if (write(dev->notify_fd, &one, sizeof(one)) < 0) {
		/* saturated: readable already */
	}
}

/* ---- CQs in the progress pump ------------------------------------------------- */

/* Room for the fi_trywait list: the EQ and every CQ and sub-CQ (each
 * try_wait lists those that listen).  Only ofi_dev_add_cq/add_subcq
 * grow it, so the others cannot fail. */
int ofi_dev_sync_waits(struct dapl_tdev *dev)
{
	int need = 1, i;
	struct ofi_subcq *sub;

	for (i = 0; i < dev->ncqs; i++) {
		need++;
		for (sub = dev->cqs[i]->subs; sub; sub = sub->next)
			need++;
	}
	if (need > dev->wait_cap) {
		struct fid **fids = realloc(dev->wait_fids,
					    (size_t)need * sizeof(*fids));

		if (!fids)
			return -ENOMEM;
		dev->wait_fids = fids;
		dev->wait_cap = need;
	}
	return 0;
}

/* ---- driven CQs ----------------------------------------------------------------
 *
 * A CQ the consumer spins on is "driven": its own fi_cq_read moves the
 * data of every endpoint bound to it, so the progress thread need not
 * wake for them, and waking it would cost the peer's send a cross-CPU
 * wakeup per message (the 8 B ping-pong ran 4-5x slower so).  Each time
 * the thread is about to sleep it looks: a CQ polled empty
 * OFI_BUSY_POLLS times since its last look, and not armed, is driven,
 * any other is not.  A driven CQ's fds, and those of a partner CQ all of
 * whose endpoints are also on it (tcp's CQ fd watches the sockets of
 * every endpoint bound to the CQ), stay registered in the progress set
 * with no events (quiet).  Nothing else is quiet: an endpoint the
 * consumer does not drive, say while it spins on another EVD, wakes the
 * thread at its first arrival (until 2026-11-28 every CQ of the IA went
 * out and only the tick brought them back: 2 ms per RDMA operation).
 * A waiter arming the CQ hands it back at once, and so does the thread
 * that polled it last when it goes to wait for a connection event
 * (ofi_progress_fds); a consumer that stops polling a driven CQ
 * otherwise is noticed at the thread's next look, which the tick
 * (DAPL_OFI_TICK_MS) guarantees within 2 ms.  Re-enabled fds are
 * level-triggered: data already waiting wakes the thread.  All of it
 * under dev->quiet_lock. */

/* quiet_lock held: whether every endpoint on cq is also on a driven CQ. */
static bool cq_want_quiet(struct dapl_tcq *cq)
{
	int i;

	if (cq->driven)
		return true;
	for (i = 0; i < cq->nlinks; i++)
		if (cq->links[i].cq->driven && cq->links[i].eps == cq->eps)
			return true;
	return false;
}

static void fd_events(struct dapl_tdev *dev, int fd, uint32_t events)
{
	struct epoll_event e = { .events = events, .data.fd = fd };

	epoll_ctl(dev->epfd, EPOLL_CTL_MOD, fd, &e);
}

/* quiet_lock held: cq's fds quiet or listening, as they should be. */
static void cq_apply(struct dapl_tdev *dev, struct dapl_tcq *cq)
{
	bool on = !cq_want_quiet(cq);
	uint32_t ev = on ? EPOLLIN : 0;
	struct ofi_subcq *sub;

	if (on == cq->fds_on)
		return;
	cq->fds_on = on;
	fd_events(dev, cq->fcq_fd, ev);
	for (sub = cq->subs; sub; sub = sub->next)
		fd_events(dev, sub->fd, ev);
}

static void tick_arm(struct dapl_tdev *dev)
{
	struct itimerspec its;

	if (!dev->tick_ns || dev->tick_set)
		return;
	dev->tick_set = true;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(dev->tick_ns / 1000000000u);
	its.it_value.tv_nsec = (long)(dev->tick_ns % 1000000000u);
	timerfd_settime(dev->timer_fd, 0, &its, NULL);
}

void ofi_cq_drive(struct dapl_tcq *cq, bool on)
{
	struct dapl_tdev *dev = cq->dev;
	int i;

	pthread_mutex_lock(&dev->quiet_lock);
	if (cq->driven != on) {
		cq->driven = on;
		cq_apply(dev, cq);
		for (i = 0; i < cq->nlinks; i++)
			cq_apply(dev, cq->links[i].cq);
	}
	if (cq->driven)
		tick_arm(dev);
	pthread_mutex_unlock(&dev->quiet_lock);
}

/* quiet_lock held: a counts one endpoint more (delta 1) or less (-1)
 * that is also on b. */
static int cq_link(struct dapl_tcq *a, struct dapl_tcq *b, int delta)
{
	int i;

	for (i = 0; i < a->nlinks; i++)
		if (a->links[i].cq == b)
			break;
	if (i == a->nlinks) {
		if (delta < 0)
			return 0;
		if (a->nlinks == a->links_cap) {
			int cap = a->links_cap ? 2 * a->links_cap : 4;
			struct ofi_cqlink *l = realloc(a->links,
						      (size_t)cap * sizeof(*l));

			if (!l)
				return -ENOMEM;
			a->links = l;
			a->links_cap = cap;
		}
		a->links[i].cq = b;
		a->links[i].eps = 0;
		a->nlinks++;
	}
	a->links[i].eps += delta;
	if (a->links[i].eps == 0)
		a->links[i] = a->links[--a->nlinks];
	return 0;
}

int ofi_dev_link_ep(struct dapl_tdev *dev, struct dapl_tcq *scq,
		    struct dapl_tcq *rcq, int delta)
{
	int ret = 0;

	pthread_mutex_lock(&dev->quiet_lock);
	if (scq != rcq) {
		ret = cq_link(scq, rcq, delta);
		if (!ret) {
			ret = cq_link(rcq, scq, delta);
			if (ret)
				cq_link(scq, rcq, -delta);
		}
		if (!ret)
			rcq->eps += delta;
	}
	if (!ret) {
		scq->eps += delta;
		cq_apply(dev, scq);
		cq_apply(dev, rcq);
	}
	pthread_mutex_unlock(&dev->quiet_lock);
	return ret;
}

int ofi_dev_add_cq(struct dapl_tdev *dev, struct dapl_tcq *cq)
{
	int ret;

	if (dev->ncqs == dev->cqs_cap) {
		int cap = dev->cqs_cap ? 2 * dev->cqs_cap : 8;
		struct dapl_tcq **cqs;

		cqs = realloc(dev->cqs, (size_t)cap * sizeof(*cqs));
		if (!cqs)
			return -ENOMEM;
		dev->cqs = cqs;
		dev->cqs_cap = cap;
	}
	ret = epoll_add(dev->epfd, cq->fcq_fd);
	if (ret)
		return ret;
	cq->fds_on = true;
	dev->cqs[dev->ncqs++] = cq;
	ret = ofi_dev_sync_waits(dev);
	if (ret) {
		dev->ncqs--;
		epoll_ctl(dev->epfd, EPOLL_CTL_DEL, cq->fcq_fd, NULL);
	}
	return ret;
}

void ofi_dev_remove_cq(struct dapl_tdev *dev, struct dapl_tcq *cq)
{
	int i;

	epoll_ctl(dev->epfd, EPOLL_CTL_DEL, cq->fcq_fd, NULL);
	for (i = 0; i < dev->ncqs; i++) {
		if (dev->cqs[i] == cq) {
			dev->cqs[i] = dev->cqs[--dev->ncqs];
			break;
		}
	}
	ofi_dev_sync_waits(dev);
}

int ofi_dev_add_subcq(struct dapl_tdev *dev, struct dapl_tcq *cq,
		      struct ofi_subcq *sub)
{
	struct epoll_event e = { .data.fd = sub->fd };
	int ret;

	pthread_mutex_lock(&dev->quiet_lock);
	e.events = cq->fds_on ? EPOLLIN : 0;
	ret = epoll_ctl(dev->epfd, EPOLL_CTL_ADD, sub->fd, &e) ? -errno : 0;
	if (!ret) {
		sub->next = cq->subs;
		cq->subs = sub;
	}
	pthread_mutex_unlock(&dev->quiet_lock);
	if (ret)
		return ret;
	ret = ofi_dev_sync_waits(dev);
	if (ret)
		ofi_dev_remove_subcq(dev, cq, sub);
	return ret;
}

void ofi_dev_remove_subcq(struct dapl_tdev *dev, struct dapl_tcq *cq,
			  struct ofi_subcq *sub)
{
	struct ofi_subcq **pp;

	pthread_mutex_lock(&dev->quiet_lock);
	for (pp = &cq->subs; *pp; pp = &(*pp)->next) {
		if (*pp == sub) {
			*pp = sub->next;
			break;
		}
	}
	epoll_ctl(dev->epfd, EPOLL_CTL_DEL, sub->fd, NULL);
	pthread_mutex_unlock(&dev->quiet_lock);
	ofi_dev_sync_waits(dev);
}

bool ofi_dev_tick(struct dapl_tdev *dev)
{
	bool fired = false;
	uint64_t v;

	while (read(dev->timer_fd, &v, sizeof(v)) > 0)
		fired = true;
	pthread_mutex_lock(&dev->quiet_lock);
	dev->tick_set = false;
	pthread_mutex_unlock(&dev->quiet_lock);
	return fired;
}

void ofi_dev_update_busy(struct dapl_tdev *dev)
{
	int i;

	for (i = 0; i < dev->ncqs; i++) {
		struct dapl_tcq *cq = dev->cqs[i];

		pthread_mutex_lock(&cq->lock);
		/* not by the thread looking: a consumer that polled it and
		 * now pumps events itself (a waiter on a connection EVD) is
		 * not spinning on it any more */
		ofi_cq_drive(cq, !cq->armed && cq->empty_polls -
			     cq->empty_seen >= OFI_BUSY_POLLS &&
			     !pthread_equal(cq->poller, pthread_self()));
		cq->empty_seen = cq->empty_polls;
		pthread_mutex_unlock(&cq->lock);
	}
}
