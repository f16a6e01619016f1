import FormatConv

// The replay cache: samples kept since the last keyframe, so that a rebuilt
// decoder can decode them again (see +Recovery).
/// The samples a replacement decoder needs to rebuild every picture not yet
/// delivered: from the last keyframe at or before the oldest sample still in
/// flight, in decode order. Older groups are released as soon as none of
/// their pictures is pending. The cache holds at most `byteLimit` bytes; past
/// that it gives up on the group (``overflows`` counts it) and holds nothing
/// until the next keyframe.
struct ReplayCache {
    struct Sample {
        var token: Int64
        var data: [UInt8]
        var isKeyframe: Bool
        /// An HEVC CRA: the pictures after it in decode order may include
        /// RASL pictures, which decode only from the group before.
        var opensGroup: Bool
    }

    let byteLimit: Int
    private(set) var samples: [Sample] = []
    private(set) var bytes = 0
    /// Where each group of pictures starts in `samples` (the first is 0), so
    /// pruning looks at a handful of groups, not at every sample of a long one.
    private var groupStarts: [Int] = []
    /// Whether `samples` starts at a keyframe and nothing after it is missing.
    private var complete = false
    /// How many times a group outgrew `byteLimit`.
    private(set) var overflows = 0

    init(byteLimit: Int) { self.byteLimit = byteLimit }

    /// Records a sample given to the decoder; `oldestPending` is the oldest
    /// token whose picture has not come out yet (this sample's at the latest).
    mutating func record(token: Int64, data: [UInt8], isKeyframe: Bool, opensGroup: Bool, oldestPending: Int64) {
        if isKeyframe && !complete {
            reset()
            complete = true
        }
        guard complete else { return }
        if isKeyframe { groupStarts.append(samples.count) }
        samples.append(Sample(token: token, data: data, isKeyframe: isKeyframe, opensGroup: opensGroup))
        bytes += data.count
        // Keep from the last group that starts at or before the oldest pending
        // picture, or from the group before it when that one starts at a CRA
        // (its leading pictures need the earlier group).
        if var keep = groupStarts.lastIndex(where: { samples[$0].token <= oldestPending }) {
            if samples[groupStarts[keep]].opensGroup && keep > 0 { keep -= 1 }
            guard keep > 0 else { return checkLimit() }
            let start = groupStarts[keep]
            bytes -= samples[..<start].reduce(0) { $0 + $1.data.count }
            samples.removeFirst(start)
            groupStarts = groupStarts[keep...].map { $0 - start }
        }
        checkLimit()
    }

    private mutating func checkLimit() {
        if bytes > byteLimit {
            reset()
            overflows += 1
        }
    }

    /// Forgets everything (a flush, a new decoder for a new format).
    mutating func reset() {
        samples = []
        bytes = 0
        groupStarts = []
        complete = false
    }

    var replayable: [Sample] { complete ? samples : [] }
}
