/* Common service points (DAT 2.0 only: built into udapl/libudapl2.la).
 * Not offered yet: a CSP listens for the common (address-based)
 * connection model, and the core has only PSPs and RSPs. */
#include "config.h"

#include "core.h"
#include "entry.h"

DAT_RETURN dapl_csp_create(DAT_IA_HANDLE ia, DAT_COMM *comm,
			   DAT_IA_ADDRESS_PTR addr, DAT_EVD_HANDLE evd,
			   DAT_CSP_HANDLE *csp)
{
	(void)ia; (void)comm; (void)addr; (void)evd; (void)csp;
	return dapl_not_implemented("dat_csp_create",
				    "no common service points yet; use dat_psp_create");
}

DAT_RETURN dapl_csp_query(DAT_CSP_HANDLE csp, DAT_CSP_PARAM_MASK mask,
			  DAT_CSP_PARAM *param)
{
	(void)csp; (void)mask; (void)param;
	return dapl_not_implemented("dat_csp_query", "no CSP can exist");
}

DAT_RETURN dapl_csp_free(DAT_CSP_HANDLE csp)
{
	(void)csp;
	return dapl_not_implemented("dat_csp_free", "no CSP can exist");
}
