/*
 * A live listener against strangers' bytes: connection requests whose
 * libfabric connection header and DAT private data are mutated, truncated,
 * extended or garbage, sent by a raw TCP client that then closes.
 *
 * The listener (a PSP of the IA under test, ofi-tcp) must go on serving:
 * every request that reaches the consumer is answered (dat_cr_query, then
 * dat_cr_reject), and every FUZZ_LISTENER_CHECK inputs a real DAT client
 * in the same process connects, is accepted, and both sides see
 * ESTABLISHED and then DISCONNECTED.  No crash, no sanitizer report, no
 * hang (the whole run is bounded by alarm()), and the log tells the
 * malformed requests in a few lines, not one per stranger.
 *
 * The seed is the request libdat's own client sends (a 32-byte
 * ofi_ctrl_hdr, version 3, type connreq, its big-endian private data size,
 * then libdat's wire header and the consumer's private data).  Inputs come
 * from a fixed pseudo-random sequence (FUZZ_LISTENER_RUNS, default 3000;
 * FUZZ_LISTENER_SEED), so a failure replays.
 *
 * A client that sends a header and then stays silent without closing is
 * test_conn's half_open_stranger_holds_nothing (issue 12, item 8).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <dat/udat.h>

static int log_fd = -1, saved_stderr = -1;

/* Failures go to the real stderr, also while the log is captured. */
#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			if (saved_stderr >= 0)                             \
				dup2(saved_stderr, 2);                     \
			fprintf(stderr, "fuzz_listener: " __VA_ARGS__);    \
			fputc('\n', stderr);                               \
			exit(1);                                           \
		}                                                          \
	} while (0)

#define WAIT_US (10u * 1000u * 1000u)
#define MARK "fuzz-listener-real"

static DAT_IA_HANDLE ia;
static DAT_EVD_HANDLE async_evd, cr_evd, conn_evd, dto_evd;
static DAT_PZ_HANDLE pz;
static DAT_PSP_HANDLE psp;
static DAT_CONN_QUAL qual;
static unsigned long answered, accepted;

static uint64_t rng;

/* Lines of what was logged that contain what. */
static int log_lines(const char *what)
{
	static char buf[1 << 20];
	ssize_t n = pread(log_fd, buf, sizeof(buf) - 1, 0);
	const char *p;
	int count = 0;

	if (n < 0)
		return -1;
	buf[n] = '\0';
	for (p = buf; (p = strstr(p, what)) != NULL; p++)
		count++;
	return count;
}

static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* ---- the request libdat's client sends (the seed) --------------------- */

static size_t seed_request(uint8_t *b)
{
	static const char pdata[] = "fuzz me";
	size_t plen = 10 + sizeof(pdata) - 1;

	memset(b, 0, 32);
	b[0] = 3;                               /* version */
	b[1] = 0;                               /* connection request */
	b[2] = (uint8_t)(plen >> 8);            /* private data size */
	b[3] = (uint8_t)plen;
	b[24] = 1;
	/* libdat's wire header: magic, version, sizes, IRD/ORD */
	b[32] = 0xda; b[33] = 0x7c; b[34] = 0x10; b[35] = 0x00;
	b[36] = 0x00; b[37] = (uint8_t)(sizeof(pdata) - 1);
	b[38] = 0x00; b[39] = 0x08; b[40] = 0x00; b[41] = 0x04;
	memcpy(b + 42, pdata, sizeof(pdata) - 1);
	return 32 + plen;
}

/* ---- the mutations ------------------------------------------------------ */

static size_t mutate(uint8_t *b, size_t len, size_t cap)
{
	int n = 1 + (int)(next_rand() % 4), k;

	for (k = 0; k < n; k++) {
		switch (next_rand() % 8) {
		case 0:                                 /* flip a byte */
			b[next_rand() % len] ^= (uint8_t)(1u << (next_rand() % 8));
			break;
		case 1:                                 /* a random byte */
			b[next_rand() % len] = (uint8_t)next_rand();
			break;
		case 2:                                 /* the private data size */
			b[2] = (uint8_t)next_rand();
			b[3] = (uint8_t)next_rand();
			break;
		case 3:                                 /* truncate */
			len = 1 + next_rand() % len;
			break;
		case 4:                                 /* extend with garbage */
			while (len < cap && next_rand() % 8)
				b[len++] = (uint8_t)next_rand();
			break;
		case 5:                                 /* the wire header's sizes */
			if (len > 41) {
				b[36 + next_rand() % 6] = (uint8_t)next_rand();
			}
			break;
		case 6:                                 /* type and version */
			b[next_rand() % 2] = (uint8_t)(next_rand() % 8);
			break;
		default:                                /* all garbage */
			for (len = 0; len < 1 + next_rand() % 96; len++)
				b[len] = (uint8_t)next_rand();
			break;
		}
	}
	return len;
}

