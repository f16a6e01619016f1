/*
 * codecs_test_drv_video.so: a test-only VA-API driver.
 *
 * No software VA-API driver exists, so the CodecSessions tests load this one
 * (LIBVA_DRIVERS_PATH + LIBVA_DRIVER_NAME=codecs_test) to run libavcodec's
 * h264_vaapi / hevc_vaapi encoders and vaapi hwaccel end to end on machines
 * without a GPU.
 *
 * What it offers (libva driver ABI, entry point __vaDriverInit_1_0):
 *   - profiles: H.264 ConstrainedBaseline / Main / High and HEVC Main, each
 *     with VLD and EncSlice (EncSliceLP on a "lowpower-only" device), and on a
 *     "main10" device HEVC Main10 as well (RT format YUV420_10, P010); on a
 *     "rext422" device HEVC Main422_10 with EncSlice only (no VLD), RT formats
 *     YUV422 (YUY2) and YUV422_10 (Y210);
 *   - plain-memory NV12 surfaces and images (create / derive / get / put), and
 *     P010 ones (16-bit samples, 10 bits in the high bits) on a "main10" device;
 *     packed 4:2:2 YUY2 (bytes Y0 U Y1 V) and Y210 (16-bit words Y0 U Y1 V,
 *     10 bits in the high bits) ones on a "rext422" device;
 *   - H.264 EncSlice: each picture goes to libx264 (one reference, no
 *     reordering, IDR where the picture parameters say so, QP or bit rate from
 *     the sequence / picture / misc parameters); the coded buffer receives
 *     x264's Annex-B output including its SPS/PPS, because this driver reports
 *     no packed-header support (VAConfigAttribEncPackedHeaders = NONE);
 *   - HEVC EncSlice: the same through libx265 (VPS/SPS/PPS before IDRs);
 *     Main10 through libx265's 10-bit API (x265_api_get(10)) from P010;
 *     Main422_10 at 4:2:2 (X265_CSP_I422) through the 8-bit API from YUY2
 *     and the 10-bit API from Y210 (RExt streams);
 *   - "bframes": the H.264 device offers L1 references, so libavcodec sends
 *     B-pictures in coding order; each picture is then coded losslessly with
 *     every macroblock I_PCM, in the slice type, frame_num, POC and reference
 *     marking the client chose, so a decode equals the input exactly;
 *   - VLD: with "decode=PATH" in the device file (an Annex-B stream), the
 *     driver decodes that stream with libavcodec when first asked and writes,
 *     for each picture it is given, the picture whose first slice starts with
 *     the same bytes; a slice not found there is a decoding error. Without a
 *     reference stream, vaEndPicture on a decode context returns
 *     VA_STATUS_ERROR_UNIMPLEMENTED (after N-1 accepted pictures with
 *     "decode:N"), so decoders exercise their fallback path.
 *
 * A failure schedule, from the environment variable CODECS_TEST_VA_FAIL
 * and/or a "fail=" line in the fake device file (see rendernode_shim.c for
 * the file format); a comma-separated list of:
 *   init             __vaDriverInit fails                 VA_STATUS_ERROR_OPERATION_FAILED
 *   config[:N]       every (or the Nth) vaCreateConfig    VA_STATUS_ERROR_ALLOCATION_FAILED
 *   surfaces[:N]     every (or the Nth) vaCreateSurfaces  VA_STATUS_ERROR_ALLOCATION_FAILED
 *   context[:N]      every (or the Nth) vaCreateContext   VA_STATUS_ERROR_ALLOCATION_FAILED
 *   encode[:N]       every (or the Nth) encode vaEndPicture  VA_STATUS_ERROR_ENCODING_ERROR
 *   encode-after:K   every encode vaEndPicture once K pictures were encoded
 *   decode[:N]       every decode vaEndPicture (from the Nth on)  VA_STATUS_ERROR_DECODING_ERROR
 *                    (VA_STATUS_ERROR_UNIMPLEMENTED without a reference stream)
 *   decode-after:K   every decode vaEndPicture once K pictures were decoded
 *   busy:N           the Nth vaEndPicture of any kind     VA_STATUS_ERROR_SURFACE_BUSY
 *   maxsize=WxH      surfaces larger than WxH             VA_STATUS_ERROR_RESOLUTION_NOT_SUPPORTED
 * Calls are counted per VADisplay. Device kinds: "lowpower-only",
 * "no-hevc-encode" (HEVC Main and Main10 are decode-only), "bframes",
 * "main10" (HEVC Main10 offered, with P010 surfaces and images), "rext422"
 * (HEVC Main422_10 encode offered, with YUY2 and Y210 surfaces and images).
 *
 * Every object lives in one table per display and is freed by vaTerminate.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <va/va.h>
#include <va/va_backend.h>
#include <va/va_drmcommon.h>
#include <va/va_enc_h264.h>
#include <va/va_enc_hevc.h>

#include <libavcodec/avcodec.h>
#include <x264.h>
#include <x265.h>

#define DRIVER_VENDOR "CodecSessions test driver (x264/x265 encode, reference decode)"
#define DEVICE_MAGIC "codecs-test-vaapi-device"
#define MAX_PROFILES 6
#define MAX_IMAGE_FORMATS 4
#define MAX_ENTRYPOINTS 2
#define MAX_CONFIG_ATTRIBUTES 8
#define MAX_DIMENSION 4096
#define REFERENCE_KEY_BYTES 48 /* how much of a first slice identifies a reference picture */

enum object_kind { KIND_CONFIG = 1, KIND_SURFACE, KIND_CONTEXT, KIND_BUFFER, KIND_IMAGE };

struct object {
    enum object_kind kind;
};

struct config {
    struct object base;
    VAProfile profile;
    VAEntrypoint entrypoint;
    uint32_t rt_format;
    uint32_t rate_control;
};

struct surface {
    struct object base;
    int width, height;
    uint32_t fourcc;     /* VA_FOURCC_NV12, _P010, _YUY2 or _Y210 */
    int sample_bytes;    /* 1 (NV12, YUY2) or 2 (P010, Y210: little-endian, 10 bits in the high bits) */
    int pixel_bytes;     /* bytes a pixel takes in a row of the first plane: 1, 2 (P010, YUY2), 4 (Y210) */
    int packed;          /* YUY2 / Y210: one plane of Y0 U Y1 V */
    int pitch;           /* bytes per row of every plane */
    int rows;            /* luma rows allocated (height rounded up to even) */
    uint8_t *data;       /* luma, then interleaved CbCr; or the one packed plane */
    size_t size;
};

struct buffer {
    struct object base;
    VABufferType type;
    unsigned int element_size;
    unsigned int elements;
    uint8_t *data;             /* owned, unless alias_surface is set */
    size_t size;
    VASurfaceID alias_surface; /* derived image: the surface's own memory */
    int mapped;
};

struct image {
    struct object base;
    VAImage image;
    VASurfaceID derived_from; /* VA_INVALID_SURFACE unless derived */
};

struct context {
    struct object base;
    VAConfigID config;
    struct config cfg; /* copy: the config may be destroyed first */
    int width, height;
    VASurfaceID render_target;
    int in_picture;
    /* parameters gathered between vaBeginPicture and vaEndPicture */
    int have_sequence, have_picture, have_slice;
    VAEncSequenceParameterBufferH264 sequence;
    VAEncPictureParameterBufferH264 picture;
    VAEncSliceParameterBufferH264 slice;
    VAEncSequenceParameterBufferHEVC hevc_sequence;
    VAEncPictureParameterBufferHEVC hevc_picture;
    VAEncSliceParameterBufferHEVC hevc_slice;
    uint8_t slice_key[REFERENCE_KEY_BYTES]; /* decode: the first bytes of the picture's first slice */
    size_t slice_key_length;
    int have_slice_key;
    uint32_t bits_per_second, target_percentage, hrd_buffer_size;
    uint32_t fps_num, fps_den;
    /* encoder state */
    x264_t *encoder;
    const x265_api *hevc_api; /* libx265 for the stream's depth: x265_api_get(8 or 10) */
    int hevc_depth, hevc_chroma; /* 8 or 10; chroma_format_idc 1 (4:2:0) or 2 (4:2:2) */
    x265_encoder *hevc_encoder;
    x265_param *hevc_param;
    x265_picture *hevc_input;
    uint8_t *planar; /* planar copy of the surface for x265 (4:2:0 or 4:2:2) */
    uint32_t encoder_bits_per_second;
    int64_t frames_encoded;
};

/* The stages a failure schedule names. */
enum stage { STAGE_CONFIG, STAGE_SURFACES, STAGE_CONTEXT, STAGE_ENCODE, STAGE_DECODE, STAGE_COUNT };

static const char *const stage_names[STAGE_COUNT] = {"config", "surfaces", "context", "encode", "decode"};

/* What fails and when, per stage (see the header comment). */
struct schedule {
    int all[STAGE_COUNT];     /* "STAGE": every call */
    long nth[STAGE_COUNT];    /* "STAGE:N": only the Nth call (decode: the Nth and later); 0: none */
    long after[STAGE_COUNT];  /* "STAGE-after:K": every call once K pictures were delivered; -1: none */
    long calls[STAGE_COUNT];  /* calls so far */
    long busy_nth;            /* "busy:N": the Nth vaEndPicture of any kind reports a busy surface */
    long end_picture_calls;
};

/* A reference stream ("decode=PATH"): each access unit decoded by libavcodec
 * ahead of time, found again by the first bytes of its first slice. */
struct reference_picture {
    uint8_t key[REFERENCE_KEY_BYTES];
    size_t key_length;
    uint8_t *nv12; /* width x height luma, then interleaved CbCr (NV12 or P010); NULL until decoded */
    int width, height;
    int sample_bytes; /* 1: NV12, 2: P010 */
};

struct reference {
    char path[1024];
    int loaded; /* 1: pictures ready; -1: loading failed */
    struct reference_picture *pictures;
    int count;
    int next; /* where the next search starts (decode order) */
};

struct driver {
    pthread_mutex_t lock;
    struct object **objects; /* indexed by ID; IDs are never reused */
    uint32_t count, capacity;
    struct schedule schedule;
    long pictures_encoded, pictures_decoded; /* delivered: coded buffers filled, surfaces decoded */
    int low_power_only; /* "lowpower-only": encode through EncSliceLP instead of EncSlice */
    unsigned int max_width, max_height; /* "maxsize=WxH": larger surfaces are refused; 0: no limit */
    int no_hevc_encode; /* "no-hevc-encode": HEVC Main (and Main10) is decode-only */
    int main10; /* "main10": HEVC Main10 with P010 surfaces and images */
    int rext422; /* "rext422": HEVC Main422_10 encode with YUY2 and Y210 surfaces and images */
    int reorder; /* "bframes": H.264 encode offers L1 references and writes I_PCM pictures */
    struct reference reference;
};

#define DRIVER(ctx) ((struct driver *)(ctx)->pDriverData)

static void report_error(VADriverContextP ctx, const char *format, ...)
{
    char message[256];
    va_list args;
    va_start(args, format);
    int length = vsnprintf(message, sizeof message - 1, format, args);
    va_end(args);
    if (length < 0)
        return;
    if ((size_t)length > sizeof message - 2)
        length = (int)sizeof message - 2;
    message[length] = '\n'; /* libva prints callback messages as they are */
    message[length + 1] = 0;
    if (ctx->error_callback)
        ctx->error_callback(ctx, message);
}

/* ---- failure specification ---------------------------------------------- */

static int parse_failures(struct driver *drv, const char *spec)
{
    int fail_init = 0;
    char *copy = strdup(spec), *save = NULL;
    if (!copy)
        return 0;
    struct schedule *schedule = &drv->schedule;
    for (char *item = strtok_r(copy, ", \n", &save); item; item = strtok_r(NULL, ", \n", &save)) {
        if (!strcmp(item, "init")) {
            fail_init = 1;
            continue;
        }
        if (!strcmp(item, "lowpower-only")) {
            drv->low_power_only = 1;
            continue;
        }
        if (!strcmp(item, "no-hevc-encode")) {
            drv->no_hevc_encode = 1;
            continue;
        }
        if (!strcmp(item, "main10")) {
            drv->main10 = 1;
            continue;
        }
        if (!strcmp(item, "rext422")) {
            drv->rext422 = 1;
            continue;
        }
        if (!strcmp(item, "bframes")) {
            drv->reorder = 1;
            continue;
        }
        if (!strncmp(item, "maxsize=", 8)) {
            sscanf(item + 8, "%ux%u", &drv->max_width, &drv->max_height);
            continue;
        }
        if (!strncmp(item, "busy:", 5)) {
            schedule->busy_nth = strtol(item + 5, NULL, 10);
            continue;
        }
        for (int stage = 0; stage < STAGE_COUNT; stage++) {
            size_t length = strlen(stage_names[stage]);
            if (strncmp(item, stage_names[stage], length) != 0)
                continue;
            const char *rest = item + length;
            if (*rest == 0)
                schedule->all[stage] = 1;
            else if (*rest == ':')
                schedule->nth[stage] = strtol(rest + 1, NULL, 10);
            else if (!strncmp(rest, "-after:", 7))
                schedule->after[stage] = strtol(rest + 7, NULL, 10);
            else
                continue;
            break;
        }
    }
    free(copy);
    return fail_init;
}

/* Counts a call of `stage` and says whether the schedule fails it; `delivered`
 * is how many pictures the stage has delivered so far. Called with the lock held. */
static int scheduled_failure(struct driver *drv, enum stage stage, long delivered)
{
    struct schedule *schedule = &drv->schedule;
    long call = ++schedule->calls[stage];
    if (schedule->all[stage])
        return 1;
    if (schedule->after[stage] >= 0 && delivered >= schedule->after[stage])
        return 1;
    if (schedule->nth[stage] > 0)
        return stage == STAGE_DECODE ? call >= schedule->nth[stage] : call == schedule->nth[stage];
    return 0;
}

/* The fake device file: first line DEVICE_MAGIC, then optional "fail=LIST" and
 * "decode=PATH" lines. */
