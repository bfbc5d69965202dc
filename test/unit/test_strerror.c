/*
 * test_strerror.c - dat_strerror() names every DAT 1.2 type and subtype,
 * ignores the class bits and rejects what it does not know.
 */

#include <stddef.h>
#include <check.h>
#include <dat/udat.h>

struct named {
	DAT_UINT32	value;
	const char	*name;
};

/* The expected string is the constant's own spelling. */
#define N(x)	{ (DAT_UINT32)(x), #x }

static const struct named types[] = {
	N(DAT_SUCCESS), N(DAT_ABORT), N(DAT_CONN_QUAL_IN_USE),
	N(DAT_INSUFFICIENT_RESOURCES), N(DAT_INTERNAL_ERROR),
	N(DAT_INVALID_HANDLE), N(DAT_INVALID_PARAMETER), N(DAT_INVALID_STATE),
	N(DAT_LENGTH_ERROR), N(DAT_MODEL_NOT_SUPPORTED),
	N(DAT_PROVIDER_NOT_FOUND), N(DAT_PRIVILEGES_VIOLATION),
	N(DAT_PROTECTION_VIOLATION), N(DAT_QUEUE_EMPTY), N(DAT_QUEUE_FULL),
	N(DAT_TIMEOUT_EXPIRED), N(DAT_PROVIDER_ALREADY_REGISTERED),
	N(DAT_PROVIDER_IN_USE), N(DAT_INVALID_ADDRESS),
	N(DAT_INTERRUPTED_CALL), N(DAT_CONN_QUAL_UNAVAILABLE),
	N(DAT_NOT_IMPLEMENTED),
};

static const struct named subtypes[] = {
	N(DAT_NO_SUBTYPE), N(DAT_SUB_INTERRUPTED),
	N(DAT_RESOURCE_MEMORY), N(DAT_RESOURCE_DEVICE), N(DAT_RESOURCE_TEP),
	N(DAT_RESOURCE_TEVD), N(DAT_RESOURCE_PROTECTION_DOMAIN),
	N(DAT_RESOURCE_MEMORY_REGION), N(DAT_RESOURCE_ERROR_HANDLER),
	N(DAT_RESOURCE_CREDITS), N(DAT_RESOURCE_SRQ),
	N(DAT_INVALID_HANDLE_IA), N(DAT_INVALID_HANDLE_EP),
	N(DAT_INVALID_HANDLE_LMR), N(DAT_INVALID_HANDLE_RMR),
	N(DAT_INVALID_HANDLE_PZ), N(DAT_INVALID_HANDLE_PSP),
	N(DAT_INVALID_HANDLE_RSP), N(DAT_INVALID_HANDLE_CR),
	N(DAT_INVALID_HANDLE_CNO), N(DAT_INVALID_HANDLE_EVD_CR),
	N(DAT_INVALID_HANDLE_EVD_REQUEST), N(DAT_INVALID_HANDLE_EVD_RECV),
	N(DAT_INVALID_HANDLE_EVD_CONN), N(DAT_INVALID_HANDLE_EVD_ASYNC),
	N(DAT_INVALID_HANDLE_SRQ),
	N(DAT_INVALID_HANDLE1), N(DAT_INVALID_HANDLE2), N(DAT_INVALID_HANDLE3),
	N(DAT_INVALID_HANDLE4), N(DAT_INVALID_HANDLE5), N(DAT_INVALID_HANDLE6),
	N(DAT_INVALID_HANDLE7), N(DAT_INVALID_HANDLE8), N(DAT_INVALID_HANDLE9),
	N(DAT_INVALID_HANDLE10),
	N(DAT_INVALID_ARG1), N(DAT_INVALID_ARG2), N(DAT_INVALID_ARG3),
	N(DAT_INVALID_ARG4), N(DAT_INVALID_ARG5), N(DAT_INVALID_ARG6),
	N(DAT_INVALID_ARG7), N(DAT_INVALID_ARG8), N(DAT_INVALID_ARG9),
	N(DAT_INVALID_ARG10),
	N(DAT_INVALID_STATE_EP_UNCONNECTED),
	N(DAT_INVALID_STATE_EP_ACTCONNPENDING),
	N(DAT_INVALID_STATE_EP_PASSCONNPENDING),
	N(DAT_INVALID_STATE_EP_TENTCONNPENDING),
	N(DAT_INVALID_STATE_EP_CONNECTED),
	N(DAT_INVALID_STATE_EP_DISCONNECTED),
	N(DAT_INVALID_STATE_EP_RESERVED),
	N(DAT_INVALID_STATE_EP_COMPLPENDING),
	N(DAT_INVALID_STATE_EP_DISCPENDING),
	N(DAT_INVALID_STATE_EP_PROVIDERCONTROL),
	N(DAT_INVALID_STATE_EP_NOTREADY),
	N(DAT_INVALID_STATE_EP_RECV_WATERMARK),
	N(DAT_INVALID_STATE_EP_PZ),
	N(DAT_INVALID_STATE_EP_EVD_REQUEST),
	N(DAT_INVALID_STATE_EP_EVD_RECV),
	N(DAT_INVALID_STATE_EP_EVD_CONNECT),
	N(DAT_INVALID_STATE_EP_UNCONFIGURED),
	N(DAT_INVALID_STATE_EP_UNCONFRESERVED),
	N(DAT_INVALID_STATE_EP_UNCONFPASSIVE),
	N(DAT_INVALID_STATE_EP_UNCONFTENTATIVE),
	N(DAT_INVALID_STATE_CNO_IN_USE), N(DAT_INVALID_STATE_CNO_DEAD),
	N(DAT_INVALID_STATE_EVD_OPEN), N(DAT_INVALID_STATE_EVD_ENABLED),
	N(DAT_INVALID_STATE_EVD_DISABLED), N(DAT_INVALID_STATE_EVD_WAITABLE),
	N(DAT_INVALID_STATE_EVD_UNWAITABLE), N(DAT_INVALID_STATE_EVD_IN_USE),
	N(DAT_INVALID_STATE_EVD_CONFIG_NOTIFY),
	N(DAT_INVALID_STATE_EVD_CONFIG_SOLICITED),
	N(DAT_INVALID_STATE_EVD_CONFIG_THRESHOLD),
	N(DAT_INVALID_STATE_EVD_WAITER), N(DAT_INVALID_STATE_EVD_ASYNC),
	N(DAT_INVALID_STATE_IA_IN_USE), N(DAT_INVALID_STATE_LMR_IN_USE),
	N(DAT_INVALID_STATE_LMR_FREE), N(DAT_INVALID_STATE_PZ_IN_USE),
	N(DAT_INVALID_STATE_PZ_FREE), N(DAT_INVALID_STATE_SRQ_OPERATIONAL),
	N(DAT_INVALID_STATE_SRQ_ERROR), N(DAT_INVALID_STATE_SRQ_IN_USE),
	N(DAT_PRIVILEGES_READ), N(DAT_PRIVILEGES_WRITE),
	N(DAT_PRIVILEGES_RDMA_READ), N(DAT_PRIVILEGES_RDMA_WRITE),
	N(DAT_PROTECTION_READ), N(DAT_PROTECTION_WRITE),
	N(DAT_PROTECTION_RDMA_READ), N(DAT_PROTECTION_RDMA_WRITE),
	N(DAT_INVALID_ADDRESS_UNSUPPORTED), N(DAT_INVALID_ADDRESS_UNREACHABLE),
	N(DAT_INVALID_ADDRESS_MALFORMED),
	N(DAT_NAME_NOT_REGISTERED), N(DAT_MAJOR_NOT_FOUND),
	N(DAT_MINOR_NOT_FOUND), N(DAT_THREAD_SAFETY_NOT_FOUND),
};

