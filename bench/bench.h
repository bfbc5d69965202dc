/* dat_bench: the interface between the measurement loops (dat_bench.c) and
 * the stacks they drive: libdat through the public DAT API (dat_bench.c),
 * raw libfabric (raw_ofi_bench.c) and plain kernel TCP sockets
 * (sock_bench.c).
 *
 * Every stack implements the same few primitives, and the one copy of each
 * pattern (send/recv ping-pong, RDMA Write ping-pong, Send and RDMA Write
 * streaming, connection setup) calls them, so all stacks run exactly the
 * same loop.  Sockets have no RDMA Write (post_write is NULL): those
 * patterns skip them.
 *
 * Memory of one connection, registered as one region:
 *
 *	tx    [max_size]                source of every send and RDMA Write
 *	rx    [BENCH_RING][max_size]    where the peer's RDMA Writes land
 *	                                (polled; write_poll uses it as a ring
 *	                                of slots), what its RDMA Reads read
 *	ring  [BENCH_NRECV][max_size]   receive buffers, always posted
 *	small [BENCH_NSMALL][BENCH_SMALL] more receives, posted by the window
 *	                                pattern only (slots BENCH_NRECV ...)
 *
 * Errors: the primitives do not return them; they print what failed and
 * exit (bench_die), with status BENCH_EXIT_NOTIMPL when libdat answered
 * DAT_NOT_IMPLEMENTED. */
#ifndef DAT_BENCH_H
#define DAT_BENCH_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_NRECV 8            /* receives each side keeps posted: the
				  * Send stream's credits, 8 MiB in flight at 1 MiB */
#define BENCH_RING 8             /* max_size slots in the rx area */
#define BENCH_NSMALL 512         /* the window pattern's receives ... */
#define BENCH_SMALL 64           /* ... of this many bytes each */
#define BENCH_WAIT_MS 20000      /* a blocking wait this long is a hang */
#define BENCH_EXIT_FAIL 1
#define BENCH_EXIT_NOTIMPL 3

enum bench_wait {
	BENCH_POLL,     /* busy-poll: dat_evd_dequeue / fi_cq_read in a loop */
	BENCH_BLOCK,    /* sleep: dat_evd_wait / fi_cq_sread */
};

/* What each side tells the other when connecting: where its rx area is. */
struct bench_remote {
	uint64_t addr;
	uint64_t key;
	uint64_t len;
};

struct bench_conn;

struct bench_ops {
	/* Post from the tx area: a send, or an RDMA Write to offset off of
	 * the peer's rx area, both of len bytes and signalled. */
	void (*post_send)(struct bench_conn *c, size_t len);
	void (*post_write)(struct bench_conn *c, size_t off, size_t len);
	/* An RDMA Read of the first len bytes of the peer's rx area into our
	 * own rx area, signalled; its completion comes with the sends'. */
	void (*post_read)(struct bench_conn *c, size_t len);
	/* Post receive buffer slot (0 .. BENCH_NRECV + BENCH_NSMALL - 1, see
	 * bench_slot) again. */
	void (*post_recv)(struct bench_conn *c, int slot);
	/* Reaps up to max send/write completions and returns how many.
	 * BENCH_POLL: one try, may return 0.  BENCH_BLOCK: sleeps until at
	 * least one is there. */
	int (*reap_tx)(struct bench_conn *c, int max, enum bench_wait w);
	/* The next receive completion: its slot and length.  Returns 0 when
	 * BENCH_POLL found nothing, else 1.  expect is the length the
	 * pattern sent: a byte stream (sockets) has no message boundaries
	 * and reads exactly that many bytes; the others ignore it. */
	int (*get_rx)(struct bench_conn *c, size_t expect, int *slot,
		      size_t *len, enum bench_wait w);
	/* Around a stretch where the application spins on memory and makes
	 * no call into the stack: the stack must progress on its own (libdat:
	 * its progress thread; raw: a helper thread in fi_cq_sread, which
	 * then also takes the send completions that reap_tx hands out). */
	void (*mem_wait_begin)(struct bench_conn *c);
	void (*mem_wait_end)(struct bench_conn *c);
	/* One poll of a completion queue nothing comes to, as a target that
	 * spins on another EVD does (read_evd, write_evd).  DAT: one
	 * dat_evd_dequeue on an EVD no EP uses.  NULL: none (raw: its target
	 * calls reap_tx as it spins anyway, spin_calls; sockets). */
	void (*spin_other)(struct bench_conn *c);
	/* One whole connection on a fresh endpoint, blocking: the client
	 * connects to the server's listener with pdata bytes of private data
	 * and disconnects once established; the server accepts with as many
	 * and waits for the disconnect.  msg > 0: the client sends a first
	 * message of msg bytes (at most BENCH_SMALL) once established and
	 * disconnects once it completed; the server has a receive posted
	 * before it accepts and waits for the message.  The connection that
	 * carries the patterns is not touched. */
	void (*setup)(struct bench_conn *c, int client, size_t pdata, size_t msg);
	/* n more connections between the same two sides, on the same
	 * completion queues (EVDs), idle for the whole run: what a scan of
	 * every endpoint costs shows in each pattern (-e).  The client
	 * starts all n connects at once and then waits for them; the server
	 * accepts each request as it comes; close ends them.  The client's
	 * time and memory for it are reported (connection rate, memory per
	 * connected endpoint).  NULL: the stack has none (sockets). */
	void (*idle)(struct bench_conn *c, int client, int n);
	/* Tears the connection down; 0 or -1 (a message was printed). */
	int (*close)(struct bench_conn *c, int client);
	/* 1: a byte stream with its own flow control, a Send can never find
	 * no receive posted (sockets).  0: the sender must hold credits. */
	int stream;
	/* 1: data moves only inside the stack's calls (raw libfabric tcp
	 * 1.17 has no progress thread): a side that spins on memory must
	 * call reap_tx (BENCH_POLL) as it spins.  0: the stack progresses
	 * on its own (libdat's progress thread). */
	int spin_calls;
};

