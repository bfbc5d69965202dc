/*
 * libFuzzer target for the connection private-data decoder.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iudapl \
 *	test/fuzz/fuzz_wire.c udapl/wire.c -o fuzz_wire
 *   ./fuzz_wire /tmp/new-inputs test/fuzz/corpus/wire
 *
 * Besides memory errors (the sanitizers), it traps when the result breaks
 * the promises of wire.h: the status matches the input's shape, the
 * consumer's bytes lie inside the input and agree with the header, error
 * outputs are cleared, and re-encoding what was decoded decodes to the same
 * thing.  The first bytes also drive the read-limit negotiation, which must
 * never hand out more than any of its three bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wire.h"

#define CHECK(cond)                       \
	do {                              \
		if (!(cond))              \
			__builtin_trap(); \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static int has_magic(const uint8_t *data, size_t size)
{
	return size >= 2 && be16(data) == DAPL_WIRE_MAGIC;
}

static void check_error(const struct dapl_wire_hdr *hdr, const void *cons,
			size_t cons_len)
{
	static const struct dapl_wire_hdr zero;

	CHECK(memcmp(hdr, &zero, sizeof(zero)) == 0);
	CHECK(cons == NULL);
	CHECK(cons_len == 0);
}

/* Encodes the decoded fields again; the result must decode the same. */
static void check_reencode(const struct dapl_wire_hdr *hdr, const void *cons,
			   size_t cons_len)
{
	static uint8_t buf[DAPL_WIRE_HDR_LEN + 0xFFFF];
	struct dapl_wire_hdr again;
	const void *cons2;
	size_t cons2_len, n;

	n = dapl_wire_encode(buf, sizeof(buf), hdr->flags, &hdr->limits, cons,
			     cons_len);
	CHECK(n == DAPL_WIRE_HDR_LEN + cons_len);
	CHECK(dapl_wire_decode(buf, n, &again, &cons2, &cons2_len) ==
	      DAPL_WIRE_OK);
	CHECK(again.version == DAPL_WIRE_VERSION);
	CHECK(again.flags == hdr->flags);
	CHECK(again.consumer_len == hdr->consumer_len);
	CHECK(again.limits.ird == hdr->limits.ird);
	CHECK(again.limits.ord == hdr->limits.ord);
	CHECK(cons2 == buf + DAPL_WIRE_HDR_LEN);
	CHECK(cons2_len == cons_len);
	CHECK(cons_len == 0 || memcmp(cons2, cons, cons_len) == 0);
}

static void check_ok(const uint8_t *data, size_t size,
		     const struct dapl_wire_hdr *hdr, const void *cons,
		     size_t cons_len)
{
	struct dapl_wire_hdr bare;
	const void *bare_cons;
	size_t bare_len;

	CHECK(has_magic(data, size));
	CHECK(size >= DAPL_WIRE_HDR_LEN);
	CHECK(hdr->version >> 4 == DAPL_WIRE_VERSION >> 4);
	CHECK(hdr->version == data[2]);
	CHECK((hdr->flags & ~DAPL_WIRE_F_PROVIDER_REJECT) == 0);
	CHECK(hdr->flags == (data[3] & DAPL_WIRE_F_PROVIDER_REJECT));
	CHECK(hdr->consumer_len == be16(data + 4));
	CHECK(hdr->limits.ird == be16(data + 6));
	CHECK(hdr->limits.ord == be16(data + 8));
	CHECK(cons_len == hdr->consumer_len);
	CHECK((const uint8_t *)cons == data + DAPL_WIRE_HDR_LEN);
	CHECK(DAPL_WIRE_HDR_LEN + cons_len <= size);

	/* The padding did not matter: without it the answer is the same. */
	CHECK(dapl_wire_decode(data, DAPL_WIRE_HDR_LEN + cons_len, &bare,
			       &bare_cons, &bare_len) == DAPL_WIRE_OK);
	CHECK(memcmp(&bare, hdr, sizeof(bare)) == 0);
	CHECK(bare_cons == cons && bare_len == cons_len);
	/* One byte fewer than promised is a length error. */
	CHECK(dapl_wire_decode(data, DAPL_WIRE_HDR_LEN + cons_len - 1, &bare,
			       &bare_cons, &bare_len) ==
	      (cons_len ? DAPL_WIRE_BAD_LENGTH : DAPL_WIRE_TRUNCATED));

	check_reencode(hdr, cons, cons_len);
}