static int read_device_file(VADriverContextP ctx, struct driver *drv)
{
    struct drm_state *drm = ctx->drm_state;
    struct stat st;
    char text[4096];
    if (!drm || drm->fd < 0 || fstat(drm->fd, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    ssize_t n = pread(drm->fd, text, sizeof text - 1, 0);
    if (n <= 0)
        return 0;
    text[n] = 0;
    if (strncmp(text, DEVICE_MAGIC, strlen(DEVICE_MAGIC)) != 0)
        return 0;
    const char *reference = strstr(text, "\ndecode=");
    if (reference) {
        size_t length = strcspn(reference + 8, "\n");
        if (length < sizeof drv->reference.path) {
            memcpy(drv->reference.path, reference + 8, length);
            drv->reference.path[length] = 0;
        }
    }
    const char *fail = strstr(text, "\nfail=");
    if (!fail)
        return 0;
    char spec[1024];
    size_t length = strcspn(fail + 6, "\n");
    if (length >= sizeof spec)
        length = sizeof spec - 1;
    memcpy(spec, fail + 6, length);
    spec[length] = 0;
    return parse_failures(drv, spec);
}

/* ---- object table -------------------------------------------------------- */

static VAGenericID table_insert(struct driver *drv, struct object *object)
{
    if (drv->count == drv->capacity) {
        uint32_t capacity = drv->capacity ? drv->capacity * 2 : 64;
        struct object **grown = realloc(drv->objects, capacity * sizeof *grown);
        if (!grown)
            return VA_INVALID_ID;
        drv->objects = grown;
        drv->capacity = capacity;
    }
    if (drv->count == 0)
        drv->objects[drv->count++] = NULL; /* ID 0 stays unused */
    drv->objects[drv->count] = object;
    return drv->count++;
}

static void *table_get(struct driver *drv, VAGenericID id, enum object_kind kind)
{
    if (id == 0 || id >= drv->count || !drv->objects[id] || drv->objects[id]->kind != kind)
        return NULL;
    return drv->objects[id];
}

static void object_free(struct object *object)
{
    if (!object)
        return;
    switch (object->kind) {
    case KIND_SURFACE:
        free(((struct surface *)object)->data);
        break;
    case KIND_BUFFER:
        free(((struct buffer *)object)->data);
        break;
    case KIND_CONTEXT:
    {
        struct context *context = (struct context *)object;
        if (context->encoder)
            x264_encoder_close(context->encoder);
        if (context->hevc_encoder)
            context->hevc_api->encoder_close(context->hevc_encoder);
        if (context->hevc_input)
            context->hevc_api->picture_free(context->hevc_input);
        if (context->hevc_param)
            context->hevc_api->param_free(context->hevc_param);
        free(context->planar);
        break;
    }
    default:
        break;
    }
    free(object);
}

static void table_remove(struct driver *drv, VAGenericID id)
{
    object_free(drv->objects[id]);
    drv->objects[id] = NULL;
}

/* ---- capabilities -------------------------------------------------------- */

/* HEVC Main10 only on a "main10" device, Main422_10 only on a "rext422" one. */
static const VAProfile supported_profiles[MAX_PROFILES] = {
    VAProfileH264ConstrainedBaseline, VAProfileH264Main,   VAProfileH264High,
    VAProfileHEVCMain,                VAProfileHEVCMain10, VAProfileHEVCMain422_10,
};

static int profile_supported(const struct driver *drv, VAProfile profile)
{
    if (profile == VAProfileHEVCMain10)
        return drv->main10;
    if (profile == VAProfileHEVCMain422_10)
        return drv->rext422;
    for (int i = 0; i < MAX_PROFILES; i++)
        if (supported_profiles[i] == profile)
            return 1;
    return 0;
}

static int is_hevc(VAProfile profile)
{
    return profile == VAProfileHEVCMain || profile == VAProfileHEVCMain10 || profile == VAProfileHEVCMain422_10;
}

/* The render-target formats of each profile (Main422_10: 8-bit or 10-bit 4:2:2). */
static uint32_t rt_formats_of(VAProfile profile)
{
    if (profile == VAProfileHEVCMain422_10)
        return VA_RT_FORMAT_YUV422 | VA_RT_FORMAT_YUV422_10;
    return profile == VAProfileHEVCMain10 ? VA_RT_FORMAT_YUV420_10 : VA_RT_FORMAT_YUV420;
}

/* The surface layout of a render-target format (libavutil's hwcontext_vaapi map). */
static uint32_t fourcc_of(uint32_t rt_format)
{
    switch (rt_format) {
    case VA_RT_FORMAT_YUV420_10:
        return VA_FOURCC_P010;
    case VA_RT_FORMAT_YUV422:
        return VA_FOURCC_YUY2;
    case VA_RT_FORMAT_YUV422_10:
        return VA_FOURCC_Y210;
    default:
        return VA_FOURCC_NV12;
    }
}

static int fourcc_is_packed(uint32_t fourcc)
{
    return fourcc == VA_FOURCC_YUY2 || fourcc == VA_FOURCC_Y210;
}

/* Bytes a pixel takes in a row of the first plane. */
static int fourcc_pixel_bytes(uint32_t fourcc)
{
    switch (fourcc) {
    case VA_FOURCC_P010:
    case VA_FOURCC_YUY2:
        return 2;
    case VA_FOURCC_Y210:
        return 4;
    default:
        return 1;
    }
}

/* Whether this device offers surfaces and images of `fourcc`. */
static int fourcc_offered(const struct driver *drv, uint32_t fourcc)
{
    switch (fourcc) {
    case VA_FOURCC_NV12:
        return 1;
    case VA_FOURCC_P010:
        return drv->main10;
    case VA_FOURCC_YUY2:
    case VA_FOURCC_Y210:
        return drv->rext422;
    default:
        return 0;
    }
}

static int is_h264(VAProfile profile)
{
    return profile == VAProfileH264ConstrainedBaseline || profile == VAProfileH264Main ||
           profile == VAProfileH264High;
}

/* Encoding goes through one entrypoint: EncSlice, or EncSliceLP on a
 * "lowpower-only" device (as some Intel parts offer). */
static int is_encode(VAEntrypoint entrypoint)
{
    return entrypoint == VAEntrypointEncSlice || entrypoint == VAEntrypointEncSliceLP;
}

static VAEntrypoint encode_entrypoint(const struct driver *drv)
{
    return drv->low_power_only ? VAEntrypointEncSliceLP : VAEntrypointEncSlice;
}

static int entrypoint_supported(const struct driver *drv, VAProfile profile, VAEntrypoint entrypoint)
{
    if (!profile_supported(drv, profile))
        return 0;
    return (entrypoint == VAEntrypointVLD && profile != VAProfileHEVCMain422_10) ||
           (entrypoint == encode_entrypoint(drv) && (is_h264(profile) || !drv->no_hevc_encode));
}

static uint32_t attribute_value(const struct driver *drv, VAProfile profile, VAEntrypoint entrypoint,
                                VAConfigAttribType type)
{
    int encode = is_encode(entrypoint);
    switch (type) {
    case VAConfigAttribRTFormat:
        return rt_formats_of(profile);
    case VAConfigAttribRateControl:
        return encode ? (VA_RC_CQP | VA_RC_CBR | VA_RC_VBR) : VA_ATTRIB_NOT_SUPPORTED;
    case VAConfigAttribEncPackedHeaders:
        return encode ? VA_ENC_PACKED_HEADER_NONE : VA_ATTRIB_NOT_SUPPORTED;
    case VAConfigAttribEncMaxRefFrames:
        if (!encode)
            return VA_ATTRIB_NOT_SUPPORTED;
        /* L0 in the low 16 bits, L1 in the high: B-frames only with "bframes" (H.264) */
        return drv->reorder && is_h264(profile) ? (2u | (1u << 16)) : 1u;
    case VAConfigAttribEncMaxSlices:
        return encode ? 1 : VA_ATTRIB_NOT_SUPPORTED;
    default:
        (void)profile;
        return VA_ATTRIB_NOT_SUPPORTED;
    }
}

static VAStatus drv_QueryConfigProfiles(VADriverContextP ctx, VAProfile *list, int *count)
{
    if (!list || !count)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    int n = 0;
    for (int i = 0; i < MAX_PROFILES; i++)
        if (profile_supported(DRIVER(ctx), supported_profiles[i]))
            list[n++] = supported_profiles[i];
    *count = n;
    return VA_STATUS_SUCCESS;
}

static VAStatus drv_QueryConfigEntrypoints(VADriverContextP ctx, VAProfile profile, VAEntrypoint *list,
                                           int *count)
{
    if (!list || !count)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    if (!profile_supported(DRIVER(ctx), profile))
        return VA_STATUS_ERROR_UNSUPPORTED_PROFILE;
    int n = 0;
    if (profile != VAProfileHEVCMain422_10) /* encode only */
        list[n++] = VAEntrypointVLD;
    if (is_h264(profile) || !DRIVER(ctx)->no_hevc_encode)
        list[n++] = encode_entrypoint(DRIVER(ctx));
    *count = n;
    return VA_STATUS_SUCCESS;
}

static VAStatus drv_GetConfigAttributes(VADriverContextP ctx, VAProfile profile, VAEntrypoint entrypoint,
                                        VAConfigAttrib *list, int count)
{
    if (!profile_supported(DRIVER(ctx), profile))
        return VA_STATUS_ERROR_UNSUPPORTED_PROFILE;
    if (!entrypoint_supported(DRIVER(ctx), profile, entrypoint))
        return VA_STATUS_ERROR_UNSUPPORTED_ENTRYPOINT;
    if (count < 0 || (count > 0 && !list))
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    for (int i = 0; i < count; i++)
        list[i].value = attribute_value(DRIVER(ctx), profile, entrypoint, list[i].type);
    return VA_STATUS_SUCCESS;
}

static VAStatus drv_CreateConfig(VADriverContextP ctx, VAProfile profile, VAEntrypoint entrypoint,
                                 VAConfigAttrib *attributes, int count, VAConfigID *id)
{
    struct driver *drv = DRIVER(ctx);
    if (!id || count < 0 || (count > 0 && !attributes))
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    if (!profile_supported(drv, profile))
        return VA_STATUS_ERROR_UNSUPPORTED_PROFILE;
    if (!entrypoint_supported(drv, profile, entrypoint))
        return VA_STATUS_ERROR_UNSUPPORTED_ENTRYPOINT;
    pthread_mutex_lock(&drv->lock);
    int fail = scheduled_failure(drv, STAGE_CONFIG, 0);
    long call = drv->schedule.calls[STAGE_CONFIG];
    pthread_mutex_unlock(&drv->lock);
    if (fail) {
        report_error(ctx, "codecs_test: injected failure in vaCreateConfig #%ld", call);
        return VA_STATUS_ERROR_ALLOCATION_FAILED;
    }
    int encode = is_encode(entrypoint);
    uint32_t rt_formats = rt_formats_of(profile), rate_control = encode ? VA_RC_CQP : 0;
    uint32_t rt_format = rt_formats & -rt_formats; /* the lowest one unless the client picks */
    for (int i = 0; i < count; i++) {
        uint32_t value = attributes[i].value;
        switch (attributes[i].type) {
        case VAConfigAttribRTFormat:
            if (!(value & rt_formats))
                return VA_STATUS_ERROR_UNSUPPORTED_RT_FORMAT;
            rt_format = (value & rt_formats) & -(value & rt_formats);
            break;
        case VAConfigAttribRateControl:
            if (!encode || (value != VA_RC_CQP && value != VA_RC_CBR && value != VA_RC_VBR))
                return VA_STATUS_ERROR_ATTR_NOT_SUPPORTED;
            rate_control = value;
            break;
        case VAConfigAttribEncPackedHeaders:
            if (!encode || value != VA_ENC_PACKED_HEADER_NONE)
                return VA_STATUS_ERROR_ATTR_NOT_SUPPORTED;
            break;
        default:
            if (attribute_value(drv, profile, entrypoint, attributes[i].type) == VA_ATTRIB_NOT_SUPPORTED)
                return VA_STATUS_ERROR_ATTR_NOT_SUPPORTED;
            break;
        }
    }
    struct config *config = calloc(1, sizeof *config);
    if (!config)
        return VA_STATUS_ERROR_ALLOCATION_FAILED;
    config->base.kind = KIND_CONFIG;
    config->profile = profile;
    config->entrypoint = entrypoint;
    config->rt_format = rt_format;
    config->rate_control = rate_control;
    pthread_mutex_lock(&drv->lock);
    *id = table_insert(drv, &config->base);
    pthread_mutex_unlock(&drv->lock);
    if (*id == VA_INVALID_ID) {
        free(config);
        return VA_STATUS_ERROR_ALLOCATION_FAILED;
    }
    return VA_STATUS_SUCCESS;
}

static VAStatus drv_DestroyConfig(VADriverContextP ctx, VAConfigID id)
{
    struct driver *drv = DRIVER(ctx);
    VAStatus status = VA_STATUS_ERROR_INVALID_CONFIG;
    pthread_mutex_lock(&drv->lock);
    if (table_get(drv, id, KIND_CONFIG)) {
        table_remove(drv, id);
        status = VA_STATUS_SUCCESS;
    }
    pthread_mutex_unlock(&drv->lock);
    return status;
}

static VAStatus drv_QueryConfigAttributes(VADriverContextP ctx, VAConfigID id, VAProfile *profile,
                                          VAEntrypoint *entrypoint, VAConfigAttrib *list, int *count)
{
    struct driver *drv = DRIVER(ctx);
    if (!profile || !entrypoint || !list || !count)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&drv->lock);
    struct config *config = table_get(drv, id, KIND_CONFIG);
    if (!config) {
        pthread_mutex_unlock(&drv->lock);
        return VA_STATUS_ERROR_INVALID_CONFIG;
    }
    *profile = config->profile;
    *entrypoint = config->entrypoint;
    int n = 0;
    list[n].type = VAConfigAttribRTFormat;
    list[n++].value = config->rt_format;
    if (is_encode(config->entrypoint)) {
        list[n].type = VAConfigAttribRateControl;
        list[n++].value = config->rate_control;
    }
    *count = n;
    pthread_mutex_unlock(&drv->lock);
    return VA_STATUS_SUCCESS;
}

/* ---- surfaces ------------------------------------------------------------ */

static VAStatus create_surfaces(VADriverContextP ctx, unsigned int format, unsigned int width,
                                unsigned int height, VASurfaceID *surfaces, unsigned int count,
                                VASurfaceAttrib *attributes, unsigned int attribute_count)
{
    struct driver *drv = DRIVER(ctx);
    if (!surfaces || count == 0 || (attribute_count > 0 && !attributes))
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    uint32_t fourcc = fourcc_of(format);
    if ((format != VA_RT_FORMAT_YUV420 && format != VA_RT_FORMAT_YUV420_10 && format != VA_RT_FORMAT_YUV422 &&
         format != VA_RT_FORMAT_YUV422_10) ||
        !fourcc_offered(drv, fourcc))
        return VA_STATUS_ERROR_UNSUPPORTED_RT_FORMAT;
    if (width == 0 || height == 0 || width > MAX_DIMENSION || height > MAX_DIMENSION)
        return VA_STATUS_ERROR_RESOLUTION_NOT_SUPPORTED;
    if (drv->max_width && (width > drv->max_width || height > drv->max_height)) {
        report_error(ctx, "codecs_test: %ux%u surfaces refused (maxsize=%ux%u)", width, height, drv->max_width,
                     drv->max_height);
        return VA_STATUS_ERROR_RESOLUTION_NOT_SUPPORTED;
    }
    for (unsigned int i = 0; i < attribute_count; i++) {
        const VASurfaceAttrib *attribute = &attributes[i];
        if (!(attribute->flags & VA_SURFACE_ATTRIB_SETTABLE))
            continue;
        if (attribute->type == VASurfaceAttribPixelFormat && (uint32_t)attribute->value.value.i != fourcc)
            return VA_STATUS_ERROR_INVALID_IMAGE_FORMAT;
        if (attribute->type == VASurfaceAttribMemoryType &&
            attribute->value.value.i != VA_SURFACE_ATTRIB_MEM_TYPE_VA)
            return VA_STATUS_ERROR_UNSUPPORTED_MEMORY_TYPE;
    }
    pthread_mutex_lock(&drv->lock);
    if (scheduled_failure(drv, STAGE_SURFACES, 0)) {
        long call = drv->schedule.calls[STAGE_SURFACES];
        pthread_mutex_unlock(&drv->lock);
        report_error(ctx, "codecs_test: injected failure in vaCreateSurfaces #%ld", call);
        return VA_STATUS_ERROR_ALLOCATION_FAILED;
    }
    unsigned int made = 0;
    VAStatus status = VA_STATUS_SUCCESS;
    for (; made < count; made++) {
        struct surface *surface = calloc(1, sizeof *surface);
        if (!surface) {
            status = VA_STATUS_ERROR_ALLOCATION_FAILED;
            break;
        }
        surface->base.kind = KIND_SURFACE;
        surface->width = (int)width;
        surface->height = (int)height;
        surface->fourcc = fourcc;
        surface->sample_bytes = fourcc == VA_FOURCC_P010 || fourcc == VA_FOURCC_Y210 ? 2 : 1;
        surface->pixel_bytes = fourcc_pixel_bytes(fourcc);
        surface->packed = fourcc_is_packed(fourcc);
        surface->pitch = (int)((((width + 1) & ~1u) * (unsigned int)surface->pixel_bytes + 15) & ~15u);
        surface->rows = (int)((height + 1) & ~1u);
        surface->size = (size_t)surface->pitch * (size_t)surface->rows * (surface->packed ? 2 : 3) / 2;
        surface->data = calloc(1, surface->size);
        VASurfaceID id = surface->data ? table_insert(drv, &surface->base) : VA_INVALID_ID;
        if (id == VA_INVALID_ID) {
            object_free(&surface->base);
            status = VA_STATUS_ERROR_ALLOCATION_FAILED;
            break;
        }
        surfaces[made] = id;
    }
    if (status != VA_STATUS_SUCCESS) {
        for (unsigned int i = 0; i < made; i++) {
            table_remove(drv, surfaces[i]);
            surfaces[i] = VA_INVALID_SURFACE;
        }
    }
    pthread_mutex_unlock(&drv->lock);
    return status;
}

static VAStatus drv_CreateSurfaces(VADriverContextP ctx, int width, int height, int format, int count,
                                   VASurfaceID *surfaces)
{
    if (width <= 0 || height <= 0 || count <= 0)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    return create_surfaces(ctx, (unsigned int)format, (unsigned int)width, (unsigned int)height, surfaces,
                           (unsigned int)count, NULL, 0);
}

static VAStatus drv_CreateSurfaces2(VADriverContextP ctx, unsigned int format, unsigned int width,
                                    unsigned int height, VASurfaceID *surfaces, unsigned int count,
                                    VASurfaceAttrib *attributes, unsigned int attribute_count)
{
    return create_surfaces(ctx, format, width, height, surfaces, count, attributes, attribute_count);
}

static VAStatus drv_DestroySurfaces(VADriverContextP ctx, VASurfaceID *list, int count)
{
    struct driver *drv = DRIVER(ctx);
    if (count < 0 || (count > 0 && !list))
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    VAStatus status = VA_STATUS_SUCCESS;
    pthread_mutex_lock(&drv->lock);
    for (int i = 0; i < count; i++) {
        if (table_get(drv, list[i], KIND_SURFACE))
            table_remove(drv, list[i]);
        else
            status = VA_STATUS_ERROR_INVALID_SURFACE;
    }
    pthread_mutex_unlock(&drv->lock);
    return status;
}

static VAStatus drv_QuerySurfaceAttributes(VADriverContextP ctx, VAConfigID config_id, VASurfaceAttrib *list,
                                           unsigned int *count)
{
    struct driver *drv = DRIVER(ctx);
    const unsigned int needed = 6;
    if (!count)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&drv->lock);
    struct config *config = table_get(drv, config_id, KIND_CONFIG);
    uint32_t fourcc = config ? fourcc_of(config->rt_format) : 0;
    pthread_mutex_unlock(&drv->lock);
    if (!config)
        return VA_STATUS_ERROR_INVALID_CONFIG;
    if (!list) {
        *count = needed;
        return VA_STATUS_SUCCESS;
    }
    if (*count < needed) {
        *count = needed;
        return VA_STATUS_ERROR_MAX_NUM_EXCEEDED;
    }
    const struct {
        VASurfaceAttribType type;
        uint32_t flags;
        int value;
    } table[] = {
        {VASurfaceAttribPixelFormat, VA_SURFACE_ATTRIB_GETTABLE | VA_SURFACE_ATTRIB_SETTABLE, (int)fourcc},
        {VASurfaceAttribMinWidth, VA_SURFACE_ATTRIB_GETTABLE, 16},
        {VASurfaceAttribMinHeight, VA_SURFACE_ATTRIB_GETTABLE, 16},
        {VASurfaceAttribMaxWidth, VA_SURFACE_ATTRIB_GETTABLE, MAX_DIMENSION},
        {VASurfaceAttribMaxHeight, VA_SURFACE_ATTRIB_GETTABLE, MAX_DIMENSION},
        {VASurfaceAttribMemoryType, VA_SURFACE_ATTRIB_GETTABLE | VA_SURFACE_ATTRIB_SETTABLE,
         VA_SURFACE_ATTRIB_MEM_TYPE_VA},
    };
    for (unsigned int i = 0; i < needed; i++) {
        memset(&list[i], 0, sizeof list[i]);
        list[i].type = table[i].type;
        list[i].flags = table[i].flags;
        list[i].value.type = VAGenericValueTypeInteger;
        list[i].value.value.i = table[i].value;
    }
    *count = needed;
    return VA_STATUS_SUCCESS;
}

