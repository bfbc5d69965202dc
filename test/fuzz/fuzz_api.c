/*
 * Fuzz target for the public DAT API's handle and argument checks.
 *
 * An input is a program: each byte pair picks a call and its arguments.
 * Handle arguments come from a pool that holds live objects of every
 * kind, objects this input freed, the IA handle, NULL and forged values
 * (below 64 KiB, misaligned, pointers into memory that is no object,
 * some of it filled with input bytes, the stack and the heap, any 64-bit
 * value of the input, values near live objects), used in every position whatever
 * the call expects.  Lengths, addresses, flags and counts come from the
 * input too.  Whatever is live at the end is freed, so every input starts
 * from the same IA.
 *
 * What must hold, besides "no crash, no sanitizer report": a call whose
 * first handle is not a live object of the kind it takes answers
 * DAT_INVALID_HANDLE.
 *
 * Freed handles come from this input and from every earlier one (a
 * graveyard of the last 256, of any age), and the IA is now and then
 * closed abruptly and opened again, so handles of a closed IA are used
 * too.
 *
 * Two ways to run it:
 *  - built with -fsanitize=fuzzer: libFuzzer drives LLVMFuzzerTestOneInput;
 *  - built without (make check, the ASan build, valgrind): main() feeds it
 *    FUZZ_API_RUNS (default 20000) inputs from a fixed pseudo-random
 *    sequence, so a failure replays; FUZZ_API_SEED changes the sequence.
 * Both need DAT_OVERRIDE (or DAT_TEST_CONF) naming a dat.conf with the IA
 * DAT_TEST_IA (default ofi-tcp).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dat/udat.h>

#define POOL 16

enum kind { K_NONE, K_PZ, K_CNO, K_EVD, K_LMR, K_RMR, K_EP, K_FREED, K_FORGED };

struct slot {
	DAT_HANDLE h;
	enum kind kind;
};

static DAT_IA_HANDLE ia;
static DAT_EVD_HANDLE async_evd;
static struct slot pool[POOL];
static unsigned long made, refused, steps, reopens;  /* for the summary line */
static DAT_HANDLE grave[256];             /* freed handles, of any input */
static unsigned graves;
static unsigned char memory[1 << 16];     /* what LMRs register */
static uint64_t not_an_object[8];         /* zeros: first word NULL */
static unsigned char input_copy[256];     /* forged objects of input bytes */
static DAT_HANDLE input_stack;             /* memory on the stack, per input */

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "fuzz_api: " __VA_ARGS__);         \
			fputc('\n', stderr);                               \
			abort();                                           \
		}                                                          \
	} while (0)

/* ---- reading the input -------------------------------------------------- */

struct input {
	const uint8_t *p;
	size_t left;
};

