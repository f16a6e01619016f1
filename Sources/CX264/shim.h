#ifndef CODECSESSIONS_CX264_SHIM_H
#define CODECSESSIONS_CX264_SHIM_H
// x264.h needs <stdint.h> first and renames x264_encoder_open to
// x264_encoder_open_<X264_BUILD>; these wrappers keep the ABI number out of Swift.
#include <stdint.h>
#include <x264.h>

static inline x264_t *CX264_encoder_open(x264_param_t *param) { return x264_encoder_open(param); }
static inline int CX264_build(void) { return X264_BUILD; }
static inline const char *CX264_version_string(void) { return X264_POINTVER; }
static inline int CX264_bit_depth(void) { return x264_bit_depth; }
static inline int CX264_chroma_format(void) { return x264_chroma_format; }
static inline int CX264_TYPE_AUTO(void) { return X264_TYPE_AUTO; }
static inline int CX264_TYPE_IDR(void) { return X264_TYPE_IDR; }
static inline int CX264_TYPE_I(void) { return X264_TYPE_I; }
static inline int CX264_TYPE_KEYFRAME(void) { return X264_TYPE_KEYFRAME; }
static inline int CX264_CSP_I420(void) { return X264_CSP_I420; }
static inline int CX264_CSP_NV12(void) { return X264_CSP_NV12; }
static inline int CX264_CSP_HIGH_DEPTH(void) { return X264_CSP_HIGH_DEPTH; }
static inline int CX264_RC_CQP(void) { return X264_RC_CQP; }
static inline int CX264_RC_CRF(void) { return X264_RC_CRF; }
static inline int CX264_RC_ABR(void) { return X264_RC_ABR; }
static inline int CX264_KEYINT_MAX_INFINITE(void) { return X264_KEYINT_MAX_INFINITE; }
static inline int CX264_LOG_NONE(void) { return X264_LOG_NONE; }
static inline int CX264_LOG_ERROR(void) { return X264_LOG_ERROR; }
static inline int CX264_LOG_WARNING(void) { return X264_LOG_WARNING; }

#endif