struct bench_conn {
	const char *name;               /* "DAT" or "raw" */
	const struct bench_ops *ops;
	volatile uint8_t *tx, *rx;
	uint8_t *ring, *small;
	size_t max_size;
	int tx_out;                     /* posted sends/writes not yet reaped */
	void *priv;                     /* the stack's own state */
};

/* Common helpers (dat_bench.c). */
__attribute__((noreturn, format(printf, 2, 3)))
void bench_die(int status, const char *fmt, ...);
__attribute__((format(printf, 1, 2)))
void bench_warn(const char *fmt, ...);
void *bench_alloc(size_t max_size, size_t *len);
void bench_layout(struct bench_conn *c, void *buf, size_t max_size);
extern const char *bench_role;  /* "server" or "client" */

/* Receive slot n: its buffer and length (the first BENCH_NRECV are
 * max_size, in ring; the rest BENCH_SMALL, in small). */
static inline uint8_t *bench_slot(const struct bench_conn *c, int slot, size_t *len)
{
	if (slot < BENCH_NRECV) {
		*len = c->max_size;
		return c->ring + (size_t)slot * c->max_size;
	}
	*len = BENCH_SMALL;
	return c->small + (size_t)(slot - BENCH_NRECV) * BENCH_SMALL;
}

/* The raw libfabric stack (raw_ofi_bench.c).  The server listens on
 * 127.0.0.1 and an ephemeral port, reported in *port; the client connects
 * to it.  delivery_complete: Sends and RDMA Writes complete once placed
 * at the target (FI_DELIVERY_COMPLETE, what libdat's ofi provider asks
 * for by default) instead of once handed to the kernel. */
struct raw_listener;
struct raw_listener *raw_listen(const char *prov, uint16_t *port);
void raw_accept(struct raw_listener *l, struct bench_conn *c,
		size_t max_size, int delivery_complete);
void raw_connect(const char *prov, uint16_t port, struct bench_conn *c,
		 size_t max_size, int delivery_complete);
/* One more connection on base's domain and EQ, with CQs and memory of its
 * own (dat_bench -T); the client's and the server's calls pair up in
 * order.  Close it before base. */
void raw_connect_more(struct bench_conn *base, struct bench_conn *c,
		      int client, size_t max_size, int delivery_complete);
const char *raw_version(void);

/* Plain kernel TCP sockets (sock_bench.c), TCP_NODELAY, over 127.0.0.1:
 * the server listens on port 0, reported in *port.  The connection setup
 * pattern exchanges cm_hdr + pdata bytes each way, standing in for the
 * MPA request and reply an iWARP connection sends. */
struct sock_listener;
/* -A: the address instead of 127.0.0.1 (network order; 0: 127.0.0.1) */
extern struct in_addr sock_bench_addr;
struct sock_listener *sock_listen(uint16_t *port);
void sock_accept(struct sock_listener *l, struct bench_conn *c,
		 size_t max_size, size_t cm_hdr);
void sock_connect(uint16_t port, struct bench_conn *c, size_t max_size,
		  size_t cm_hdr);
/* One more connection to the same listener (dat_bench -T): the server
 * accepts on base's listener, the client connects to its port. */
void sock_connect_more(struct bench_conn *base, struct bench_conn *c,
		       int client, size_t max_size);

#endif
