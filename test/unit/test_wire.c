/*
 * test_wire.c - the connection private-data header: exact wire bytes,
 * round trips, padding, legacy peers, every decode error, provider rejects,
 * and the IRD/ORD negotiation both sides run.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>

#include "wire.h"

static const struct dapl_read_limits some_limits = { .ird = 8, .ord = 4 };

/* Fills outputs with junk so the test sees what decode actually wrote. */
static enum dapl_wire_status decode(const void *buf, size_t len,
				    struct dapl_wire_hdr *hdr,
				    const void **data, size_t *data_len)
{
	memset(hdr, 0xA5, sizeof(*hdr));
	*data = (const void *)hdr;
	*data_len = 12345;
	return dapl_wire_decode(buf, len, hdr, data, data_len);
}

static void assert_error_outputs(const struct dapl_wire_hdr *hdr,
				 const void *data, size_t data_len)
{
	static const struct dapl_wire_hdr zero;

	ck_assert_mem_eq(hdr, &zero, sizeof(zero));
	ck_assert_ptr_null(data);
	ck_assert_uint_eq(data_len, 0);
}

static void round_trip(size_t n)
{
	size_t cap = DAPL_WIRE_HDR_LEN + n;
	unsigned char *src = malloc(n ? n : 1);
	unsigned char *buf = malloc(cap);
	struct dapl_wire_hdr hdr;
	const void *data;
	size_t data_len, i;

	ck_assert_ptr_nonnull(src);
	ck_assert_ptr_nonnull(buf);
	for (i = 0; i < n; i++)
		src[i] = (unsigned char)(i * 7 + 3);

	ck_assert_uint_eq(dapl_wire_encode(buf, cap, 0, &some_limits,
					   n ? src : NULL, n), cap);
	ck_assert_int_eq(decode(buf, cap, &hdr, &data, &data_len),
			 DAPL_WIRE_OK);
	ck_assert_uint_eq(hdr.version, DAPL_WIRE_VERSION);
	ck_assert_uint_eq(hdr.flags, 0);
	ck_assert_uint_eq(hdr.consumer_len, n);
	ck_assert_uint_eq(hdr.limits.ird, 8);
	ck_assert_uint_eq(hdr.limits.ord, 4);
	ck_assert_ptr_eq(data, buf + DAPL_WIRE_HDR_LEN);
	ck_assert_uint_eq(data_len, n);
	if (n)
		ck_assert_mem_eq(data, src, n);
	free(buf);
	free(src);
}

START_TEST(round_trips)
{
	round_trip(0);
	round_trip(1);
	round_trip(20);
	round_trip(46);
	round_trip(65535);
}
END_TEST

START_TEST(exact_wire_bytes)
{
	static const unsigned char want[] = {
		0xDA, 0x7C,	/* magic */
		0x10,		/* version 1.0 */
		0x01,		/* provider reject */
		0x00, 0x03,	/* consumer length 3 */
		0x01, 0x02,	/* IRD 258 */
		0xAB, 0xCD,	/* ORD 43981 */
		'x', 'y', 'z',
	};
	const struct dapl_read_limits lim = { .ird = 0x0102, .ord = 0xABCD };
	unsigned char buf[32];

	memset(buf, 0xEE, sizeof(buf));
	ck_assert_uint_eq(dapl_wire_encode(buf, sizeof(buf),
					   DAPL_WIRE_F_PROVIDER_REJECT, &lim,
					   "xyz", 3), sizeof(want));
	ck_assert_mem_eq(buf, want, sizeof(want));
	ck_assert_uint_eq(buf[sizeof(want)], 0xEE); /* nothing written past */

	/* NULL limits are 0/0; consumer NULL is fine with length 0. */
	ck_assert_uint_eq(dapl_wire_encode(buf, sizeof(buf), 0, NULL, NULL, 0),
			  DAPL_WIRE_HDR_LEN);
	ck_assert_mem_eq(buf, "\xDA\x7C\x10\x00\x00\x00\x00\x00\x00\x00",
			 DAPL_WIRE_HDR_LEN);
}
END_TEST

