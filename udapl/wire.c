/*
 * Connection private data: the wire header, and read-limit negotiation.
 *
 * Fields are put on and taken off the wire a byte at a time with explicit
 * shifts, so neither alignment nor host byte order matters.  See wire.h for
 * the layout and the contracts.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wire.h"

#define OFF_MAGIC 0
#define OFF_VERSION 2
#define OFF_FLAGS 3
#define OFF_LEN 4
#define OFF_IRD 6
#define OFF_ORD 8

#define WIRE_MAJOR(v) ((unsigned)(v) >> 4)
#define WIRE_KNOWN_FLAGS DAPL_WIRE_F_PROVIDER_REJECT
#define WIRE_MAX_CONSUMER 0xFFFFu

_Static_assert(OFF_ORD + 2 == DAPL_WIRE_HDR_LEN,
	       "field offsets must cover the header exactly");

static void put16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

const char *dapl_wire_status_str(enum dapl_wire_status s)
{
	switch (s) {
	case DAPL_WIRE_OK:
		return "valid header";
	case DAPL_WIRE_LEGACY:
		return "no header (legacy peer): all private data is the consumer's";
	case DAPL_WIRE_TRUNCATED:
		return "header truncated: magic present but fewer than 10 bytes";
	case DAPL_WIRE_BAD_VERSION:
		return "header major version is not supported (we speak 1.x)";
	case DAPL_WIRE_BAD_LENGTH:
		return "header consumer length runs past the received private data";
	}
	return "unknown wire status";
}

const char *dapl_wire_reject_str(unsigned reason)
{
	switch (reason) {
	case DAPL_WIRE_REJECT_BAD_HEADER:
		return "peer provider could not parse our private-data header";
	case DAPL_WIRE_REJECT_BAD_VERSION:
		return "peer provider does not speak our header version";
	case DAPL_WIRE_REJECT_READ_LIMITS:
		return "RDMA Read limits (IRD/ORD) not acceptable to the peer provider";
	case DAPL_WIRE_REJECT_NO_RESOURCES:
		return "peer provider is out of resources";
	case DAPL_WIRE_REJECT_NO_LISTENER:
		return "no listener on the peer for this connection qualifier";
	}
	return "unknown reason";
}

size_t dapl_wire_encode(void *buf, size_t buflen, uint8_t flags,
			const struct dapl_read_limits *limits,
			const void *consumer, size_t consumer_len)
{
	unsigned char *p = buf;
	size_t total;

	if (!buf || consumer_len > WIRE_MAX_CONSUMER)
		return 0;
	if (consumer_len && !consumer)
		return 0;
	total = DAPL_WIRE_HDR_LEN + consumer_len;
	if (buflen < total)
		return 0;

	/* First, in case consumer lies inside buf over the header area. */
	if (consumer_len)
		memmove(p + DAPL_WIRE_HDR_LEN, consumer, consumer_len);

	put16(p + OFF_MAGIC, DAPL_WIRE_MAGIC);
	p[OFF_VERSION] = DAPL_WIRE_VERSION;
	p[OFF_FLAGS] = flags & WIRE_KNOWN_FLAGS;
	put16(p + OFF_LEN, (unsigned)consumer_len);
	put16(p + OFF_IRD, limits ? limits->ird : 0);
	put16(p + OFF_ORD, limits ? limits->ord : 0);
	return total;
}

size_t dapl_wire_encode_connect(void *buf, size_t buflen, size_t max_transport,
				const struct dapl_read_limits *limits,
				const void *consumer, size_t consumer_len)
{
	const unsigned char *c = consumer;

	if (buflen > max_transport)
		buflen = max_transport;
	if (consumer_len <= dapl_wire_max_consumer(max_transport))
		return dapl_wire_encode(buf, buflen, 0, limits, consumer,
					consumer_len);
	/* header-less: only what no decoder mistakes for a header */
	if (!buf || !consumer || consumer_len > buflen ||
	    consumer_len > WIRE_MAX_CONSUMER)
		return 0;
	if (consumer_len >= 2 && get16(c + OFF_MAGIC) == DAPL_WIRE_MAGIC)
		return 0;
	memmove(buf, consumer, consumer_len);
	return consumer_len;
}

