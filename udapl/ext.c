/* The DAT 2.0 IB extensions (<dat2/dat_ib_extensions.h>), reached through
 * dat_extension_op: RDMA Write with immediate data, 64-bit fetch-and-add
 * and compare-and-swap (dat_extension_op(3)).
 *
 * dat_extension_op hands the provider its variable arguments as a
 * va_list; the casts in the dat_ib_post_* macros fix the type of each,
 * so they are read here exactly as the macros pass them.  The requests
 * then take the ordinary request path of dto.c (state, LMR, flag checks,
 * a request slot, exactly-once completion); their completions come out
 * as DAT_IB_DTO_EVENT with a DAT_IB_EXTENSION_EVENT_DATA in
 * event_extension_data.
 *
 * Return codes, where the provider cannot do an operation:
 *  - the operation is not one of those three (UD, counters, collectives,
 *    open_query ...), or this provider's device or transport cannot do it
 *    at all: DAT_NOT_IMPLEMENTED, with one line through dapl_log saying
 *    which and why;
 *  - the provider can, but this connection cannot (tcp: the peer did not
 *    negotiate the RFC 7306 extensions, e.g. a kernel siw peer):
 *    DAT_MODEL_NOT_SUPPORTED. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "dat_gen.h"

#if DAT_GEN == 2
#include <dat2/dat_ib_extensions.h>

#include "core.h"
#include "entry.h"

/* The event data must fit where DAT 2.0 puts it. */
_Static_assert(sizeof(DAT_IB_EXTENSION_EVENT_DATA) <=
	       sizeof(((DAT_EVENT *)0)->event_extension_data),
	       "DAT_IB_EXTENSION_EVENT_DATA does not fit event_extension_data");

#define OPS_HAS(ops, member) \
	((ops)->size >= offsetof(struct udapl_transport_ops, member) + \
			sizeof((ops)->member) && (ops)->member)

unsigned dapl_ext_offered(const struct dapl_ia *ia)
{
	const struct udapl_transport_ops *ops = ia->ops;
	unsigned ext = 0;

	if ((ia->dev_attr.flags & DAPL_TDEV_WRITE_IMM) &&
	    OPS_HAS(ops, post_rdma_write_imm))
		ext |= DAPL_TDEV_WRITE_IMM;
	if ((ia->dev_attr.flags & DAPL_TDEV_ATOMICS) &&
	    OPS_HAS(ops, post_atomic))
		ext |= DAPL_TDEV_ATOMICS;
	return ext;
}

unsigned dapl_ext_of_ep(struct dapl_ep *ep)
{
	const struct udapl_transport_ops *ops = ep->ia->ops;
	unsigned ext = dapl_ext_offered(ep->ia);

	if (ep->param.ep_state != DAT_EP_STATE_CONNECTED || !ep->tep)
		return 0;
	if (OPS_HAS(ops, ep_extensions))
		ext &= ops->ep_extensions(ep->tep);
	return ext;
}

void dapl_ext_attrs(unsigned ext, DAT_NAMED_ATTR *out)
{
	/* dapl 2.1.10's spelling: programs strcmp the value with "TRUE" */
	out[0].name = DAT_IB_ATTR_FETCH_AND_ADD;
	out[0].value = (ext & DAPL_TDEV_ATOMICS) ? "TRUE" : "FALSE";
	out[1].name = DAT_IB_ATTR_CMP_AND_SWAP;
	out[1].value = (ext & DAPL_TDEV_ATOMICS) ? "TRUE" : "FALSE";
	out[2].name = DAT_IB_ATTR_IMMED_DATA;
	out[2].value = (ext & DAPL_TDEV_WRITE_IMM) ? "TRUE" : "FALSE";
}