START_TEST(padding_ignored)
{
	unsigned char buf[56], src[20];
	struct dapl_wire_hdr hdr;
	const void *data;
	size_t data_len;

	memset(src, 'p', sizeof(src));
	memset(buf, 0x5A, sizeof(buf));
	ck_assert_uint_eq(dapl_wire_encode(buf, sizeof(buf), 0, &some_limits,
					   src, sizeof(src)), 30);
	ck_assert_int_eq(decode(buf, sizeof(buf), &hdr, &data, &data_len),
			 DAPL_WIRE_OK);
	ck_assert_uint_eq(data_len, 20);
	ck_assert_uint_eq(hdr.consumer_len, 20);
	ck_assert_mem_eq(data, src, 20);

	/* Zero consumer bytes followed by padding: still zero. */
	ck_assert_uint_eq(dapl_wire_encode(buf, sizeof(buf), 0, &some_limits,
					   NULL, 0), DAPL_WIRE_HDR_LEN);
	ck_assert_int_eq(decode(buf, sizeof(buf), &hdr, &data, &data_len),
			 DAPL_WIRE_OK);
	ck_assert_uint_eq(data_len, 0);
	ck_assert_ptr_eq(data, buf + DAPL_WIRE_HDR_LEN);
}
END_TEST

START_TEST(legacy_data)
{
	static const unsigned char old[] = "hello from a header-less peer";
	static const unsigned char near[] = { 0xDA, 0x7D, 0x10, 0, 0, 0, 0, 0,
					      0, 0, 0, 0 };
	static const unsigned char swapped[] = { 0x7C, 0xDA, 0x10, 0, 0, 0, 0,
						 0, 0, 0 };
	static const unsigned char one[] = { 0xDA };
	struct dapl_wire_hdr hdr;
	const void *data;
	size_t data_len;

	ck_assert_int_eq(decode(old, sizeof(old), &hdr, &data, &data_len),
			 DAPL_WIRE_LEGACY);
	ck_assert_ptr_eq(data, old);
	ck_assert_uint_eq(data_len, sizeof(old));
	ck_assert_uint_eq(hdr.version, 0);
	ck_assert_uint_eq(hdr.flags, 0);
	ck_assert_uint_eq(hdr.consumer_len, sizeof(old));
	ck_assert_uint_eq(hdr.limits.ird, 0xFFFF);
	ck_assert_uint_eq(hdr.limits.ord, 0xFFFF);

	ck_assert_int_eq(decode(near, sizeof(near), &hdr, &data, &data_len),
			 DAPL_WIRE_LEGACY);
	ck_assert_uint_eq(data_len, sizeof(near));
	ck_assert_int_eq(decode(swapped, sizeof(swapped), &hdr, &data,
				&data_len), DAPL_WIRE_LEGACY);
	ck_assert_uint_eq(data_len, sizeof(swapped));

	/* One byte cannot hold the magic, whatever it is. */
	ck_assert_int_eq(decode(one, 1, &hdr, &data, &data_len),
			 DAPL_WIRE_LEGACY);
	ck_assert_ptr_eq(data, one);
	ck_assert_uint_eq(data_len, 1);

	/* No private data at all, with or without a buffer. */
	ck_assert_int_eq(decode(old, 0, &hdr, &data, &data_len),
			 DAPL_WIRE_LEGACY);
	ck_assert_uint_eq(data_len, 0);
	ck_assert_uint_eq(hdr.consumer_len, 0);
	ck_assert_int_eq(decode(NULL, 0, &hdr, &data, &data_len),
			 DAPL_WIRE_LEGACY);
	ck_assert_ptr_null(data);
	ck_assert_uint_eq(data_len, 0);
	ck_assert_uint_eq(hdr.limits.ird, 0xFFFF);
}
END_TEST

