#ifndef CODECSESSIONS_CVAAPI_SHIM_H
#define CODECSESSIONS_CVAAPI_SHIM_H
// libva status codes and version numbers are macros; these wrappers name them.
#include <va/va.h>
#include <va/va_drm.h>
#include <va/va_str.h>

static inline VAStatus CVAAPI_STATUS_SUCCESS(void) { return VA_STATUS_SUCCESS; }
static inline int CVAAPI_MAJOR_VERSION(void) { return VA_MAJOR_VERSION; }
static inline int CVAAPI_MINOR_VERSION(void) { return VA_MINOR_VERSION; }
static inline int CVAAPI_MICRO_VERSION(void) { return VA_MICRO_VERSION; }
static inline const char *CVAAPI_VERSION_S(void) { return VA_VERSION_S; }
static inline int CVAAPI_RC_NONE(void) { return VA_RC_NONE; }
static inline unsigned int CVAAPI_FOURCC_NV12(void) { return VA_FOURCC_NV12; }
static inline unsigned int CVAAPI_FOURCC_P010(void) { return VA_FOURCC_P010; }
static inline unsigned int CVAAPI_FOURCC_YUY2(void) { return VA_FOURCC_YUY2; }
static inline unsigned int CVAAPI_FOURCC_Y210(void) { return VA_FOURCC_Y210; }

#endif
