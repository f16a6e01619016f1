// The rmcat section's SVG: rates and capacity against time above, queue delay against time below.

import Foundation
import TestSupport

/// Two stacked time charts of a trial: each media flow's send rate and
/// target, the TCP-like flows' delivered rates and the capacity (Mb/s); each
/// flow's largest queue wait per 100 ms (ms).
func rmcatChart(_ result: CongestionTrialResult) -> String {
    let colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    let duration = result.configuration.duration.benchSeconds
    var rates: [TimeSeries] = []
    var delays: [TimeSeries] = []
    for (index, flow) in result.flows.enumerated() {
        let color = colors[index % colors.count]
        // From the flow's start: before it the controller has only its start rate.
        let samples = flow.samples.filter { $0.time > flow.flow.start }
        // Send rate over 500 ms windows, every 100 ms.
        let sent = samples.map { sample in
            (sample.time.benchSeconds, flow.sendRate(from: sample.time - .milliseconds(500), to: sample.time) / 1e6)
        }
        rates.append(TimeSeries(name: "flow \(flow.flow.id) sent", points: sent, color: color))
        rates.append(
            TimeSeries(
                name: "flow \(flow.flow.id) target",
                points: samples.map { ($0.time.benchSeconds, Double($0.target) / 1e6) }, color: color,
                dashed: true))
        delays.append(
            TimeSeries(
                name: "flow \(flow.flow.id)",
                points: samples.map { ($0.time.benchSeconds, $0.queueDelay.benchSeconds * 1000) }, color: color))
    }
    for (id, buckets) in result.tcpDeliveredBytes.sorted(by: { $0.key < $1.key }) {
        let interval = result.configuration.sampleInterval.benchSeconds
        var points: [(Double, Double)] = []
        for start in stride(from: 0, to: buckets.count - 4, by: 5) {
            let bytes = buckets[start..<start + 5].reduce(0, +)
            points.append((Double(start + 5) * interval, Double(bytes * 8) / (5 * interval) / 1e6))
        }
        rates.append(TimeSeries(name: "TCP-like flow \(id) delivered", points: points, color: "#ff7f0e"))
    }
    for (link, name) in [(result.configuration.forward, "capacity")]
        + (result.flows.contains { $0.flow.direction == .backward }
            ? [(result.configuration.reverse, "backward capacity")] : [])
    {
        var points: [(Double, Double)] = []
        for (index, step) in link.capacity.steps.enumerated() {
            let end =
                index + 1 < link.capacity.steps.count ? link.capacity.steps[index + 1].start.benchSeconds : duration
            points.append((step.start.benchSeconds, Double(step.bitsPerSecond) / 1e6))
            points.append((end, Double(step.bitsPerSecond) / 1e6))
        }
        rates.append(TimeSeries(name: name, points: points, color: name == "capacity" ? "black" : "#7f7f7f"))
    }
    let title = "RMCAT \(result.configuration.name) (RFC 8867)"
    let top = timeChart(title: "\(title): rates", yLabel: "Mb/s", duration: duration, series: rates, y: 0)
    let bottom = timeChart(title: "\(title): queue delay", yLabel: "ms", duration: duration, series: delays, y: 360)
    return """
        <svg xmlns="http://www.w3.org/2000/svg" width="720" height="720" viewBox="0 0 720 720" \
        font-family="sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        \(top)\(bottom)</svg>

        """
}

/// One line of a time chart.
struct TimeSeries {
    var name: String
    var points: [(Double, Double)]
    var color: String
    var dashed = false
}

/// A 720 × 360 chart placed at `y`: time in seconds across, ticks every 10 s, a legend top right.
private func timeChart(title: String, yLabel: String, duration: Double, series: [TimeSeries], y: Double) -> String {
    let (width, height, left, right, top, bottom) = (720.0, 360.0, 60.0, 20.0, 30.0, 40.0)
    let peak = series.flatMap { $0.points.map(\.1) }.max() ?? 1
    let yMax = roundedUp(peak * 1.05)
    func px(_ x: Double) -> Double { left + x / duration * (width - left - right) }
    func py(_ value: Double) -> Double { y + height - bottom - value / yMax * (height - top - bottom) }
    var svg = "<text x=\"\(width / 2)\" y=\"\(y + 18)\" text-anchor=\"middle\" font-size=\"14\">\(title)</text>\n"
    for step in 0...5 {
        let value = yMax * Double(step) / 5
        svg +=
            "<line x1=\"\(left)\" y1=\"\(py(value))\" x2=\"\(width - right)\" y2=\"\(py(value))\" stroke=\"#ddd\"/>\n"
        svg +=
            "<text x=\"\(left - 6)\" y=\"\(py(value) + 4)\" text-anchor=\"end\">\(String(format: "%g", value))</text>\n"
    }
    for second in stride(from: 0.0, through: duration, by: 10) {
        svg +=
            "<text x=\"\(px(second))\" y=\"\(y + height - bottom + 16)\" text-anchor=\"middle\">\(Int(second))</text>\n"
    }
    svg += "<text x=\"\(width / 2)\" y=\"\(y + height - 8)\" text-anchor=\"middle\">time (s)</text>\n"
    svg += "<text transform=\"translate(16 \(y + height / 2)) rotate(-90)\" text-anchor=\"middle\">\(yLabel)</text>\n"
    for (index, line) in series.enumerated() {
        let path = line.points.map { String(format: "%.1f,%.1f", px($0.0), py($0.1)) }.joined(separator: " ")
        let dash = line.dashed ? " stroke-dasharray=\"5 3\"" : ""
        svg += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(line.color)\" stroke-width=\"1.2\"\(dash)/>\n"
        let legendY = y + top + 10 + Double(index) * 14
        svg += "<line x1=\"\(width - 200)\" y1=\"\(legendY)\" x2=\"\(width - 180)\" y2=\"\(legendY)\" "
        svg += "stroke=\"\(line.color)\" stroke-width=\"2\"\(dash)/>\n"
        svg += "<text x=\"\(width - 175)\" y=\"\(legendY + 4)\">\(line.name)</text>\n"
    }
    return svg
}

/// 1, 2 or 5 times a power of ten, at least `value`.
private func roundedUp(_ value: Double) -> Double {
    guard value > 0 else { return 1 }
    let power = pow(10, log10(value).rounded(.down))
    for factor in [1.0, 2, 5, 10] where factor * power >= value { return factor * power }
    return 10 * power
}