START_TEST(legacy_long_data)
{
	size_t n = 70000;
	unsigned char *big = calloc(1, n);
	struct dapl_wire_hdr hdr;
	const void *data;
	size_t data_len;

	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(decode(big, n, &hdr, &data, &data_len),
			 DAPL_WIRE_LEGACY);
	ck_assert_uint_eq(data_len, n);
	/* The header field is 16 bits: capped. */
	ck_assert_uint_eq(hdr.consumer_len, 0xFFFF);
	free(big);
}
END_TEST

START_TEST(truncated)
{
	unsigned char buf[DAPL_WIRE_HDR_LEN];
	struct dapl_wire_hdr hdr;
	const void *data;
	size_t data_len, n;

	ck_assert_uint_eq(dapl_wire_encode(buf, sizeof(buf), 0, &some_limits,
					   NULL, 0), DAPL_WIRE_HDR_LEN);
	for (n = 0; n < DAPL_WIRE_HDR_LEN; n++) {
		enum dapl_wire_status st = decode(buf, n, &hdr, &data,
						  &data_len);

		if (n < 2) {
			/* Too short to carry the magic: header-less data. */
			ck_assert_int_eq(st, DAPL_WIRE_LEGACY);
			ck_assert_uint_eq(data_len, n);
			continue;
		}
		ck_assert_int_eq(st, DAPL_WIRE_TRUNCATED);
		assert_error_outputs(&hdr, data, data_len);
	}
	ck_assert_int_eq(decode(buf, DAPL_WIRE_HDR_LEN, &hdr, &data, &data_len),
			 DAPL_WIRE_OK);
}
END_TEST

START_TEST(versions)
{
	static const struct {
		uint8_t version;
		enum dapl_wire_status want;
	} cases[] = {
		{ 0x10, DAPL_WIRE_OK },
		{ 0x11, DAPL_WIRE_OK },
		{ 0x1F, DAPL_WIRE_OK },
		{ 0x20, DAPL_WIRE_BAD_VERSION },
		{ 0x00, DAPL_WIRE_BAD_VERSION },
		{ 0x0F, DAPL_WIRE_BAD_VERSION },
		{ 0xF0, DAPL_WIRE_BAD_VERSION },
	};
	unsigned char buf[DAPL_WIRE_HDR_LEN + 4];
	struct dapl_wire_hdr hdr;
	const void *data;
	size_t data_len, i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_uint_eq(dapl_wire_encode(buf, sizeof(buf), 0,
						   &some_limits, "abcd", 4),
				  sizeof(buf));
		buf[2] = cases[i].version;
		ck_assert_int_eq(decode(buf, sizeof(buf), &hdr, &data,
					&data_len), cases[i].want);
		if (cases[i].want == DAPL_WIRE_OK) {
			/* A newer 1.x minor: the fields we know are read. */
			ck_assert_uint_eq(hdr.version, cases[i].version);
			ck_assert_uint_eq(hdr.limits.ird, 8);
			ck_assert_uint_eq(hdr.limits.ord, 4);
			ck_assert_uint_eq(data_len, 4);
			ck_assert_mem_eq(data, "abcd", 4);
		} else {
			assert_error_outputs(&hdr, data, data_len);
		}
	}
}
END_TEST

START_TEST(bad_length)
{
	unsigned char buf[64];
	struct dapl_wire_hdr hdr;
	const void *data;
	size_t data_len;

	ck_assert_uint_eq(dapl_wire_encode(buf, sizeof(buf), 0, &some_limits,
					   "0123456789", 10), 20);
	/* Received one byte short of what the header promises. */
	ck_assert_int_eq(decode(buf, 19, &hdr, &data, &data_len),
			 DAPL_WIRE_BAD_LENGTH);
	assert_error_outputs(&hdr, data, data_len);
	/* Exactly enough. */
	ck_assert_int_eq(decode(buf, 20, &hdr, &data, &data_len),
			 DAPL_WIRE_OK);
	/* A length far past any buffer. */
	buf[4] = 0xFF;
	buf[5] = 0xFF;
	ck_assert_int_eq(decode(buf, sizeof(buf), &hdr, &data, &data_len),
			 DAPL_WIRE_BAD_LENGTH);
	assert_error_outputs(&hdr, data, data_len);
	/* Header only, but it claims one consumer byte. */
	buf[4] = 0x00;
	buf[5] = 0x01;
	ck_assert_int_eq(decode(buf, DAPL_WIRE_HDR_LEN, &hdr, &data, &data_len),
			 DAPL_WIRE_BAD_LENGTH);
}
END_TEST

