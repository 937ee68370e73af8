import RigCore
import RigFormat
import RigSky

/// Draws a program as a self-contained SVG for `rig plot`: per axis, position, velocity and
/// acceleration over time as the step function plays it, with the limits and every frame
/// that breaks one.
///
/// The program is played like `rig check` plays it (advancing at every `.ready`), so the
/// picture is what the rig would do. Soft limits show as shaded bands outside them,
/// `maxVelocity` and `maxAcceleration` as dashed lines, keyframes as dots (continuous programs) and step arrivals
/// as dotted lines (stepped programs). Frames that break a limit, as `LimitMonitor` sees
/// them, are red dots (`class="violation"`); a feasible program has no red at all. Lines are
/// thinned to about 2000 points each, keeping each stretch's extremes; marks (violation
/// dots, keyframes, step arrivals) to one per pixel they land on, so every pixel that has
/// a violation shows red and a program of a million keyframes still makes a plot of a few
/// MB, not hundreds. A paced stepped program (a timelapse, a stepped track) gets light
/// panels under the axes: its planned exposure, its interval and the sun's altitude.
public enum PlotRenderer {
    /// The SVG document for `program` started from `startPose` (one position per rig axis).
    /// A panorama is replanned from `startPose`, as `rig play` does.
    /// - Parameter maxTicks: a bound so a runaway program cannot hang the plot.
    public static func svg(program: Program, startPose: [Double], maxTicks: Int = 5_000_000) -> String {
        let program = program.startingFrom(startPose)
        let samples = PlotSamples(program: program, startPose: startPose, maxTicks: maxTicks)
        return PlotLayout(program: program, samples: samples).render()
    }

    /// Most points drawn per line.
    public static let maxPointsPerLine = 2000
}

private let red = "#d62728"

private struct PlotLayout {
    let program: Program
    let samples: PlotSamples

    let width = 960.0
    let left = 84.0, right = 24.0
    let titleHeight = 64.0
    let positionHeight = 170.0, velocityHeight = 120.0, accelerationHeight = 120.0
    let axisHeader = 26.0, gapAfterPanel = 40.0, gapAfterAxis = 18.0
    var plotWidth: Double { width - left - right }
    var axisBlock: Double {
        axisHeader + positionHeight + gapAfterPanel + velocityHeight + gapAfterPanel + accelerationHeight + gapAfterPanel + gapAfterAxis
    }

    var endSeconds: Double { max(samples.times.last ?? 0, program.rig.tickSeconds) }

    /// A paced stepped program's frames on the clock (a timelapse, a stepped track): the
    /// light panels under the axes draw their exposure, interval and the sun's altitude.
    /// The sun only from a real start (the program's `"start"` or the track's).
    var light: LightCurves? {
        let start = program.start?.unix ?? program.track?.startUnix
        guard let frames = program.frameClock(trigger: program.trigger, startUnix: start ?? 0), frames.count > 1 else { return nil }
        let curves = LightCurves(
            seconds: frames.map(\.seconds), intervals: frames.map(\.intervalSeconds),
            exposureEV: frames.contains { $0.exposure != nil } ? frames.map { $0.exposure?.ev100 ?? .nan } : nil,
            sunAltitude: start != nil && frames.contains { $0.sunAltitude != nil } ? frames.map { $0.sunAltitude ?? .nan } : nil)
        return curves
    }
    let lightPanelHeight = 110.0

