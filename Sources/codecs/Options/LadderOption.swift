import LiveStreaming
import MediaCore
import MediaIO

// `--ladder LAYERS`: the layers `serve --whep` and an HLS `send` encode from
// each picture of a .y4m IN.

enum LadderOption {
    static let help = """
          --ladder LAYERS            for a .y4m IN: encode each picture into a ladder of layers, top first, as
                                     [RID=]WxH@RATE,… (e.g. 1280x720@1500k,640x360@600k,320x180@200k); one
                                     scaler pass per layer, keyframes on the same frames; RIDs r0, r1, … unless
                                     named; each layer keeps its RATE (no --bitrate, --crf or --qp with it)
        """

    /// `--ladder`'s layers, or nil without it; a ladder needs a .y4m IN and
    /// sets every layer's rate itself.
    static func ladder(_ parsed: Arguments, input: String) throws(Arguments.UsageError) -> LiveLadder? {
        guard let text = parsed.value("ladder") else { return nil }
        guard MediaFileKind(path: input) == .y4m else {
            throw Arguments.UsageError(
                description: "--ladder encodes pictures: IN must be a .y4m clip, not \(input)")
        }
        if let rate = ["bitrate", "crf", "qp"].first(where: { parsed.value($0) != nil }) {
            throw Arguments.UsageError(description: "--ladder sets each layer's rate: drop --\(rate)")
        }
        return try parse(text)
    }

    /// `[RID=]WxH@RATE,…` as a ladder (rids `r0`, `r1`, … where not named).
    static func parse(_ text: String) throws(Arguments.UsageError) -> LiveLadder {
        var layers: [LiveLadder.Layer] = []
        for (index, item) in text.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            let named = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let rid = named.count == 2 ? String(named[0]) : "r\(index)"
            let body = named.count == 2 ? named[1] : item
            let parts = body.split(separator: "@", omittingEmptySubsequences: false)
            let size = parts.first?.lowercased().split(separator: "x", omittingEmptySubsequences: false) ?? []
            guard parts.count == 2, size.count == 2, let width = Int(size[0]), let height = Int(size[1]),
                let rate = Arguments.bitRate(String(parts[1])), rate >= 1000
            else {
                throw Arguments.UsageError(
                    description: "--ladder \(text): '\(item)' is not [RID=]WxH@RATE (e.g. 640x360@600k)")
            }
            layers.append(LiveLadder.Layer(rid: rid, width: width, height: height, bitRate: rate))
        }
        do {
            return try LiveLadder(layers)
        } catch {
            throw Arguments.UsageError(description: "--ladder \(text): \(error.message)")
        }
    }
}
