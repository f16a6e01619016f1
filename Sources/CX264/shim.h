#ifndef CODECSESSIONS_CX264_SHIM_H
#define CODECSESSIONS_CX264_SHIM_H
// x264.h needs <stdint.h> first and renames x264_encoder_open to
// x264_encoder_open_<X264_BUILD>; these wrappers keep the ABI number out of Swift.
#include <stdint.h>
#include <x264.h>

static inline x264_t *CX264_encoder_open(x264_param_t *param) { return x264_encoder_open(param); }
static inline int CX264_build(void) { return X264_BUILD; }
static inline const char *CX264_version_string(void) { return X264_POINTVER; }
static inline int CX264_bit_depth(void) { return X264_BIT_DEPTH; }  // 0: the library was built for 8 and 10 bits
static inline int CX264_chroma_format(void) { return X264_CHROMA_FORMAT; }  // 0: every chroma format
static inline int CX264_TYPE_AUTO(void) { return X264_TYPE_AUTO; }
static inline int CX264_TYPE_IDR(void) { return X264_TYPE_IDR; }
static inline int CX264_TYPE_I(void) { return X264_TYPE_I; }
static inline int CX264_TYPE_KEYFRAME(void) { return X264_TYPE_KEYFRAME; }
static inline int CX264_CSP_I420(void) { return X264_CSP_I420; }
static inline int CX264_CSP_NV12(void) { return X264_CSP_NV12; }
static inline int CX264_CSP_I400(void) { return X264_CSP_I400; }
static inline int CX264_CSP_I422(void) { return X264_CSP_I422; }
static inline int CX264_CSP_I444(void) { return X264_CSP_I444; }
static inline int CX264_CSP_HIGH_DEPTH(void) { return X264_CSP_HIGH_DEPTH; }
static inline int CX264_RC_CQP(void) { return X264_RC_CQP; }
static inline int CX264_RC_CRF(void) { return X264_RC_CRF; }
static inline int CX264_RC_ABR(void) { return X264_RC_ABR; }
static inline int CX264_KEYINT_MAX_INFINITE(void) { return X264_KEYINT_MAX_INFINITE; }
static inline int CX264_LOG_NONE(void) { return X264_LOG_NONE; }
static inline int CX264_LOG_ERROR(void) { return X264_LOG_ERROR; }
static inline int CX264_LOG_WARNING(void) { return X264_LOG_WARNING; }

// A pf_log for x264_param_t that keeps the latest error message (level <=
// X264_LOG_ERROR) in the CX264_LOG_BUFFER_SIZE-byte buffer passed as
// p_log_private; Swift cannot receive a va_list in a C callback.
#include <stdarg.h>
#include <stdio.h>
enum { CX264_LOG_BUFFER_SIZE = 512 };
static void CX264_log_to_buffer(void *buffer, int level, const char *format, va_list arguments) {
    if (buffer == NULL || level > X264_LOG_ERROR) return;
    vsnprintf((char *)buffer, CX264_LOG_BUFFER_SIZE, format, arguments);
}
static inline void CX264_param_log_to_buffer(x264_param_t *param, char *buffer) {
    param->pf_log = CX264_log_to_buffer;
    param->p_log_private = buffer;
}

#endif