static VAStatus drv_SyncSurface(VADriverContextP ctx, VASurfaceID id)
{
    struct driver *drv = DRIVER(ctx);
    pthread_mutex_lock(&drv->lock);
    int valid = table_get(drv, id, KIND_SURFACE) != NULL;
    pthread_mutex_unlock(&drv->lock);
    return valid ? VA_STATUS_SUCCESS : VA_STATUS_ERROR_INVALID_SURFACE;
}

static VAStatus drv_SyncSurface2(VADriverContextP ctx, VASurfaceID id, uint64_t timeout)
{
    (void)timeout;
    return drv_SyncSurface(ctx, id);
}

static VAStatus drv_QuerySurfaceStatus(VADriverContextP ctx, VASurfaceID id, VASurfaceStatus *status)
{
    if (!status)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    VAStatus result = drv_SyncSurface(ctx, id);
    if (result == VA_STATUS_SUCCESS)
        *status = VASurfaceReady; /* all work finishes inside vaEndPicture */
    return result;
}

/* ---- buffers ------------------------------------------------------------- */

static VAStatus drv_CreateBuffer(VADriverContextP ctx, VAContextID context, VABufferType type, unsigned int size,
                                 unsigned int elements, void *data, VABufferID *id)
{
    struct driver *drv = DRIVER(ctx);
    (void)context;
    if (!id || size == 0 || elements == 0 || size > (1u << 30) / elements)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    struct buffer *buffer = calloc(1, sizeof *buffer);
    if (!buffer)
        return VA_STATUS_ERROR_ALLOCATION_FAILED;
    buffer->base.kind = KIND_BUFFER;
    buffer->type = type;
    buffer->element_size = size;
    buffer->elements = elements;
    buffer->alias_surface = VA_INVALID_SURFACE;
    if (type == VAEncCodedBufferType) {
        /* a segment header, then the payload written by vaEndPicture */
        buffer->size = sizeof(VACodedBufferSegment) + (size_t)size * elements;
        buffer->data = calloc(1, buffer->size);
        if (buffer->data) {
            VACodedBufferSegment *segment = (VACodedBufferSegment *)buffer->data;
            segment->buf = buffer->data + sizeof(VACodedBufferSegment);
        }
    } else {
        buffer->size = (size_t)size * elements;
        buffer->data = calloc(1, buffer->size);
        if (buffer->data && data)
            memcpy(buffer->data, data, buffer->size);
    }
    if (!buffer->data) {
        free(buffer);
        return VA_STATUS_ERROR_ALLOCATION_FAILED;
    }
    pthread_mutex_lock(&drv->lock);
    *id = table_insert(drv, &buffer->base);
    pthread_mutex_unlock(&drv->lock);
    if (*id == VA_INVALID_ID) {
        object_free(&buffer->base);
        return VA_STATUS_ERROR_ALLOCATION_FAILED;
    }
    return VA_STATUS_SUCCESS;
}

static VAStatus drv_BufferSetNumElements(VADriverContextP ctx, VABufferID id, unsigned int elements)
{
    struct driver *drv = DRIVER(ctx);
    VAStatus status = VA_STATUS_SUCCESS;
    pthread_mutex_lock(&drv->lock);
    struct buffer *buffer = table_get(drv, id, KIND_BUFFER);
    if (!buffer)
        status = VA_STATUS_ERROR_INVALID_BUFFER;
    else if (elements == 0 || (size_t)elements * buffer->element_size > buffer->size)
        status = VA_STATUS_ERROR_INVALID_PARAMETER;
    else
        buffer->elements = elements;
    pthread_mutex_unlock(&drv->lock);
    return status;
}

static VAStatus drv_BufferInfo(VADriverContextP ctx, VABufferID id, VABufferType *type, unsigned int *size,
                               unsigned int *elements)
{
    struct driver *drv = DRIVER(ctx);
    if (!type || !size || !elements)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&drv->lock);
    struct buffer *buffer = table_get(drv, id, KIND_BUFFER);
    if (buffer) {
        *type = buffer->type;
        *size = buffer->element_size;
        *elements = buffer->elements;
    }
    pthread_mutex_unlock(&drv->lock);
    return buffer ? VA_STATUS_SUCCESS : VA_STATUS_ERROR_INVALID_BUFFER;
}

static VAStatus drv_MapBuffer(VADriverContextP ctx, VABufferID id, void **pointer)
{
    struct driver *drv = DRIVER(ctx);
    if (!pointer)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    VAStatus status = VA_STATUS_SUCCESS;
    pthread_mutex_lock(&drv->lock);
    struct buffer *buffer = table_get(drv, id, KIND_BUFFER);
    if (!buffer) {
        status = VA_STATUS_ERROR_INVALID_BUFFER;
    } else if (buffer->alias_surface != VA_INVALID_SURFACE) {
        struct surface *surface = table_get(drv, buffer->alias_surface, KIND_SURFACE);
        if (surface)
            *pointer = surface->data;
        else
            status = VA_STATUS_ERROR_INVALID_SURFACE;
    } else {
        *pointer = buffer->data;
    }
    if (status == VA_STATUS_SUCCESS)
        buffer->mapped++;
    pthread_mutex_unlock(&drv->lock);
    return status;
}

static VAStatus drv_UnmapBuffer(VADriverContextP ctx, VABufferID id)
{
    struct driver *drv = DRIVER(ctx);
    VAStatus status = VA_STATUS_SUCCESS;
    pthread_mutex_lock(&drv->lock);
    struct buffer *buffer = table_get(drv, id, KIND_BUFFER);
    if (!buffer)
        status = VA_STATUS_ERROR_INVALID_BUFFER;
    else if (buffer->mapped == 0)
        status = VA_STATUS_ERROR_OPERATION_FAILED;
    else
        buffer->mapped--;
    pthread_mutex_unlock(&drv->lock);
    return status;
}

static VAStatus drv_DestroyBuffer(VADriverContextP ctx, VABufferID id)
{
    struct driver *drv = DRIVER(ctx);
    VAStatus status = VA_STATUS_SUCCESS;
    pthread_mutex_lock(&drv->lock);
    struct buffer *buffer = table_get(drv, id, KIND_BUFFER);
    if (!buffer || buffer->alias_surface != VA_INVALID_SURFACE || buffer->type == VAImageBufferType)
        status = VA_STATUS_ERROR_INVALID_BUFFER; /* image buffers die with their image */
    else
        table_remove(drv, id);
    pthread_mutex_unlock(&drv->lock);
    return status;
}

static VAStatus drv_SyncBuffer(VADriverContextP ctx, VABufferID id, uint64_t timeout)
{
    struct driver *drv = DRIVER(ctx);
    (void)timeout;
    pthread_mutex_lock(&drv->lock);
    int valid = table_get(drv, id, KIND_BUFFER) != NULL;
    pthread_mutex_unlock(&drv->lock);
    return valid ? VA_STATUS_SUCCESS : VA_STATUS_ERROR_INVALID_BUFFER;
}

/* ---- images -------------------------------------------------------------- */

static const VAImageFormat nv12_format = {
    .fourcc = VA_FOURCC_NV12, .byte_order = VA_LSB_FIRST, .bits_per_pixel = 12,
};

static const VAImageFormat p010_format = {
    .fourcc = VA_FOURCC_P010, .byte_order = VA_LSB_FIRST, .bits_per_pixel = 24,
};

static const VAImageFormat yuy2_format = {
    .fourcc = VA_FOURCC_YUY2, .byte_order = VA_LSB_FIRST, .bits_per_pixel = 16,
};

static const VAImageFormat y210_format = {
    .fourcc = VA_FOURCC_Y210, .byte_order = VA_LSB_FIRST, .bits_per_pixel = 32,
};

static VAImageFormat image_format_of(uint32_t fourcc)
{
    switch (fourcc) {
    case VA_FOURCC_P010:
        return p010_format;
    case VA_FOURCC_YUY2:
        return yuy2_format;
    case VA_FOURCC_Y210:
        return y210_format;
    default:
        return nv12_format;
    }
}