/* Sends the bytes on a fresh TCP connection to the listener, and closes. */
static void stranger(const uint8_t *b, size_t len)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0, "socket: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)qual);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		/* a refused or reset send is the listener's business */
		(void)!send(fd, b, len, MSG_NOSIGNAL);
		/* now and then half-close first and read what comes back */
		if (next_rand() % 4 == 0) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			char junk[256];

			shutdown(fd, SHUT_WR);
			if (poll(&p, 1, 20) > 0)
				(void)!recv(fd, junk, sizeof(junk), MSG_DONTWAIT);
		}
	}
	close(fd);
}

/* ---- the listener's side ------------------------------------------------- */

/* Answers every request queued now; returns the real client's CR when it
 * is among them (want_real), else NULL. */
static DAT_CR_HANDLE answer(int want_real, DAT_TIMEOUT wait_us)
{
	DAT_EVENT ev;
	DAT_COUNT nmore;
	DAT_RETURN rc;

	for (;;) {
		DAT_CR_PARAM p;
		DAT_CR_HANDLE cr;

		rc = want_real ? dat_evd_wait(cr_evd, wait_us, 1, &ev, &nmore)
			       : dat_evd_dequeue(cr_evd, &ev);
		if (DAT_GET_TYPE(rc) == DAT_QUEUE_EMPTY)
			return NULL;
		CHECK(rc == DAT_SUCCESS, "the CR EVD answered 0x%08x", (unsigned)rc);
		CHECK(ev.event_number == DAT_CONNECTION_REQUEST_EVENT,
		      "event 0x%x on the CR EVD", (unsigned)ev.event_number);
		cr = ev.event_data.cr_arrival_event_data.cr_handle;
		memset(&p, 0, sizeof(p));
		rc = dat_cr_query(cr, DAT_CR_FIELD_ALL, &p);
		CHECK(rc == DAT_SUCCESS, "dat_cr_query: 0x%08x", (unsigned)rc);
		CHECK(p.private_data_size >= 0 && p.private_data_size <= 256,
		      "a request with %d bytes of private data", (int)p.private_data_size);
		if (want_real && p.private_data_size == (DAT_COUNT)sizeof(MARK) &&
		    memcmp(p.private_data, MARK, sizeof(MARK)) == 0)
			return cr;
		rc = dat_cr_reject(cr);
		CHECK(rc == DAT_SUCCESS, "dat_cr_reject: 0x%08x", (unsigned)rc);
		answered++;
	}
}

static void expect_conn(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want, const char *who)
{
	DAT_EVENT ev;
	DAT_COUNT nmore;
	DAT_RETURN rc = dat_evd_wait(evd, WAIT_US, 1, &ev, &nmore);

	CHECK(rc == DAT_SUCCESS, "%s: no connection event (0x%08x)", who, (unsigned)rc);
	CHECK(ev.event_number == want, "%s: event 0x%x, expected 0x%x", who,
	      (unsigned)ev.event_number, (unsigned)want);
}

/* A real client connects, is accepted, and both sides disconnect. */
static void real_connection(void)
{
	DAT_EVD_HANDLE c_conn, s_conn;
	DAT_EP_HANDLE c_ep, s_ep;
	struct sockaddr_in sa;
	DAT_CR_HANDLE cr;

	CHECK(dat_evd_create(ia, 4, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &c_conn) ==
	      DAT_SUCCESS, "dat_evd_create");
	CHECK(dat_evd_create(ia, 4, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &s_conn) ==
	      DAT_SUCCESS, "dat_evd_create");
	CHECK(dat_ep_create(ia, pz, dto_evd, dto_evd, c_conn, NULL, &c_ep) == DAT_SUCCESS,
	      "dat_ep_create");
	CHECK(dat_ep_create(ia, pz, dto_evd, dto_evd, s_conn, NULL, &s_ep) == DAT_SUCCESS,
	      "dat_ep_create");
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(dat_ep_connect(c_ep, (DAT_IA_ADDRESS_PTR)&sa, qual, WAIT_US, sizeof(MARK),
			     (DAT_PVOID)MARK, DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG) ==
	      DAT_SUCCESS, "dat_ep_connect");
	cr = answer(1, WAIT_US);
	CHECK(cr != NULL, "the listener did not pass on a real client's request after %lu "
	      "strangers", answered);
	CHECK(dat_cr_accept(cr, s_ep, 0, NULL) == DAT_SUCCESS, "dat_cr_accept");
	expect_conn(s_conn, DAT_CONNECTION_EVENT_ESTABLISHED, "server");
	expect_conn(c_conn, DAT_CONNECTION_EVENT_ESTABLISHED, "client");
	CHECK(dat_ep_disconnect(c_ep, DAT_CLOSE_GRACEFUL_FLAG) == DAT_SUCCESS,
	      "dat_ep_disconnect");
	expect_conn(c_conn, DAT_CONNECTION_EVENT_DISCONNECTED, "client");
	expect_conn(s_conn, DAT_CONNECTION_EVENT_DISCONNECTED, "server");
	CHECK(dat_ep_free(c_ep) == DAT_SUCCESS, "dat_ep_free");
	CHECK(dat_ep_free(s_ep) == DAT_SUCCESS, "dat_ep_free");
	CHECK(dat_evd_free(c_conn) == DAT_SUCCESS, "dat_evd_free");
	CHECK(dat_evd_free(s_conn) == DAT_SUCCESS, "dat_evd_free");
	/* what the two EPs left on the shared DTO EVD */
	{
		DAT_EVENT ev;

		while (dat_evd_dequeue(dto_evd, &ev) == DAT_SUCCESS)
			;
	}
	accepted++;
}

