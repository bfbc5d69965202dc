/* DAT 2.0's dat_cr_reject(cr, pdata_size, pdata): the passive side's
 * private data reaches the active side on its
 * DAT_CONNECTION_EVENT_PEER_REJECTED, byte for byte; bad sizes are
 * refused.  One process, one IA of the tcp u2.0 provider on loopback
 * (DAT_OVERRIDE: $DAT_TEST_CONF), a PSP on a port it picks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dat2/udat.h>

#define ERR(type, sub) ((DAT_RETURN)(DAT_CLASS_ERROR | (type) | (sub)))
#define TIMEOUT_US (10 * 1000 * 1000)

static int failures;

#define CHECK(cond) do { \
	if (!(cond)) { \
		printf("FAIL: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		failures++; \
	} \
} while (0)

static DAT_IA_HANDLE ia;
static DAT_PZ_HANDLE pz;
static DAT_EVD_HANDLE cr_evd, conn_evd, dto_evd;
static DAT_PSP_HANDLE psp;
static DAT_CONN_QUAL port;
static DAT_IA_ADDRESS_PTR addr;

/* Connects a new EP with 4 bytes of private data; the server's CR is
 * handed back in *cr.  Returns the EP. */
static DAT_EP_HANDLE connect_one(DAT_CR_HANDLE *cr)
{
	DAT_EP_HANDLE ep = DAT_HANDLE_NULL;
	DAT_EVENT ev;
	DAT_COUNT n;
	char hello[4] = "req";

	*cr = DAT_HANDLE_NULL;
	if (dat_ep_create(ia, pz, dto_evd, dto_evd, conn_evd, NULL, &ep) !=
	    DAT_SUCCESS)
		return DAT_HANDLE_NULL;
	CHECK(dat_ep_connect(ep, addr, port, TIMEOUT_US, sizeof(hello), hello,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG) ==
	      DAT_SUCCESS);
	if (dat_evd_wait(cr_evd, TIMEOUT_US, 1, &ev, &n) == DAT_SUCCESS &&
	    ev.event_number == DAT_CONNECTION_REQUEST_EVENT)
		*cr = ev.event_data.cr_arrival_event_data.cr_handle;
	CHECK(*cr != DAT_HANDLE_NULL);
	return ep;
}

/* Waits for ep's connection event; its private data copied to pd. */
static DAT_EVENT_NUMBER conn_event(DAT_EP_HANDLE ep, unsigned char *pd,
				   DAT_COUNT *pd_len)
{
	DAT_EVENT ev;
	DAT_COUNT n;

	*pd_len = -1;
	if (dat_evd_wait(conn_evd, TIMEOUT_US, 1, &ev, &n) != DAT_SUCCESS)
		return 0;
	CHECK(ev.event_data.connect_event_data.ep_handle == ep);
	*pd_len = ev.event_data.connect_event_data.private_data_size;
	if (*pd_len > 0 && *pd_len <= 256 &&
	    ev.event_data.connect_event_data.private_data)
		memcpy(pd, ev.event_data.connect_event_data.private_data,
		       (size_t)*pd_len);
	return ev.event_number;
}

int main(void)
{
	const char *conf = getenv("DAT_TEST_CONF");
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_IA_ATTR ia_attr;
	DAT_PROVIDER_ATTR pattr;
	DAT_EP_HANDLE ep;
	DAT_CR_HANDLE cr;
	unsigned char why[48], got[256];
	DAT_COUNT got_len;
	int i;

	if (!conf) {
		printf("SKIP: no DAT_TEST_CONF\n");
		return 77;
	}
	setenv("DAT_OVERRIDE", conf, 1);
	if (dat_ia_open("tcp", 8, &async, &ia) != DAT_SUCCESS) {
		printf("FAIL: dat_ia_open(\"tcp\") u2.0\n");
		return 1;
	}
	CHECK(dat_ia_query(ia, NULL, DAT_IA_FIELD_IA_ADDRESS_PTR, &ia_attr,
			   0, &pattr) == DAT_SUCCESS);
	addr = ia_attr.ia_address_ptr;
	CHECK(dat_pz_create(ia, &pz) == DAT_SUCCESS);
	CHECK(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG,
			     &cr_evd) == DAT_SUCCESS);
	CHECK(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG,
			     &conn_evd) == DAT_SUCCESS);
	CHECK(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG,
			     &dto_evd) == DAT_SUCCESS);
	CHECK(dat_psp_create_any(ia, &port, cr_evd, DAT_PSP_CONSUMER_FLAG,
				 &psp) == DAT_SUCCESS);
	if (failures)
		return 1;
	for (i = 0; i < (int)sizeof(why); i++)
		why[i] = (unsigned char)(0xa0 ^ i);

	/* the reject's 48 bytes arrive with PEER_REJECTED */
	ep = connect_one(&cr);
	CHECK(dat_cr_reject(cr, -1, why) ==
	      ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2));
	CHECK(dat_cr_reject(cr, 8, NULL) ==
	      ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3));
	CHECK(dat_cr_reject(cr, 1 << 20, why) ==
	      ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2));
	CHECK(dat_cr_reject(cr, sizeof(why), why) == DAT_SUCCESS);
	memset(got, 0, sizeof(got));
	CHECK(conn_event(ep, got, &got_len) ==
	      DAT_CONNECTION_EVENT_PEER_REJECTED);
	CHECK(got_len == (DAT_COUNT)sizeof(why));
	CHECK(memcmp(got, why, sizeof(why)) == 0);
	CHECK(dat_ep_free(ep) == DAT_SUCCESS);

	/* a reject without data is still the peer's, and carries none */
	ep = connect_one(&cr);
	CHECK(dat_cr_reject(cr, 0, NULL) == DAT_SUCCESS);
	CHECK(conn_event(ep, got, &got_len) ==
	      DAT_CONNECTION_EVENT_PEER_REJECTED);
	CHECK(got_len == 0);
	CHECK(dat_ep_free(ep) == DAT_SUCCESS);

	CHECK(dat_psp_free(psp) == DAT_SUCCESS);
	CHECK(dat_evd_free(dto_evd) == DAT_SUCCESS);
	CHECK(dat_evd_free(conn_evd) == DAT_SUCCESS);
	CHECK(dat_evd_free(cr_evd) == DAT_SUCCESS);
	CHECK(dat_pz_free(pz) == DAT_SUCCESS);
	CHECK(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG) == DAT_SUCCESS);
	if (!failures)
		printf("PASS: dat_cr_reject's private data reaches the active "
		       "side (48 bytes and none); bad sizes refused\n");
	return failures ? 1 : 0;
}