static VAStatus drv_QueryImageFormats(VADriverContextP ctx, VAImageFormat *list, int *count)
{
    if (!list || !count)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    int n = 0;
    list[n++] = nv12_format;
    if (DRIVER(ctx)->main10)
        list[n++] = p010_format;
    if (DRIVER(ctx)->rext422) {
        list[n++] = yuy2_format;
        list[n++] = y210_format;
    }
    *count = n;
    return VA_STATUS_SUCCESS;
}

/* Registers an image over either its own buffer or (derived) a surface's memory.
 * Called with the lock held. */
static VAStatus make_image(struct driver *drv, uint32_t fourcc, int width, int height, int pitch, int rows,
                           VASurfaceID derived_from, VAImage *out)
{
    struct image *image = calloc(1, sizeof *image);
    struct buffer *buffer = calloc(1, sizeof *buffer);
    if (!image || !buffer) {
        free(image);
        free(buffer);
        return VA_STATUS_ERROR_ALLOCATION_FAILED;
    }
    int packed = fourcc_is_packed(fourcc);
    size_t size = (size_t)pitch * (size_t)rows * (packed ? 2 : 3) / 2;
    buffer->base.kind = KIND_BUFFER;
    buffer->type = VAImageBufferType;
    buffer->element_size = (unsigned int)size;
    buffer->elements = 1;
    buffer->size = size;
    buffer->alias_surface = derived_from;
    if (derived_from == VA_INVALID_SURFACE && !(buffer->data = calloc(1, size))) {
        free(image);
        free(buffer);
        return VA_STATUS_ERROR_ALLOCATION_FAILED;
    }
    VABufferID buffer_id = table_insert(drv, &buffer->base);
    if (buffer_id == VA_INVALID_ID) {
        free(image);
        object_free(&buffer->base);
        return VA_STATUS_ERROR_ALLOCATION_FAILED;
    }
    image->base.kind = KIND_IMAGE;
    image->derived_from = derived_from;
    VAImage *va = &image->image;
    va->format = image_format_of(fourcc);
    va->buf = buffer_id;
    va->width = (uint16_t)width;
    va->height = (uint16_t)height;
    va->data_size = (uint32_t)size;
    va->num_planes = packed ? 1 : 2;
    va->pitches[0] = (uint32_t)pitch;
    va->offsets[0] = 0;
    if (!packed) {
        va->pitches[1] = (uint32_t)pitch;
        va->offsets[1] = (uint32_t)pitch * (uint32_t)rows;
    }
    VAImageID image_id = table_insert(drv, &image->base);
    if (image_id == VA_INVALID_ID) {
        table_remove(drv, buffer_id);
        free(image);
        return VA_STATUS_ERROR_ALLOCATION_FAILED;
    }
    va->image_id = image_id;
    *out = *va;
    return VA_STATUS_SUCCESS;
}

static VAStatus drv_CreateImage(VADriverContextP ctx, VAImageFormat *format, int width, int height, VAImage *out)
{
    struct driver *drv = DRIVER(ctx);
    if (!format || !out || width <= 0 || height <= 0 || width > MAX_DIMENSION || height > MAX_DIMENSION)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    if (!fourcc_offered(drv, format->fourcc))
        return VA_STATUS_ERROR_INVALID_IMAGE_FORMAT;
    int pixel_bytes = fourcc_pixel_bytes(format->fourcc);
    pthread_mutex_lock(&drv->lock);
    VAStatus status = make_image(drv, format->fourcc, width, height, (((width + 1) & ~1) * pixel_bytes + 15) & ~15,
                                 (height + 1) & ~1, VA_INVALID_SURFACE, out);
    pthread_mutex_unlock(&drv->lock);
    return status;
}

static VAStatus drv_DeriveImage(VADriverContextP ctx, VASurfaceID surface_id, VAImage *out)
{
    struct driver *drv = DRIVER(ctx);
    if (!out)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&drv->lock);
    struct surface *surface = table_get(drv, surface_id, KIND_SURFACE);
    VAStatus status = surface ? make_image(drv, surface->fourcc, surface->width, surface->height, surface->pitch,
                                           surface->rows, surface_id, out)
                              : VA_STATUS_ERROR_INVALID_SURFACE;
    pthread_mutex_unlock(&drv->lock);
    return status;
}

static VAStatus drv_DestroyImage(VADriverContextP ctx, VAImageID id)
{
    struct driver *drv = DRIVER(ctx);
    VAStatus status = VA_STATUS_SUCCESS;
    pthread_mutex_lock(&drv->lock);
    struct image *image = table_get(drv, id, KIND_IMAGE);
    if (!image) {
        status = VA_STATUS_ERROR_INVALID_IMAGE;
    } else {
        if (table_get(drv, image->image.buf, KIND_BUFFER))
            table_remove(drv, image->image.buf);
        table_remove(drv, id);
    }
    pthread_mutex_unlock(&drv->lock);
    return status;
}

/* Copies a rectangle between a surface and an image buffer of the same
 * layout (NV12, P010, YUY2 or Y210); x offsets and widths are in pixels.
 * to_surface selects the direction. Called with the lock held. */
static void copy_rect(struct surface *surface, uint8_t *data, const VAImage *image, int sx, int sy, int ix,
                      int iy, int width, int height, int to_surface)
{
    for (int plane = 0; plane < (surface->packed ? 1 : 2); plane++) {
        int rows = plane ? height / 2 : height;
        int shift = plane ? 1 : 0;
        uint8_t *surface_base = surface->data + (plane ? (size_t)surface->pitch * (size_t)surface->rows : 0);
        uint8_t *image_base = data + image->offsets[plane];
        for (int row = 0; row < rows; row++) {
            size_t bytes = (size_t)surface->pixel_bytes; /* a CbCr pair per two pixels: the same bytes per pixel */
            uint8_t *s = surface_base + (size_t)((sy >> shift) + row) * (size_t)surface->pitch + (size_t)sx * bytes;
            uint8_t *i = image_base + (size_t)((iy >> shift) + row) * image->pitches[plane] + (size_t)ix * bytes;
            if (to_surface)
                memcpy(s, i, (size_t)width * bytes);
            else
                memcpy(i, s, (size_t)width * bytes);
        }
    }
}

static VAStatus transfer(VADriverContextP ctx, VASurfaceID surface_id, VAImageID image_id, int sx, int sy, int ix,
                         int iy, unsigned int width, unsigned int height, int to_surface)
{
    struct driver *drv = DRIVER(ctx);
    VAStatus status = VA_STATUS_SUCCESS;
    pthread_mutex_lock(&drv->lock);
    struct surface *surface = table_get(drv, surface_id, KIND_SURFACE);
    struct image *image = table_get(drv, image_id, KIND_IMAGE);
    struct buffer *buffer = image ? table_get(drv, image->image.buf, KIND_BUFFER) : NULL;
    if (!surface)
        status = VA_STATUS_ERROR_INVALID_SURFACE;
    else if (!image || !buffer)
        status = VA_STATUS_ERROR_INVALID_IMAGE;
    else if (sx < 0 || sy < 0 || ix < 0 || iy < 0 || ((sx | sy | ix | iy) & 1) ||
             (uint64_t)sx + width > (uint64_t)surface->width || (uint64_t)sy + height > (uint64_t)surface->height ||
             (uint64_t)ix + width > image->image.width || (uint64_t)iy + height > image->image.height)
        status = VA_STATUS_ERROR_INVALID_PARAMETER;
    else if (buffer->alias_surface == surface_id)
        status = VA_STATUS_SUCCESS; /* a derived image already is the surface */
    else if (buffer->alias_surface != VA_INVALID_SURFACE)
        status = VA_STATUS_ERROR_OPERATION_FAILED;
    else if (image->image.format.fourcc != surface->fourcc)
        status = VA_STATUS_ERROR_INVALID_IMAGE_FORMAT; /* no format conversion */
    else
        copy_rect(surface, buffer->data, &image->image, sx, sy, ix, iy, (int)width, (int)height, to_surface);
    pthread_mutex_unlock(&drv->lock);
    return status;
}

static VAStatus drv_GetImage(VADriverContextP ctx, VASurfaceID surface, int x, int y, unsigned int width,
                             unsigned int height, VAImageID image)
{
    return transfer(ctx, surface, image, x, y, 0, 0, width, height, 0);
}

static VAStatus drv_PutImage(VADriverContextP ctx, VASurfaceID surface, VAImageID image, int src_x, int src_y,
                             unsigned int src_width, unsigned int src_height, int dest_x, int dest_y,
                             unsigned int dest_width, unsigned int dest_height)
{
    if (src_width != dest_width || src_height != dest_height)
        return VA_STATUS_ERROR_UNIMPLEMENTED; /* no scaling */
    return transfer(ctx, surface, image, dest_x, dest_y, src_x, src_y, src_width, src_height, 1);
}

/* ---- reference decoding ("decode=PATH") --------------------------------- */

/* One NAL unit of an Annex-B buffer: [start, end), trailing zero bytes removed. */
struct nal_span {
    const uint8_t *start;
    size_t size;
};

/* The next NAL unit at or after *position; 0 at the end. */
static int next_nal(const uint8_t *data, size_t size, size_t *position, struct nal_span *nal)
{
    size_t i = *position;
    while (i + 3 <= size && !(data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1))
        i++;
    if (i + 3 > size)
        return 0;
    size_t begin = i + 3, end = begin;
    while (end + 3 <= size && !(data[end] == 0 && data[end + 1] == 0 && data[end + 2] == 1))
        end++;
    if (end + 3 > size)
        end = size;
    *position = end;
    while (end > begin && data[end - 1] == 0)
        end--;
    nal->start = data + begin;
    nal->size = end - begin;
    return 1;
}

static int nal_is_vcl(int hevc, const struct nal_span *nal)
{
    if (nal->size < 3)
        return 0;
    if (hevc)
        return ((nal->start[0] >> 1) & 0x3f) < 32;
    int type = nal->start[0] & 0x1f;
    return type >= 1 && type <= 5;
}

/* first_mb_in_slice == 0 (H.264: ue(v) 0 is a single 1 bit) or
 * first_slice_segment_in_pic_flag (HEVC). */
static int nal_starts_picture(int hevc, const struct nal_span *nal)
{
    return hevc ? (nal->start[2] & 0x80) != 0 : (nal->start[1] & 0x80) != 0;
}

static size_t key_length_of(size_t size)
{
    return size < REFERENCE_KEY_BYTES ? size : REFERENCE_KEY_BYTES;
}

/* A 10-bit sample of a yuv420p10le plane as P010 stores it: in the high bits. */
static uint16_t p010_sample(const uint8_t *row, int x)
{
    uint16_t value;
    memcpy(&value, row + 2 * (size_t)x, 2);
    return (uint16_t)(value << 6);
}

/* Copies a decoded 4:2:0 frame into a new semi-planar picture: NV12 from
 * 8 bits, P010 from 10 bits (libavcodec's yuv420p10le, values in the low bits). */
static int store_frame(struct reference *reference, const AVFrame *frame)
{
    if (frame->pts < 0 || frame->pts >= reference->count)
        return -1;
    int bytes;
    if (frame->format == AV_PIX_FMT_YUV420P || frame->format == AV_PIX_FMT_YUVJ420P)
        bytes = 1;
    else if (frame->format == AV_PIX_FMT_YUV420P10LE)
        bytes = 2;
    else
        return -1;
    struct reference_picture *picture = &reference->pictures[frame->pts];
    int width = frame->width, height = frame->height, chroma_width = (width + 1) / 2;
    size_t row_bytes = (size_t)width * (size_t)bytes, chroma_row_bytes = (size_t)chroma_width * 2 * (size_t)bytes;
    uint8_t *nv12 = malloc(row_bytes * (size_t)height + chroma_row_bytes * (size_t)((height + 1) / 2));
    if (!nv12)
        return -1;
    for (int y = 0; y < height; y++) {
        const uint8_t *source = frame->data[0] + (ptrdiff_t)y * frame->linesize[0];
        uint8_t *row = nv12 + (size_t)y * row_bytes;
        if (bytes == 1) {
            memcpy(row, source, row_bytes);
        } else {
            for (int x = 0; x < width; x++) {
                uint16_t value = p010_sample(source, x);
                memcpy(row + 2 * (size_t)x, &value, 2);
            }
        }
    }
    uint8_t *chroma = nv12 + row_bytes * (size_t)height;
    for (int y = 0; y < (height + 1) / 2; y++) {
        const uint8_t *cb = frame->data[1] + (ptrdiff_t)y * frame->linesize[1];
        const uint8_t *cr = frame->data[2] + (ptrdiff_t)y * frame->linesize[2];
        uint8_t *row = chroma + (size_t)y * chroma_row_bytes;
        for (int x = 0; x < chroma_width; x++) {
            if (bytes == 1) {
                row[2 * x] = cb[x];
                row[2 * x + 1] = cr[x];
            } else {
                uint16_t pair[2] = {p010_sample(cb, x), p010_sample(cr, x)};
                memcpy(row + 4 * (size_t)x, pair, 4);
            }
        }
    }
    free(picture->nv12);
    picture->nv12 = nv12;
    picture->width = width;
    picture->height = height;
    picture->sample_bytes = bytes;
    return 0;
}

static int receive_frames(struct reference *reference, AVCodecContext *decoder, AVFrame *frame)
{
    for (;;) {
        int result = avcodec_receive_frame(decoder, frame);
        if (result == AVERROR(EAGAIN) || result == AVERROR_EOF)
            return 0;
        if (result < 0)
            return -1;
        int stored = store_frame(reference, frame);
        av_frame_unref(frame);
        if (stored < 0)
            return -1;
    }
}

/* Splits the reference stream into access units (a new one at each slice that
 * starts a picture; parameter sets and SEI go with the next picture), then
 * decodes each with pts = its index in decode order. */