int main(void)
{
	const char *r = getenv("FUZZ_LISTENER_RUNS"), *s = getenv("FUZZ_LISTENER_SEED");
	const char *c = getenv("FUZZ_LISTENER_CHECK"), *conf = getenv("DAT_TEST_CONF");
	const char *name = getenv("DAT_TEST_IA");
	long runs = r && *r ? strtol(r, NULL, 10) : 3000;
	long every = c && *c ? strtol(c, NULL, 10) : 250;
	uint8_t seed[128], buf[512];
	size_t seed_len, len;
	long n;

	if (!conf || !*conf) {
		printf("SKIP: DAT_TEST_CONF is not set (run through make check)\n");
		return 77;
	}
	if (name && *name && strcmp(name, "ofi-tcp") != 0) {
		printf("SKIP: the raw requests are libfabric tcp's (DAT_TEST_IA=%s)\n", name);
		return 77;
	}
	setenv("DAT_OVERRIDE", conf, 1);
	alarm(600);
	/* what the provider logs goes to a file this test reads at the end */
	{
		char path[] = "/tmp/fuzz_listener.XXXXXX";

		log_fd = mkstemp(path);
		CHECK(log_fd >= 0, "mkstemp: %s", strerror(errno));
		unlink(path);
		saved_stderr = dup(2);
		CHECK(saved_stderr >= 0 && dup2(log_fd, 2) == 2, "dup2: %s", strerror(errno));
	}
	rng = s && *s ? strtoull(s, NULL, 0) : 0x2545f4914f6cdd1dull;
	if (!rng)
		rng = 1;
	async_evd = DAT_HANDLE_NULL;
	CHECK(dat_ia_open((DAT_NAME_PTR)"ofi-tcp", 8, &async_evd, &ia) == DAT_SUCCESS,
	      "dat_ia_open");
	CHECK(dat_pz_create(ia, &pz) == DAT_SUCCESS, "dat_pz_create");
	CHECK(dat_evd_create(ia, 64, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr_evd) == DAT_SUCCESS,
	      "dat_evd_create");
	CHECK(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &conn_evd) ==
	      DAT_SUCCESS, "dat_evd_create");
	CHECK(dat_evd_create(ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &dto_evd) ==
	      DAT_SUCCESS, "dat_evd_create");
	CHECK(dat_psp_create_any(ia, &qual, cr_evd, DAT_PSP_CONSUMER_FLAG, &psp) ==
	      DAT_SUCCESS, "dat_psp_create_any");

	seed_len = seed_request(seed);
	real_connection();
	for (n = 0; n < runs; n++) {
		memcpy(buf, seed, seed_len);
		len = mutate(buf, seed_len, sizeof(buf));
		stranger(buf, len);
		answer(0, 0);
		if ((n + 1) % every == 0)
			real_connection();
	}
	real_connection();

	CHECK(dat_psp_free(psp) == DAT_SUCCESS, "dat_psp_free");
	answer(0, 0);
	CHECK(dat_evd_free(dto_evd) == DAT_SUCCESS, "dat_evd_free");
	CHECK(dat_evd_free(conn_evd) == DAT_SUCCESS, "dat_evd_free");
	CHECK(dat_evd_free(cr_evd) == DAT_SUCCESS, "dat_evd_free");
	CHECK(dat_pz_free(pz) == DAT_SUCCESS, "dat_pz_free");
	CHECK(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG) == DAT_SUCCESS, "dat_ia_close");
	{
		int lines = log_lines("refused a connection request");

		dup2(saved_stderr, 2);
		/* at most 8 and one per power of two of what it refused */
		CHECK(lines <= 8 + 32, "%d log lines for the refused requests", lines);
		printf("fuzz_listener: %d log lines told the refused requests\n", lines);
	}
	printf("fuzz_listener: %ld strangers, %lu of their requests reached the consumer "
	       "and were rejected, %lu real connections served; no crash\n", runs, answered,
	       accepted);
	return 0;
}
