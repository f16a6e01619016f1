// The one test both sides of a density row are held to, the frame schedule they share, and where a run's time went.
import Foundation
import MediaCore

/// The frames every density session runs, ours and FFmpeg's: a warm-up, the
/// measured frames, and a tail, all paced at 30 fps from one capture clock.
struct DensitySchedule {
    /// Frames before the measured ones (start-up on both sides: FFmpeg's
    /// receiver probing the stream, the first keyframe); they must be decoded,
    /// but their latency is not judged.
    var warmUp: Int
    /// The frames the criterion judges.
    var measured: Int
    /// Frames after the measured ones: a live stream goes on, and FFmpeg's
    /// receiver holds each frame until the next one's packets arrive (its
    /// parser finds a frame's end at the next frame's start), so without a
    /// tail its last frames would wait for the end of the stream.
    var tail: Int

    var total: Int { warmUp + measured + tail }
    var measuredRange: Range<Int> { warmUp..<(warmUp + measured) }
    /// Every tenth frame's luma PSNR is measured (sequence index % 10 == 0).
    static func samplesPSNR(_ index: Int) -> Bool { index % 10 == 0 }
}

/// What one session did, by sequence index: when each frame was captured
/// (handed to the encoder, or written to FFmpeg's input pipe), when its
/// picture came out of the decoder (NaN: never), and the sampled PSNRs.
struct DensitySessionTimes {
    var captured: [Double]
    var decoded: [Double]
    var psnr: [Double] = []
    var failure: String?
}

/// Density's one criterion: a session meets it when every warm-up and
/// measured frame is decoded (the tail's need not be), the measured frames come out at ≥ 0.97 × 30 fps,
/// each measured frame is out within two frame intervals (66.7 ms) of its
/// capture, and every sampled picture's luma PSNR is at least 30 dB.
struct DensityCriterion {
    var frameRate = 30.0
    var latencyLimit = 2.0 / 30.0
    var minimumRateFraction = 0.97
    var psnrFloor = 30.0

    struct Verdict {
        var allDecoded: Bool
        var keepsRate: Bool
        var inTime: Bool
        var quality: Bool
        var failed: Bool
        /// Capture → decoded picture of each measured frame that came out (seconds).
        var latencies: [Double]
        var meets: Bool { allDecoded && keepsRate && inTime && quality && !failed }
    }

    func judge(_ session: DensitySessionTimes, schedule: DensitySchedule) -> Verdict {
        let needed = schedule.warmUp + schedule.measured
        let allDecoded = session.decoded.prefix(needed).count { $0.isFinite } == needed
        var latencies: [Double] = []
        var out: [Double] = []
        for index in schedule.measuredRange where index < session.decoded.count {
            let decoded = session.decoded[index]
            guard decoded.isFinite, session.captured[index].isFinite else { continue }
            latencies.append(decoded - session.captured[index])
            out.append(decoded)
        }
        let span = (out.max() ?? 0) - (out.min() ?? 0)
        let rate = span > 0 ? Double(out.count - 1) / span : 0
        return Verdict(
            allDecoded: allDecoded,
            keepsRate: out.count == schedule.measured && rate >= minimumRateFraction * frameRate,
            inTime: latencies.count == schedule.measured && latencies.allSatisfy { $0 <= latencyLimit },
            quality: !session.psnr.isEmpty && session.psnr.allSatisfy { $0 >= psnrFloor },
            failed: session.failure != nil, latencies: latencies)
    }
}

/// How many sessions of a run met the criterion, and each part of it.
struct DensityTally {
    var meeting = 0
    var allDecoded = 0
    var keepingRate = 0
    var inTime = 0
    var latencies: [Double] = []

    init(_ verdicts: [DensityCriterion.Verdict]) {
        for verdict in verdicts {
            if verdict.meets { meeting += 1 }
            if verdict.allDecoded { allDecoded += 1 }
            if verdict.keepsRate { keepingRate += 1 }
            if verdict.inTime { inTime += 1 }
            latencies += verdict.latencies
        }
    }

    /// Nearest-rank percentiles of every measured frame's latency, seconds.
    var p50: Double { NearestRank.percentile(50, of: latencies) ?? .nan }
    var p99: Double { NearestRank.percentile(99, of: latencies) ?? .nan }
    var maximum: Double { latencies.max() ?? .nan }

    /// How many sessions met each part: "decoded all 4, 30 fps 4, each frame ≤ 66.7 ms 3".
    var parts: String { "decoded all \(allDecoded), 30 fps \(keepingRate), each frame ≤ 66.7 ms \(inTime)" }
}

/// The whole machine's busy CPU time (`/proc/stat`, every core, every
/// process), to tell a run's own CPU from what other work took meanwhile.
func machineBusySeconds() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
        let line = text.split(separator: "\n").first
    else { return .nan }
    // cpu user nice system idle iowait irq softirq steal …, in USER_HZ (100) ticks.
    let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
    guard fields.count >= 8 else { return .nan }
    return (fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7]) / 100
}

/// Nanoseconds a thread has waited on a run queue for a core
/// (`/proc/…/schedstat`, second field); nil when unreadable.
func runQueueWaitSeconds(_ path: String = "/proc/thread-self/schedstat") -> Double? {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
    let fields = text.split(separator: " ")
    guard fields.count >= 2, let wait = Double(fields[1]) else { return nil }
    return wait * 1e-9
}

/// The run-queue wait of every thread of the processes `pids`, kept as the
/// largest value seen per thread (sampled while they run, so a thread's last
/// moments before it exits can be missed).
final class RunQueueSampler {
    private var latest: [String: Double] = [:]
    private var baseline: [String: Double] = [:]

    func sample(_ pids: [Int32], asBaseline: Bool = false) {
        for pid in pids {
            let tasks = "/proc/\(pid)/task"
            for tid in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
                guard let wait = runQueueWaitSeconds("\(tasks)/\(tid)/schedstat") else { continue }
                let key = "\(pid)/\(tid)"
                latest[key] = max(latest[key] ?? 0, wait)
                if asBaseline { baseline[key] = wait }
            }
        }
    }

    /// Seconds waited since the baseline, over every thread seen.
    var waited: Double { latest.reduce(0) { $0 + $1.value - (baseline[$1.key] ?? 0) } }
}

/// User + system CPU seconds a live process has used so far (`/proc/PID/stat`,
/// fields 14 and 15, 10 ms ticks); nil once it is gone.
func liveProcessCPUSeconds(_ pid: Int32) -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return nil }
    // After "pid (comm)": state is field 3, utime 14, stime 15.
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / 100
}