static int load_reference(struct reference *reference, int hevc)
{
    FILE *file = fopen(reference->path, "rb");
    if (!file)
        return -1;
    uint8_t *data = NULL;
    size_t size = 0, capacity = 0;
    for (;;) {
        if (size == capacity) {
            capacity = capacity ? capacity * 2 : 1 << 16;
            uint8_t *grown = realloc(data, capacity);
            if (!grown)
                break;
            data = grown;
        }
        size_t n = fread(data + size, 1, capacity - size, file);
        if (n == 0)
            break;
        size += n;
    }
    fclose(file);
    if (!data || size == 0) {
        free(data);
        return -1;
    }

    /* pass 1: count pictures; pass 2: record each picture's key and byte range */
    size_t *starts = NULL, *ends = NULL;
    int count = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t position = 0, pending_start = SIZE_MAX;
        int index = -1;
        struct nal_span nal;
        while (next_nal(data, size, &position, &nal)) {
            size_t nal_offset = (size_t)(nal.start - data) - 3; /* from its start code */
            if (!nal_is_vcl(hevc, &nal)) {
                if (pending_start == SIZE_MAX)
                    pending_start = nal_offset;
                continue;
            }
            if (nal_starts_picture(hevc, &nal)) {
                index++;
                if (pass == 1) {
                    starts[index] = pending_start != SIZE_MAX ? pending_start : nal_offset;
                    if (index > 0)
                        ends[index - 1] = starts[index];
                    struct reference_picture *picture = &reference->pictures[index];
                    picture->key_length = key_length_of(nal.size);
                    memcpy(picture->key, nal.start, picture->key_length);
                }
            }
            pending_start = SIZE_MAX;
        }
        if (pass == 0) {
            count = index + 1;
            if (count == 0)
                break;
            reference->pictures = calloc((size_t)count, sizeof *reference->pictures);
            starts = calloc((size_t)count, sizeof *starts);
            ends = calloc((size_t)count, sizeof *ends);
            if (!reference->pictures || !starts || !ends)
                count = 0;
            if (count == 0)
                break;
        } else {
            ends[count - 1] = size;
        }
    }
    reference->count = count;

    int result = count > 0 ? 0 : -1;
    const AVCodec *codec = avcodec_find_decoder(hevc ? AV_CODEC_ID_HEVC : AV_CODEC_ID_H264);
    AVCodecContext *decoder = codec ? avcodec_alloc_context3(codec) : NULL;
    AVPacket *packet = av_packet_alloc();
    AVFrame *frame = av_frame_alloc();
    if (!decoder || !packet || !frame)
        result = -1;
    if (result == 0) {
        decoder->thread_count = 1;
        /* A decoder writes the whole decoded picture into the surface, as
         * hardware does; the SPS's crop is the client's to apply. */
        decoder->apply_cropping = 0;
        if (avcodec_open2(decoder, codec, NULL) < 0)
            result = -1;
    }
    for (int i = 0; result == 0 && i < count; i++) {
        size_t length = ends[i] - starts[i];
        if (av_new_packet(packet, (int)length) < 0) {
            result = -1;
            break;
        }
        memcpy(packet->data, data + starts[i], length);
        packet->pts = i;
        int sent = avcodec_send_packet(decoder, packet);
        av_packet_unref(packet);
        if (sent < 0 || receive_frames(reference, decoder, frame) < 0)
            result = -1;
    }
    if (result == 0 && (avcodec_send_packet(decoder, NULL) < 0 || receive_frames(reference, decoder, frame) < 0))
        result = -1;
    av_frame_free(&frame);
    av_packet_free(&packet);
    avcodec_free_context(&decoder);
    free(starts);
    free(ends);
    free(data);
    return result;
}

static void reference_free(struct reference *reference)
{
    for (int i = 0; i < reference->count; i++)
        free(reference->pictures[i].nv12);
    free(reference->pictures);
    reference->pictures = NULL;
    reference->count = 0;
}

/* The reference picture whose first slice starts with `key`, searched in
 * decode order from after the last one found (so repeated content resolves to
 * the next picture), then from the start (a decoder that restarted). */
static struct reference_picture *find_reference_picture(struct reference *reference, const uint8_t *key,
                                                        size_t key_length)
{
    for (int step = 0; step < reference->count; step++) {
        int i = (reference->next + step) % reference->count;
        struct reference_picture *picture = &reference->pictures[i];
        if (picture->key_length == key_length && memcmp(picture->key, key, key_length) == 0) {
            reference->next = (i + 1) % reference->count;
            return picture;
        }
    }
    return NULL;
}

/* Decodes the current picture into its render target: the reference picture
 * with the same first slice, written as NV12 or P010 (the surface's layout,
 * which must be the picture's depth). Called with the lock held. */
static VAStatus decode_picture(VADriverContextP ctx, struct driver *drv, struct context *context)
{
    struct reference *reference = &drv->reference;
    int hevc = is_hevc(context->cfg.profile);
    if (reference->loaded == 0)
        reference->loaded = load_reference(reference, hevc) == 0 ? 1 : -1;
    if (reference->loaded < 0) {
        report_error(ctx, "codecs_test: the reference stream %s could not be decoded", reference->path);
        return VA_STATUS_ERROR_DECODING_ERROR;
    }
    if (!context->have_slice_key) {
        report_error(ctx, "codecs_test: a picture without slice data");
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    }
    struct reference_picture *picture =
        find_reference_picture(reference, context->slice_key, context->slice_key_length);
    if (!picture || !picture->nv12) {
        report_error(ctx, "codecs_test: slice data not found in the reference stream %s", reference->path);
        return VA_STATUS_ERROR_DECODING_ERROR;
    }
    struct surface *surface = table_get(drv, context->render_target, KIND_SURFACE);
    if (!surface)
        return VA_STATUS_ERROR_INVALID_SURFACE;
    if (picture->width > surface->width || picture->height > surface->height)
        return VA_STATUS_ERROR_RESOLUTION_NOT_SUPPORTED;
    if (surface->packed || picture->sample_bytes != surface->sample_bytes) {
        report_error(ctx, "codecs_test: a %d-bit picture decoded into a %s surface", picture->sample_bytes == 2 ? 10 : 8,
                     surface->fourcc == VA_FOURCC_P010 ? "P010" : "NV12");
        return VA_STATUS_ERROR_INVALID_SURFACE;
    }
    size_t row_bytes = (size_t)picture->width * (size_t)picture->sample_bytes;
    size_t chroma_bytes = (size_t)((picture->width + 1) / 2 * 2) * (size_t)picture->sample_bytes;
    for (int y = 0; y < picture->height; y++)
        memcpy(surface->data + (size_t)y * (size_t)surface->pitch, picture->nv12 + (size_t)y * row_bytes, row_bytes);
    uint8_t *surface_chroma = surface->data + (size_t)surface->pitch * (size_t)surface->rows;
    const uint8_t *chroma = picture->nv12 + row_bytes * (size_t)picture->height;
    for (int y = 0; y < (picture->height + 1) / 2; y++)
        memcpy(surface_chroma + (size_t)y * (size_t)surface->pitch, chroma + (size_t)y * chroma_bytes, chroma_bytes);
    return VA_STATUS_SUCCESS;
}

/* ---- contexts and pictures ----------------------------------------------- */

static VAStatus drv_CreateContext(VADriverContextP ctx, VAConfigID config_id, int width, int height, int flag,
                                  VASurfaceID *targets, int target_count, VAContextID *id)
{
    struct driver *drv = DRIVER(ctx);
    (void)flag;
    if (!id || width <= 0 || height <= 0 || target_count < 0 || (target_count > 0 && !targets))
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    if (width > MAX_DIMENSION || height > MAX_DIMENSION)
        return VA_STATUS_ERROR_RESOLUTION_NOT_SUPPORTED;
    pthread_mutex_lock(&drv->lock);
    VAStatus status = VA_STATUS_SUCCESS;
    struct config *config = table_get(drv, config_id, KIND_CONFIG);
    if (!config)
        status = VA_STATUS_ERROR_INVALID_CONFIG;
    for (int i = 0; status == VA_STATUS_SUCCESS && i < target_count; i++)
        if (!table_get(drv, targets[i], KIND_SURFACE))
            status = VA_STATUS_ERROR_INVALID_SURFACE;
    if (status == VA_STATUS_SUCCESS && scheduled_failure(drv, STAGE_CONTEXT, 0)) {
        report_error(ctx, "codecs_test: injected failure in vaCreateContext #%ld", drv->schedule.calls[STAGE_CONTEXT]);
        status = VA_STATUS_ERROR_ALLOCATION_FAILED;
    }
    struct context *context = NULL;
    if (status == VA_STATUS_SUCCESS && !(context = calloc(1, sizeof *context)))
        status = VA_STATUS_ERROR_ALLOCATION_FAILED;
    if (status == VA_STATUS_SUCCESS) {
        context->base.kind = KIND_CONTEXT;
        context->config = config_id;
        context->cfg = *config;
        context->width = width;
        context->height = height;
        context->render_target = VA_INVALID_SURFACE;
        *id = table_insert(drv, &context->base);
        if (*id == VA_INVALID_ID) {
            free(context);
            status = VA_STATUS_ERROR_ALLOCATION_FAILED;
        }
    }
    pthread_mutex_unlock(&drv->lock);
    return status;
}

static VAStatus drv_DestroyContext(VADriverContextP ctx, VAContextID id)
{
    struct driver *drv = DRIVER(ctx);
    VAStatus status = VA_STATUS_SUCCESS;
    pthread_mutex_lock(&drv->lock);
    if (table_get(drv, id, KIND_CONTEXT))
        table_remove(drv, id);
    else
        status = VA_STATUS_ERROR_INVALID_CONTEXT;
    pthread_mutex_unlock(&drv->lock);
    return status;
}

static VAStatus drv_BeginPicture(VADriverContextP ctx, VAContextID id, VASurfaceID target)
{
    struct driver *drv = DRIVER(ctx);
    VAStatus status = VA_STATUS_SUCCESS;
    pthread_mutex_lock(&drv->lock);
    struct context *context = table_get(drv, id, KIND_CONTEXT);
    if (!context)
        status = VA_STATUS_ERROR_INVALID_CONTEXT;
    else if (!table_get(drv, target, KIND_SURFACE))
        status = VA_STATUS_ERROR_INVALID_SURFACE;
    else {
        context->render_target = target;
        context->in_picture = 1;
        context->have_picture = context->have_slice = context->have_slice_key = 0;
        /* sequence and rate-control parameters persist until replaced */
    }
    pthread_mutex_unlock(&drv->lock);
    return status;
}

static void take_misc(struct context *context, const struct buffer *buffer)
{
    if (buffer->size < sizeof(VAEncMiscParameterBuffer))
        return;
    const VAEncMiscParameterBuffer *misc = (const VAEncMiscParameterBuffer *)buffer->data;
    size_t payload = buffer->size - sizeof(VAEncMiscParameterBuffer);
    switch (misc->type) {
    case VAEncMiscParameterTypeRateControl:
        if (payload >= sizeof(VAEncMiscParameterRateControl)) {
            const VAEncMiscParameterRateControl *rc = (const void *)misc->data;
            context->bits_per_second = rc->bits_per_second;
            context->target_percentage = rc->target_percentage;
        }
        break;
    case VAEncMiscParameterTypeHRD:
        if (payload >= sizeof(VAEncMiscParameterHRD))
            context->hrd_buffer_size = ((const VAEncMiscParameterHRD *)(const void *)misc->data)->buffer_size;
        break;
    case VAEncMiscParameterTypeFrameRate:
        if (payload >= sizeof(VAEncMiscParameterFrameRate)) {
            uint32_t rate = ((const VAEncMiscParameterFrameRate *)(const void *)misc->data)->framerate;
            uint32_t num = rate & 0xffff, den = (rate >> 16) & 0xffff;
            context->fps_num = num;
            context->fps_den = den ? den : 1;
        }
        break;
    default:
        break;
    }
}

static VAStatus drv_RenderPicture(VADriverContextP ctx, VAContextID id, VABufferID *buffers, int count)
{
    struct driver *drv = DRIVER(ctx);
    if (count < 0 || (count > 0 && !buffers))
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    VAStatus status = VA_STATUS_SUCCESS;
    pthread_mutex_lock(&drv->lock);
    struct context *context = table_get(drv, id, KIND_CONTEXT);
    if (!context)
        status = VA_STATUS_ERROR_INVALID_CONTEXT;
    else if (!context->in_picture)
        status = VA_STATUS_ERROR_OPERATION_FAILED;
    for (int i = 0; status == VA_STATUS_SUCCESS && i < count; i++) {
        struct buffer *buffer = table_get(drv, buffers[i], KIND_BUFFER);
        if (!buffer) {
            status = VA_STATUS_ERROR_INVALID_BUFFER;
            break;
        }
        if (!is_encode(context->cfg.entrypoint)) {
            /* decode: parameters are accepted and ignored; the first slice's
             * first bytes find the picture in the reference stream */
            if (buffer->type == VASliceDataBufferType && !context->have_slice_key) {
                context->slice_key_length = key_length_of(buffer->size);
                memcpy(context->slice_key, buffer->data, context->slice_key_length);
                context->have_slice_key = 1;
            }
            continue;
        }
        int hevc = is_hevc(context->cfg.profile);
        void *sequence = hevc ? (void *)&context->hevc_sequence : (void *)&context->sequence;
        void *picture = hevc ? (void *)&context->hevc_picture : (void *)&context->picture;
        void *slice = hevc ? (void *)&context->hevc_slice : (void *)&context->slice;
        size_t sequence_size = hevc ? sizeof context->hevc_sequence : sizeof context->sequence;
        size_t picture_size = hevc ? sizeof context->hevc_picture : sizeof context->picture;
        size_t slice_size = hevc ? sizeof context->hevc_slice : sizeof context->slice;
        switch (buffer->type) {
        case VAEncSequenceParameterBufferType:
            if (buffer->size < sequence_size)
                status = VA_STATUS_ERROR_INVALID_PARAMETER;
            else {
                memcpy(sequence, buffer->data, sequence_size);
                context->have_sequence = 1;
            }
            break;
        case VAEncPictureParameterBufferType:
            if (buffer->size < picture_size)
                status = VA_STATUS_ERROR_INVALID_PARAMETER;
            else {
                memcpy(picture, buffer->data, picture_size);
                context->have_picture = 1;
            }
            break;
        case VAEncSliceParameterBufferType:
            if (buffer->size < slice_size)
                status = VA_STATUS_ERROR_INVALID_PARAMETER;
            else if (!context->have_slice) { /* the first slice carries type and QP delta */
                memcpy(slice, buffer->data, slice_size);
                context->have_slice = 1;
            }
            break;
        case VAEncMiscParameterBufferType:
            take_misc(context, buffer);
            break;
        case VAEncPackedHeaderParameterBufferType:
        case VAEncPackedHeaderDataBufferType:
            status = VA_STATUS_ERROR_UNSUPPORTED_BUFFERTYPE; /* reported as unsupported */
            break;
        default:
            break;
        }
    }
    pthread_mutex_unlock(&drv->lock);
    return status;
}

static const char *x264_profile_name(VAProfile profile)
{
    switch (profile) {
    case VAProfileH264ConstrainedBaseline:
        return "baseline";
    case VAProfileH264Main:
        return "main";
    default:
        return "high";
    }
}