START_TEST(reserved_flags)
{
	unsigned char buf[16];
	struct dapl_wire_hdr hdr;
	const void *data;
	size_t data_len;

	/* Written as 0 ... */
	ck_assert_uint_eq(dapl_wire_encode(buf, sizeof(buf), 0xFE, &some_limits,
					   "ab", 2), 12);
	ck_assert_uint_eq(buf[3], 0x00);
	ck_assert_uint_eq(dapl_wire_encode(buf, sizeof(buf), 0xFF, &some_limits,
					   "ab", 2), 12);
	ck_assert_uint_eq(buf[3], DAPL_WIRE_F_PROVIDER_REJECT);

	/* ... and ignored on receive. */
	buf[3] = 0xFE;
	ck_assert_int_eq(decode(buf, 12, &hdr, &data, &data_len), DAPL_WIRE_OK);
	ck_assert_uint_eq(hdr.flags, 0);
	ck_assert_uint_eq(data_len, 2);
	buf[3] = 0x81;
	ck_assert_int_eq(decode(buf, 12, &hdr, &data, &data_len), DAPL_WIRE_OK);
	ck_assert_uint_eq(hdr.flags, DAPL_WIRE_F_PROVIDER_REJECT);
}
END_TEST

START_TEST(encode_refusals)
{
	static unsigned char big[65536];
	unsigned char buf[40];

	memset(buf, 0x33, sizeof(buf));
	ck_assert_uint_eq(dapl_wire_encode(buf, DAPL_WIRE_HDR_LEN - 1, 0,
					   &some_limits, NULL, 0), 0);
	ck_assert_uint_eq(dapl_wire_encode(buf, 29, 0, &some_limits,
					   big, 20), 0);
	ck_assert_uint_eq(dapl_wire_encode(buf, 0, 0, &some_limits, NULL, 0),
			  0);
	/* Nothing was written by the refused calls. */
	ck_assert_uint_eq(buf[0], 0x33);
	ck_assert_uint_eq(buf[DAPL_WIRE_HDR_LEN], 0x33);

	ck_assert_uint_eq(dapl_wire_encode(buf, sizeof(buf), 0, &some_limits,
					   NULL, 1), 0);
	ck_assert_uint_eq(dapl_wire_encode(NULL, 100, 0, &some_limits,
					   NULL, 0), 0);
	/* The length field is 16 bits; the buffer size does not matter. */
	ck_assert_uint_eq(dapl_wire_encode(big, (size_t)-1, 0, &some_limits,
					   big, 65536), 0);
	ck_assert_uint_eq(dapl_wire_encode(buf, 30, 0, &some_limits, big, 20),
			  30);
}
END_TEST

START_TEST(encode_in_place)
{
	unsigned char buf[DAPL_WIRE_HDR_LEN + 8];
	struct dapl_wire_hdr hdr;
	const void *data;
	size_t data_len;

	/* Consumer data already where it belongs ... */
	memcpy(buf + DAPL_WIRE_HDR_LEN, "in-place", 8);
	ck_assert_uint_eq(dapl_wire_encode(buf, sizeof(buf), 0, &some_limits,
					   buf + DAPL_WIRE_HDR_LEN, 8),
			  sizeof(buf));
	ck_assert_int_eq(decode(buf, sizeof(buf), &hdr, &data, &data_len),
			 DAPL_WIRE_OK);
	ck_assert_mem_eq(data, "in-place", 8);

	/* ... or at the start of the buffer, overlapping the header. */
	memcpy(buf, "overlaps", 8);
	ck_assert_uint_eq(dapl_wire_encode(buf, sizeof(buf), 0, &some_limits,
					   buf, 8), sizeof(buf));
	ck_assert_int_eq(decode(buf, sizeof(buf), &hdr, &data, &data_len),
			 DAPL_WIRE_OK);
	ck_assert_mem_eq(data, "overlaps", 8);
}
END_TEST