void dapl_ext_event(DAT_EVENT *ev, enum dapl_ext_kind kind,
		    const struct dapl_twc *wc)
{
	DAT_DTO_COMPLETION_EVENT_DATA *d =
		&ev->event_data.dto_completion_event_data;
	DAT_IB_EXTENSION_EVENT_DATA x;

	memset(&x, 0, sizeof(x));
	switch (kind) {
	case DAPL_EXT_WRITE_IMM:
		x.type = DAT_IB_RDMA_WRITE_IMMED;
		d->operation = (DAT_DTOS)DAT_IB_DTO_RDMA_WRITE_IMMED;
		break;
	case DAPL_EXT_RECV_IMM:
		x.type = DAT_IB_RDMA_WRITE_IMMED_DATA;
		d->operation = (DAT_DTOS)DAT_IB_DTO_RECV_IMMED;
		/* (the transport sets imm for this opcode) */
		if (wc && wc->opcode == DAPL_TWC_RECV_RDMA_IMM &&
		    d->status == DAT_DTO_SUCCESS)
			x.val.immed.data = wc->imm;
		break;
	case DAPL_EXT_FETCH_ADD:
		x.type = DAT_IB_FETCH_AND_ADD;
		d->operation = (DAT_DTOS)DAT_IB_DTO_FETCH_ADD;
		break;
	case DAPL_EXT_CMP_SWAP:
		x.type = DAT_IB_CMP_AND_SWAP;
		d->operation = (DAT_DTOS)DAT_IB_DTO_CMP_SWAP;
		break;
	default:
		return;
	}
	x.status = d->status == DAT_DTO_SUCCESS ? DAT_OP_SUCCESS : DAT_IB_OP_ERR;
	ev->event_number = (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT;
	memcpy(ev->event_extension_data, &x, sizeof(x));
}

static const char *ext_name(unsigned ext)
{
	return ext == DAPL_TDEV_WRITE_IMM ? "RDMA Write with immediate data" :
					    "64-bit atomics";
}

/* Whether the provider can do ext at all, then whether this EP's
 * connection can (see the top of the file for the codes). */
static DAT_RETURN ext_available(struct dapl_ep *ep, unsigned ext,
				const char *call)
{
	if (!(dapl_ext_offered(ep->ia) & ext)) {
		dapl_log("%s: not implemented: %s on %s (%s): %s", call,
			 ext_name(ext), ep->ia->dev_attr.name, ep->ia->ops->name,
			 "the device or transport does not offer it");
		return DAT_ERROR(DAT_NOT_IMPLEMENTED, DAT_NO_SUBTYPE);
	}
	if (ep->param.ep_state == DAT_EP_STATE_CONNECTED &&
	    !(dapl_ext_of_ep(ep) & ext))
		return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
	return DAT_SUCCESS;
}

/* The remote triplet of an extended request; arg: its macro argument
 * number.  A range that wraps past 2^64 names no memory (as dto.c). */
static DAT_RETURN check_remote(const DAT_RMR_TRIPLET *r, int arg, bool atomic)
{
	if (!r)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1 + arg - 1);
	if (r->segment_length &&
	    r->virtual_address > UINT64_MAX - (r->segment_length - 1))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1 + arg - 1);
	if (atomic) {
		/* 64-bit atomics act on an aligned 8-byte word */
		if (r->virtual_address & 7)
			return DAT_ERROR(DAT_INVALID_PARAMETER,
					 DAT_INVALID_ARG1 + arg - 1);
		if (r->segment_length < 8)
			return DAT_ERROR(DAT_LENGTH_ERROR, 0);
	}
	return DAT_SUCCESS;
}

static struct dapl_ep *ep_get(DAT_HANDLE h)
{
	return (struct dapl_ep *)dapl_handle_get(h, DAT_HANDLE_TYPE_EP);
}

#define BAD_EP DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP)

/* dat_ib_post_rdma_write_immed(ep, size, lbuf, cookie, rbuf, idata, flgs) */
static DAT_RETURN write_immed(DAT_HANDLE h, va_list args)
{
	struct dapl_ext_req rq = { .kind = DAPL_EXT_WRITE_IMM, .flags_arg = 7 };
	struct dapl_ep *ep = ep_get(h);
	DAT_RETURN rc;

	/* (the handle first: a call on another object may carry no more
	 * arguments to read) */
	if (!ep)
		return BAD_EP;
	rq.n = va_arg(args, DAT_COUNT);
	rq.iov = va_arg(args, DAT_LMR_TRIPLET *);
	rq.cookie = va_arg(args, DAT_DTO_COOKIE);
	rq.remote = va_arg(args, const DAT_RMR_TRIPLET *);
	rq.imm = va_arg(args, DAT_UINT32);
	rq.flags = (DAT_COMPLETION_FLAGS)va_arg(args, unsigned int);
	rc = ext_available(ep, DAPL_TDEV_WRITE_IMM,
			   "dat_ib_post_rdma_write_immed");
	if (rc == DAT_SUCCESS)
		rc = check_remote(rq.remote, 5, false);
	if (rc == DAT_SUCCESS)
		rc = dapl_dto_post_ext(ep, &rq);
	return rc;
}

