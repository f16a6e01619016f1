#ifndef CODECSESSIONS_CX265_SHIM_H
#define CODECSESSIONS_CX265_SHIM_H
// x265.h renames its entry points to <name>_<X265_BUILD>; these wrappers keep the
// ABI number out of Swift. Prefer CX265_api_get(depth) and the function table.
#include <stdint.h>
#include <x265.h>

static inline const x265_api *CX265_api_get(int bitDepth) { return x265_api_get(bitDepth); }
static inline x265_encoder *CX265_encoder_open(x265_param *param) { return x265_encoder_open(param); }
static inline int CX265_build(void) { return X265_BUILD; }
static inline const char *CX265_version_string(void) { return x265_version_str; }
static inline int CX265_max_bit_depth(void) { return x265_max_bit_depth; }
static inline int CX265_TYPE_AUTO(void) { return X265_TYPE_AUTO; }
static inline int CX265_TYPE_IDR(void) { return X265_TYPE_IDR; }
static inline int CX265_TYPE_I(void) { return X265_TYPE_I; }
static inline int CX265_CSP_I400(void) { return X265_CSP_I400; }
static inline int CX265_CSP_I420(void) { return X265_CSP_I420; }
static inline int CX265_CSP_I422(void) { return X265_CSP_I422; }
static inline int CX265_CSP_I444(void) { return X265_CSP_I444; }
static inline int CX265_RC_CQP(void) { return X265_RC_CQP; }
static inline int CX265_RC_CRF(void) { return X265_RC_CRF; }
static inline int CX265_RC_ABR(void) { return X265_RC_ABR; }
static inline int CX265_LOG_NONE(void) { return X265_LOG_NONE; }
static inline int CX265_LOG_ERROR(void) { return X265_LOG_ERROR; }
static inline int CX265_LOG_WARNING(void) { return X265_LOG_WARNING; }
static inline int CX265_LOG_INFO(void) { return X265_LOG_INFO; }

#endif
