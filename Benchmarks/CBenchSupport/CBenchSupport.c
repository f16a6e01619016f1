// Allocation counting for codecs-bench: the executable defines the allocator
// entry points, so every shared library in the process (x264, libavcodec, the
// Swift runtime) calls these, which count and forward to glibc's own.
#define _GNU_SOURCE
#include "CBenchSupport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);
extern const uint8_t *avpriv_find_start_code(const uint8_t *p, const uint8_t *end, uint32_t *state);

static uint64_t allocations;

static inline void count_one(void) { __atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED); }

uint64_t cbench_allocation_count(void) { return __atomic_load_n(&allocations, __ATOMIC_RELAXED); }

void *malloc(size_t size) {
    count_one();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_one();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    count_one();
    return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    count_one();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL && size != 0) return ENOMEM;
    *out = pointer;
    return 0;
}

const uint8_t *cbench_find_start_code(const uint8_t *p, const uint8_t *end, uint32_t *state) {
    return avpriv_find_start_code(p, end, state);
}

const void *cbench_memchr(const void *s, int c, size_t n) { return memchr(s, c, n); }

void cbench_buffer_free(cbench_buffer *buffer) {
    free(buffer->bytes);
    buffer->bytes = NULL;
    buffer->count = buffer->capacity = 0;
}

/// Makes room for `extra` more bytes; doubles the capacity when it grows.
static int reserve(cbench_buffer *buffer, size_t extra) {
    size_t needed = buffer->count + extra;
    if (needed <= buffer->capacity) return 0;
    size_t capacity = buffer->capacity * 2 > needed ? buffer->capacity * 2 : needed;
    uint8_t *bytes = realloc(buffer->bytes, capacity);
    if (bytes == NULL) return -1;
    buffer->bytes = bytes;
    buffer->capacity = capacity;
    return 0;
}

/// The first 00 00 01 at or after p, or end: memchr finds each 0x01, then
/// the two bytes before it are checked.
static const uint8_t *next_start_code(const uint8_t *p, const uint8_t *end) {
    const uint8_t *q = p + 2;
    while (q < end) {
        q = memchr(q, 1, (size_t)(end - q));
        if (q == NULL) return end;
        if (q[-1] == 0 && q[-2] == 0) return q - 2;
        q++;
    }
    return end;
}

static void put_nal(cbench_buffer *buffer, const uint8_t *nal, size_t length) {
    uint8_t *out = buffer->bytes + buffer->count;
    out[0] = (uint8_t)(length >> 24);
    out[1] = (uint8_t)(length >> 16);
    out[2] = (uint8_t)(length >> 8);
    out[3] = (uint8_t)length;
    memcpy(out + 4, nal, length);
    buffer->count += 4 + length;
}

long cbench_annexb_to_length_prefixed(const uint8_t *input, size_t size, int hevc, cbench_buffer *output,
                                      cbench_buffer *parameter_sets) {
    const uint8_t *end = input + size;
    output->count = 0;
    parameter_sets->count = 0;
    // Each 3-byte start code becomes a 4-byte length: at most size + size / 3.
    if (reserve(output, size + size / 3 + 4) != 0) return -1;
    long written = 0;
    const uint8_t *code = next_start_code(input, end);
    while (code < end) {
        const uint8_t *nal = code + 3;
        const uint8_t *next = nal < end ? next_start_code(nal, end) : end;
        const uint8_t *stop = next;
        while (stop > nal && stop[-1] == 0) stop--;
        size_t length = (size_t)(stop - nal);
        code = next;
        if (length == 0 || (hevc && length < 2)) continue;
        int drop = 0, lift = 0;
        if (hevc) {
            int type = (nal[0] >> 1) & 0x3F;
            int layer = ((nal[0] & 1) << 5) | (nal[1] >> 3);
            drop = type == 35;
            lift = layer == 0 && type >= 32 && type <= 34;
        } else {
            int type = nal[0] & 0x1F;
            drop = type == 9;
            lift = type == 7 || type == 8 || type == 13;
        }
        if (drop) continue;
        if (lift) {
            if (reserve(parameter_sets, 4 + length) != 0) return -1;
            put_nal(parameter_sets, nal, length);
            continue;
        }
        put_nal(output, nal, length);
        written++;
    }
    return written;
}

static long status_field_kb(const char *field) {
    FILE *file = fopen("/proc/self/status", "r");
    if (file == NULL) return -1;
    char line[256];
    long value = -1;
    size_t length = strlen(field);
    while (fgets(line, sizeof line, file) != NULL) {
        if (strncmp(line, field, length) == 0) {
            sscanf(line + length, "%ld", &value);
            break;
        }
    }
    fclose(file);
    return value;
}

long cbench_peak_rss_kb(void) { return status_field_kb("VmHWM:"); }

long cbench_current_rss_kb(void) { return status_field_kb("VmRSS:"); }

int cbench_reset_peak_rss(void) {
    FILE *file = fopen("/proc/self/clear_refs", "w");
    if (file == NULL) return -1;
    int status = fputs("5", file) < 0 ? -1 : 0;
    if (fclose(file) != 0) status = -1;
    return status;
}

// Callgrind client requests for `codecs-bench --gate`. Each is a few no-op
// instructions when the process does not run under valgrind; without
// valgrind's header they compile to nothing and the gate reports no counts.
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define CBENCH_HAVE_CALLGRIND 1
#endif
#endif

int cbench_under_valgrind(void) {
#ifdef CBENCH_HAVE_CALLGRIND
    return RUNNING_ON_VALGRIND ? 1 : 0;
#else
    return 0;
#endif
}

void cbench_gate_region_begin(void) {
#ifdef CBENCH_HAVE_CALLGRIND
    CALLGRIND_ZERO_STATS;
#endif
}

void cbench_gate_region_end(const char *name) {
#ifdef CBENCH_HAVE_CALLGRIND
    CALLGRIND_DUMP_STATS_AT(name);
#else
    (void)name;
#endif
}