/* The local buffer of an atomic: one segment of exactly 8 bytes that the
 * original value is written into. */
static DAT_RETURN check_atomic_local(const DAT_LMR_TRIPLET *l, int arg)
{
	if (!l)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1 + arg - 1);
	if (l->segment_length != 8)
		return DAT_ERROR(DAT_LENGTH_ERROR, 0);
	return DAT_SUCCESS;
}

/* dat_ib_post_fetch_and_add(ep, add_val, lbuf, cookie, rbuf, flgs)
 * dat_ib_post_cmp_and_swap(ep, cmp_val, swap_val, lbuf, cookie, rbuf, flgs) */
static DAT_RETURN atomic_op(DAT_HANDLE h, bool cmp_swap, va_list args)
{
	struct dapl_ext_req rq = { .n = 1 };
	int arg = cmp_swap ? 4 : 3;       /* lbuf's number; rbuf, flgs follow */
	struct dapl_ep *ep = ep_get(h);
	DAT_RETURN rc;

	if (!ep)
		return BAD_EP;
	rq.kind = cmp_swap ? DAPL_EXT_CMP_SWAP : DAPL_EXT_FETCH_ADD;
	rq.add_or_compare = va_arg(args, DAT_UINT64);
	if (cmp_swap)
		rq.swap = va_arg(args, DAT_UINT64);
	rq.iov = va_arg(args, DAT_LMR_TRIPLET *);
	rq.cookie = va_arg(args, DAT_DTO_COOKIE);
	rq.remote = va_arg(args, const DAT_RMR_TRIPLET *);
	rq.flags = (DAT_COMPLETION_FLAGS)va_arg(args, unsigned int);
	rq.flags_arg = arg + 3;
	rc = ext_available(ep, DAPL_TDEV_ATOMICS, cmp_swap ?
			   "dat_ib_post_cmp_and_swap" :
			   "dat_ib_post_fetch_and_add");
	if (rc == DAT_SUCCESS)
		rc = check_atomic_local(rq.iov, arg);
	if (rc == DAT_SUCCESS)
		rc = check_remote(rq.remote, arg + 2, true);
	if (rc == DAT_SUCCESS)
		rc = dapl_dto_post_ext(ep, &rq);
	return rc;
}

static const char *unsupported_name(int op)
{
	switch (op) {
	case DAT_IB_UD_SEND_OP:
	case DAT_IB_UD_CM_FREE_OP:
	case DAT_IB_UD_AH_FREE_OP:
		return "unreliable datagrams (DAT_IB_SERVICE_TYPE_UD)";
	case DAT_IB_QUERY_COUNTERS_OP:
	case DAT_IB_PRINT_COUNTERS_OP:
	case DAT_IB_START_COUNTERS_OP:
	case DAT_IB_STOP_COUNTERS_OP:
		return "counters (no DAT_COUNTERS attribute)";
	case DAT_IB_OPEN_QUERY_OP:
	case DAT_IB_CLOSE_QUERY_OP:
		return "open_query (use dat_ia_open and dat_ia_query)";
	default:
		if (op >= DAT_IB_COLLECTIVE_CREATE_MEMBER_OP &&
		    op <= DAT_IB_COLLECTIVE_BARRIER_OP)
			return "collectives";
		return NULL;
	}
}

DAT_RETURN dapl_handle_extendedop(DAT_HANDLE h, DAT_EXTENDED_OP op,
				  va_list args)
{
	const char *what;
	char why[96];

	switch ((int)op) {
	case DAT_IB_RDMA_WRITE_IMMED_OP:
		return write_immed(h, args);
	case DAT_IB_FETCH_AND_ADD_OP:
		return atomic_op(h, false, args);
	case DAT_IB_CMP_AND_SWAP_OP:
		return atomic_op(h, true, args);
	default:
		what = unsupported_name((int)op);
		if (what)
			snprintf(why, sizeof(why), "%s: not offered by libdat", what);
		else
			snprintf(why, sizeof(why), "unknown operation %d", (int)op);
		return dapl_not_implemented("dat_extension_op", why);
	}
}
#endif