START_TEST(provider_reject)
{
	unsigned char buf[56];
	struct dapl_wire_hdr hdr;
	const void *data;
	size_t data_len;

	memset(buf, 0, sizeof(buf));
	ck_assert_uint_eq(dapl_wire_encode_reject(buf, sizeof(buf),
						  DAPL_WIRE_REJECT_READ_LIMITS),
			  DAPL_WIRE_HDR_LEN + 1);
	ck_assert_mem_eq(buf, "\xDA\x7C\x10\x01\x00\x01\x00\x00\x00\x00\x03",
			 DAPL_WIRE_HDR_LEN + 1);
	/* Decoded from a padded transport buffer. */
	ck_assert_int_eq(decode(buf, sizeof(buf), &hdr, &data, &data_len),
			 DAPL_WIRE_OK);
	ck_assert_uint_eq(hdr.flags, DAPL_WIRE_F_PROVIDER_REJECT);
	ck_assert_uint_eq(hdr.limits.ird, 0);
	ck_assert_uint_eq(hdr.limits.ord, 0);
	ck_assert_uint_eq(data_len, 1);
	ck_assert_uint_eq(*(const unsigned char *)data,
			  DAPL_WIRE_REJECT_READ_LIMITS);

	ck_assert_uint_eq(dapl_wire_encode_reject(buf, DAPL_WIRE_HDR_LEN,
						  DAPL_WIRE_REJECT_BAD_HEADER),
			  0);
	ck_assert_uint_eq(dapl_wire_encode_reject(buf, sizeof(buf), 256), 0);
	ck_assert_uint_eq(dapl_wire_encode_reject(buf, DAPL_WIRE_HDR_LEN + 1,
						  255), DAPL_WIRE_HDR_LEN + 1);
}
END_TEST

START_TEST(null_outputs)
{
	unsigned char buf[16];

	ck_assert_uint_eq(dapl_wire_encode(buf, sizeof(buf), 0, &some_limits,
					   "ab", 2), 12);
	ck_assert_int_eq(dapl_wire_decode(buf, 12, NULL, NULL, NULL),
			 DAPL_WIRE_OK);
	ck_assert_int_eq(dapl_wire_decode(buf, 5, NULL, NULL, NULL),
			 DAPL_WIRE_TRUNCATED);
	ck_assert_int_eq(dapl_wire_decode("xy", 2, NULL, NULL, NULL),
			 DAPL_WIRE_LEGACY);
}
END_TEST

static void assert_distinct(const char *const *s, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		ck_assert_ptr_nonnull(s[i]);
		ck_assert_uint_gt(strlen(s[i]), 0);
		for (j = 0; j < i; j++)
			ck_assert_str_ne(s[i], s[j]);
	}
}