#define COUNT(a)	(sizeof(a) / sizeof((a)[0]))

#define INVALID_ARG(n)	DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG##n)

START_TEST(every_type_named)
{
	size_t i, j;

	ck_assert_uint_eq(COUNT(types), 22);
	for (i = 0; i < COUNT(types); i++) {
		const char *major = NULL, *minor = NULL;
		DAT_RETURN rc = dat_strerror(types[i].value, &major, &minor);

		ck_assert_uint_eq(rc, DAT_SUCCESS);
		ck_assert_ptr_nonnull(major);
		ck_assert_str_eq(major, types[i].name);
		ck_assert_str_eq(minor, "DAT_NO_SUBTYPE");

		/* Distinct strings for distinct types. */
		for (j = 0; j < i; j++) {
			const char *other = NULL, *m = NULL;

			dat_strerror(types[j].value, &other, &m);
			ck_assert_str_ne(major, other);
		}
	}
}
END_TEST

START_TEST(every_subtype_named)
{
	const char *seen[102];
	size_t i, j;

	ck_assert_uint_eq(COUNT(subtypes), 102);
	for (i = 0; i < COUNT(subtypes); i++) {
		const char *major = NULL, *minor = NULL;

		/* The table above is in value order 0 .. 101. */
		ck_assert_uint_eq(subtypes[i].value, i);
		ck_assert_uint_eq(dat_strerror(subtypes[i].value, &major,
					       &minor), DAT_SUCCESS);
		ck_assert_ptr_nonnull(minor);
		ck_assert_str_eq(minor, subtypes[i].name);
		ck_assert_str_eq(major, "DAT_SUCCESS");
		seen[i] = minor;
		for (j = 0; j < i; j++)
			ck_assert_str_ne(minor, seen[j]);
	}
}
END_TEST

