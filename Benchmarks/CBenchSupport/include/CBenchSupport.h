#ifndef CODECSESSIONS_CBENCHSUPPORT_H
#define CODECSESSIONS_CBENCHSUPPORT_H
#include <stddef.h>
#include <stdint.h>

/// Heap allocations (malloc, calloc, realloc, memalign family) made by the
/// whole process since it started. codecs-bench interposes the allocator to
/// count them; the count is relaxed-atomic and costs one add per call.
uint64_t cbench_allocation_count(void);

/// libavcodec's own start-code finder (exported as avpriv_find_start_code but
/// not declared in FFmpeg's public headers). Returns a pointer just past the
/// next 00 00 01 xx, with *state holding the last four bytes read.
const uint8_t *cbench_find_start_code(const uint8_t *p, const uint8_t *end, uint32_t *state);

/// memchr, for the reference scanner.
const void *cbench_memchr(const void *s, int c, size_t n);

/// Peak resident set size of the process in kB (VmHWM), after an optional
/// reset through /proc/self/clear_refs; -1 when unavailable.
long cbench_peak_rss_kb(void);
/// Resident set size of the process now in kB (VmRSS); -1 when unavailable.
long cbench_current_rss_kb(void);
int cbench_reset_peak_rss(void);

#endif