START_TEST(strings)
{
	const char *st[] = {
		dapl_wire_status_str(DAPL_WIRE_OK),
		dapl_wire_status_str(DAPL_WIRE_LEGACY),
		dapl_wire_status_str(DAPL_WIRE_TRUNCATED),
		dapl_wire_status_str(DAPL_WIRE_BAD_VERSION),
		dapl_wire_status_str(DAPL_WIRE_BAD_LENGTH),
		dapl_wire_status_str((enum dapl_wire_status)77),
	};
	const char *rj[] = {
		dapl_wire_reject_str(DAPL_WIRE_REJECT_BAD_HEADER),
		dapl_wire_reject_str(DAPL_WIRE_REJECT_BAD_VERSION),
		dapl_wire_reject_str(DAPL_WIRE_REJECT_READ_LIMITS),
		dapl_wire_reject_str(DAPL_WIRE_REJECT_NO_RESOURCES),
		dapl_wire_reject_str(DAPL_WIRE_REJECT_NO_LISTENER),
		dapl_wire_reject_str(0),
	};

	assert_distinct(st, sizeof(st) / sizeof(st[0]));
	assert_distinct(rj, sizeof(rj) / sizeof(rj[0]));
	ck_assert_str_eq(dapl_wire_reject_str(0), "unknown reason");
	ck_assert_str_eq(dapl_wire_reject_str(6), "unknown reason");
	ck_assert_str_eq(dapl_wire_reject_str(1000), "unknown reason");
}
END_TEST

START_TEST(negotiate_example)
{
	const struct dapl_read_limits client = { .ird = 8, .ord = 4 };
	const struct dapl_read_limits server = { .ird = 2, .ord = 16 };
	const struct dapl_read_limits dev = { .ird = 16, .ord = 16 };
	struct dapl_read_limits srv_out, cli_out;

	/* Passive side, on the request's limits. */
	dapl_read_limits_negotiate(&server, &client, &dev, &srv_out);
	ck_assert_uint_eq(srv_out.ird, 2);
	ck_assert_uint_eq(srv_out.ord, 8);

	/* Active side, on the accept's limits. */
	dapl_read_limits_negotiate(&client, &srv_out, &dev, &cli_out);
	ck_assert_uint_eq(cli_out.ird, 8);
	ck_assert_uint_eq(cli_out.ord, 2);

	/* Neither side sends more reads than the other takes. */
	ck_assert_uint_le(cli_out.ord, srv_out.ird);
	ck_assert_uint_le(srv_out.ord, cli_out.ird);
}
END_TEST

START_TEST(negotiate_through_wire)
{
	const struct dapl_read_limits client = { .ird = 8, .ord = 4 };
	const struct dapl_read_limits server = { .ird = 2, .ord = 16 };
	const struct dapl_read_limits dev = { .ird = 16, .ord = 16 };
	struct dapl_read_limits out;
	unsigned char req[56], acc[56];
	struct dapl_wire_hdr hdr;
	const void *data;
	size_t data_len;

	ck_assert_uint_gt(dapl_wire_encode(req, sizeof(req), 0, &client,
					   NULL, 0), 0);
	ck_assert_int_eq(decode(req, sizeof(req), &hdr, &data, &data_len),
			 DAPL_WIRE_OK);
	dapl_read_limits_negotiate(&server, &hdr.limits, &dev, &out);
	ck_assert_uint_gt(dapl_wire_encode(acc, sizeof(acc), 0, &out,
					   NULL, 0), 0);
	ck_assert_int_eq(decode(acc, sizeof(acc), &hdr, &data, &data_len),
			 DAPL_WIRE_OK);
	ck_assert_uint_eq(hdr.limits.ird, 2);
	ck_assert_uint_eq(hdr.limits.ord, 8);
	dapl_read_limits_negotiate(&client, &hdr.limits, &dev, &out);
	ck_assert_uint_eq(out.ird, 8);
	ck_assert_uint_eq(out.ord, 2);
}
END_TEST

START_TEST(negotiate_device_clamp)
{
	const struct dapl_read_limits client = { .ird = 8, .ord = 4 };
	const struct dapl_read_limits server = { .ird = 2, .ord = 16 };
	const struct dapl_read_limits dev = { .ird = 1, .ord = 1 };
	struct dapl_read_limits srv_out, cli_out;

	dapl_read_limits_negotiate(&server, &client, &dev, &srv_out);
	ck_assert_uint_eq(srv_out.ird, 1);
	ck_assert_uint_eq(srv_out.ord, 1);
	dapl_read_limits_negotiate(&client, &srv_out, &dev, &cli_out);
	ck_assert_uint_eq(cli_out.ird, 1);
	ck_assert_uint_eq(cli_out.ord, 1);

	/* Without a device limit only own and peer count. */
	dapl_read_limits_negotiate(&server, &client, NULL, &srv_out);
	ck_assert_uint_eq(srv_out.ird, 2);
	ck_assert_uint_eq(srv_out.ord, 8);
}
END_TEST