START_TEST(exact_strings)
{
	const char *major = NULL, *minor = NULL;

	ck_assert_uint_eq(dat_strerror(DAT_ERROR(DAT_INVALID_HANDLE,
						 DAT_INVALID_HANDLE_EP),
				       &major, &minor), DAT_SUCCESS);
	ck_assert_str_eq(major, "DAT_INVALID_HANDLE");
	ck_assert_str_eq(minor, "DAT_INVALID_HANDLE_EP");

	ck_assert_uint_eq(dat_strerror(0x800A0062u, &major, &minor),
			  DAT_SUCCESS);
	ck_assert_str_eq(major, "DAT_PROVIDER_NOT_FOUND");
	ck_assert_str_eq(minor, "DAT_NAME_NOT_REGISTERED");

	ck_assert_uint_eq(dat_strerror(0x800D0000u, &major, &minor),
			  DAT_SUCCESS);
	ck_assert_str_eq(major, "DAT_QUEUE_EMPTY");
	ck_assert_str_eq(minor, "DAT_NO_SUBTYPE");

	ck_assert_uint_eq(dat_strerror(DAT_SUCCESS, &major, &minor),
			  DAT_SUCCESS);
	ck_assert_str_eq(major, "DAT_SUCCESS");
	ck_assert_str_eq(minor, "DAT_NO_SUBTYPE");

	ck_assert_uint_eq(dat_strerror(DAT_ERROR(DAT_NOT_IMPLEMENTED, 0),
				       &major, &minor), DAT_SUCCESS);
	ck_assert_str_eq(major, "DAT_NOT_IMPLEMENTED");

	ck_assert_uint_eq(dat_strerror(DAT_ERROR(DAT_INVALID_STATE,
				DAT_INVALID_STATE_EVD_CONFIG_THRESHOLD),
				       &major, &minor), DAT_SUCCESS);
	ck_assert_str_eq(major, "DAT_INVALID_STATE");
	ck_assert_str_eq(minor, "DAT_INVALID_STATE_EVD_CONFIG_THRESHOLD");

	ck_assert_uint_eq(dat_strerror(DAT_ERROR(DAT_INVALID_PARAMETER,
						 DAT_INVALID_ARG10),
				       &major, &minor), DAT_SUCCESS);
	ck_assert_str_eq(major, "DAT_INVALID_PARAMETER");
	ck_assert_str_eq(minor, "DAT_INVALID_ARG10");
}
END_TEST

START_TEST(class_bits_ignored)
{
	static const DAT_UINT32 classes[] = {
		DAT_CLASS_SUCCESS, DAT_CLASS_ERROR, DAT_CLASS_WARNING,
		DAT_CLASS_ERROR | DAT_CLASS_WARNING,
	};
	size_t c;

	for (c = 0; c < COUNT(classes); c++) {
		const char *major = NULL, *minor = NULL;
		DAT_RETURN v = classes[c] | DAT_INVALID_STATE |
			       DAT_INVALID_STATE_EP_DISCONNECTED;

		ck_assert_uint_eq(dat_strerror(v, &major, &minor),
				  DAT_SUCCESS);
		ck_assert_str_eq(major, "DAT_INVALID_STATE");
		ck_assert_str_eq(minor, "DAT_INVALID_STATE_EP_DISCONNECTED");
	}
}
END_TEST

START_TEST(unknown_values_rejected)
{
	static const DAT_UINT32 bad[] = {
		0x00150000u,			/* first unused type */
		0x0FFE0000u,			/* just below NOT_IMPLEMENTED */
		0x3FFF0000u,			/* the DAT 2.0 NOT_IMPLEMENTED */
		0x80060000u | 102,		/* first unused subtype */
		0x80050000u | 0xFFFF,		/* largest subtype */
		0x3FFFFFFFu,			/* both unknown */
	};
	size_t i;

	for (i = 0; i < COUNT(bad); i++) {
		const char *major = NULL, *minor = NULL;

		ck_assert_uint_eq(dat_strerror(bad[i], &major, &minor),
				  INVALID_ARG(1));
		/* Both pointers still point at something printable. */
		ck_assert_ptr_nonnull(major);
		ck_assert_ptr_nonnull(minor);
	}
}
END_TEST

START_TEST(null_out_pointers_rejected)
{
	const char *major = NULL, *minor = NULL;

	ck_assert_uint_eq(dat_strerror(DAT_SUCCESS, NULL, &minor),
			  INVALID_ARG(2));
	ck_assert_ptr_null(minor);

	ck_assert_uint_eq(dat_strerror(DAT_ERROR(DAT_QUEUE_EMPTY, 0), &major,
				       NULL), INVALID_ARG(3));
	/* The type name is still given back. */
	ck_assert_str_eq(major, "DAT_QUEUE_EMPTY");

	ck_assert_uint_eq(dat_strerror(DAT_SUCCESS, NULL, NULL),
			  INVALID_ARG(2));
}
END_TEST

static Suite *strerror_suite(void)
{
	Suite *s = suite_create("dat_strerror");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, every_type_named);
	tcase_add_test(tc, every_subtype_named);
	tcase_add_test(tc, exact_strings);
	tcase_add_test(tc, class_bits_ignored);
	tcase_add_test(tc, unknown_values_rejected);
	tcase_add_test(tc, null_out_pointers_rejected);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(strerror_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