static void check_legacy(const uint8_t *data, size_t size,
			 const struct dapl_wire_hdr *hdr, const void *cons,
			 size_t cons_len)
{
	CHECK(!has_magic(data, size));
	CHECK(hdr->version == 0 && hdr->flags == 0);
	CHECK(hdr->limits.ird == DAPL_READ_LIMIT_UNKNOWN);
	CHECK(hdr->limits.ord == DAPL_READ_LIMIT_UNKNOWN);
	CHECK(hdr->consumer_len == (size > 0xFFFF ? 0xFFFF : size));
	CHECK(cons == (const void *)data);
	CHECK(cons_len == size);

	/* A legacy peer's data, sent by us, comes back byte for byte. */
	if (size <= 0xFFFF) {
		struct dapl_wire_hdr mine = { 0 };

		mine.consumer_len = hdr->consumer_len;
		check_reencode(&mine, cons, cons_len);
	}
}

static void check_negotiate(const uint8_t *data, size_t size)
{
	struct dapl_read_limits l[3], out;

	if (size < sizeof(l) / sizeof(l[0]) * 4)
		return;
	for (int i = 0; i < 3; i++) {
		l[i].ird = be16(data + 4 * i);
		l[i].ord = be16(data + 4 * i + 2);
	}
	dapl_read_limits_negotiate(&l[0], &l[1], &l[2], &out);
	CHECK(out.ord <= l[0].ord && out.ord <= l[1].ird &&
	      out.ord <= l[2].ord);
	CHECK(out.ird <= l[0].ird && out.ird <= l[1].ord &&
	      out.ird <= l[2].ird);
	CHECK(out.ord == l[0].ord || out.ord == l[1].ird ||
	      out.ord == l[2].ord);
	CHECK(out.ird == l[0].ird || out.ird == l[1].ord ||
	      out.ird == l[2].ird);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dapl_wire_hdr hdr;
	const void *cons;
	size_t cons_len;
	enum dapl_wire_status st;

	memset(&hdr, 0xA5, sizeof(hdr));
	cons = &hdr;
	cons_len = (size_t)-1;
	st = dapl_wire_decode(data, size, &hdr, &cons, &cons_len);
	CHECK(dapl_wire_status_str(st) != NULL);

	switch (st) {
	case DAPL_WIRE_OK:
		check_ok(data, size, &hdr, cons, cons_len);
		break;
	case DAPL_WIRE_LEGACY:
		check_legacy(data, size, &hdr, cons, cons_len);
		break;
	case DAPL_WIRE_TRUNCATED:
		CHECK(has_magic(data, size) && size < DAPL_WIRE_HDR_LEN);
		check_error(&hdr, cons, cons_len);
		break;
	case DAPL_WIRE_BAD_VERSION:
		CHECK(has_magic(data, size) && size >= DAPL_WIRE_HDR_LEN);
		CHECK(data[2] >> 4 != DAPL_WIRE_VERSION >> 4);
		check_error(&hdr, cons, cons_len);
		break;
	case DAPL_WIRE_BAD_LENGTH:
		CHECK(has_magic(data, size) && size >= DAPL_WIRE_HDR_LEN);
		CHECK(data[2] >> 4 == DAPL_WIRE_VERSION >> 4);
		CHECK(DAPL_WIRE_HDR_LEN + (size_t)be16(data + 4) > size);
		check_error(&hdr, cons, cons_len);
		break;
	default:
		__builtin_trap();
	}

	/* A provider reject's reason byte always has a printable meaning. */
	if (st == DAPL_WIRE_OK && (hdr.flags & DAPL_WIRE_F_PROVIDER_REJECT) &&
	    cons_len == 1)
		CHECK(dapl_wire_reject_str(*(const uint8_t *)cons) != NULL);

	check_negotiate(data, size);
	return 0;
}
