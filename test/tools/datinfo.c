/* datinfo: lists the providers dat.conf offers and opens each of them (or
 * the ones named on the command line), printing what dat_ia_query says.
 *   datinfo [--list-only | IA_NAME...]
 * Exit status 0 when every provider opened, 1 otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dat/udat.h>

static int show(const char *name)
{
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_PROVIDER_ATTR pattr;
	DAT_IA_ATTR iattr;
	const char *major, *minor;
	DAT_IA_HANDLE ia;
	DAT_RETURN rc;

	rc = dat_ia_open((DAT_NAME_PTR)name, 8, &async, &ia);
	if (rc != DAT_SUCCESS) {
		dat_strerror(rc, &major, &minor);
		printf("  %-16s open FAILED: %s %s\n", name, major, minor);
		return 1;
	}
	rc = dat_ia_query(ia, &async, DAT_IA_ALL, &iattr,
			  DAT_PROVIDER_FIELD_ALL, &pattr);
	if (rc == DAT_SUCCESS)
		printf("  %-16s opened: adapter \"%s\", provider \"%s\" %u.%u, DAT %u.%u\n",
		       name, iattr.adapter_name, pattr.provider_name,
		       pattr.provider_version_major, pattr.provider_version_minor,
		       pattr.dapl_version_major, pattr.dapl_version_minor);
	else
		printf("  %-16s opened, but dat_ia_query failed: 0x%08x\n",
		       name, (unsigned)rc);
	if (dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG) != DAT_SUCCESS) {
		printf("  %-16s close FAILED\n", name);
		return 1;
	}
	return rc != DAT_SUCCESS;
}

int main(int argc, char **argv)
{
	DAT_PROVIDER_INFO *infos, **list;
	DAT_COUNT n = 0, i;
	int failures = 0;
	const char *conf = getenv("DAT_OVERRIDE");

	printf("dat.conf: %s\n", conf ? conf : "(default locations)");
	dat_registry_list_providers(0, &n, NULL); /* DAT 1.2: counts, "fails" */
	infos = calloc((size_t)n + 1, sizeof(*infos));
	list = calloc((size_t)n + 1, sizeof(*list));
	if (!infos || !list)
		return 2;
	for (i = 0; i < n; i++)
		list[i] = &infos[i];
	if (n && dat_registry_list_providers(n, &n, list) != DAT_SUCCESS) {
		printf("dat_registry_list_providers failed\n");
		return 1;
	}
	printf("%d provider%s:\n", (int)n, n == 1 ? "" : "s");
	for (i = 0; i < n; i++)
		printf("  %-16s u%u.%u %s\n", infos[i].ia_name,
		       infos[i].dapl_version_major, infos[i].dapl_version_minor,
		       infos[i].is_thread_safe ? "threadsafe" : "nonthreadsafe");
	if (argc > 1 && !strcmp(argv[1], "--list-only")) {
		free(infos);
		free(list);
		return 0;
	}
	printf("opening:\n");
	if (argc > 1) {
		for (i = 1; i < argc; i++)
			failures += show(argv[i]);
	} else {
		for (i = 0; i < n; i++)
			if (infos[i].dapl_version_major == 1 &&
			    infos[i].dapl_version_minor == 2 &&
			    !infos[i].is_thread_safe)
				failures += show(infos[i].ia_name);
	}
	free(infos);
	free(list);
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
