import DecodeSession
import FormatConv
import MediaCore
import MediaIO

/// Samples from a container (``MovieReader``, with the packets of its other
/// tracks) or an Annex-B stream (a ``FileByteSource`` read in 1 MiB chunks
/// through an ``AccessUnitReader``).
struct SampleSource {
    private(set) var reader: MovieReader?
    private var file: FileByteSource?
    private var accessUnits: AccessUnitReader
    private var queue: [CompressedSample] = []
    private var queueIndex = 0
    private var finished = false
    private let path: String

    init(_ options: ConvertOptions) throws(MediaError) {
        try self.init(
            path: options.input, kind: options.inputKind, codec: options.codec, frameDuration: options.frameDuration,
            presentationTimes: options.outputKind.container != nil, readingEveryTrack: true)
    }

    /// Samples of the file at `path`; `presentationTimes`: Annex-B samples get
    /// presentation times from the picture order counts (the whole stream is
    /// read first), as a container or a player needs them; `readingEveryTrack`:
    /// a container's other tracks come too (``nextItem()``).
    init(
        path: String, kind: MediaFileKind, codec: CodecType?, frameDuration: MediaTime?, presentationTimes: Bool,
        readingEveryTrack: Bool = false
    ) throws(MediaError) {
        self.path = path
        accessUnits = AccessUnitReader(codec: kind.annexBCodec ?? codec, frameDuration: frameDuration)
        if kind.container != nil {
            reader = try MovieReader(path: path, readingEveryTrack: readingEveryTrack)
            return
        }
        file = try FileByteSource(path: path)
        if presentationTimes {
            // Annex-B carries no timestamps and the assembler numbers samples in
            // decode order; a container needs presentation times, which come from
            // the picture order counts of the whole stream.
            var samples: [CompressedSample] = []
            while let sample = try next() { samples.append(sample) }
            let frame =
                samples.first.map { $0.duration.isValid ? $0.duration : MediaTime(value: 1, timescale: 30) }
                ?? MediaTime(value: 1, timescale: 30)
            queue = try PresentationTimes.assign(to: samples, frameDuration: frame)
            queueIndex = 0
        }
    }

    /// The next video sample or packet of another track, in file order.
    mutating func nextItem() throws(MediaError) -> MovieItem? {
        if let reader { return try reader.nextItem() }
        return try next().map { .sample($0) }
    }

    mutating func next() throws(MediaError) -> CompressedSample? {
        if let reader { return try reader.nextSample() }
        while queueIndex == queue.count {
            guard !finished else {
                file?.close()
                return nil
            }
            queue = []
            queueIndex = 0
            let chunk = try file!.read(upTo: 1 << 20)
            if chunk.isEmpty {
                finished = true
                take(accessUnits.finish())
            } else {
                take(try accessUnits.append(chunk))
            }
        }
        defer { queueIndex += 1 }
        return queue[queueIndex]
    }

    private mutating func take(_ outputs: [AssemblerOutput]) {
        for output in outputs {
            switch output {
            case .sample(let sample):
                queue.append(sample)
            case .dropped(let reason, let count):
                printError("codecs convert: \(path): left out \(count) NAL unit(s): \(reason)")
            }
        }
    }
}
