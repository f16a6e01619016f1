import Foundation

/// One line of a chart: points joined in order, each marked.
struct PlotSeries {
    var name: String
    var points: [(x: Double, y: Double)]
    var color: String
    var dashed = false
}

/// A line chart as SVG text: linear axes from zero, ticks at round values,
/// a legend in the top left corner.
func svgLineChart(title: String, xLabel: String, yLabel: String, series: [PlotSeries]) -> String {
    let width = 640.0
    let height = 400.0
    let left = 70.0
    let right = 20.0
    let top = 40.0
    let bottom = 50.0
    let allX = series.flatMap { $0.points.map(\.x) }
    let allY = series.flatMap { $0.points.map(\.y) }
    let xMax = niceCeiling(allX.max() ?? 1)
    let yMax = niceCeiling((allY.max() ?? 1) * 1.1)
    func px(_ x: Double) -> Double { left + x / xMax * (width - left - right) }
    func py(_ y: Double) -> Double { height - bottom - y / yMax * (height - top - bottom) }
    func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: value < 1 ? "%.2f" : "%.1f", value)
    }
    var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
        viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(width / 2)" y="22" text-anchor="middle" font-size="15">\(escape(title))</text>

        """
    for step in 0...5 {
        let y = yMax * Double(step) / 5
        svg += "<line x1=\"\(left)\" y1=\"\(py(y))\" x2=\"\(width - right)\" y2=\"\(py(y))\" stroke=\"#ddd\"/>\n"
        svg += "<text x=\"\(left - 6)\" y=\"\(py(y) + 4)\" text-anchor=\"end\">\(number(y))</text>\n"
    }
    let xTicks = Array(Set(allX)).sorted()
    for x in xTicks {
        svg += "<line x1=\"\(px(x))\" y1=\"\(top)\" x2=\"\(px(x))\" y2=\"\(height - bottom)\" stroke=\"#eee\"/>\n"
        svg += "<text x=\"\(px(x))\" y=\"\(height - bottom + 16)\" text-anchor=\"middle\">\(number(x))</text>\n"
    }
    svg += """
        <line x1="\(left)" y1="\(height - bottom)" x2="\(width - right)" y2="\(height - bottom)" stroke="black"/>
        <line x1="\(left)" y1="\(top)" x2="\(left)" y2="\(height - bottom)" stroke="black"/>
        <text x="\((left + width - right) / 2)" y="\(height - 12)" text-anchor="middle">\(escape(xLabel))</text>
        <text transform="translate(18 \((top + height - bottom) / 2)) rotate(-90)" text-anchor="middle">\
        \(escape(yLabel))</text>

        """
    for (index, line) in series.enumerated() {
        let path = line.points.map { "\(px($0.x)),\(py($0.y))" }.joined(separator: " ")
        let dash = line.dashed ? " stroke-dasharray=\"6 4\"" : ""
        svg += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(line.color)\" stroke-width=\"2\"\(dash)/>\n"
        for point in line.points {
            svg += "<circle cx=\"\(px(point.x))\" cy=\"\(py(point.y))\" r=\"3\" fill=\"\(line.color)\"/>\n"
        }
        let legendY = top + 8 + Double(index) * 16
        svg += "<line x1=\"\(left + 10)\" y1=\"\(legendY)\" x2=\"\(left + 34)\" y2=\"\(legendY)\" "
        svg += "stroke=\"\(line.color)\" stroke-width=\"2\"\(dash)/>\n"
        svg += "<text x=\"\(left + 40)\" y=\"\(legendY + 4)\">\(escape(line.name))</text>\n"
    }
    return svg + "</svg>\n"
}

/// 1, 2 or 5 times a power of ten, at least `value`.
private func niceCeiling(_ value: Double) -> Double {
    guard value > 0 else { return 1 }
    let power = pow(10, (log10(value)).rounded(.down))
    for factor in [1.0, 2, 5, 10] where factor * power >= value { return factor * power }
    return 10 * power
}

private func escape(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        .replacingOccurrences(of: ">", with: "&gt;")
}

/// Writes `svg` to `name` in the directory of the results file.
func writeChart(_ svg: String, named name: String, besides jsonPath: String, report: Report) {
    let url = URL(fileURLWithPath: jsonPath).deletingLastPathComponent().appendingPathComponent(name)
    do {
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(svg.utf8).write(to: url)
    } catch {
        report.notes.append("chart \(name) not written: \(error)")
    }
}

/// The density and fan-out curves, as SVG next to the results file.
func writeScalingCharts(
    density: [String: [(DensityRun, FFmpegDensityRun?)]], decoders: [(DensityRun, FFmpegDensityRun?)],
    fanOut: [FanOutRun], jsonPath: String, report: Report
) {
    let colors = ["ultrafast": "#1f77b4", "superfast": "#d62728"]
    if !density.isEmpty {
        var sessions: [PlotSeries] = []
        var cpu: [PlotSeries] = []
        var latency: [PlotSeries] = []
        for (preset, runs) in density.sorted(by: { $0.key > $1.key }) {
            let color = colors[preset] ?? "#2ca02c"
            let n = runs.map { Double($0.0.sessions) }
            sessions.append(
                PlotSeries(
                    name: "ours, x264 \(preset)", points: zip(n, runs.map { Double($0.0.realTime) }).map { ($0, $1) },
                    color: color))
            cpu.append(
                PlotSeries(
                    name: "ours, x264 \(preset)",
                    points: zip(n, runs.map { $0.0.cpuMillisecondsPerFrame }).map { ($0, $1) }, color: color))
            let theirs = runs.compactMap { run in run.1.map { (Double(run.0.sessions), $0) } }
            if !theirs.isEmpty {
                sessions.append(
                    PlotSeries(
                        name: "ffmpeg processes, \(preset)", points: theirs.map { ($0.0, Double($0.1.realTime)) },
                        color: color, dashed: true))
                cpu.append(
                    PlotSeries(
                        name: "ffmpeg processes, \(preset)",
                        points: theirs.map { ($0.0, $0.1.cpuMillisecondsPerFrame) }, color: color, dashed: true))
            }
            latency.append(
                PlotSeries(
                    name: "p50, x264 \(preset)", points: zip(n, runs.map { $0.0.latencyP50 * 1000 }).map { ($0, $1) },
                    color: color))
            latency.append(
                PlotSeries(
                    name: "p99, x264 \(preset)", points: zip(n, runs.map { $0.0.latencyP99 * 1000 }).map { ($0, $1) },
                    color: color, dashed: true))
            let theirLatency = runs.compactMap { run in run.1?.tally.map { (Double(run.0.sessions), $0.p50 * 1000) } }
            if !theirLatency.isEmpty {
                latency.append(PlotSeries(name: "ffmpeg p50, \(preset)", points: theirLatency, color: "#ff7f0e"))
            }
        }
        if !decoders.isEmpty {
            let n = decoders.map { Double($0.0.sessions) }
            sessions.append(
                PlotSeries(
                    name: "ours, decode only", points: zip(n, decoders.map { Double($0.0.realTime) }).map { ($0, $1) },
                    color: "#2ca02c"))
            let theirs = decoders.compactMap { run in run.1.map { (Double(run.0.sessions), Double($0.realTime)) } }
            if !theirs.isEmpty {
                sessions.append(
                    PlotSeries(name: "ffmpeg -re, decode only", points: theirs, color: "#2ca02c", dashed: true))
            }
        }
        let all = Set(density.values.flatMap { $0.map { Double($0.0.sessions) } }).sorted()
        sessions.append(PlotSeries(name: "sessions run", points: all.map { ($0, $0) }, color: "#999", dashed: true))
        writeChart(
            svgLineChart(
                title: "720p30 sessions meeting the density criterion (2 cores)", xLabel: "sessions run (N)",
                yLabel: "sessions (decode only: real-time)", series: sessions),
            named: "density-sessions.svg", besides: jsonPath, report: report)
        writeChart(
            svgLineChart(
                title: "CPU per frame, encode + RTP + decode", xLabel: "sessions (N)", yLabel: "CPU ms per frame",
                series: cpu),
            named: "density-cpu.svg", besides: jsonPath, report: report)
        writeChart(
            svgLineChart(
                title: "End-to-end latency vs sessions", xLabel: "sessions (N)", yLabel: "ms (submit → decoded)",
                series: latency),
            named: "density-latency.svg", besides: jsonPath, report: report)
    }
    if !fanOut.isEmpty {
        let m = fanOut.map { Double($0.receivers) }
        let series = [
            PlotSeries(
                name: "RTPFanOutSender (sendmmsg, GSO)", points: zip(m, fanOut.map(\.cores)).map { ($0, $1) },
                color: "#1f77b4"),
            PlotSeries(
                name: "one sendmsg per datagram", points: zip(m, fanOut.map(\.referenceCores)).map { ($0, $1) },
                color: "#d62728", dashed: true),
            PlotSeries(
                name: "target at 200: 0.5 core", points: [(0, 0.5), (m.max() ?? 200, 0.5)], color: "#999", dashed: true),
        ]
        writeChart(
            svgLineChart(
                title: "Fan-out of one 2 Mbit/s stream: sending CPU", xLabel: "receivers (M)", yLabel: "cores",
                series: series),
            named: "fanout-cpu.svg", besides: jsonPath, report: report)
    }
}
