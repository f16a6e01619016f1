#ifndef CODECSESSIONS_CFFMPEG_SHIM_H
#define CODECSESSIONS_CFFMPEG_SHIM_H
// FFmpeg exposes several values as macros Swift cannot import (AVERROR(e),
// AVERROR_EOF, AV_NOPTS_VALUE, ...); these wrappers give them names.
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/mastering_display_metadata.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libavutil/log.h>
#include <stdarg.h>
#include <libswscale/swscale.h>

static inline int CFFmpeg_AVERROR_EAGAIN(void) { return AVERROR(EAGAIN); }
static inline int CFFmpeg_AVERROR_EOF(void) { return AVERROR_EOF; }
static inline int CFFmpeg_AVERROR_ENOMEM(void) { return AVERROR(ENOMEM); }
static inline int CFFmpeg_AVERROR_EINVAL(void) { return AVERROR(EINVAL); }
static inline int CFFmpeg_AVERROR_INVALIDDATA(void) { return AVERROR_INVALIDDATA; }
static inline int CFFmpeg_AVERROR_ENOSYS(void) { return AVERROR(ENOSYS); }
static inline int64_t CFFmpeg_AV_NOPTS_VALUE(void) { return AV_NOPTS_VALUE; }
static inline int CFFmpeg_AV_ERROR_MAX_STRING_SIZE(void) { return AV_ERROR_MAX_STRING_SIZE; }
static inline int CFFmpeg_AV_NUM_DATA_POINTERS(void) { return AV_NUM_DATA_POINTERS; }
static inline int CFFmpeg_AV_PKT_FLAG_KEY(void) { return AV_PKT_FLAG_KEY; }
static inline int CFFmpeg_AV_PKT_FLAG_CORRUPT(void) { return AV_PKT_FLAG_CORRUPT; }
static inline int CFFmpeg_AV_FRAME_FLAG_CORRUPT(void) { return AV_FRAME_FLAG_CORRUPT; }
static inline int CFFmpeg_AV_CODEC_FLAG_LOW_DELAY(void) { return AV_CODEC_FLAG_LOW_DELAY; }
static inline int CFFmpeg_AV_CODEC_FLAG2_FAST(void) { return AV_CODEC_FLAG2_FAST; }
static inline int CFFmpeg_AV_INPUT_BUFFER_PADDING_SIZE(void) { return AV_INPUT_BUFFER_PADDING_SIZE; }
static inline int CFFmpeg_AVFMT_GLOBALHEADER(void) { return AVFMT_GLOBALHEADER; }
static inline int CFFmpeg_AV_CODEC_FLAG_GLOBAL_HEADER(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int CFFmpeg_AVIO_FLAG_WRITE(void) { return AVIO_FLAG_WRITE; }
static inline int CFFmpeg_AVIO_SEEKABLE_NORMAL(void) { return AVIO_SEEKABLE_NORMAL; }
static inline int CFFmpeg_AVFMT_NOFILE(void) { return AVFMT_NOFILE; }
static inline int CFFmpeg_SWS_BILINEAR(void) { return SWS_BILINEAR; }
static inline int CFFmpeg_SWS_BICUBIC(void) { return SWS_BICUBIC; }
static inline int CFFmpeg_SWS_POINT(void) { return SWS_POINT; }
static inline int CFFmpeg_SWS_ACCURATE_RND(void) { return SWS_ACCURATE_RND; }
static inline int CFFmpeg_SWS_FULL_CHR_H_INT(void) { return SWS_FULL_CHR_H_INT; }
static inline int CFFmpeg_FF_THREAD_FRAME(void) { return FF_THREAD_FRAME; }
static inline int CFFmpeg_FF_THREAD_SLICE(void) { return FF_THREAD_SLICE; }
static inline int CFFmpeg_AV_CODEC_FLAG_OUTPUT_CORRUPT(void) { return AV_CODEC_FLAG_OUTPUT_CORRUPT; }
static inline int CFFmpeg_AV_EF_CRCCHECK(void) { return AV_EF_CRCCHECK; }
static inline int CFFmpeg_AV_EF_BITSTREAM(void) { return AV_EF_BITSTREAM; }
static inline int CFFmpeg_AV_EF_BUFFER(void) { return AV_EF_BUFFER; }
static inline int CFFmpeg_AV_EF_EXPLODE(void) { return AV_EF_EXPLODE; }
static inline int CFFmpeg_FF_DECODE_ERROR_INVALID_BITSTREAM(void) { return FF_DECODE_ERROR_INVALID_BITSTREAM; }
static inline int CFFmpeg_FF_DECODE_ERROR_MISSING_REFERENCE(void) { return FF_DECODE_ERROR_MISSING_REFERENCE; }
static inline int CFFmpeg_FF_DECODE_ERROR_CONCEALMENT_ACTIVE(void) { return FF_DECODE_ERROR_CONCEALMENT_ACTIVE; }
static inline int CFFmpeg_FF_DECODE_ERROR_DECODE_SLICES(void) { return FF_DECODE_ERROR_DECODE_SLICES; }
static inline uint64_t CFFmpeg_AV_PIX_FMT_FLAG_HWACCEL(void) { return AV_PIX_FMT_FLAG_HWACCEL; }
static inline uint64_t CFFmpeg_AV_PIX_FMT_FLAG_BE(void) { return AV_PIX_FMT_FLAG_BE; }
static inline uint64_t CFFmpeg_AV_PIX_FMT_FLAG_RGB(void) { return AV_PIX_FMT_FLAG_RGB; }
static inline int CFFmpeg_AVERROR_EXTERNAL(void) { return AVERROR_EXTERNAL; }
static inline int CFFmpeg_AVERROR_EIO(void) { return AVERROR(EIO); }
static inline int CFFmpeg_AVERROR_ENODEV(void) { return AVERROR(ENODEV); }

static inline const char *CFFmpeg_strerror(int code, char *buffer, size_t size) {
    return av_make_error_string(buffer, size, code);
}
static inline unsigned CFFmpeg_version_major(unsigned v) { return AV_VERSION_MAJOR(v); }
static inline unsigned CFFmpeg_version_minor(unsigned v) { return AV_VERSION_MINOR(v); }
static inline unsigned CFFmpeg_version_micro(unsigned v) { return AV_VERSION_MICRO(v); }

// Containers (MediaIO): file errors, FourCC tags, log level.
static inline int CFFmpeg_AVERROR_ENOENT(void) { return AVERROR(ENOENT); }
static inline int CFFmpeg_AVERROR_EACCES(void) { return AVERROR(EACCES); }
static inline int CFFmpeg_AVERROR_EXIT(void) { return AVERROR_EXIT; }
static inline int CFFmpeg_AVERROR_DECODER_NOT_FOUND(void) { return AVERROR_DECODER_NOT_FOUND; }
static inline int CFFmpeg_AVERROR_STREAM_NOT_FOUND(void) { return AVERROR_STREAM_NOT_FOUND; }
static inline unsigned CFFmpeg_MKTAG(unsigned char a, unsigned char b, unsigned char c, unsigned char d) {
    return MKTAG(a, b, c, d);
}
// Network transports (MediaIO's StreamTransport): the demuxer's nobuffer flag,
// the status an interrupt callback makes a blocking call return.
static inline int CFFmpeg_AVFMT_FLAG_NOBUFFER(void) { return AVFMT_FLAG_NOBUFFER; }
static inline int CFFmpeg_AVERROR_ECONNREFUSED(void) { return AVERROR(ECONNREFUSED); }
static inline int CFFmpeg_AVERROR_ETIMEDOUT(void) { return AVERROR(ETIMEDOUT); }
static inline int CFFmpeg_AVERROR_EPIPE(void) { return AVERROR(EPIPE); }
static inline int CFFmpeg_AVERROR_ECONNRESET(void) { return AVERROR(ECONNRESET); }
static inline int CFFmpeg_AV_LOG_ERROR(void) { return AV_LOG_ERROR; }
static inline int CFFmpeg_PARSER_FLAG_COMPLETE_FRAMES(void) { return PARSER_FLAG_COMPLETE_FRAMES; }

// NativeCodecs' av_log callback (Sources/NativeCodecs/HardwareLog.swift).
// Swift cannot take a va_list in a C callback, so this one formats each line
// at or above av_log_get_level() (AV_LOG_INFO unless changed), with its
// "[name @ 0x…] " prefix, and hands the text, the level and the logging
// context's name (the codec or format: "h264", "mov,mp4,m4a,3gp,3g2,mj2")
// to CodecSessions_libavLogLine (defined in Swift with @_cdecl), which keeps
// the errors of a capture and passes every line on to the library's log
// handler. Nothing is written to standard error here.
void CodecSessions_libavLogLine(int level, const char *name, const char *line);
static inline void CFFmpeg_log_callback(void *avcl, int level, const char *fmt, va_list vl)
{
    if (level > av_log_get_level()) return;
    char line[1024];
    int print_prefix = 1;
    va_list copy;
    va_copy(copy, vl);
    av_log_format_line2(avcl, level, fmt, copy, line, (int)sizeof line, &print_prefix);
    va_end(copy);
    const char *name = NULL;
    if (avcl != NULL) {
        const AVClass *cls = *(const AVClass **)avcl;
        if (cls != NULL && cls->item_name != NULL) name = cls->item_name(avcl);
    }
    CodecSessions_libavLogLine(level, name, line);
}
static inline void CFFmpeg_install_log_callback(void) { av_log_set_callback(CFFmpeg_log_callback); }
static inline int CFFmpeg_AV_LOG_WARNING(void) { return AV_LOG_WARNING; }
static inline int CFFmpeg_AV_LOG_INFO(void) { return AV_LOG_INFO; }

#endif
