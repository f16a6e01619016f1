import DecodeSession

/// The command-line tool's names for DecodeSession's stream decoder.
typealias DecodePipeline = StreamDecoder
typealias DecoderSettings = StreamDecoderSettings
