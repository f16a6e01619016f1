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

/// A growable byte buffer owned by the caller and reused across calls:
/// `bytes` is malloc'd (NULL and 0 at first), grown with realloc, and freed
/// with cbench_buffer_free.
typedef struct {
    uint8_t *bytes;
    size_t count;
    size_t capacity;
} cbench_buffer;

void cbench_buffer_free(cbench_buffer *buffer);

/// Annex-B → length-prefixed (4-byte big-endian lengths) the way a C
/// programmer writes it for a receiver's hot loop: start codes found with
/// glibc's memchr for the 0x01 (then the two zero bytes before it checked),
/// trailing zero bytes trimmed, access unit delimiters dropped, parameter
/// sets (H.264 7, 8, 13; HEVC base-layer 32, 33, 34) copied length-prefixed
/// to `parameter_sets`, every other NAL unit copied to `output` in one pass.
/// Both buffers are emptied first and reused; they grow (realloc) only when
/// an access unit is larger than any before. `hevc` selects the codec.
/// Returns the number of NAL units written to `output`, or -1 when a buffer
/// cannot grow.
long cbench_annexb_to_length_prefixed(const uint8_t *input, size_t size, int hevc, cbench_buffer *output,
                                      cbench_buffer *parameter_sets);

/// Peak resident set size of the process in kB (VmHWM), after an optional
/// reset through /proc/self/clear_refs; -1 when unavailable.
long cbench_peak_rss_kb(void);
/// Resident set size of the process now in kB (VmRSS); -1 when unavailable.
long cbench_current_rss_kb(void);
int cbench_reset_peak_rss(void);

/// 1 when the process runs under valgrind (any tool), else 0.
int cbench_under_valgrind(void);

/// Under callgrind: zeroes the event counters of every thread, so that the
/// next dump holds only what runs from here on. A no-op outside valgrind.
void cbench_gate_region_begin(void);

/// Under callgrind: writes the counters of every thread since the last
/// cbench_gate_region_begin to a new profile dump whose trigger names
/// `name` ("Client Request: name"), and zeroes them. A no-op outside valgrind.
void cbench_gate_region_end(const char *name);

#endif