/* Sets x264's rate control from the config's mode and the latest parameters. */
static void apply_rate_control(const struct context *context, x264_param_t *param)
{
    uint32_t rate = context->bits_per_second ? context->bits_per_second : context->sequence.bits_per_second;
    if (context->cfg.rate_control == VA_RC_CQP || rate == 0) {
        param->rc.i_rc_method = X264_RC_CQP;
        param->rc.i_qp_constant = context->picture.pic_init_qp;
        return;
    }
    uint32_t target = rate;
    if (context->cfg.rate_control == VA_RC_VBR && context->target_percentage > 0 &&
        context->target_percentage <= 100)
        target = (uint32_t)((uint64_t)rate * context->target_percentage / 100);
    param->rc.i_rc_method = X264_RC_ABR;
    param->rc.i_bitrate = (int)(target / 1000 ? target / 1000 : 1);
    param->rc.i_vbv_max_bitrate = (int)(rate / 1000 ? rate / 1000 : 1);
    uint32_t buffer = context->hrd_buffer_size ? context->hrd_buffer_size : rate;
    param->rc.i_vbv_buffer_size = (int)(buffer / 1000 ? buffer / 1000 : 1);
}

static int open_encoder(struct context *context)
{
    const VAEncSequenceParameterBufferH264 *seq = &context->sequence;
    x264_param_t param;
    if (x264_param_default_preset(&param, "veryfast", "zerolatency") < 0)
        return -1;
    int width = seq->picture_width_in_mbs * 16, height = seq->picture_height_in_mbs * 16;
    if (seq->frame_cropping_flag) { /* H.264 7.4.2.1.1: CropUnitX = CropUnitY = 2 for 4:2:0 frames */
        width -= 2 * (int)(seq->frame_crop_left_offset + seq->frame_crop_right_offset);
        height -= 2 * (int)(seq->frame_crop_top_offset + seq->frame_crop_bottom_offset);
    }
    if (width <= 0 || height <= 0 || width > context->width || height > context->height)
        return -1;
    param.i_width = width;
    param.i_height = height;
    param.i_csp = X264_CSP_NV12;
    param.i_threads = 1;          /* one picture in, one picture out */
    param.b_sliced_threads = 0;
    param.i_bframe = 0;           /* L1 = 0: no reordering */
    param.i_frame_reference = 1;  /* L0 = 1 */
    param.i_keyint_max = X264_KEYINT_MAX_INFINITE; /* IDRs only where the picture says */
    param.i_scenecut_threshold = 0;
    param.b_annexb = 1;
    param.b_repeat_headers = 1;   /* SPS/PPS before every IDR: no packed headers */
    param.b_vfr_input = 0;
    param.i_log_level = X264_LOG_ERROR;
    uint32_t fps_num = context->fps_num, fps_den = context->fps_den;
    if (!fps_num && seq->vui_parameters_present_flag && seq->vui_fields.bits.timing_info_present_flag &&
        seq->num_units_in_tick) {
        fps_num = seq->time_scale; /* H.264 E.2.1: frame rate = time_scale / (2 * num_units_in_tick) */
        fps_den = 2 * seq->num_units_in_tick;
    }
    param.i_fps_num = fps_num ? fps_num : 30;
    param.i_fps_den = fps_num ? fps_den : 1;
    apply_rate_control(context, &param);
    if (x264_param_apply_profile(&param, x264_profile_name(context->cfg.profile)) < 0)
        return -1;
    context->encoder = x264_encoder_open(&param);
    context->encoder_bits_per_second = context->bits_per_second;
    return context->encoder ? 0 : -1;
}

/* Encodes the current picture into its coded buffer. Called with the lock held. */
static VAStatus encode_picture(struct driver *drv, struct context *context)
{
    if (!context->have_sequence || !context->have_picture || !context->have_slice)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    struct surface *surface = table_get(drv, context->render_target, KIND_SURFACE);
    struct buffer *coded = table_get(drv, context->picture.coded_buf, KIND_BUFFER);
    if (!surface)
        return VA_STATUS_ERROR_INVALID_SURFACE;
    if (!coded || coded->type != VAEncCodedBufferType)
        return VA_STATUS_ERROR_INVALID_BUFFER;
    if (!context->encoder && open_encoder(context) != 0)
        return VA_STATUS_ERROR_ENCODING_ERROR;
    if (context->encoder_bits_per_second != context->bits_per_second) { /* bit rate changed mid-stream */
        x264_param_t param;
        x264_encoder_parameters(context->encoder, &param);
        apply_rate_control(context, &param);
        x264_encoder_reconfig(context->encoder, &param);
        context->encoder_bits_per_second = context->bits_per_second;
    }

    x264_picture_t input, output;
    x264_picture_init(&input);
    input.img.i_csp = X264_CSP_NV12;
    input.img.i_plane = 2;
    input.img.plane[0] = surface->data;
    input.img.i_stride[0] = surface->pitch;
    input.img.plane[1] = surface->data + (size_t)surface->pitch * (size_t)surface->rows;
    input.img.i_stride[1] = surface->pitch;
    input.i_pts = context->frames_encoded;
    int slice_type = context->slice.slice_type % 5; /* H.264 Table 7-6: 0 P, 1 B, 2 I */
    if (context->picture.pic_fields.bits.idr_pic_flag)
        input.i_type = X264_TYPE_IDR;
    else if (slice_type == 2)
        input.i_type = X264_TYPE_I;
    else
        input.i_type = X264_TYPE_P;
    if (context->cfg.rate_control == VA_RC_CQP) {
        int qp = context->picture.pic_init_qp + context->slice.slice_qp_delta;
        input.i_qpplus1 = (qp < 0 ? 0 : qp > 51 ? 51 : qp) + 1;
    }
    x264_nal_t *nals = NULL;
    int nal_count = 0;
    int size = x264_encoder_encode(context->encoder, &nals, &nal_count, &input, &output);
    if (size <= 0)
        return VA_STATUS_ERROR_ENCODING_ERROR; /* zero-latency settings never delay a picture */
    context->frames_encoded++;
    size_t capacity = coded->size - sizeof(VACodedBufferSegment);
    VACodedBufferSegment *segment = (VACodedBufferSegment *)coded->data;
    memset(segment, 0, sizeof *segment);
    segment->buf = coded->data + sizeof(VACodedBufferSegment);
    if ((size_t)size > capacity) {
        segment->status = VA_CODED_BUF_STATUS_SLICE_OVERFLOW_MASK;
        return VA_STATUS_ERROR_NOT_ENOUGH_BUFFER;
    }
    /* x264 lays the NAL payloads out contiguously from nals[0].p_payload */
    memcpy(segment->buf, nals[0].p_payload, (size_t)size);
    segment->size = (uint32_t)size;
    return VA_STATUS_SUCCESS;
}

/* ---- HEVC encode through x265 -------------------------------------------- */

static int open_hevc_encoder(struct context *context)
{
    const VAEncSequenceParameterBufferHEVC *seq = &context->hevc_sequence;
    int width = seq->pic_width_in_luma_samples, height = seq->pic_height_in_luma_samples;
    if (width <= 0 || height <= 0 || width > context->width || height > context->height)
        return -1;
    /* the sequence's depth and chroma format must be the config's: Main 8-bit
     * 4:2:0, Main10 10-bit 4:2:0, Main422_10 4:2:2 at the render target's depth */
    uint32_t rt_format = context->cfg.rt_format;
    int depth = rt_format == VA_RT_FORMAT_YUV420_10 || rt_format == VA_RT_FORMAT_YUV422_10 ? 10 : 8;
    int chroma = rt_format == VA_RT_FORMAT_YUV422 || rt_format == VA_RT_FORMAT_YUV422_10 ? 2 : 1;
    if (seq->seq_fields.bits.bit_depth_luma_minus8 + 8u != (unsigned int)depth ||
        seq->seq_fields.bits.bit_depth_chroma_minus8 + 8u != (unsigned int)depth ||
        seq->seq_fields.bits.chroma_format_idc != (unsigned int)chroma)
        return -1;
    context->hevc_depth = depth;
    context->hevc_chroma = chroma;
    const x265_api *api = x265_api_get(depth);
    if (!api)
        return -1;
    context->hevc_api = api;
    x265_param *param = api->param_alloc();
    if (!param)
        return -1;
    context->hevc_param = param;
    if (api->param_default_preset(param, "ultrafast", "zerolatency") < 0)
        return -1;
    param->sourceWidth = width;
    param->sourceHeight = height;
    param->internalCsp = chroma == 2 ? X265_CSP_I422 : X265_CSP_I420;
    param->frameNumThreads = 1; /* one picture in, one picture out */
    param->bframes = 0;         /* L1 = 0: no reordering */
    param->maxNumReferences = 1;
    param->keyframeMax = -1;    /* IDRs only where the picture says */
    param->scenecutThreshold = 0;
    param->bRepeatHeaders = 1;  /* VPS/SPS/PPS before every IDR: no packed headers */
    param->bAnnexB = 1;
    param->logLevel = X265_LOG_ERROR;
    api->param_parse(param, "pools", "1");
    uint32_t fps_num = context->fps_num, fps_den = context->fps_den;
    if (!fps_num && seq->vui_parameters_present_flag && seq->vui_fields.bits.vui_timing_info_present_flag &&
        seq->vui_num_units_in_tick) {
        fps_num = seq->vui_time_scale; /* HEVC E.3.1: frame rate = time_scale / num_units_in_tick */
        fps_den = seq->vui_num_units_in_tick;
    }
    param->fpsNum = fps_num ? fps_num : 30;
    param->fpsDenom = fps_num ? fps_den : 1;
    uint32_t rate = context->bits_per_second ? context->bits_per_second : seq->bits_per_second;
    if (context->cfg.rate_control == VA_RC_CQP || rate == 0) {
        param->rc.rateControlMode = X265_RC_CQP;
        param->rc.qp = context->hevc_picture.pic_init_qp;
    } else {
        uint32_t target = rate;
        if (context->cfg.rate_control == VA_RC_VBR && context->target_percentage > 0 &&
            context->target_percentage <= 100)
            target = (uint32_t)((uint64_t)rate * context->target_percentage / 100);
        param->rc.rateControlMode = X265_RC_ABR;
        param->rc.bitrate = (int)(target / 1000 ? target / 1000 : 1);
        param->rc.vbvMaxBitrate = (int)(rate / 1000 ? rate / 1000 : 1);
        uint32_t buffer = context->hrd_buffer_size ? context->hrd_buffer_size : rate;
        param->rc.vbvBufferSize = (int)(buffer / 1000 ? buffer / 1000 : 1);
    }
    /* 4:2:2: no profile applied; x265 signals the RExt profile its
     * chroma format and depth need */
    if (chroma == 1 && api->param_apply_profile(param, depth == 10 ? "main10" : "main") < 0)
        return -1;
    context->hevc_encoder = api->encoder_open(param);
    context->hevc_input = api->picture_alloc();
    size_t bytes = depth > 8 ? 2 : 1;
    size_t samples = (size_t)width * (size_t)height * (chroma == 2 ? 4 : 3) / 2 + 2 * (size_t)width;
    context->planar = malloc(samples * bytes);
    if (!context->hevc_encoder || !context->hevc_input || !context->planar)
        return -1;
    api->picture_init(param, context->hevc_input);
    return 0;
}

/* Writes `size` bytes of Annex-B output into a coded buffer. */
static VAStatus fill_coded_buffer(struct buffer *coded, const uint8_t *const *parts, const size_t *sizes, int count)
{
    size_t capacity = coded->size - sizeof(VACodedBufferSegment), total = 0;
    VACodedBufferSegment *segment = (VACodedBufferSegment *)coded->data;
    memset(segment, 0, sizeof *segment);
    segment->buf = coded->data + sizeof(VACodedBufferSegment);
    for (int i = 0; i < count; i++)
        total += sizes[i];
    if (total > capacity) {
        segment->status = VA_CODED_BUF_STATUS_SLICE_OVERFLOW_MASK;
        return VA_STATUS_ERROR_NOT_ENOUGH_BUFFER;
    }
    uint8_t *out = segment->buf;
    for (int i = 0; i < count; i++) {
        memcpy(out, parts[i], sizes[i]);
        out += sizes[i];
    }
    segment->size = (uint32_t)total;
    return VA_STATUS_SUCCESS;
}