    func render() -> String {
        let rig = program.rig
        let light = self.light
        let lightHeight = light.map { axisHeader + Double($0.panelCount) * (lightPanelHeight + gapAfterPanel) + gapAfterAxis } ?? 0
        let height = titleHeight + Double(rig.axes.count) * axisBlock + lightHeight
        var w = SVGWriter()
        w.line(##"<?xml version="1.0" encoding="UTF-8"?>"##)
        w.line(
            ##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(SVGWriter.px(width))" height="\##(SVGWriter.px(height))" viewBox="0 0 \##(SVGWriter.px(width)) \##(SVGWriter.px(height))" font-family="sans-serif" font-size="11">"##
        )
        let title = "\(program.file) — rig \"\(rig.name)\""
        w.line("<title>\(XMLText.escape(title))</title>")
        w.line(##"<rect x="0" y="0" width="100%" height="100%" fill="white"/>"##)
        w.line(##"<text x="\##(SVGWriter.px(left))" y="24" font-size="16" font-weight="bold">\##(XMLText.escape(title))</text>"##)
        w.line(##"<text x="\##(SVGWriter.px(left))" y="44" fill="#444">\##(XMLText.escape(summary))</text>"##)
        for i in rig.axes.indices {
            drawAxis(i, top: titleHeight + Double(i) * axisBlock, into: &w)
        }
        if let light { drawLight(light, top: titleHeight + Double(rig.axes.count) * axisBlock, into: &w) }
        w.line("</svg>")
        return w.text
    }

    var summary: String {
        let broken = samples.axes.reduce(0) { $0 + $1.violations.count }
        var parts = ["\(program.kind.rawValue) program", "\(rounded(endSeconds)) s at \(format(program.rig.loopRateHz)) Hz"]
        if program.isStepped { parts.append("\(program.steps.count) step\(program.steps.count == 1 ? "" : "s")") }
        parts.append(broken == 0 ? "within all limits" : "\(broken) frame-limit violation\(broken == 1 ? "" : "s") (red)")
        if samples.truncated { parts.append("stopped drawing after \(samples.times.count - 1) ticks") }
        return parts.joined(separator: " · ")
    }

    func drawAxis(_ i: Int, top: Double, into w: inout SVGWriter) {
        let axis = program.rig.axes[i]
        let data = samples.axes[i]
        w.line(##"<g class="axis" data-axis="\##(XMLText.escape(axis.name))">"##)
        let limits =
            "soft limits \(format(axis.softMin))…\(format(axis.softMax))\(axis.unit), maxVelocity \(format(axis.maxVelocity))\(axis.unit)/s, maxAcceleration \(format(axis.maxAcceleration))\(axis.unit)/s², maxJerk \(format(axis.maxJerk))\(axis.unit)/s³ (moves)"
        w.line(
            ##"<text x="\##(SVGWriter.px(left))" y="\##(SVGWriter.px(top + 17))" font-size="13" font-weight="bold">\##(XMLText.escape("axis \"\(axis.name)\""))<tspan font-weight="normal" fill="#555">&#160;— \##(XMLText.escape(limits))</tspan></text>"##
        )

        // Position panel: the band outside the soft limits shaded.
        let lowData = data.positions.min() ?? axis.softMin
        let highData = data.positions.max() ?? axis.softMax
        var low = min(axis.softMin, lowData)
        var high = max(axis.softMax, highData)
        let pad = max(high - low, 1) * 0.06
        low -= pad
        high += pad
        let position = Panel(
            x: left, y: top + axisHeader, width: plotWidth, height: positionHeight,
            t1: endSeconds, low: low, high: high)
        w.line(##"<g class="panel position" data-axis="\##(XMLText.escape(axis.name))">"##)
        w.line(
            ##"<rect class="outside-limits" x="\##(SVGWriter.px(position.x))" y="\##(SVGWriter.px(position.y))" width="\##(SVGWriter.px(position.width))" height="\##(SVGWriter.px(position.mapY(axis.softMax) - position.y))" fill="#888" fill-opacity="0.2"/>"##
        )
        w.line(
            ##"<rect class="outside-limits" x="\##(SVGWriter.px(position.x))" y="\##(SVGWriter.px(position.mapY(axis.softMin)))" width="\##(SVGWriter.px(position.width))" height="\##(SVGWriter.px(position.y + position.height - position.mapY(axis.softMin)))" fill="#888" fill-opacity="0.2"/>"##
        )
        position.frame(yLabel: "position (\(axis.unit))", into: &w)
        drawStepArrivals(position, labelled: true, into: &w)
        position.polyline(times: samples.times, values: data.positions, color: "#1f77b4", into: &w)
        drawKeyframes(axis: i, panel: position, into: &w)
        var marked = PixelMarks()
        for v in data.violations where v.limit == .softMin || v.limit == .softMax {
            position.violation(time: samples.times[v.index], value: data.positions[v.index], limit: v.limit, marked: &marked, into: &w)
        }
        w.line("</g>")

        // Velocity panel: ±maxVelocity dashed.
        let velocity = drawLimitPanel(
            "velocity", axis: axis, y: position.y + positionHeight + gapAfterPanel, height: velocityHeight, endSeconds: endSeconds,
            yLabel: "velocity (\(axis.unit)/s)", limit: axis.maxVelocity, values: data.velocities, color: "#2ca02c",
            violations: data.violations.filter { $0.limit == .velocity }, into: &w)
        // Acceleration panel: ±maxAcceleration dashed; acceleration and jerk violations here
        // (a jerk violation is where the acceleration jumps).
        _ = drawLimitPanel(
            "acceleration", axis: axis, y: velocity.y + velocityHeight + gapAfterPanel, height: accelerationHeight,
            endSeconds: endSeconds, yLabel: "acceleration (\(axis.unit)/s²)", limit: axis.maxAcceleration,
            values: data.accelerations, color: "#9467bd",
            violations: data.violations.filter { $0.limit == .acceleration || $0.limit == .jerk }, into: &w)
        w.line("</g>")
    }

    /// The frames' light: planned exposure (EV100, a ramp's plan), the interval after each
    /// frame, and the sun's altitude (the horizon and civil twilight's −6° dashed), over the
    /// time into the shoot.
    func drawLight(_ light: LightCurves, top: Double, into w: inout SVGWriter) {
        w.line(##"<g class="light">"##)
        w.line(
            ##"<text x="\##(SVGWriter.px(left))" y="\##(SVGWriter.px(top + 17))" font-size="13" font-weight="bold">frames on the clock<tspan font-weight="normal" fill="#555">&#160;— \##(light.seconds.count) frames over \##(rounded(light.seconds.last ?? 0)) s</tspan></text>"##
        )
        let end = max(light.seconds.last ?? 0, 1)
        var y = top + axisHeader
        var curves: [(name: String, label: String, values: [Double], color: String, marks: [Double])] = []
        if let ev = light.exposureEV { curves.append(("exposure", "exposure (EV100)", ev, "#8c564b", [])) }
        curves.append(("interval", "interval (s)", light.intervals, "#17becf", []))
        if let sun = light.sunAltitude { curves.append(("sun", "sun altitude (°)", sun, "#e6ab02", [0, -6])) }
        for curve in curves {
            let known = curve.values.filter(\.isFinite) + curve.marks
            var low = known.min() ?? 0
            var high = known.max() ?? 1
            let pad = max(high - low, 1) * 0.08
            low -= pad
            high += pad
            let panel = Panel(x: left, y: y, width: plotWidth, height: lightPanelHeight, t1: end, low: low, high: high)
            w.line(##"<g class="panel \##(curve.name)">"##)
            panel.frame(yLabel: curve.label, xLabel: "time into the shoot (s)", into: &w)
            for mark in curve.marks {
                let my = SVGWriter.px(panel.mapY(mark))
                w.line(
                    ##"<line class="\##(curve.name)-mark" x1="\##(SVGWriter.px(panel.x))" y1="\##(my)" x2="\##(SVGWriter.px(panel.x + panel.width))" y2="\##(my)" stroke="#999" stroke-width="1" stroke-dasharray="4 4"/>"##
                )
            }
            let finite = curve.values.indices.filter { curve.values[$0].isFinite }
            panel.polyline(times: finite.map { light.seconds[$0] }, values: finite.map { curve.values[$0] }, color: curve.color, into: &w)
            w.line("</g>")
            y += lightPanelHeight + gapAfterPanel
        }
        w.line("</g>")
    }

    /// A panel of a quantity limited to ±`limit` (velocity, acceleration): the limits
    /// dashed, step arrivals, the curve, and the frames that broke a limit.
    private func drawLimitPanel(
        _ name: String, axis: Axis, y: Double, height: Double, endSeconds: Double, yLabel: String, limit: Double,
        values: [Double], color: String, violations: [(index: Int, limit: Limit)], into w: inout SVGWriter
    ) -> Panel {
        let peak = max(limit, values.map(abs).max() ?? 0) * 1.12
        let panel = Panel(x: left, y: y, width: plotWidth, height: height, t1: endSeconds, low: -peak, high: peak)
        w.line(##"<g class="panel \##(name)" data-axis="\##(XMLText.escape(axis.name))">"##)
        panel.frame(yLabel: yLabel, into: &w)
        for bound in [limit, -limit] {
            let ly = SVGWriter.px(panel.mapY(bound))
            w.line(
                ##"<line class="\##(name)-limit" x1="\##(SVGWriter.px(panel.x))" y1="\##(ly)" x2="\##(SVGWriter.px(panel.x + panel.width))" y2="\##(ly)" stroke="#ff7f0e" stroke-width="1" stroke-dasharray="6 4"/>"##
            )
        }
        drawStepArrivals(panel, labelled: false, into: &w)
        panel.polyline(times: samples.times, values: values, color: color, into: &w)
        var marked = PixelMarks()
        for v in violations {
            panel.violation(time: samples.times[v.index], value: values[v.index], limit: v.limit, marked: &marked, into: &w)
        }
        w.line("</g>")
        return panel
    }

    func drawStepArrivals(_ panel: Panel, labelled: Bool, into w: inout SVGWriter) {
        var marked = PixelMarks()
        for arrival in samples.stepArrivals {
            guard marked.admit(x: panel.mapX(arrival.time), y: 0) else { continue }
            let x = SVGWriter.px(panel.mapX(arrival.time))
            w.line(
                ##"<line class="step-arrival" x1="\##(x)" y1="\##(SVGWriter.px(panel.y))" x2="\##(x)" y2="\##(SVGWriter.px(panel.y + panel.height))" stroke="#777" stroke-width="1" stroke-dasharray="2 3"/>"##
            )
            if labelled {
                w.line(##"<text x="\##(x)" y="\##(SVGWriter.px(panel.y - 3))" text-anchor="middle" fill="#555" font-size="10">\##(arrival.step + 1)</text>"##)
            }
        }
    }

    func drawKeyframes(axis i: Int, panel: Panel, into w: inout SVGWriter) {
        guard case .continuous(let tracks, _) = program.motion, let track = tracks[i], let start = samples.pathStartSeconds else { return }
        var marked = PixelMarks()
        for key in track.keys {
            let t = start + key.time
            guard t <= endSeconds, marked.admit(x: panel.mapX(t), y: panel.mapY(key.value)) else { continue }
            w.line(
                ##"<circle class="keyframe" cx="\##(SVGWriter.px(panel.mapX(t)))" cy="\##(SVGWriter.px(panel.mapY(key.value)))" r="3.5" fill="#222"><title>key at \##(rounded(key.time)) s: \##(rounded(key.value))</title></circle>"##
            )
        }
    }
}

/// A paced program's frames for the light panels: each frame's time into the shoot, the
/// interval after it, its planned exposure and the sun's altitude (NaN where unknown).
struct LightCurves {
    var seconds: [Double]
    var intervals: [Double]
    var exposureEV: [Double]?
    var sunAltitude: [Double]?
    var panelCount: Int { 1 + (exposureEV == nil ? 0 : 1) + (sunAltitude == nil ? 0 : 1) }
}

/// One plot area: time across, a quantity up.
private struct Panel {
    let x, y, width, height: Double
    let t1: Double
    let low, high: Double

    func mapX(_ t: Double) -> Double { x + width * t / t1 }
    func mapY(_ v: Double) -> Double { y + height * (high - v) / (high - low) }

    func frame(yLabel: String, xLabel: String = "time (s)", into w: inout SVGWriter) {
        w.line(
            ##"<rect x="\##(SVGWriter.px(x))" y="\##(SVGWriter.px(y))" width="\##(SVGWriter.px(width))" height="\##(SVGWriter.px(height))" fill="none" stroke="#bbb"/>"##
        )
        let yTicks = niceTicks(low, high, count: 5)
        for v in yTicks.values {
            let py = SVGWriter.px(mapY(v))
            w.line(##"<line x1="\##(SVGWriter.px(x))" y1="\##(py)" x2="\##(SVGWriter.px(x + width))" y2="\##(py)" stroke="#eee"/>"##)
            w.line(
                ##"<text x="\##(SVGWriter.px(x - 6))" y="\##(SVGWriter.px(mapY(v) + 4))" text-anchor="end" fill="#333">\##(SVGWriter.label(v, step: yTicks.step))</text>"##
            )
        }
        let tTicks = niceTicks(0, t1, count: 10)
        for t in tTicks.values {
            let px = SVGWriter.px(mapX(t))
            w.line(##"<line x1="\##(px)" y1="\##(SVGWriter.px(y + height))" x2="\##(px)" y2="\##(SVGWriter.px(y + height + 4))" stroke="#333"/>"##)
            w.line(
                ##"<text x="\##(px)" y="\##(SVGWriter.px(y + height + 16))" text-anchor="middle" fill="#333">\##(SVGWriter.label(t, step: tTicks.step))</text>"##
            )
        }
        w.line(
            ##"<text x="\##(SVGWriter.px(x + width))" y="\##(SVGWriter.px(y + height + 30))" text-anchor="end" fill="#333">\##(XMLText.escape(xLabel))</text>"##
        )
        let cy = SVGWriter.px(y + height / 2)
        w.line(
            ##"<text x="\##(SVGWriter.px(x - 56))" y="\##(cy)" text-anchor="middle" fill="#333" transform="rotate(-90 \##(SVGWriter.px(x - 56)) \##(cy))">\##(XMLText.escape(yLabel))</text>"##
        )
    }

    func polyline(times: [Double], values: [Double], color: String, into w: inout SVGWriter) {
        guard !values.isEmpty else { return }
        var points = ""
        for i in decimatedIndices(values: values, limit: PlotRenderer.maxPointsPerLine) {
            if !points.isEmpty { points += " " }
            points += SVGWriter.px(mapX(times[i])) + "," + SVGWriter.px(mapY(values[i]))
        }
        w.line(##"<polyline class="trace" points="\##(points)" fill="none" stroke="\##(color)" stroke-width="1.5" stroke-linejoin="round"/>"##)
    }

    func violation(time: Double, value: Double, limit: Limit, marked: inout PixelMarks, into w: inout SVGWriter) {
        guard marked.admit(x: mapX(time), y: mapY(value)) else { return }
        w.line(
            ##"<circle class="violation" cx="\##(SVGWriter.px(mapX(time)))" cy="\##(SVGWriter.px(mapY(value)))" r="3" fill="\##(red)"><title>t=\##(rounded(time)) s: \##(XMLText.escape(limit.rawValue))</title></circle>"##
        )
    }
}

/// The pixels a panel has marked: a second mark on the same pixel would draw nothing new.
struct PixelMarks {
    private var seen: Set<Int> = []

    /// True the first time a mark lands on the pixel at (`x`, `y`).
    mutating func admit(x: Double, y: Double) -> Bool {
        guard x.isFinite, y.isFinite else { return false }
        let column = Int(min(max(x.rounded(), -1e6), 1e6))
        let row = Int(min(max(y.rounded(), -1e6), 1e6))
        return seen.insert(column &* 4_000_003 &+ row).inserted
    }
}
