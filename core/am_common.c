/*
 * am_common.c -- status strings and version of the amsgd library.
 */
#include "am_common.h"

#include <gsl/gsl_errno.h>

const char *am_strerror(am_status status)
{
    switch (status) {
    case AM_OK:
        return "success";
    case AM_EINVAL:
        return "invalid argument";
    case AM_ENOMEM:
        return "out of memory or request above the memory limit";
    case AM_EIO:
        return "input/output error";
    case AM_ESOLVER:
        return "numerical solver failure";
    case AM_EDOM:
        return "quantity undefined for these parameters";
    case AM_ECANCELED:
        return "cancelled";
    }
    return "unknown status";
}

const char *am_version(void)
{
    return AM_VERSION;
}

void am_common_gsl_handler_off(void)
{
    gsl_set_error_handler_off();
}
