/*
 * Connection private data: the wire header, and read-limit negotiation.
 *
 * Every connect, accept and provider-originated reject of our providers
 * carries this 10-byte header in front of the consumer's private data, so
 * that the two sides can exchange their RDMA Read limits (IRD/ORD), tell a
 * provider reject from a consumer reject, and hand the consumer exactly the
 * bytes its peer sent even when the transport pads private data.
 *
 *   off size field
 *     0    2 magic DAPL_WIRE_MAGIC
 *     2    1 version: high nibble major, low nibble minor
 *     3    1 flags (DAPL_WIRE_F_*); other bits written 0, ignored on receive
 *     4    2 consumer length: consumer bytes that follow the header
 *     6    2 IRD: reads this side accepts in flight from the peer
 *     8    2 ORD: reads this side wants in flight to the peer
 *
 * Multi-byte fields are big-endian.  Anything after header + consumer
 * length is transport padding.
 *
 * Pure and thread safe: no I/O, no globals, no allocation.
 */
#ifndef UDAPL_WIRE_H
#define UDAPL_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define DAPL_WIRE_MAGIC 0xDA7Cu
#define DAPL_WIRE_VERSION 0x10u
#define DAPL_WIRE_HDR_LEN 10u
#define DAPL_WIRE_F_PROVIDER_REJECT 0x01u

/*
 * An InfiniBand connect request carries only 56 bytes of private data
 * through rdma_cm; every byte of header is a byte the consumer loses.
 */
_Static_assert(DAPL_WIRE_HDR_LEN <= 16,
	       "the wire header must never grow past 16 bytes");

/* Read limit meaning "not known" (a header-less peer): never constrains. */
#define DAPL_READ_LIMIT_UNKNOWN 0xFFFFu

struct dapl_read_limits {
	uint16_t ird, ord;
};

struct dapl_wire_hdr {
	uint8_t version;
	uint8_t flags;
	uint16_t consumer_len;
	struct dapl_read_limits limits;
};

enum dapl_wire_status {
	DAPL_WIRE_OK = 0,
	/* no magic: a header-less peer; the whole buffer is its data */
	DAPL_WIRE_LEGACY,
	/* magic present but fewer than DAPL_WIRE_HDR_LEN bytes */
	DAPL_WIRE_TRUNCATED,
	/* unknown major version */
	DAPL_WIRE_BAD_VERSION,
	/* consumer_len runs past the received bytes */
	DAPL_WIRE_BAD_LENGTH,
};

/* Provider reject reasons (the 1 consumer byte of a provider reject). */
enum dapl_wire_reject_reason {
	DAPL_WIRE_REJECT_BAD_HEADER = 1,
	DAPL_WIRE_REJECT_BAD_VERSION = 2,
	DAPL_WIRE_REJECT_READ_LIMITS = 3,
	DAPL_WIRE_REJECT_NO_RESOURCES = 4,
	DAPL_WIRE_REJECT_NO_LISTENER = 5,
};

/*
 * A static phrase for logs and for the reason a connection was refused, so
 * a failed handshake explains itself instead of surfacing as a bare code.
 * Never NULL; unknown values give "unknown wire status".
 */
const char *dapl_wire_status_str(enum dapl_wire_status s);

/*
 * Lets the active side say why the provider (not the consumer) refused it.
 * Never NULL; values outside the enum give "unknown reason", since a newer
 * peer may send reasons we do not know.
 */
const char *dapl_wire_reject_str(unsigned reason);

/*
 * Builds the private data for a connect, accept or reject in one buffer the
 * transport can send as is.  Writes DAPL_WIRE_VERSION; flag bits this
 * version does not define are written 0.  limits may be NULL for 0/0.
 * consumer may be NULL when consumer_len is 0, and may lie inside buf (for
 * instance at buf + DAPL_WIRE_HDR_LEN): the bytes are moved, not copied.
 * Returns the total length, or 0 (buf untouched) if buf is too small,
 * consumer_len > 65535, or consumer is NULL with a non-zero length.
 */
