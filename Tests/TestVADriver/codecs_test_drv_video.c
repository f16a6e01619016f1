/*
 * codecs_test_drv_video.so: a test-only VA-API driver.
 *
 * No software VA-API driver exists, so the CodecSessions tests load this one
 * (LIBVA_DRIVERS_PATH + LIBVA_DRIVER_NAME=codecs_test) to run libavcodec's
 * h264_vaapi encoder and vaapi hwaccel end to end on machines without a GPU.
 *
 * What it offers (libva driver ABI, entry point __vaDriverInit_1_0):
 *   - profiles: H.264 ConstrainedBaseline / Main / High (VLD + EncSlice),
 *     HEVC Main (VLD only);
 *   - plain-memory NV12 surfaces, NV12 images (create / derive / get / put);
 *   - EncSlice for H.264: each picture is handed to libx264 (one reference,
 *     no reordering, IDR where the picture parameters say so, QP or bit rate
 *     from the sequence / picture / misc parameters); the coded buffer receives
 *     x264's Annex-B output including its SPS/PPS, because this driver
 *     reports no packed-header support (VAConfigAttribEncPackedHeaders = NONE);
 *   - VLD answers probes and creates configs and contexts, but vaEndPicture on a
 *     decode context returns VA_STATUS_ERROR_UNIMPLEMENTED, so decoders can test
 *     their fallback path.
 *
 * Failures on demand, per stage, from the environment variable
 * CODECS_TEST_VA_FAIL and/or a "fail=" line in the fake device file (see
 * rendernode_shim.c for the file format); a comma-separated list of:
 *   init      __vaDriverInit fails      VA_STATUS_ERROR_OPERATION_FAILED
 *   config    vaCreateConfig fails      VA_STATUS_ERROR_ALLOCATION_FAILED
 *   surfaces  vaCreateSurfaces fails    VA_STATUS_ERROR_ALLOCATION_FAILED
 *   context   vaCreateContext fails     VA_STATUS_ERROR_ALLOCATION_FAILED
 *   encode    every encode vaEndPicture VA_STATUS_ERROR_ENCODING_ERROR
 *   encode:N  only the Nth (1-based) encode vaEndPicture of this display
 *   decode:N  decode vaEndPicture calls 1 ... N-1 of this display succeed
 *             without decoding anything (the surfaces keep what they held);
 *             the Nth and later fail as usual (VA_STATUS_ERROR_UNIMPLEMENTED).
 *             This makes a decoder fail mid-stream, at its Nth picture; the
 *             pictures before it are not real, so tests pick a stream whose
 *             first picture leaves the decoder after the Nth (reordering delay).
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

#include <x264.h>

#define DRIVER_VENDOR "CodecSessions test driver (x264 encode, no decode)"
#define DEVICE_MAGIC "codecs-test-vaapi-device"
#define MAX_PROFILES 4
#define MAX_ENTRYPOINTS 2
#define MAX_CONFIG_ATTRIBUTES 8
#define MAX_DIMENSION 4096

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
    int pitch;           /* bytes per row of both planes */
    int rows;            /* luma rows allocated (height rounded up to even) */
    uint8_t *data;       /* NV12: luma, then interleaved CbCr */
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
    uint32_t bits_per_second, target_percentage, hrd_buffer_size;
    uint32_t fps_num, fps_den;
    /* encoder state */
    x264_t *encoder;
    uint32_t encoder_bits_per_second;
    int64_t frames_encoded;
};

struct driver {
    pthread_mutex_t lock;
    struct object **objects; /* indexed by ID; IDs are never reused */
    uint32_t count, capacity;
    int fail_config, fail_surfaces, fail_context, fail_encode_all;
    long fail_encode_nth; /* 0: none */
    long encode_calls;
    long decode_fail_from; /* the first decode vaEndPicture that fails; 0 or 1: all */
    long decode_calls;
    int low_power_only; /* "lowpower-only": encode through EncSliceLP instead of EncSlice */
    unsigned int max_width, max_height; /* "maxsize=WxH": larger surfaces are refused; 0: no limit */
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
    for (char *item = strtok_r(copy, ", \n", &save); item; item = strtok_r(NULL, ", \n", &save)) {
        if (!strcmp(item, "init"))
            fail_init = 1;
        else if (!strcmp(item, "config"))
            drv->fail_config = 1;
        else if (!strcmp(item, "surfaces"))
            drv->fail_surfaces = 1;
        else if (!strcmp(item, "context"))
            drv->fail_context = 1;
        else if (!strcmp(item, "encode"))
            drv->fail_encode_all = 1;
        else if (!strncmp(item, "encode:", 7))
            drv->fail_encode_nth = strtol(item + 7, NULL, 10);
        else if (!strncmp(item, "decode:", 7))
            drv->decode_fail_from = strtol(item + 7, NULL, 10);
        else if (!strcmp(item, "lowpower-only"))
            drv->low_power_only = 1;
        else if (!strncmp(item, "maxsize=", 8))
            sscanf(item + 8, "%ux%u", &drv->max_width, &drv->max_height);
    }
    free(copy);
    return fail_init;
}