/* Encodes the current HEVC picture into its coded buffer. Called with the lock held. */
static VAStatus encode_hevc_picture(struct driver *drv, struct context *context)
{
    if (!context->have_sequence || !context->have_picture || !context->have_slice)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    struct surface *surface = table_get(drv, context->render_target, KIND_SURFACE);
    struct buffer *coded = table_get(drv, context->hevc_picture.coded_buf, KIND_BUFFER);
    if (!surface)
        return VA_STATUS_ERROR_INVALID_SURFACE;
    if (!coded || coded->type != VAEncCodedBufferType)
        return VA_STATUS_ERROR_INVALID_BUFFER;
    if (!context->hevc_encoder && open_hevc_encoder(context) != 0)
        return VA_STATUS_ERROR_ENCODING_ERROR;
    int depth = context->hevc_depth;
    if (surface->fourcc != fourcc_of(context->cfg.rt_format))
        return VA_STATUS_ERROR_INVALID_SURFACE; /* not the layout of the config's render-target format */
    int width = context->hevc_param->sourceWidth, height = context->hevc_param->sourceHeight;
    int chroma_width = width / 2, chroma_height = context->hevc_chroma == 2 ? height : height / 2;
    uint8_t *luma = context->planar;
    const uint8_t *chroma = surface->data + (size_t)surface->pitch * (size_t)surface->rows;
    x265_picture *input = context->hevc_input;
    if (surface->packed) {
        /* YUY2 (bytes) or Y210 (16-bit words, 10 bits in the high bits):
         * Y0 U Y1 V for each pair of pixels, into planar 4:2:2 */
        size_t bytes = (size_t)surface->sample_bytes;
        size_t plane = (size_t)width * (size_t)height, chroma_plane = (size_t)chroma_width * (size_t)height;
        for (int y = 0; y < height; y++) {
            const uint8_t *row = surface->data + (size_t)y * (size_t)surface->pitch;
            for (int x = 0; x < chroma_width; x++) {
                uint16_t quad[4];
                for (int k = 0; k < 4; k++) {
                    if (bytes == 1) {
                        quad[k] = row[4 * (size_t)x + (size_t)k];
                    } else {
                        memcpy(&quad[k], row + 8 * (size_t)x + 2 * (size_t)k, 2);
                        quad[k] >>= 6;
                    }
                }
                size_t at = (size_t)y * (size_t)width + 2 * (size_t)x;
                size_t chroma_at = (size_t)y * (size_t)chroma_width + (size_t)x;
                size_t positions[4] = {at, plane + chroma_at, at + 1, plane + chroma_plane + chroma_at};
                for (int k = 0; k < 4; k++) {
                    if (bytes == 1)
                        luma[positions[k]] = (uint8_t)quad[k];
                    else
                        memcpy(luma + 2 * positions[k], &quad[k], 2);
                }
            }
        }
        input->planes[1] = luma + plane * bytes;
        input->planes[2] = luma + (plane + chroma_plane) * bytes;
        input->stride[0] = width * (int)bytes;
        input->stride[1] = input->stride[2] = chroma_width * (int)bytes;
    } else if (depth == 8) {
        uint8_t *cb = luma + (size_t)width * (size_t)height;
        uint8_t *cr = cb + (size_t)chroma_width * (size_t)chroma_height;
        for (int y = 0; y < height; y++)
            memcpy(luma + (size_t)y * (size_t)width, surface->data + (size_t)y * (size_t)surface->pitch, (size_t)width);
        for (int y = 0; y < chroma_height; y++) {
            const uint8_t *row = chroma + (size_t)y * (size_t)surface->pitch;
            for (int x = 0; x < chroma_width; x++) {
                cb[(size_t)y * (size_t)chroma_width + (size_t)x] = row[2 * x];
                cr[(size_t)y * (size_t)chroma_width + (size_t)x] = row[2 * x + 1];
            }
        }
        input->planes[1] = cb;
        input->planes[2] = cr;
        input->stride[0] = width;
        input->stride[1] = input->stride[2] = chroma_width;
    } else {
        /* P010 keeps 10 bits in the high bits of each 16-bit sample; x265
         * takes them in the low bits, planar */
        uint16_t *luma16 = (uint16_t *)(void *)luma;
        uint16_t *cb = luma16 + (size_t)width * (size_t)height;
        uint16_t *cr = cb + (size_t)chroma_width * (size_t)chroma_height;
        for (int y = 0; y < height; y++) {
            const uint8_t *row = surface->data + (size_t)y * (size_t)surface->pitch;
            for (int x = 0; x < width; x++) {
                uint16_t value;
                memcpy(&value, row + 2 * (size_t)x, 2);
                luma16[(size_t)y * (size_t)width + (size_t)x] = value >> 6;
            }
        }
        for (int y = 0; y < chroma_height; y++) {
            const uint8_t *row = chroma + (size_t)y * (size_t)surface->pitch;
            for (int x = 0; x < chroma_width; x++) {
                uint16_t pair[2];
                memcpy(pair, row + 4 * (size_t)x, 4);
                cb[(size_t)y * (size_t)chroma_width + (size_t)x] = pair[0] >> 6;
                cr[(size_t)y * (size_t)chroma_width + (size_t)x] = pair[1] >> 6;
            }
        }
        input->planes[1] = cb;
        input->planes[2] = cr;
        input->stride[0] = width * 2;
        input->stride[1] = input->stride[2] = chroma_width * 2;
    }
    input->planes[0] = luma;
    input->colorSpace = context->hevc_chroma == 2 ? X265_CSP_I422 : X265_CSP_I420;
    input->bitDepth = depth;
    input->pts = context->frames_encoded;
    int slice_type = context->hevc_slice.slice_type; /* HEVC Table 7-7: 0 B, 1 P, 2 I */
    if (context->hevc_picture.pic_fields.bits.idr_pic_flag)
        input->sliceType = X265_TYPE_IDR;
    else if (slice_type == 2)
        input->sliceType = X265_TYPE_I;
    else
        input->sliceType = X265_TYPE_P;
    input->forceqp = 0;
    if (context->cfg.rate_control == VA_RC_CQP) {
        int qp = context->hevc_picture.pic_init_qp + context->hevc_slice.slice_qp_delta;
        input->forceqp = (qp < 0 ? 0 : qp > 51 ? 51 : qp) + 1;
    }
    x265_nal *nals = NULL;
    uint32_t nal_count = 0;
    int pictures = context->hevc_api->encoder_encode(context->hevc_encoder, &nals, &nal_count, input, NULL);
    if (pictures <= 0 || nal_count == 0)
        return VA_STATUS_ERROR_ENCODING_ERROR; /* zero-latency settings never delay a picture */
    context->frames_encoded++;
    const uint8_t *parts[64];
    size_t sizes[64];
    if (nal_count > 64)
        return VA_STATUS_ERROR_ENCODING_ERROR;
    for (uint32_t i = 0; i < nal_count; i++) {
        parts[i] = nals[i].payload;
        sizes[i] = nals[i].sizeBytes;
    }
    return fill_coded_buffer(coded, parts, sizes, (int)nal_count);
}

/* ---- H.264 with B-frames: I_PCM pictures ---------------------------------- */

/* An RBSP bit writer. */
struct bit_writer {
    uint8_t *data;
    size_t size, capacity;
    uint64_t bits;
    int count;
    int failed;
};

static void put_bits(struct bit_writer *w, uint32_t value, int count)
{
    for (int i = count - 1; i >= 0; i--) {
        w->bits = (w->bits << 1) | ((value >> i) & 1);
        if (++w->count == 8) {
            if (w->size == w->capacity) {
                w->failed = 1;
            } else {
                w->data[w->size++] = (uint8_t)w->bits;
            }
            w->bits = 0;
            w->count = 0;
        }
    }
}

static void put_ue(struct bit_writer *w, uint32_t value)
{
    uint32_t code = value + 1;
    int length = 0;
    while ((code >> length) > 1)
        length++;
    put_bits(w, 0, length);
    put_bits(w, code, length + 1);
}

static void put_se(struct bit_writer *w, int32_t value)
{
    put_ue(w, value > 0 ? (uint32_t)(2 * value - 1) : (uint32_t)(-2 * value));
}

static void put_trailing_bits(struct bit_writer *w)
{
    put_bits(w, 1, 1);
    while (w->count)
        put_bits(w, 0, 1);
}

/* Appends a NAL unit (start code, header, RBSP with emulation prevention). */
static int put_nal(uint8_t *out, size_t capacity, size_t *size, uint8_t header, const uint8_t *rbsp, size_t length)
{
    size_t n = *size;
    if (capacity - n < 5)
        return -1;
    out[n++] = 0, out[n++] = 0, out[n++] = 0, out[n++] = 1, out[n++] = header;
    int zeros = 0;
    for (size_t i = 0; i < length; i++) {
        if (capacity - n < 2)
            return -1;
        if (zeros >= 2 && rbsp[i] <= 3) {
            out[n++] = 3;
            zeros = 0;
        }
        out[n++] = rbsp[i];
        zeros = rbsp[i] == 0 ? zeros + 1 : 0;
    }
    *size = n;
    return 0;
}

/* Encodes the current picture losslessly: every macroblock I_PCM, in an I, P
 * or B slice as the picture parameters say, with the reference structure the
 * client chose (frame_num, POC, nal_ref_idc). SPS and PPS precede IDRs.
 * Called with the lock held. */
static VAStatus encode_pcm_picture(struct driver *drv, struct context *context)
{
    if (!context->have_sequence || !context->have_picture || !context->have_slice)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    const VAEncSequenceParameterBufferH264 *seq = &context->sequence;
    const VAEncPictureParameterBufferH264 *pic = &context->picture;
    const VAEncSliceParameterBufferH264 *slice = &context->slice;
    if (seq->seq_fields.bits.pic_order_cnt_type != 0 || !seq->seq_fields.bits.frame_mbs_only_flag)
        return VA_STATUS_ERROR_UNIMPLEMENTED;
    struct surface *surface = table_get(drv, context->render_target, KIND_SURFACE);
    struct buffer *coded = table_get(drv, pic->coded_buf, KIND_BUFFER);
    if (!surface)
        return VA_STATUS_ERROR_INVALID_SURFACE;
    if (!coded || coded->type != VAEncCodedBufferType)
        return VA_STATUS_ERROR_INVALID_BUFFER;
    int mb_width = seq->picture_width_in_mbs, mb_height = seq->picture_height_in_mbs;
    size_t rbsp_capacity = (size_t)mb_width * (size_t)mb_height * 400 + 4096;
    uint8_t *rbsp = malloc(rbsp_capacity);
    if (!rbsp)
        return VA_STATUS_ERROR_ALLOCATION_FAILED;
    VACodedBufferSegment *segment = (VACodedBufferSegment *)coded->data;
    memset(segment, 0, sizeof *segment);
    segment->buf = coded->data + sizeof(VACodedBufferSegment);
    uint8_t *out = segment->buf;
    size_t capacity = coded->size - sizeof(VACodedBufferSegment), size = 0;
    int idr = pic->pic_fields.bits.idr_pic_flag, slice_type = slice->slice_type % 5; /* 0 P, 1 B, 2 I */
    int log2_frame_num = seq->seq_fields.bits.log2_max_frame_num_minus4 + 4;
    int log2_poc_lsb = seq->seq_fields.bits.log2_max_pic_order_cnt_lsb_minus4 + 4;
    int failed = 0;
    struct bit_writer w;

    if (idr) {
        w = (struct bit_writer){.data = rbsp, .capacity = rbsp_capacity};
        put_bits(&w, 77, 8); /* profile_idc: Main (B slices, CAVLC) */
        put_bits(&w, 0, 8);  /* constraint flags, reserved */
        put_bits(&w, seq->level_idc, 8);
        put_ue(&w, seq->seq_parameter_set_id);
        put_ue(&w, (uint32_t)(log2_frame_num - 4));
        put_ue(&w, 0); /* pic_order_cnt_type */
        put_ue(&w, (uint32_t)(log2_poc_lsb - 4));
        put_ue(&w, seq->max_num_ref_frames);
        put_bits(&w, 0, 1); /* gaps_in_frame_num_value_allowed_flag */
        put_ue(&w, (uint32_t)(mb_width - 1));
        put_ue(&w, (uint32_t)(mb_height - 1));
        put_bits(&w, 1, 1); /* frame_mbs_only_flag */
        put_bits(&w, 1, 1); /* direct_8x8_inference_flag */
        put_bits(&w, seq->frame_cropping_flag, 1);
        if (seq->frame_cropping_flag) {
            put_ue(&w, seq->frame_crop_left_offset);
            put_ue(&w, seq->frame_crop_right_offset);
            put_ue(&w, seq->frame_crop_top_offset);
            put_ue(&w, seq->frame_crop_bottom_offset);
        }
        put_bits(&w, 1, 1); /* vui_parameters_present_flag */
        put_bits(&w, 0, 4); /* aspect ratio, overscan, video signal type, chroma location */
        int timing = seq->vui_parameters_present_flag && seq->vui_fields.bits.timing_info_present_flag &&
                     seq->num_units_in_tick && seq->time_scale;
        put_bits(&w, (uint32_t)timing, 1);
        if (timing) {
            put_bits(&w, seq->num_units_in_tick, 32);
            put_bits(&w, seq->time_scale, 32);
            put_bits(&w, 1, 1); /* fixed_frame_rate_flag */
        }
        put_bits(&w, 0, 3); /* NAL HRD, VCL HRD, pic_struct_present_flag */
        put_bits(&w, 1, 1); /* bitstream_restriction_flag */
        put_bits(&w, 1, 1); /* motion_vectors_over_pic_boundaries_flag */
        put_ue(&w, 0);      /* max_bytes_per_pic_denom */
        put_ue(&w, 0);      /* max_bits_per_mb_denom */
        put_ue(&w, 15);     /* log2_max_mv_length_horizontal */
        put_ue(&w, 15);     /* log2_max_mv_length_vertical */
        put_ue(&w, seq->ip_period > 1 ? 1 : 0); /* max_num_reorder_frames: non-reference B-frames */
        put_ue(&w, seq->max_num_ref_frames > 0 ? seq->max_num_ref_frames : 1); /* max_dec_frame_buffering */
        put_trailing_bits(&w);
        failed |= w.failed || put_nal(out, capacity, &size, 0x67, rbsp, w.size);

        w = (struct bit_writer){.data = rbsp, .capacity = rbsp_capacity};
        put_ue(&w, pic->pic_parameter_set_id);
        put_ue(&w, pic->seq_parameter_set_id);
        put_bits(&w, 0, 1); /* entropy_coding_mode_flag: CAVLC */
        put_bits(&w, 0, 1); /* bottom_field_pic_order_in_frame_present_flag */
        put_ue(&w, 0);      /* num_slice_groups_minus1 */
        put_ue(&w, 0);      /* num_ref_idx_l0_default_active_minus1 */
        put_ue(&w, 0);      /* num_ref_idx_l1_default_active_minus1 */
        put_bits(&w, 0, 3); /* weighted_pred_flag, weighted_bipred_idc */
        put_se(&w, 0);      /* pic_init_qp_minus26 */
        put_se(&w, 0);      /* pic_init_qs_minus26 */
        put_se(&w, 0);      /* chroma_qp_index_offset */
        put_bits(&w, 1, 1); /* deblocking_filter_control_present_flag */
        put_bits(&w, 0, 2); /* constrained_intra_pred_flag, redundant_pic_cnt_present_flag */
        put_trailing_bits(&w);
        failed |= w.failed || put_nal(out, capacity, &size, 0x68, rbsp, w.size);
    }

    int reference = pic->pic_fields.bits.reference_pic_flag != 0 || idr;
    w = (struct bit_writer){.data = rbsp, .capacity = rbsp_capacity};
    put_ue(&w, 0); /* first_mb_in_slice */
    put_ue(&w, (uint32_t)(slice_type + 5));
    put_ue(&w, pic->pic_parameter_set_id);
    put_bits(&w, pic->frame_num & ((1u << log2_frame_num) - 1), log2_frame_num);
    if (idr)
        put_ue(&w, slice->idr_pic_id);
    put_bits(&w, (uint32_t)pic->CurrPic.TopFieldOrderCnt & ((1u << log2_poc_lsb) - 1), log2_poc_lsb);
    if (slice_type == 1)
        put_bits(&w, 1, 1); /* direct_spatial_mv_pred_flag */
    if (slice_type != 2) {
        put_bits(&w, 1, 1); /* num_ref_idx_active_override_flag: one reference per list */
        put_ue(&w, 0);
        if (slice_type == 1)
            put_ue(&w, 0);
        put_bits(&w, 0, 1); /* ref_pic_list_modification_flag_l0 */
        if (slice_type == 1)
            put_bits(&w, 0, 1); /* ref_pic_list_modification_flag_l1 */
    }
    if (reference) {
        if (idr)
            put_bits(&w, 0, 2); /* no_output_of_prior_pics_flag, long_term_reference_flag */
        else
            put_bits(&w, 0, 1); /* adaptive_ref_pic_marking_mode_flag: sliding window */
    }
    put_se(&w, 0); /* slice_qp_delta */
    put_ue(&w, 1); /* disable_deblocking_filter_idc */
    const uint8_t *chroma = surface->data + (size_t)surface->pitch * (size_t)surface->rows;
    uint32_t pcm_type = slice_type == 2 ? 25 : slice_type == 0 ? 5 + 25 : 23 + 25;
    for (int my = 0; my < mb_height; my++) {
        for (int mx = 0; mx < mb_width; mx++) {
            if (slice_type != 2)
                put_ue(&w, 0); /* mb_skip_run */
            put_ue(&w, pcm_type);
            while (w.count)
                put_bits(&w, 0, 1); /* pcm_alignment_zero_bit */
            for (int y = 0; y < 16; y++) {
                int row = my * 16 + y < surface->height ? my * 16 + y : surface->height - 1;
                for (int x = 0; x < 16; x++) {
                    int column = mx * 16 + x < surface->width ? mx * 16 + x : surface->width - 1;
                    put_bits(&w, surface->data[(size_t)row * (size_t)surface->pitch + (size_t)column], 8);
                }
            }
            for (int plane = 0; plane < 2; plane++) {
                for (int y = 0; y < 8; y++) {
                    int row = my * 8 + y < surface->height / 2 ? my * 8 + y : surface->height / 2 - 1;
                    for (int x = 0; x < 8; x++) {
                        int column = mx * 8 + x < surface->width / 2 ? mx * 8 + x : surface->width / 2 - 1;
                        put_bits(&w, chroma[(size_t)row * (size_t)surface->pitch + 2 * (size_t)column + (size_t)plane], 8);
                    }
                }
            }
        }
    }
    put_trailing_bits(&w);
    uint8_t header = (uint8_t)((reference ? (idr ? 3 : 2) : 0) << 5 | (idr ? 5 : 1));
    failed |= w.failed || put_nal(out, capacity, &size, header, rbsp, w.size);
    free(rbsp);
    if (failed) {
        segment->status = VA_CODED_BUF_STATUS_SLICE_OVERFLOW_MASK;
        return VA_STATUS_ERROR_NOT_ENOUGH_BUFFER;
    }
    segment->size = (uint32_t)size;
    context->frames_encoded++;
    return VA_STATUS_SUCCESS;
}