START_TEST(negotiate_zero)
{
	const struct dapl_read_limits none = { .ird = 0, .ord = 0 };
	const struct dapl_read_limits some = { .ird = 8, .ord = 8 };
	const struct dapl_read_limits dev = { .ird = 16, .ord = 16 };
	struct dapl_read_limits out;

	dapl_read_limits_negotiate(&none, &some, &dev, &out);
	ck_assert_uint_eq(out.ird, 0);
	ck_assert_uint_eq(out.ord, 0);
	dapl_read_limits_negotiate(&some, &none, &dev, &out);
	ck_assert_uint_eq(out.ird, 0);
	ck_assert_uint_eq(out.ord, 0);
}
END_TEST

START_TEST(negotiate_legacy_peer)
{
	const struct dapl_read_limits own = { .ird = 8, .ord = 4 };
	const struct dapl_read_limits dev = { .ird = 16, .ord = 16 };
	struct dapl_wire_hdr hdr;
	const void *data;
	size_t data_len;
	struct dapl_read_limits out;

	ck_assert_int_eq(decode("old peer", 8, &hdr, &data, &data_len),
			 DAPL_WIRE_LEGACY);
	dapl_read_limits_negotiate(&own, &hdr.limits, &dev, &out);
	ck_assert_uint_eq(out.ird, 8);
	ck_assert_uint_eq(out.ord, 4);

	/* Unknown everywhere but the device: the device decides. */
	dapl_read_limits_negotiate(&hdr.limits, &hdr.limits, &dev, &out);
	ck_assert_uint_eq(out.ird, 16);
	ck_assert_uint_eq(out.ord, 16);
}
END_TEST

START_TEST(negotiate_aliasing)
{
	struct dapl_read_limits own = { .ird = 8, .ord = 4 };
	struct dapl_read_limits peer = { .ird = 2, .ord = 3 };
	const struct dapl_read_limits dev = { .ird = 16, .ord = 16 };

	dapl_read_limits_negotiate(&own, &peer, &dev, &own);
	ck_assert_uint_eq(own.ird, 3);
	ck_assert_uint_eq(own.ord, 2);

	own.ird = 8;
	own.ord = 4;
	dapl_read_limits_negotiate(&own, &peer, &dev, &peer);
	ck_assert_uint_eq(peer.ird, 3);
	ck_assert_uint_eq(peer.ord, 2);
}
END_TEST

START_TEST(max_consumer)
{
	ck_assert_uint_eq(dapl_wire_max_consumer(56), 46);
	ck_assert_uint_eq(dapl_wire_max_consumer(256), 246);
	ck_assert_uint_eq(dapl_wire_max_consumer(5), 0);
	ck_assert_uint_eq(dapl_wire_max_consumer(0), 0);
	ck_assert_uint_eq(dapl_wire_max_consumer(DAPL_WIRE_HDR_LEN), 0);
	ck_assert_uint_eq(dapl_wire_max_consumer(DAPL_WIRE_HDR_LEN + 1), 1);
	ck_assert_uint_eq(dapl_wire_max_consumer((size_t)1 << 20), 65535);
}
END_TEST