static uint8_t byte(struct input *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

static uint64_t u64(struct input *in)
{
	uint64_t v = 0;
	int i;

	/* mostly small values, sometimes extreme ones */
	switch (byte(in) & 3) {
	case 0:
		return byte(in);
	case 1:
		return (uint64_t)byte(in) << 8 | byte(in);
	case 2:
		return UINT64_MAX - byte(in);
	default:
		for (i = 0; i < 8; i++)
			v = v << 8 | byte(in);
		return v;
	}
}

/* ---- the handle pool ---------------------------------------------------- */

/* Whether v is a live object (or the IA): a value made up from input bytes
 * may, however rarely, be one. */
static int is_live(DAT_HANDLE v)
{
	int i;

	if (v == ia || v == async_evd)
		return 1;
	for (i = 0; i < POOL; i++)
		if (pool[i].h == v && pool[i].kind != K_NONE && pool[i].kind != K_FREED &&
		    pool[i].kind != K_FORGED)
			return 1;
	return 0;
}

/* A value that is no object: NULL, the IA handle, below 64 KiB,
 * misaligned, memory that is not an object (zeros, input bytes, the stack,
 * the heap), or any 64-bit value at all: unmapped, aligned or not, or near
 * a live object (in the arena's opened part, inside objects, or beyond it
 * where the reservation is PROT_NONE).  Issue 24: none of them may crash. */
static DAT_HANDLE forged(uint8_t b, struct input *in)
{
	static void *heap;
	uint64_t v;
	int i;

	switch (b % 16) {
	case 0: return DAT_HANDLE_NULL;
	case 1: return ia;
	case 2: return (DAT_HANDLE)(uintptr_t)0x8000;
	case 3: return (DAT_HANDLE)(uintptr_t)0x10001;
	case 4: return (DAT_HANDLE)not_an_object;
	case 5: return (DAT_HANDLE)(input_copy + 8 * (b % 16));
	case 6: return (DAT_HANDLE)(memory + 64);
	case 7: return (DAT_HANDLE)(memory + 128);
	case 8:
	case 9:
		/* any 64 bits; case 9 aligned, so that libdat's range check
		 * (not just the alignment test) has to refuse it */
		for (v = 0, i = 0; i < 8; i++)
			v = v << 8 | byte(in);
		if (b % 16 == 9)
			v &= ~(uint64_t)7;
		return is_live((DAT_HANDLE)(uintptr_t)v) ? DAT_HANDLE_NULL
							 : (DAT_HANDLE)(uintptr_t)v;
	case 10:
	case 11: {
		/* near a live object: +-32 MiB in words, never on an object's
		 * start (objects are 64-byte aligned) */
		DAT_HANDLE base = DAT_HANDLE_NULL;
		int32_t words;

		for (i = 0; i < POOL && !base; i++)
			if (pool[(b + i) % POOL].kind >= K_PZ && pool[(b + i) % POOL].kind <= K_EP)
				base = pool[(b + i) % POOL].h;
		if (!base)
			base = async_evd;
		words = (int32_t)((uint32_t)byte(in) << 24 | (uint32_t)byte(in) << 16 |
				  (uint32_t)byte(in) << 8 | byte(in)) >> 10;
		if (words % 8 == 0)
			words++;
		return (DAT_HANDLE)((uintptr_t)base + (uintptr_t)(intptr_t)words * 8);
	}
	case 12:
		/* the stack: a frame live while the input runs */
		return input_stack;
	case 13:
		if (!heap)
			heap = calloc(1, 256);
		return heap;
	case 14: return (DAT_HANDLE)(uintptr_t)0xdeadbeef000ULL;
	default: return (DAT_HANDLE)(uintptr_t)0x7ffff0000000ULL;
	}
}

static void bury(DAT_HANDLE h)
{
	grave[graves++ % (sizeof(grave) / sizeof(grave[0]))] = h;
}

/* Any value of the pool, or a forged one. */
static DAT_HANDLE pick(struct input *in, enum kind *kind)
{
	uint8_t b = byte(in);
	enum kind k = K_FORGED;
	DAT_HANDLE h;

	if (b < 2 * POOL) {
		h = pool[b % POOL].h;
		k = pool[b % POOL].kind;
		if (k == K_NONE) {
			h = DAT_HANDLE_NULL;
			k = K_FORGED;
		}
	} else if (b >= 224 && graves) {
		/* a handle freed some time ago, in this input or before */
		h = grave[(b + graves) % (graves < 256 ? graves : 256)];
		k = K_FREED;
	} else {
		h = forged(b, in);
	}
	if (kind)
		*kind = k;
	return h;
}

static void keep(DAT_RETURN rc, DAT_HANDLE h, enum kind k, struct input *in)
{
	struct slot *s = &pool[byte(in) % POOL];

	if (rc != DAT_SUCCESS)
		return;
	made++;
	if (s->kind != K_NONE && s->kind != K_FREED && s->kind != K_FORGED) {
		/* the slot's object stays reachable through the sweep */
		int i;

		for (i = 0; i < POOL; i++)
			if (pool[i].kind == K_NONE || pool[i].kind == K_FREED ||
			    pool[i].kind == K_FORGED) {
				s = &pool[i];
				break;
			}
		if (i == POOL) {
			/* pool full of live objects: free the new one */
			switch (k) {
			case K_PZ: dat_pz_free(h); break;
			case K_CNO: dat_cno_free(h); break;
			case K_EVD: dat_evd_free(h); break;
			case K_LMR: dat_lmr_free(h); break;
			case K_RMR: dat_rmr_free(h); break;
			case K_EP: dat_ep_free(h); break;
			default: break;
			}
			return;
		}
	}
	s->h = h;
	s->kind = k;
}

/* A call whose first handle is not a live object of the kind it takes. */
static void expect_bad_handle(DAT_RETURN rc, enum kind given, enum kind want,
			      const char *call)
{
	if (given == want)
		return;
	refused++;
	CHECK(DAT_GET_TYPE(rc) == DAT_INVALID_HANDLE,
	      "%s with a handle of kind %d answered 0x%08x, not DAT_INVALID_HANDLE",
	      call, (int)given, (unsigned)rc);
}

static void mark_freed(DAT_HANDLE h)
{
	int i;

	for (i = 0; i < POOL; i++)
		if (pool[i].h == h && pool[i].kind != K_FORGED)
			pool[i].kind = K_FREED;
	bury(h);
}

static void open_ia(void);

/* Closes the IA abruptly, which frees everything of it, and opens it
 * again: every handle of the old IA is stale from now on. */
static void reopen(void)
{
	DAT_RETURN rc;
	int i;

	rc = dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG);
	CHECK(rc == DAT_SUCCESS, "abrupt dat_ia_close: 0x%08x", (unsigned)rc);
	for (i = 0; i < POOL; i++)
		if (pool[i].kind != K_NONE && pool[i].kind != K_FORGED &&
		    pool[i].kind != K_FREED) {
			pool[i].kind = K_FREED;
			bury(pool[i].h);
		}
	bury(async_evd);
	open_ia();
	reopens++;
}