size_t dapl_wire_encode(void *buf, size_t buflen, uint8_t flags,
			const struct dapl_read_limits *limits,
			const void *consumer, size_t consumer_len);

/*
 * A connect request's private data within max_transport bytes: with the
 * header when the consumer's bytes fit behind it, else the consumer's
 * bytes alone, as a header-less (OpenFabrics) peer sends them.  An
 * InfiniBand REQ carries 56 bytes through rdma_cm and programs send 48
 * (OpenFabrics' dtest): refusing them for our header's sake breaks them.
 * The passive side then reads a LEGACY request: no read limits (the
 * transport negotiates its own: rdma_cm, MPA) and the whole buffer as
 * data.  Bytes that begin with the magic cannot go header-less (the peer
 * would parse them as a header).  Returns the length, or 0 (buf
 * untouched) when neither form fits or the arguments are bad.
 */
size_t dapl_wire_encode_connect(void *buf, size_t buflen, size_t max_transport,
				const struct dapl_read_limits *limits,
				const void *consumer, size_t consumer_len);

/* The consumer's maximum for a connect request (dapl_wire_encode_connect):
 * max_transport, capped at the 16-bit length field. */
size_t dapl_wire_max_connect_consumer(size_t max_transport);

/*
 * A reject the provider makes on its own (bad header, read limits it cannot
 * meet, ...), marked so the active side does not mistake it for the
 * consumer's: DAPL_WIRE_F_PROVIDER_REJECT, limits 0/0 and one consumer byte
 * holding the reason.  Returns the length (DAPL_WIRE_HDR_LEN + 1), or 0 if
 * buflen is too small or reason does not fit in a byte.
 */
size_t dapl_wire_encode_reject(void *buf, size_t buflen, unsigned reason);

/*
 * Reads what a peer sent; len may include transport padding, which is
 * dropped so the consumer sees exactly what its peer's consumer sent.
 *
 * DAPL_WIRE_OK: *hdr holds the peer's fields (version as sent; flags with
 * only the bits we define), *consumer and *consumer_len give exactly the
 * consumer's bytes inside buf (*consumer points into buf even when the
 * length is 0).
 *
 * DAPL_WIRE_LEGACY: the peer sent no header (fewer than 2 bytes, or the
 * first two are not the magic).  Its whole buffer is consumer data:
 * *consumer = buf, *consumer_len = len; hdr->version and flags are 0,
 * hdr->consumer_len is len capped at 65535, and hdr->limits are
 * DAPL_READ_LIMIT_UNKNOWN so negotiation keeps the caller's own.
 *
 * Any other status: *hdr is zeroed, *consumer NULL, *consumer_len 0.
 *
 * buf may be NULL only when len is 0 (LEGACY with no data).  Any output
 * pointer may be NULL when the caller does not want that output.
 */
enum dapl_wire_status dapl_wire_decode(const void *buf, size_t len,
				       struct dapl_wire_hdr *hdr,
				       const void **consumer,
				       size_t *consumer_len);

/*
 * What dat_ia_query reports as the consumer's private-data maximum: the
 * transport's maximum less our header, capped at the 16-bit length field.
 * 0 if max_transport cannot even hold the header.
 */
size_t dapl_wire_max_consumer(size_t max_transport);

/*
 * NetworkDirect-style read-limit negotiation, the same rule on both sides:
 *
 *   out.ord = min(own.ord, peer.ird, device.ord)
 *   out.ird = min(own.ird, peer.ord, device.ird)
 *
 * We never send more reads than the peer takes nor take more than it sends
 * or the device holds.  The passive side applies it to the request's limits
 * and returns out in the accept; the active side applies it again to the
 * accept's limits before reporting ESTABLISHED, so both end on agreeing
 * values.  DAPL_READ_LIMIT_UNKNOWN (a legacy peer) never constrains; 0
 * (no reads allowed) stays 0.  device may be NULL for "no device limit".
 * out may alias own or peer.
 */
void dapl_read_limits_negotiate(const struct dapl_read_limits *own,
				const struct dapl_read_limits *peer,
				const struct dapl_read_limits *device,
				struct dapl_read_limits *out);

#endif /* UDAPL_WIRE_H */
