/* iWARP on the wire: MPA (RFC 5044, revision 2 per RFC 6581, no
 * markers), DDP (RFC 5041) and RDMAP (RFC 5040) headers, as byte offsets.
 *
 * Everything here is pure: building and reading headers in caller buffers,
 * no I/O.  Every multi-byte field is big-endian.
 *
 * MPA request/reply frame (20 bytes, then PD_Length bytes of private data):
 *   0  16 key "MPA ID Req Frame" / "MPA ID Rep Frame"
 *  16   2 bits: M 0x8000, C 0x4000, R 0x2000, enhanced 0x1000, revision 0x00ff
 *  18   2 PD_Length (at most 512)
 * With revision 2 and the enhanced bit, the private data starts with the
 * RFC 6581 connection parameters:
 *   0   2 IRD (14 bits) | peer-to-peer 0x8000 | zero-length Send RTR 0x4000
 *   2   2 ORD (14 bits) | zero-length Write RTR 0x8000 | Read RTR 0x4000
 *
 * FPDU: ULPDU_Length (2) | ULPDU | pad to 4 | CRC (4).
 * ULPDU = DDP header (+ RDMAP header for Read Requests and Terminates) + data.
 *   control (2): T 0x8000, L 0x4000, DDP version 0x0100, RDMAP version 0x0040,
 *                RDMAP opcode 0x000f
 *   tagged   (14): control, STag (4), TO (8)
 *   untagged (18): control, reserved/Inv STag (4), QN (4), MSN (4), MO (4)
 *
 * libdat extension, used only when both ends announce it (a trailer at the
 * end of the MPA private data, see TCP_EXT_*) and CRC is off: the CRC
 * field of every FPDU carries the number of the sender's inbound messages
 * (Sends and RDMA Writes) placed so far, in order.  That is what lets a
 * Send or an RDMA Write complete once the peer has placed it, without a
 * message of its own whenever traffic flows back.  An initiator that also
 * sets TCP_EXT_F_EARLY takes FPDUs right behind the reply (it reads the
 * reply to its exact length): a libdat responder then asks for no RTR,
 * is connected as soon as its reply is sent, and may send first.  The
 * request still offers peer-to-peer with a zero-length Write as RTR, for
 * responders that do not know the flag.
 *
 * RFC 7306 (RDMAP extensions), only between two ends that both set
 * TCP_EXT_F_RFC7306: a peer that did not never gets one of these frames,
 * and one it sends us is an unexpected opcode.
 *   Immediate Data (SE)  untagged, QN 0 (the Send queue: it consumes a
 *                        receive, Send MSNs), 8 bytes of ULP data; libdat
 *                        carries DAT's 32-bit immediate in the low half.
 *                        A write with immediate is an RDMA Write followed
 *                        by one of these.
 *   Atomic Request  (52) untagged, QN 1 (the Read Request queue: its MSNs
 *                        and its IRD/ORD), after the untagged header:
 *     0  4 reserved (28 bits) | AOpCode (4): 0 FetchAdd, 1 Swap, 2 CmpSwap
 *     4  4 Request Identifier
 *     8  4 Remote STag
 *    12  8 Remote Tagged Offset (8-byte aligned)
 *    20  8 Add or Swap Data
 *    28  8 Add or Swap Mask
 *    36  8 Compare Data
 *    44  8 Compare Mask
 *   Atomic Response (12) untagged, QN 3, returned in order with the Read
 *                        Responses: Original Request Identifier (4),
 *                        Original Remote Data Value (8). */
#ifndef PROVIDERS_TCP_TCP_WIRE_H
#define PROVIDERS_TCP_TCP_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MPA_KEY_REQ "MPA ID Req Frame"
#define MPA_KEY_REP "MPA ID Rep Frame"
#define MPA_KEY_LEN 16
#define MPA_HDR_LEN 20
#define MPA_PD_MAX 512
#define MPA_FLAG_MARKERS 0x8000u
#define MPA_FLAG_CRC 0x4000u
#define MPA_FLAG_REJECT 0x2000u
#define MPA_FLAG_ENHANCED 0x1000u
#define MPA_REV_MASK 0x00ffu
#define MPA_V2_LEN 4
#define MPA_V2_P2P 0x8000u            /* in IRD */
#define MPA_V2_SEND_RTR 0x4000u       /* in IRD */
#define MPA_V2_WRITE_RTR 0x8000u      /* in ORD */
#define MPA_V2_READ_RTR 0x4000u       /* in ORD */
#define MPA_V2_LIMIT_MASK 0x3fffu