static VAStatus drv_EndPicture(VADriverContextP ctx, VAContextID id)
{
    struct driver *drv = DRIVER(ctx);
    struct surface *surface = NULL;
    VAStatus status;
    pthread_mutex_lock(&drv->lock);
    struct context *context = table_get(drv, id, KIND_CONTEXT);
    if (!context)
        status = VA_STATUS_ERROR_INVALID_CONTEXT;
    else if (!context->in_picture)
        status = VA_STATUS_ERROR_OPERATION_FAILED;
    else if (drv->schedule.busy_nth > 0 && ++drv->schedule.end_picture_calls == drv->schedule.busy_nth) {
        report_error(ctx, "codecs_test: injected busy surface in vaEndPicture #%ld", drv->schedule.end_picture_calls);
        status = VA_STATUS_ERROR_SURFACE_BUSY;
    } else if (!is_encode(context->cfg.entrypoint)) {
        int fail = scheduled_failure(drv, STAGE_DECODE, drv->pictures_decoded);
        long call = drv->schedule.calls[STAGE_DECODE];
        if (!drv->reference.path[0]) {
            /* no reference stream: nothing is decoded; "decode:N" accepts the first N-1 pictures */
            long from = drv->schedule.nth[STAGE_DECODE];
            status = from > 0 && call < from && !fail ? VA_STATUS_SUCCESS : VA_STATUS_ERROR_UNIMPLEMENTED;
        } else if (fail) {
            report_error(ctx, "codecs_test: injected failure in decode vaEndPicture #%ld after %ld pictures", call,
                         drv->pictures_decoded);
            status = VA_STATUS_ERROR_DECODING_ERROR;
        } else {
            status = decode_picture(ctx, drv, context);
            if (status == VA_STATUS_SUCCESS)
                drv->pictures_decoded++;
        }
    } else {
        if (scheduled_failure(drv, STAGE_ENCODE, drv->pictures_encoded)) {
            report_error(ctx, "codecs_test: injected failure in encode vaEndPicture #%ld",
                         drv->schedule.calls[STAGE_ENCODE]);
            status = VA_STATUS_ERROR_ENCODING_ERROR;
        } else if (is_hevc(context->cfg.profile)) {
            status = encode_hevc_picture(drv, context);
        } else if (!(surface = table_get(drv, context->render_target, KIND_SURFACE)) ||
                   surface->fourcc != VA_FOURCC_NV12) {
            status = VA_STATUS_ERROR_INVALID_SURFACE; /* H.264 codes NV12 surfaces only */
        } else if (drv->reorder) {
            status = encode_pcm_picture(drv, context);
        } else {
            status = encode_picture(drv, context);
        }
        if (status == VA_STATUS_SUCCESS)
            drv->pictures_encoded++;
    }
    if (context)
        context->in_picture = 0;
    pthread_mutex_unlock(&drv->lock);
    return status;
}

/* ---- entries this driver does not offer ---------------------------------- */

static VAStatus drv_PutSurface(VADriverContextP ctx, VASurfaceID surface, void *draw, short srcx, short srcy,
                               unsigned short srcw, unsigned short srch, short destx, short desty,
                               unsigned short destw, unsigned short desth, VARectangle *cliprects,
                               unsigned int cliprect_count, unsigned int flags)
{
    (void)ctx, (void)surface, (void)draw, (void)srcx, (void)srcy, (void)srcw, (void)srch, (void)destx;
    (void)desty, (void)destw, (void)desth, (void)cliprects, (void)cliprect_count, (void)flags;
    return VA_STATUS_ERROR_UNIMPLEMENTED;
}

static VAStatus drv_SetImagePalette(VADriverContextP ctx, VAImageID image, unsigned char *palette)
{
    (void)ctx, (void)image, (void)palette;
    return VA_STATUS_ERROR_UNIMPLEMENTED;
}

static VAStatus drv_QuerySubpictureFormats(VADriverContextP ctx, VAImageFormat *list, unsigned int *flags,
                                           unsigned int *count)
{
    (void)ctx, (void)list, (void)flags;
    if (!count)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    *count = 0;
    return VA_STATUS_SUCCESS;
}

static VAStatus drv_CreateSubpicture(VADriverContextP ctx, VAImageID image, VASubpictureID *subpicture)
{
    (void)ctx, (void)image, (void)subpicture;
    return VA_STATUS_ERROR_UNIMPLEMENTED;
}

static VAStatus drv_DestroySubpicture(VADriverContextP ctx, VASubpictureID subpicture)
{
    (void)ctx, (void)subpicture;
    return VA_STATUS_ERROR_INVALID_SUBPICTURE;
}

static VAStatus drv_SetSubpictureImage(VADriverContextP ctx, VASubpictureID subpicture, VAImageID image)
{
    (void)ctx, (void)subpicture, (void)image;
    return VA_STATUS_ERROR_INVALID_SUBPICTURE;
}

static VAStatus drv_SetSubpictureChromakey(VADriverContextP ctx, VASubpictureID subpicture, unsigned int min,
                                           unsigned int max, unsigned int mask)
{
    (void)ctx, (void)subpicture, (void)min, (void)max, (void)mask;
    return VA_STATUS_ERROR_INVALID_SUBPICTURE;
}

static VAStatus drv_SetSubpictureGlobalAlpha(VADriverContextP ctx, VASubpictureID subpicture, float alpha)
{
    (void)ctx, (void)subpicture, (void)alpha;
    return VA_STATUS_ERROR_INVALID_SUBPICTURE;
}

static VAStatus drv_AssociateSubpicture(VADriverContextP ctx, VASubpictureID subpicture, VASurfaceID *targets,
                                        int count, short src_x, short src_y, unsigned short src_width,
                                        unsigned short src_height, short dest_x, short dest_y,
                                        unsigned short dest_width, unsigned short dest_height, unsigned int flags)
{
    (void)ctx, (void)subpicture, (void)targets, (void)count, (void)src_x, (void)src_y, (void)src_width;
    (void)src_height, (void)dest_x, (void)dest_y, (void)dest_width, (void)dest_height, (void)flags;
    return VA_STATUS_ERROR_INVALID_SUBPICTURE;
}

static VAStatus drv_DeassociateSubpicture(VADriverContextP ctx, VASubpictureID subpicture, VASurfaceID *targets,
                                          int count)
{
    (void)ctx, (void)subpicture, (void)targets, (void)count;
    return VA_STATUS_ERROR_INVALID_SUBPICTURE;
}

static VAStatus drv_QueryDisplayAttributes(VADriverContextP ctx, VADisplayAttribute *list, int *count)
{
    (void)ctx, (void)list;
    if (!count)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    *count = 0;
    return VA_STATUS_SUCCESS;
}

static VAStatus drv_GetDisplayAttributes(VADriverContextP ctx, VADisplayAttribute *list, int count)
{
    (void)ctx, (void)list, (void)count;
    return VA_STATUS_ERROR_ATTR_NOT_SUPPORTED;
}

static VAStatus drv_SetDisplayAttributes(VADriverContextP ctx, VADisplayAttribute *list, int count)
{
    (void)ctx, (void)list, (void)count;
    return VA_STATUS_ERROR_ATTR_NOT_SUPPORTED;
}

/* ---- lifetime ------------------------------------------------------------ */

static VAStatus drv_Terminate(VADriverContextP ctx)
{
    struct driver *drv = DRIVER(ctx);
    if (!drv)
        return VA_STATUS_ERROR_INVALID_DISPLAY;
    for (uint32_t id = 0; id < drv->count; id++)
        object_free(drv->objects[id]);
    free(drv->objects);
    reference_free(&drv->reference);
    pthread_mutex_destroy(&drv->lock);
    free(drv);
    ctx->pDriverData = NULL;
    return VA_STATUS_SUCCESS;
}

VAStatus __vaDriverInit_1_0(VADriverContextP ctx);

__attribute__((visibility("default"))) VAStatus __vaDriverInit_1_0(VADriverContextP ctx)
{
    if (!ctx || !ctx->vtable)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    struct driver *drv = calloc(1, sizeof *drv);
    if (!drv)
        return VA_STATUS_ERROR_ALLOCATION_FAILED;
    for (int stage = 0; stage < STAGE_COUNT; stage++)
        drv->schedule.after[stage] = -1;
    int fail_init = read_device_file(ctx, drv);
    const char *spec = getenv("CODECS_TEST_VA_FAIL");
    if (spec)
        fail_init |= parse_failures(drv, spec);
    if (fail_init) {
        free(drv);
        report_error(ctx, "codecs_test: injected failure in driver initialisation");
        return VA_STATUS_ERROR_OPERATION_FAILED;
    }
    pthread_mutex_init(&drv->lock, NULL);
    ctx->pDriverData = drv;
    ctx->version_major = 1;
    ctx->version_minor = 0;
    ctx->max_profiles = MAX_PROFILES;
    ctx->max_entrypoints = MAX_ENTRYPOINTS;
    ctx->max_attributes = MAX_CONFIG_ATTRIBUTES;
    ctx->max_image_formats = MAX_IMAGE_FORMATS;
    ctx->max_subpic_formats = 1;
    ctx->max_display_attributes = 1;
    ctx->str_vendor = DRIVER_VENDOR;

    struct VADriverVTable *vt = ctx->vtable;
    vt->vaTerminate = drv_Terminate;
    vt->vaQueryConfigProfiles = drv_QueryConfigProfiles;
    vt->vaQueryConfigEntrypoints = drv_QueryConfigEntrypoints;
    vt->vaGetConfigAttributes = drv_GetConfigAttributes;
    vt->vaCreateConfig = drv_CreateConfig;
    vt->vaDestroyConfig = drv_DestroyConfig;
    vt->vaQueryConfigAttributes = drv_QueryConfigAttributes;
    vt->vaCreateSurfaces = drv_CreateSurfaces;
    vt->vaCreateSurfaces2 = drv_CreateSurfaces2;
    vt->vaDestroySurfaces = drv_DestroySurfaces;
    vt->vaQuerySurfaceAttributes = drv_QuerySurfaceAttributes;
    vt->vaCreateContext = drv_CreateContext;
    vt->vaDestroyContext = drv_DestroyContext;
    vt->vaCreateBuffer = drv_CreateBuffer;
    vt->vaBufferSetNumElements = drv_BufferSetNumElements;
    vt->vaBufferInfo = drv_BufferInfo;
    vt->vaMapBuffer = drv_MapBuffer;
    vt->vaUnmapBuffer = drv_UnmapBuffer;
    vt->vaDestroyBuffer = drv_DestroyBuffer;
    vt->vaSyncBuffer = drv_SyncBuffer;
    vt->vaBeginPicture = drv_BeginPicture;
    vt->vaRenderPicture = drv_RenderPicture;
    vt->vaEndPicture = drv_EndPicture;
    vt->vaSyncSurface = drv_SyncSurface;
    vt->vaSyncSurface2 = drv_SyncSurface2;
    vt->vaQuerySurfaceStatus = drv_QuerySurfaceStatus;
    vt->vaPutSurface = drv_PutSurface;
    vt->vaQueryImageFormats = drv_QueryImageFormats;
    vt->vaCreateImage = drv_CreateImage;
    vt->vaDeriveImage = drv_DeriveImage;
    vt->vaDestroyImage = drv_DestroyImage;
    vt->vaSetImagePalette = drv_SetImagePalette;
    vt->vaGetImage = drv_GetImage;
    vt->vaPutImage = drv_PutImage;
    vt->vaQuerySubpictureFormats = drv_QuerySubpictureFormats;
    vt->vaCreateSubpicture = drv_CreateSubpicture;
    vt->vaDestroySubpicture = drv_DestroySubpicture;
    vt->vaSetSubpictureImage = drv_SetSubpictureImage;
    vt->vaSetSubpictureChromakey = drv_SetSubpictureChromakey;
    vt->vaSetSubpictureGlobalAlpha = drv_SetSubpictureGlobalAlpha;
    vt->vaAssociateSubpicture = drv_AssociateSubpicture;
    vt->vaDeassociateSubpicture = drv_DeassociateSubpicture;
    vt->vaQueryDisplayAttributes = drv_QueryDisplayAttributes;
    vt->vaGetDisplayAttributes = drv_GetDisplayAttributes;
    vt->vaSetDisplayAttributes = drv_SetDisplayAttributes;
    return VA_STATUS_SUCCESS;
}