size_t dapl_wire_max_connect_consumer(size_t max_transport)
{
	return max_transport > WIRE_MAX_CONSUMER ? WIRE_MAX_CONSUMER :
		max_transport;
}

size_t dapl_wire_encode_reject(void *buf, size_t buflen, unsigned reason)
{
	unsigned char code;

	if (reason > 0xFFu)
		return 0;
	code = (unsigned char)reason;
	return dapl_wire_encode(buf, buflen, DAPL_WIRE_F_PROVIDER_REJECT, NULL,
				&code, 1);
}

enum dapl_wire_status dapl_wire_decode(const void *buf, size_t len,
				       struct dapl_wire_hdr *hdr,
				       const void **consumer,
				       size_t *consumer_len)
{
	const unsigned char *p = buf;
	struct dapl_wire_hdr h = { 0 };
	const void *data = NULL;
	size_t data_len = 0;
	enum dapl_wire_status st;

	if (!p || len < 2 || get16(p + OFF_MAGIC) != DAPL_WIRE_MAGIC) {
		/* NULL buf with len > 0 breaks the contract: treat as empty. */
		if (!p)
			len = 0;
		h.consumer_len = len > WIRE_MAX_CONSUMER ?
			(uint16_t)WIRE_MAX_CONSUMER : (uint16_t)len;
		h.limits.ird = DAPL_READ_LIMIT_UNKNOWN;
		h.limits.ord = DAPL_READ_LIMIT_UNKNOWN;
		data = p;
		data_len = len;
		st = DAPL_WIRE_LEGACY;
		goto out;
	}
	if (len < DAPL_WIRE_HDR_LEN) {
		st = DAPL_WIRE_TRUNCATED;
		goto out;
	}
	if (WIRE_MAJOR(p[OFF_VERSION]) != WIRE_MAJOR(DAPL_WIRE_VERSION)) {
		st = DAPL_WIRE_BAD_VERSION;
		goto out;
	}
	if (get16(p + OFF_LEN) > len - DAPL_WIRE_HDR_LEN) {
		st = DAPL_WIRE_BAD_LENGTH;
		goto out;
	}

	h.version = p[OFF_VERSION];
	h.flags = p[OFF_FLAGS] & WIRE_KNOWN_FLAGS;
	h.consumer_len = get16(p + OFF_LEN);
	h.limits.ird = get16(p + OFF_IRD);
	h.limits.ord = get16(p + OFF_ORD);
	data = p + DAPL_WIRE_HDR_LEN;
	data_len = h.consumer_len;
	st = DAPL_WIRE_OK;
out:
	if (hdr)
		*hdr = h;
	if (consumer)
		*consumer = data;
	if (consumer_len)
		*consumer_len = data_len;
	return st;
}

size_t dapl_wire_max_consumer(size_t max_transport)
{
	size_t n;

	if (max_transport < DAPL_WIRE_HDR_LEN)
		return 0;
	n = max_transport - DAPL_WIRE_HDR_LEN;
	return n > WIRE_MAX_CONSUMER ? WIRE_MAX_CONSUMER : n;
}

static uint16_t min16(uint16_t a, uint16_t b)
{
	return a < b ? a : b;
}

void dapl_read_limits_negotiate(const struct dapl_read_limits *own,
				const struct dapl_read_limits *peer,
				const struct dapl_read_limits *device,
				struct dapl_read_limits *out)
{
	/* UNKNOWN is the largest uint16_t, so min() already ignores it. */
	uint16_t ord = min16(own->ord, peer->ird);
	uint16_t ird = min16(own->ird, peer->ord);

	if (device) {
		ord = min16(ord, device->ord);
		ird = min16(ird, device->ird);
	}
	out->ord = ord;
	out->ird = ird;
}
