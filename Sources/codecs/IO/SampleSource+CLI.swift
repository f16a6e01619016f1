// SampleSource (MediaIO) opened from `codecs convert`'s options, the NAL
// units an Annex-B stream leaves out printed.
import MediaCore
import MediaIO

extension SampleSource {
    init(_ options: ConvertOptions) throws(MediaError) {
        let path = options.input
        try self.init(
            path: path, kind: options.inputKind, codec: options.codec, frameDuration: options.frameDuration,
            presentationTimes: options.outputKind.container != nil, readingEveryTrack: true
        ) { count, reason in
            printError("codecs convert: \(path): left out \(count) NAL unit(s): \(reason)")
        }
    }
}
