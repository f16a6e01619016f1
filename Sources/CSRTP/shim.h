#ifndef CODECSESSIONS_CSRTP_SHIM_H
#define CODECSESSIONS_CSRTP_SHIM_H
#include <srtp2/srtp.h>

static inline int CSRTP_max_trailer_length(void) { return SRTP_MAX_TRAILER_LEN; }
#endif