/* Frees what is live, dependants first. */
static void sweep(void)
{
	static const enum kind order[] = { K_EP, K_RMR, K_LMR, K_EVD, K_CNO, K_PZ };
	size_t o;
	int i;

	for (o = 0; o < sizeof(order) / sizeof(order[0]); o++)
		for (i = 0; i < POOL; i++) {
			struct slot *s = &pool[i];
			DAT_RETURN rc = DAT_SUCCESS;

			if (s->kind != order[o])
				continue;
			switch (s->kind) {
			case K_EP: rc = dat_ep_free(s->h); break;
			case K_RMR: rc = dat_rmr_free(s->h); break;
			case K_LMR: rc = dat_lmr_free(s->h); break;
			case K_EVD: rc = dat_evd_free(s->h); break;
			case K_CNO: rc = dat_cno_free(s->h); break;
			case K_PZ: rc = dat_pz_free(s->h); break;
			default: break;
			}
			CHECK(rc == DAT_SUCCESS, "freeing a live object of kind %d at the end: 0x%08x",
			      (int)s->kind, (unsigned)rc);
			bury(s->h);
		}
	memset(pool, 0, sizeof(pool));
}

/* ---- one step -------------------------------------------------------------- */

static void step(struct input *in)
{
	uint8_t op = byte(in) % 16;
	DAT_HANDLE h = DAT_HANDLE_NULL, a, b, c, d;
	enum kind ka, kb;
	DAT_RETURN rc;

	steps++;
	switch (op) {
	case 0:
		rc = dat_pz_create(ia, &h);
		keep(rc, h, K_PZ, in);
		break;
	case 1:
		rc = dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &h);
		keep(rc, h, K_CNO, in);
		break;
	case 2: {
		DAT_COUNT qlen = (DAT_COUNT)(int8_t)byte(in);
		DAT_EVD_FLAGS fl = (DAT_EVD_FLAGS)byte(in);

		a = pick(in, NULL);
		rc = dat_evd_create(ia, qlen, a, fl, &h);
		keep(rc, h, K_EVD, in);
		break;
	}
	case 3: {
		DAT_REGION_DESCRIPTION r;
		uint64_t off = u64(in), len = u64(in);

		/* inside our memory, or anywhere at all */
		r.for_va = (byte(in) & 1) ? (void *)(memory + off % sizeof(memory))
					  : (void *)(uintptr_t)off;
		a = pick(in, NULL);
		rc = dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, r, len, a,
				    (DAT_MEM_PRIV_FLAGS)byte(in), &h, NULL, NULL, NULL, NULL);
		keep(rc, h, K_LMR, in);
		break;
	}
	case 4:
		a = pick(in, &ka);
		rc = dat_rmr_create(a, &h);
		expect_bad_handle(rc, ka, K_PZ, "dat_rmr_create");
		keep(rc, h, K_RMR, in);
		break;
	case 5:
		a = pick(in, NULL);
		b = pick(in, NULL);
		c = pick(in, NULL);
		d = pick(in, NULL);
		rc = dat_ep_create(ia, a, b, c, d, NULL, &h);
		keep(rc, h, K_EP, in);
		break;
	case 6: {
		/* a free function chosen apart from the handle's kind */
		uint8_t which = byte(in) % 6;
		static const enum kind takes[] = { K_PZ, K_CNO, K_EVD, K_LMR, K_RMR, K_EP };

		a = pick(in, &ka);
		switch (which) {
		case 0: rc = dat_pz_free(a); break;
		case 1: rc = dat_cno_free(a); break;
		case 2: rc = dat_evd_free(a); break;
		case 3: rc = dat_lmr_free(a); break;
		case 4: rc = dat_rmr_free(a); break;
		default: rc = dat_ep_free(a); break;
		}
		if (ka != takes[which])
			expect_bad_handle(rc, ka, takes[which], "a free call");
		if (rc == DAT_SUCCESS)
			mark_freed(a);
		break;
	}
	case 7: {
		DAT_PZ_PARAM pzp;
		DAT_EVD_PARAM evp;
		DAT_LMR_PARAM lp;
		DAT_RMR_PARAM rp;
		DAT_EP_PARAM ep;
		DAT_CNO_PARAM cp;

		a = pick(in, &ka);
		switch (byte(in) % 6) {
		case 0:
			rc = dat_pz_query(a, DAT_PZ_FIELD_ALL, &pzp);
			expect_bad_handle(rc, ka, K_PZ, "dat_pz_query");
			break;
		case 1:
			rc = dat_evd_query(a, DAT_EVD_FIELD_ALL, &evp);
			expect_bad_handle(rc, ka, K_EVD, "dat_evd_query");
			break;
		case 2:
			rc = dat_lmr_query(a, DAT_LMR_FIELD_ALL, &lp);
			expect_bad_handle(rc, ka, K_LMR, "dat_lmr_query");
			break;
		case 3:
			rc = dat_rmr_query(a, DAT_RMR_FIELD_ALL, &rp);
			expect_bad_handle(rc, ka, K_RMR, "dat_rmr_query");
			break;
		case 4:
			rc = dat_ep_query(a, DAT_EP_FIELD_ALL, &ep);
			expect_bad_handle(rc, ka, K_EP, "dat_ep_query");
			break;
		default:
			rc = dat_cno_query(a, DAT_CNO_FIELD_ALL, &cp);
			expect_bad_handle(rc, ka, K_CNO, "dat_cno_query");
			break;
		}
		break;
	}
	case 8: {
		DAT_LMR_TRIPLET t[3];
		DAT_DTO_COOKIE ck;
		DAT_COUNT n = (DAT_COUNT)(byte(in) % 5) - 1;
		int i;

		for (i = 0; i < 3; i++) {
			t[i].lmr_context = (DAT_LMR_CONTEXT)u64(in);
			t[i].pad = 0;
			t[i].virtual_address = (byte(in) & 1) ? (DAT_VADDR)(uintptr_t)memory + byte(in)
							      : (DAT_VADDR)u64(in);
			t[i].segment_length = u64(in);
		}
		ck.as_64 = u64(in);
		a = pick(in, &ka);
		rc = (byte(in) & 1) ? dat_ep_post_recv(a, n, t, ck, (DAT_COMPLETION_FLAGS)byte(in))
				    : dat_ep_post_send(a, n, t, ck, (DAT_COMPLETION_FLAGS)byte(in));
		expect_bad_handle(rc, ka, K_EP, "dat_ep_post_recv/send");
		break;
	}
	case 9: {
		DAT_EVENT ev;

		a = pick(in, &ka);
		if (byte(in) & 1) {
			rc = dat_evd_dequeue(a, &ev);
			expect_bad_handle(rc, ka, K_EVD, "dat_evd_dequeue");
		} else {
			memset(&ev, 0, sizeof(ev));
			ev.event_number = DAT_SOFTWARE_EVENT;
			rc = dat_evd_post_se(a, &ev);
			expect_bad_handle(rc, ka, K_EVD, "dat_evd_post_se");
		}
		break;
	}
	case 10:
		a = pick(in, &ka);
		b = pick(in, &kb);
		rc = dat_evd_modify_cno(a, b);
		expect_bad_handle(rc, ka, K_EVD, "dat_evd_modify_cno");
		break;
	case 11: {
		DAT_EP_PARAM p;

		memset(&p, 0, sizeof(p));
		p.pz_handle = pick(in, NULL);
		p.recv_evd_handle = pick(in, NULL);
		p.request_evd_handle = pick(in, NULL);
		p.connect_evd_handle = pick(in, NULL);
		a = pick(in, &ka);
		rc = dat_ep_modify(a, (DAT_EP_PARAM_MASK)(DAT_EP_FIELD_PZ_HANDLE |
							   DAT_EP_FIELD_RECV_EVD_HANDLE |
							   DAT_EP_FIELD_REQUEST_EVD_HANDLE |
							   DAT_EP_FIELD_CONNECT_EVD_HANDLE), &p);
		expect_bad_handle(rc, ka, K_EP, "dat_ep_modify");
		break;
	}
	case 12: {
		DAT_LMR_TRIPLET t;
		DAT_RMR_CONTEXT ctx;
		DAT_RMR_COOKIE rk;

		t.lmr_context = (DAT_LMR_CONTEXT)u64(in);
		t.pad = 0;
		t.virtual_address = (DAT_VADDR)(uintptr_t)memory + byte(in);
		t.segment_length = u64(in);
		rk.as_64 = 1;
		a = pick(in, &ka);
		b = pick(in, NULL);
		rc = dat_rmr_bind(a, &t, (DAT_MEM_PRIV_FLAGS)byte(in), b, rk,
				  DAT_COMPLETION_DEFAULT_FLAG, &ctx);
		expect_bad_handle(rc, ka, K_RMR, "dat_rmr_bind");
		break;
	}
	case 13: {
		DAT_HANDLE_TYPE type;

		a = pick(in, &ka);
		rc = dat_get_handle_type(a, &type);
		/* (the IA handle is a handle of type IA) */
		if ((ka == K_FORGED && a != ia) || ka == K_FREED)
			CHECK(rc != DAT_SUCCESS, "dat_get_handle_type took %p, a handle of kind %d "
			      "(type %d)", a, (int)ka, (int)type);
		break;
	}
	case 14: {
		DAT_COUNT nmore;
		DAT_EVENT ev;

		a = pick(in, &ka);
		rc = dat_evd_wait(a, 0, 1, &ev, &nmore);
		expect_bad_handle(rc, ka, K_EVD, "dat_evd_wait");
		break;
	}
	case 15:
		/* now and then the IA goes, with all it had */
		if (byte(in) == 0x5a) {
			reopen();
			break;
		}
		/* fall through */
	default: {
		/* a slot without a live object takes a forged value */
		struct slot *sl = &pool[byte(in) % POOL];

		if (sl->kind == K_NONE || sl->kind == K_FREED || sl->kind == K_FORGED)
			*sl = (struct slot){ forged(byte(in), in), K_FORGED };
		break;
	}
	}
}