/* An InfiniBand REQ through rdma_cm: 56 bytes; OpenFabrics' dtest sends 48. */
START_TEST(connect_headerless_when_it_does_not_fit)
{
	struct dapl_read_limits own = { 4, 8 };
	unsigned char data[56], buf[64];
	struct dapl_wire_hdr hdr;
	const void *c;
	size_t clen;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(0x30 + i);
	ck_assert_uint_eq(dapl_wire_max_connect_consumer(56), 56);
	/* 46 bytes fit behind the header: header and limits go */
	ck_assert_uint_eq(dapl_wire_encode_connect(buf, sizeof(buf), 56, &own,
						   data, 46), 56);
	ck_assert_int_eq(dapl_wire_decode(buf, 56, &hdr, &c, &clen), DAPL_WIRE_OK);
	ck_assert_uint_eq(clen, 46);
	ck_assert_uint_eq(hdr.limits.ird, 4);
	/* 48 do not: the bytes alone, read back as a header-less peer's */
	ck_assert_uint_eq(dapl_wire_encode_connect(buf, sizeof(buf), 56, &own,
						   data, 48), 48);
	ck_assert_mem_eq(buf, data, 48);
	ck_assert_int_eq(dapl_wire_decode(buf, 56, &hdr, &c, &clen),
			 DAPL_WIRE_LEGACY);
	ck_assert_mem_eq(c, data, 48);
	ck_assert_uint_eq(hdr.limits.ird, DAPL_READ_LIMIT_UNKNOWN);
	/* all 56 too; 57 never */
	ck_assert_uint_eq(dapl_wire_encode_connect(buf, sizeof(buf), 56, &own,
						   data, 56), 56);
	ck_assert_uint_eq(dapl_wire_encode_connect(buf, sizeof(buf), 56, &own,
						   data, 57), 0);
	/* nor past the caller's buffer */
	ck_assert_uint_eq(dapl_wire_encode_connect(buf, 47, 56, &own, data, 48), 0);
}
END_TEST

START_TEST(connect_headerless_never_looks_like_a_header)
{
	unsigned char data[48], buf[64];

	memset(data, 0, sizeof(data));
	data[0] = DAPL_WIRE_MAGIC >> 8;
	data[1] = DAPL_WIRE_MAGIC & 0xff;
	memset(buf, 0xee, sizeof(buf));
	ck_assert_uint_eq(dapl_wire_encode_connect(buf, sizeof(buf), 56, NULL,
						   data, 48), 0);
	ck_assert_uint_eq(buf[0], 0xee);    /* untouched */
	/* behind a header the same bytes are fine */
	ck_assert_uint_eq(dapl_wire_encode_connect(buf, sizeof(buf), 56, NULL,
						   data, 40), 50);
}
END_TEST

static Suite *wire_suite(void)
{
	Suite *s = suite_create("wire");
	TCase *hdr = tcase_create("header");
	TCase *neg = tcase_create("negotiate");

	tcase_add_test(hdr, round_trips);
	tcase_add_test(hdr, exact_wire_bytes);
	tcase_add_test(hdr, padding_ignored);
	tcase_add_test(hdr, legacy_data);
	tcase_add_test(hdr, legacy_long_data);
	tcase_add_test(hdr, truncated);
	tcase_add_test(hdr, versions);
	tcase_add_test(hdr, bad_length);
	tcase_add_test(hdr, reserved_flags);
	tcase_add_test(hdr, encode_refusals);
	tcase_add_test(hdr, encode_in_place);
	tcase_add_test(hdr, provider_reject);
	tcase_add_test(hdr, null_outputs);
	tcase_add_test(hdr, strings);
	tcase_add_test(hdr, max_consumer);
	tcase_add_test(hdr, connect_headerless_when_it_does_not_fit);
	tcase_add_test(hdr, connect_headerless_never_looks_like_a_header);
	suite_add_tcase(s, hdr);

	tcase_add_test(neg, negotiate_example);
	tcase_add_test(neg, negotiate_through_wire);
	tcase_add_test(neg, negotiate_device_clamp);
	tcase_add_test(neg, negotiate_zero);
	tcase_add_test(neg, negotiate_legacy_peer);
	tcase_add_test(neg, negotiate_aliasing);
	suite_add_tcase(s, neg);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(wire_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