/* The libdat trailer: the last 8 bytes of the MPA private data. */
#define TCP_EXT_MAGIC 0x4c444154u     /* "LDAT" */
#define TCP_EXT_LEN 8
#define TCP_EXT_VERSION 1u
#define TCP_EXT_F_ACKS 0x0001u        /* placement acknowledgements in the CRC field */
#define TCP_EXT_F_EARLY 0x0002u       /* with ACKS: FPDUs may follow the reply, no RTR */
#define TCP_EXT_F_RFC7306 0x0004u     /* with ACKS: RFC 7306 Immediate Data and Atomics
                                         (the responder echoes it when it takes them) */

#define DDP_T 0x8000u
#define DDP_L 0x4000u
#define DDP_VERSION_BITS 0x0100u
#define DDP_VERSION_MASK 0x0300u
#define DDP_RSVD_MASK 0x3c00u
#define RDMAP_VERSION_BITS 0x0040u
#define RDMAP_VERSION_MASK 0x00c0u
#define RDMAP_OP_MASK 0x000fu

#define DDP_TAGGED_LEN 14
#define DDP_UNTAGGED_LEN 18
#define RDMAP_READ_REQ_LEN 28
#define FPDU_TRAILER_MAX 7            /* pad 3 + CRC 4 */

enum rdmap_op {
	RDMAP_WRITE = 0,
	RDMAP_READ_REQ = 1,
	RDMAP_READ_RESP = 2,
	RDMAP_SEND = 3,
	RDMAP_SEND_INV = 4,
	RDMAP_SEND_SE = 5,
	RDMAP_SEND_SE_INV = 6,
	RDMAP_TERMINATE = 7,
	RDMAP_IMM = 8,                /* RFC 7306 */
	RDMAP_IMM_SE = 9,
	RDMAP_ATOMIC_REQ = 10,
	RDMAP_ATOMIC_RESP = 11,
};

enum ddp_qn { DDP_QN_SEND = 0, DDP_QN_READ = 1, DDP_QN_TERM = 2,
	      DDP_QN_ATOMIC_RESP = 3 };

#define RDMAP_IMM_LEN 8
#define RDMAP_ATOMIC_REQ_LEN 52
#define RDMAP_ATOMIC_RESP_LEN 12
enum rdmap_aop { RDMAP_AOP_FETCH_ADD = 0, RDMAP_AOP_SWAP = 1, RDMAP_AOP_CMP_SWAP = 2 };
#define RDMAP_AOP_MASK 0x0000000fu

/* Terminate: control word = layer << 28 | etype << 24 | code << 16 | hdrct. */
enum term_layer { TERM_RDMAP = 0, TERM_DDP = 1, TERM_MPA = 2 };
#define TERM_HDRCT_M 0x8000u          /* DDP segment length present */
#define TERM_HDRCT_D 0x4000u          /* terminated DDP header present */
#define TERM_HDRCT_R 0x2000u          /* terminated RDMAP header present */
#define TERM_HDRCT_D_SIW 0x0200u      /* D where siw puts it (bitfield order) */
/* RDMAP etype 1 (remote protection) and DDP etype 1 (tagged buffer) codes */
#define TERM_RDMAP_PROT 1u
#define TERM_RDMAP_OP 2u
#define TERM_DDP_TAGGED 1u
#define TERM_DDP_UNTAGGED 2u
#define TERM_CODE_INVALID_STAG 0x00u
#define TERM_CODE_BOUNDS 0x01u
#define TERM_CODE_ACCESS 0x02u
#define TERM_CODE_STAG_STREAM 0x03u   /* STag not of this stream (PZ) */
#define TERM_CODE_TO_WRAP 0x04u
#define TERM_CODE_UNEXPECTED_OP 0x06u
#define TERM_CODE_STREAM_FATAL 0x07u
#define TERM_CODE_UNSPECIFIED 0xffu   /* remote operation: a misaligned atomic */
#define TERM_CODE_BAD_QN 0x01u        /* DDP untagged */
#define TERM_CODE_NO_BUFFER 0x02u     /* invalid MSN: no buffer available */
#define TERM_CODE_BAD_MSN 0x03u
#define TERM_CODE_BAD_MO 0x04u
#define TERM_CODE_TOO_LONG 0x05u
#define TERM_CODE_BAD_VERSION 0x06u
#define TERM_PAYLOAD_MAX (4 + 2 + DDP_UNTAGGED_LEN + RDMAP_READ_REQ_LEN)