/* ---- entry points ---------------------------------------------------------- */

static void open_ia(void)
{
	const char *name = getenv("DAT_TEST_IA");
	const char *conf = getenv("DAT_TEST_CONF");
	DAT_RETURN rc;

	if (conf && *conf && !getenv("DAT_OVERRIDE"))
		setenv("DAT_OVERRIDE", conf, 1);
	async_evd = DAT_HANDLE_NULL;
	rc = dat_ia_open((DAT_NAME_PTR)(name && *name ? name : "ofi-tcp"), 8, &async_evd, &ia);
	CHECK(rc == DAT_SUCCESS, "dat_ia_open failed: 0x%08x", (unsigned)rc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	uint64_t on_stack[8] = { 0 };

	input_stack = on_stack;
	if (!ia)
		open_ia();
	memset(input_copy, 0, sizeof(input_copy));
	memcpy(input_copy, data, size < sizeof(input_copy) ? size : sizeof(input_copy));
	memset(pool, 0, sizeof(pool));
	while (in.left)
		step(&in);
	sweep();
	input_stack = DAT_HANDLE_NULL;
	return 0;
}

#ifndef FUZZ_API_LIBFUZZER
int main(void)
{
	const char *r = getenv("FUZZ_API_RUNS"), *s = getenv("FUZZ_API_SEED");
	long runs = r && *r ? strtol(r, NULL, 10) : 20000;
	uint64_t x = s && *s ? strtoull(s, NULL, 0) : 0x9e3779b97f4a7c15ull;
	uint8_t buf[160];
	long n;
	size_t i;

	if (!getenv("DAT_OVERRIDE") && !getenv("DAT_TEST_CONF")) {
		printf("SKIP: DAT_TEST_CONF is not set (run through make check)\n");
		return 77;
	}
	open_ia();
	for (n = 0; n < runs; n++) {
		size_t len = 16 + (size_t)(x % (sizeof(buf) - 16));

		for (i = 0; i < len; i++) {
			/* xorshift64 */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (uint8_t)(x >> 24);
		}
		LLVMFuzzerTestOneInput(buf, len);
	}
	CHECK(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG) == DAT_SUCCESS,
	      "dat_ia_close after the runs");
	printf("fuzz_api: %ld inputs, %lu calls, %lu objects made, %lu calls with a bad "
	       "first handle refused, %lu IA reopens; no crash\n", runs, steps, made, refused,
	       reopens);
	return 0;
}
#endif
