// Allocation counting for codecs-bench: the executable defines the allocator
// entry points, so every shared library in the process (x264, libavcodec, the
// Swift runtime) calls these, which count and forward to glibc's own.
#define _GNU_SOURCE
#include "CBenchSupport.h"

#include <errno.h>
#include <stdio.h>
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