static inline void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static inline uint32_t get16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* Padding after a ULPDU of len bytes so that the FPDU (2 + len + pad)
 * ends on a 4-byte boundary before the CRC. */
static inline unsigned fpdu_pad(uint32_t ulpdu_len)
{
	return (4u - ((2u + ulpdu_len) & 3u)) & 3u;
}

static inline uint32_t ddp_ctrl(bool tagged, bool last, unsigned op)
{
	return (tagged ? DDP_T : 0) | (last ? DDP_L : 0) | DDP_VERSION_BITS |
	       RDMAP_VERSION_BITS | (op & RDMAP_OP_MASK);
}

/* Writes the MPA length and a tagged DDP header; returns bytes written
 * (2 + 14). */
static inline size_t fpdu_put_tagged(uint8_t *p, uint32_t ulpdu_len, bool last,
				     unsigned op, uint32_t stag, uint64_t to)
{
	put16(p, ulpdu_len);
	put16(p + 2, ddp_ctrl(true, last, op));
	put32(p + 4, stag);
	put64(p + 8, to);
	return 2 + DDP_TAGGED_LEN;
}

/* Writes the MPA length and an untagged DDP header (2 + 18). */
static inline size_t fpdu_put_untagged(uint8_t *p, uint32_t ulpdu_len,
				       bool last, unsigned op, uint32_t qn,
				       uint32_t msn, uint32_t mo)
{
	put16(p, ulpdu_len);
	put16(p + 2, ddp_ctrl(false, last, op));
	put32(p + 4, 0);
	put32(p + 8, qn);
	put32(p + 12, msn);
	put32(p + 16, mo);
	return 2 + DDP_UNTAGGED_LEN;
}

/* An MPA request or reply header; pd_len <= MPA_PD_MAX. */
static inline void mpa_put_hdr(uint8_t *p, bool request, uint32_t bits,
			       uint32_t pd_len)
{
	memcpy(p, request ? MPA_KEY_REQ : MPA_KEY_REP, MPA_KEY_LEN);
	put16(p + 16, bits);
	put16(p + 18, pd_len);
}

/* Reads an MPA request/reply header; false if the key is not the one
 * expected or PD_Length is over MPA_PD_MAX. */
static inline bool mpa_get_hdr(const uint8_t *p, bool request, uint32_t *bits,
			       uint32_t *pd_len)
{
	if (memcmp(p, request ? MPA_KEY_REQ : MPA_KEY_REP, MPA_KEY_LEN))
		return false;
	*bits = get16(p + 16);
	*pd_len = get16(p + 18);
	return *pd_len <= MPA_PD_MAX;
}

/* The RFC 6581 block at the start of the private data: IRD and ORD (14
 * bits each) with their flags. */
static inline void mpa_put_v2(uint8_t *p, uint16_t ird, uint16_t ord,
			      uint32_t ird_flags, uint32_t ord_flags)
{
	put16(p, (ird & MPA_V2_LIMIT_MASK) | ird_flags);
	put16(p + 2, (ord & MPA_V2_LIMIT_MASK) | ord_flags);
}

/* The libdat trailer at the end of the private data (TCP_EXT_F_*). */
static inline void mpa_put_ext(uint8_t *p, uint32_t flags)
{
	put32(p, TCP_EXT_MAGIC);
	put16(p + 4, TCP_EXT_VERSION);
	put16(p + 6, flags);
}

#endif