/* The fake device file: first line DEVICE_MAGIC, then optional "fail=LIST". */
static int read_device_failures(VADriverContextP ctx, struct driver *drv)
{
    struct drm_state *drm = ctx->drm_state;
    struct stat st;
    char text[512];
    if (!drm || drm->fd < 0 || fstat(drm->fd, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    ssize_t n = pread(drm->fd, text, sizeof text - 1, 0);
    if (n <= 0)
        return 0;
    text[n] = 0;
    if (strncmp(text, DEVICE_MAGIC, strlen(DEVICE_MAGIC)) != 0)
        return 0;
    const char *fail = strstr(text, "\nfail=");
    if (!fail)
        return 0;
    char spec[512];
    size_t length = strcspn(fail + 6, "\n");
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
        if (((struct context *)object)->encoder)
            x264_encoder_close(((struct context *)object)->encoder);
        break;
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

static const VAProfile supported_profiles[MAX_PROFILES] = {
    VAProfileH264ConstrainedBaseline, VAProfileH264Main, VAProfileH264High, VAProfileHEVCMain,
};

static int profile_supported(VAProfile profile)
{
    for (int i = 0; i < MAX_PROFILES; i++)
        if (supported_profiles[i] == profile)
            return 1;
    return 0;
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
    if (!profile_supported(profile))
        return 0;
    return entrypoint == VAEntrypointVLD || (entrypoint == encode_entrypoint(drv) && is_h264(profile));
}

static uint32_t attribute_value(VAProfile profile, VAEntrypoint entrypoint, VAConfigAttribType type)
{
    int encode = is_encode(entrypoint);
    switch (type) {
    case VAConfigAttribRTFormat:
        return VA_RT_FORMAT_YUV420;
    case VAConfigAttribRateControl:
        return encode ? (VA_RC_CQP | VA_RC_CBR | VA_RC_VBR) : VA_ATTRIB_NOT_SUPPORTED;
    case VAConfigAttribEncPackedHeaders:
        return encode ? VA_ENC_PACKED_HEADER_NONE : VA_ATTRIB_NOT_SUPPORTED;
    case VAConfigAttribEncMaxRefFrames:
        return encode ? 1 /* L0 = 1, L1 = 0 (high 16 bits): no B-frames */ : VA_ATTRIB_NOT_SUPPORTED;
    case VAConfigAttribEncMaxSlices:
        return encode ? 1 : VA_ATTRIB_NOT_SUPPORTED;
    default:
        (void)profile;
        return VA_ATTRIB_NOT_SUPPORTED;
    }
}

static VAStatus drv_QueryConfigProfiles(VADriverContextP ctx, VAProfile *list, int *count)
{
    (void)ctx;
    if (!list || !count)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    for (int i = 0; i < MAX_PROFILES; i++)
        list[i] = supported_profiles[i];
    *count = MAX_PROFILES;
    return VA_STATUS_SUCCESS;
}

static VAStatus drv_QueryConfigEntrypoints(VADriverContextP ctx, VAProfile profile, VAEntrypoint *list,
                                           int *count)
{
    (void)ctx;
    if (!list || !count)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    if (!profile_supported(profile))
        return VA_STATUS_ERROR_UNSUPPORTED_PROFILE;
    int n = 0;
    list[n++] = VAEntrypointVLD;
    if (is_h264(profile))
        list[n++] = encode_entrypoint(DRIVER(ctx));
    *count = n;
    return VA_STATUS_SUCCESS;
}

static VAStatus drv_GetConfigAttributes(VADriverContextP ctx, VAProfile profile, VAEntrypoint entrypoint,
                                        VAConfigAttrib *list, int count)
{
    if (!profile_supported(profile))
        return VA_STATUS_ERROR_UNSUPPORTED_PROFILE;
    if (!entrypoint_supported(DRIVER(ctx), profile, entrypoint))
        return VA_STATUS_ERROR_UNSUPPORTED_ENTRYPOINT;
    if (count < 0 || (count > 0 && !list))
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    for (int i = 0; i < count; i++)
        list[i].value = attribute_value(profile, entrypoint, list[i].type);
    return VA_STATUS_SUCCESS;
}

static VAStatus drv_CreateConfig(VADriverContextP ctx, VAProfile profile, VAEntrypoint entrypoint,
                                 VAConfigAttrib *attributes, int count, VAConfigID *id)
{
    struct driver *drv = DRIVER(ctx);
    if (!id || count < 0 || (count > 0 && !attributes))
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    if (!profile_supported(profile))
        return VA_STATUS_ERROR_UNSUPPORTED_PROFILE;
    if (!entrypoint_supported(drv, profile, entrypoint))
        return VA_STATUS_ERROR_UNSUPPORTED_ENTRYPOINT;
    if (drv->fail_config) {
        report_error(ctx, "codecs_test: injected failure in vaCreateConfig");
        return VA_STATUS_ERROR_ALLOCATION_FAILED;
    }
    int encode = is_encode(entrypoint);
    uint32_t rt_format = VA_RT_FORMAT_YUV420, rate_control = encode ? VA_RC_CQP : 0;
    for (int i = 0; i < count; i++) {
        uint32_t value = attributes[i].value;
        switch (attributes[i].type) {
        case VAConfigAttribRTFormat:
            if (!(value & VA_RT_FORMAT_YUV420))
                return VA_STATUS_ERROR_UNSUPPORTED_RT_FORMAT;
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
            if (attribute_value(profile, entrypoint, attributes[i].type) == VA_ATTRIB_NOT_SUPPORTED)
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
    if (format != VA_RT_FORMAT_YUV420)
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
        if (attribute->type == VASurfaceAttribPixelFormat && attribute->value.value.i != VA_FOURCC_NV12)
            return VA_STATUS_ERROR_INVALID_IMAGE_FORMAT;
        if (attribute->type == VASurfaceAttribMemoryType &&
            attribute->value.value.i != VA_SURFACE_ATTRIB_MEM_TYPE_VA)
            return VA_STATUS_ERROR_UNSUPPORTED_MEMORY_TYPE;
    }
    if (drv->fail_surfaces) {
        report_error(ctx, "codecs_test: injected failure in vaCreateSurfaces");
        return VA_STATUS_ERROR_ALLOCATION_FAILED;
    }
    pthread_mutex_lock(&drv->lock);
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
        surface->pitch = (int)((width + 15) & ~15u);
        surface->rows = (int)((height + 1) & ~1u);
        surface->size = (size_t)surface->pitch * (size_t)surface->rows * 3 / 2;
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
    int valid = table_get(drv, config_id, KIND_CONFIG) != NULL;
    pthread_mutex_unlock(&drv->lock);
    if (!valid)
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
        {VASurfaceAttribPixelFormat, VA_SURFACE_ATTRIB_GETTABLE | VA_SURFACE_ATTRIB_SETTABLE, VA_FOURCC_NV12},
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

static VAStatus drv_QueryImageFormats(VADriverContextP ctx, VAImageFormat *list, int *count)
{
    (void)ctx;
    if (!list || !count)
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    list[0] = nv12_format;
    *count = 1;
    return VA_STATUS_SUCCESS;
}

/* Registers an image over either its own buffer or (derived) a surface's memory.
 * Called with the lock held. */
static VAStatus make_image(struct driver *drv, int width, int height, int pitch, int rows,
                           VASurfaceID derived_from, VAImage *out)
{
    struct image *image = calloc(1, sizeof *image);
    struct buffer *buffer = calloc(1, sizeof *buffer);
    if (!image || !buffer) {
        free(image);
        free(buffer);
        return VA_STATUS_ERROR_ALLOCATION_FAILED;
    }
    size_t size = (size_t)pitch * (size_t)rows * 3 / 2;
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
    va->format = nv12_format;
    va->buf = buffer_id;
    va->width = (uint16_t)width;
    va->height = (uint16_t)height;
    va->data_size = (uint32_t)size;
    va->num_planes = 2;
    va->pitches[0] = va->pitches[1] = (uint32_t)pitch;
    va->offsets[0] = 0;
    va->offsets[1] = (uint32_t)pitch * (uint32_t)rows;
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
    if (format->fourcc != VA_FOURCC_NV12)
        return VA_STATUS_ERROR_INVALID_IMAGE_FORMAT;
    pthread_mutex_lock(&drv->lock);
    VAStatus status = make_image(drv, width, height, (width + 15) & ~15, (height + 1) & ~1, VA_INVALID_SURFACE, out);
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
    VAStatus status = surface ? make_image(drv, surface->width, surface->height, surface->pitch, surface->rows,
                                           surface_id, out)
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

/* Copies a rectangle between a surface and an image buffer, both NV12.
 * to_surface selects the direction. Called with the lock held. */
static void copy_rect(struct surface *surface, uint8_t *data, const VAImage *image, int sx, int sy, int ix,
                      int iy, int width, int height, int to_surface)
{
    for (int plane = 0; plane < 2; plane++) {
        int rows = plane ? height / 2 : height;
        int shift = plane ? 1 : 0;
        uint8_t *surface_base = surface->data + (plane ? (size_t)surface->pitch * (size_t)surface->rows : 0);
        uint8_t *image_base = data + image->offsets[plane];
        for (int row = 0; row < rows; row++) {
            uint8_t *s = surface_base + (size_t)((sy >> shift) + row) * (size_t)surface->pitch + (size_t)sx;
            uint8_t *i = image_base + (size_t)((iy >> shift) + row) * image->pitches[plane] + (size_t)ix;
            if (to_surface)
                memcpy(s, i, (size_t)width);
            else
                memcpy(i, s, (size_t)width);
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
    if (status == VA_STATUS_SUCCESS && drv->fail_context) {
        report_error(ctx, "codecs_test: injected failure in vaCreateContext");
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
        context->have_picture = context->have_slice = 0;
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
        if (!is_encode(context->cfg.entrypoint))
            continue; /* decode parameters are accepted and ignored */
        switch (buffer->type) {
        case VAEncSequenceParameterBufferType:
            if (buffer->size < sizeof context->sequence)
                status = VA_STATUS_ERROR_INVALID_PARAMETER;
            else {
                memcpy(&context->sequence, buffer->data, sizeof context->sequence);
                context->have_sequence = 1;
            }
            break;
        case VAEncPictureParameterBufferType:
            if (buffer->size < sizeof context->picture)
                status = VA_STATUS_ERROR_INVALID_PARAMETER;
            else {
                memcpy(&context->picture, buffer->data, sizeof context->picture);
                context->have_picture = 1;
            }
            break;
        case VAEncSliceParameterBufferType:
            if (buffer->size < sizeof context->slice)
                status = VA_STATUS_ERROR_INVALID_PARAMETER;
            else if (!context->have_slice) { /* the first slice carries type and QP delta */
                memcpy(&context->slice, buffer->data, sizeof context->slice);
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

static VAStatus drv_EndPicture(VADriverContextP ctx, VAContextID id)
{
    struct driver *drv = DRIVER(ctx);
    VAStatus status;
    pthread_mutex_lock(&drv->lock);
    struct context *context = table_get(drv, id, KIND_CONTEXT);
    if (!context)
        status = VA_STATUS_ERROR_INVALID_CONTEXT;
    else if (!context->in_picture)
        status = VA_STATUS_ERROR_OPERATION_FAILED;
    else if (!is_encode(context->cfg.entrypoint)) {
        /* VLD: probes only, no real decode; "decode:N" accepts the first N-1 pictures */
        long call = ++drv->decode_calls;
        status = call < drv->decode_fail_from ? VA_STATUS_SUCCESS : VA_STATUS_ERROR_UNIMPLEMENTED;
    }
    else {
        long call = ++drv->encode_calls;
        if (drv->fail_encode_all || drv->fail_encode_nth == call) {
            report_error(ctx, "codecs_test: injected failure in encode vaEndPicture #%ld", call);
            status = VA_STATUS_ERROR_ENCODING_ERROR;
        } else {
            status = encode_picture(drv, context);
        }
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
    int fail_init = read_device_failures(ctx, drv);
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
    ctx->max_image_formats = 1;
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
