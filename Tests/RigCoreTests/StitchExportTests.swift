import Foundation
import Testing

@testable import RigCore
@testable import RigFormat
@testable import RigStitch

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// A pan/tilt rig object for inline programs: pan −90…90° and tilt −45…45° on
/// 1000–2000 µs, on `output`.
func panTiltRig(output: String = #"{"type": "sim"}"#) -> String {
    #"""
    {"name": "head", "output": \#(output), "axes": [
      {"name": "pan", "channel": 0, "pulseUs": [1000, 2000], "angleDeg": [-90, 90], "home": 0, "softLimits": [-90, 90], "maxVelocity": 90, "maxAcceleration": 180},
      {"name": "tilt", "channel": 1, "pulseUs": [1000, 2000], "angleDeg": [-45, 45], "home": 0, "softLimits": [-45, 45], "maxVelocity": 60, "maxAcceleration": 120}
    ]}
    """#
}

@Suite struct StitchExportTests {
    let names: ImageNamePattern
    init() throws { names = try ImageNamePattern("IMG_%04d.JPG") }

    /// Two shots at pan −20 and 20 with a 60×40° lens (30 % overlap allows 42° steps).
    func twoShotPanorama(orientation: String = "landscape") throws -> Program {
        try parseProgram(
            """
            {"rig": \(panTiltRig()), "kind": "panorama", "settleSeconds": 0.5,
             "panorama": {"lens": {"horizontalFovDeg": 60, "verticalFovDeg": 40, "orientation": "\(orientation)"}, "overlapPercent": 30, "pan": [-20, 20], "tilt": [0, 0]}}
            """, file: "two.json")
    }

    // MARK: names

    @Test func namePatternsFormatLikePrintf() throws {
        #expect(names.name(1) == "IMG_0001.JPG")
        #expect(names.name(12345) == "IMG_12345.JPG")
        #expect(try ImageNamePattern("DSC%d.ARW").name(7) == "DSC7.ARW")
        #expect(try ImageNamePattern("%5i|").name(42) == "   42|")
        #expect(try ImageNamePattern("%-4u|").name(42) == "42  |")
        #expect(try ImageNamePattern("100%%_%03d.jpg").name(5) == "100%_005.jpg")
    }

    @Test(arguments: ["IMG.JPG", "IMG_%d_%d.JPG", "IMG_%s.JPG", "IMG_%04f.JPG", "IMG_%", "a/%d.jpg", "say \"%d\".jpg", "%123d"])
    func namePatternsWithoutExactlyOneIntegerConversionAreRefused(_ pattern: String) {
        #expect(throws: ImageNamePattern.Problem.self) { try ImageNamePattern(pattern) }
    }

    // MARK: signs

    @Test func panAndTiltBecomeYawAndPitchWithTheSameSigns() {
        #expect(StitchAngles.yaw(panDegrees: 30) == 30)  // right is right
        #expect(StitchAngles.yaw(panDegrees: -30) == -30)
        #expect(StitchAngles.yaw(panDegrees: 190) == -170)  // wrapped into −180…180
        #expect(StitchAngles.yaw(panDegrees: -190) == 170)
        #expect(StitchAngles.yaw(panDegrees: 360) == 0)
        #expect(StitchAngles.yaw(panDegrees: -180) == 180)
        #expect(StitchAngles.pitch(tiltDegrees: 20) == 20)  // up is up
        #expect(StitchAngles.pitch(tiltDegrees: -0.0).sign == .plus)
    }

    // MARK: Hugin

    @Test func huginProjectOfASmallPanorama() throws {
        let program = try twoShotPanorama()
        let project = StitchProject.plan(program, lens: nil, imageSize: PixelSize(width: 6000, height: 4000), names: names, firstNumber: 1)
        let lens = try #require(project.lens)
        // 6000 px over 60° = 100 px/°; the panorama spans ±(20 + 30)° by ±20°.
        #expect(
            HuginProjectWriter.text(project, lens: lens) == """
                # hugin project file
                # written by rig from two.json: 2 images at the positions planned
                p f2 w10000 h4000 v100 n"TIFF_m"
                m i0

                i w6000 h4000 f0 v60 r0 p0 y-20 n"IMG_0001.JPG"
                i w6000 h4000 f0 v=0 r0 p0 y20 n"IMG_0002.JPG"

                """)
    }

    /// A tilted image's top corners reach further in yaw than its centre plus half its
    /// width: the canvas covers them (spherical trigonometry, independent of the sampling).
    @Test func theCanvasCoversATiltedRowsCorners() throws {
        let lens = CameraLens(sensorFieldOfView: FieldOfView(horizontalDegrees: 60, verticalDegrees: 40))
        for pitch in [0.0, 20, 40, -45] {
            let shot = StitchShot(imageNumber: 1, imageName: "a.jpg", step: 1, label: "s", pose: [0, pitch], yawDegrees: 0, pitchDegrees: pitch)
            let project = StitchProject(
                source: "t", axisNames: ["pan", "tilt"], panAxisName: "pan", tiltAxisName: "tilt", lens: lens,
                imageSize: PixelSize(width: 6000, height: 4000), shots: [shot], fromLog: false)
            let p = abs(pitch) * .pi / 180
            let (h, v) = (30.0 * .pi / 180, 20.0 * .pi / 180)
            // The corner nearer the pole: direction (1, tan h, tan v) turned by the pitch.
            let cornerYaw = atan2(tan(h), cos(p) - tan(v) * sin(p)) * 180 / .pi
            let edgePitch = (abs(pitch) + 20)
            let line = try #require(HuginProjectWriter.text(project, lens: lens).split(separator: "\n").first { $0.hasPrefix("p ") })
            let fields = line.split(separator: " ")
            let hfov = try #require(fields.first { $0.hasPrefix("v") }.flatMap { Double($0.dropFirst()) })
            let height = try #require(fields.first { $0.hasPrefix("h") }.flatMap { Double($0.dropFirst()) })
            #expect(abs(hfov - 2 * cornerYaw) < 1e-3, "pitch \(pitch): v\(hfov), corners at ±\(cornerYaw)°")
            // 100 px per degree (6000 px over 60°): the height is the highest edge's pitch, both ways.
            #expect(abs(height - 2 * edgePitch * 100) <= 1, "pitch \(pitch): h\(height)")
        }
    }

    @Test func portraitCameraIsRoll90WithTheSensorsFieldOfView() throws {
        let program = try twoShotPanorama(orientation: "portrait")
        let project = StitchProject.plan(program, lens: nil, imageSize: nil, names: names, firstNumber: 100)
        let lens = try #require(project.lens)
        #expect(lens.rollDegrees == 90)
        #expect(lens.sensorFieldOfView.horizontalDegrees == 60)
        // Portrait: the head sees 40° across, so the pan step shrinks to ≤ 28° → 3 shots.
        let lines = HuginProjectWriter.text(project, lens: lens).split(separator: "\n").filter { $0.hasPrefix("i ") }
        // Default size: 6000 wide, 6000·tan 20°/tan 30° = 3782.49 → 3782 high.
        #expect(
            lines == [
                "i w6000 h3782 f0 v60 r90 p0 y-20 n\"IMG_0100.JPG\"",
                "i w6000 h3782 f0 v=0 r90 p0 y0 n\"IMG_0101.JPG\"",
                "i w6000 h3782 f0 v=0 r90 p0 y20 n\"IMG_0102.JPG\"",
            ])
    }

    @Test func hfovReplacesTheFieldOfViewButNotTheMounting() throws {
        let program = try twoShotPanorama(orientation: "portrait")
        let given = CameraLens(horizontalDegrees: 50, imageSize: PixelSize(width: 6000, height: 4000))
        let project = StitchProject.plan(program, lens: given, imageSize: nil, names: names, firstNumber: 1)
        #expect(project.lens?.sensorFieldOfView.horizontalDegrees == 50)
        #expect(project.lens?.orientation == .portrait)
    }

    // MARK: Papywizard

    @Test func papywizardXMLHasTheStructureImportersRead() throws {
        let program = try parseProgram(
            """
            {"rig": \(panTiltRig()), "kind": "panorama", "settleSeconds": 1.5,
             "panorama": {"lens": {"focalLengthMm": 24, "sensorWidthMm": 23.5, "sensorHeightMm": 15.6, "orientation": "portrait"}, "overlapPercent": 25, "pan": [-40, 40], "tilt": [-10, 30]}}
            """, file: "dir/crop.json")
        let project = StitchProject.plan(program, lens: nil, imageSize: nil, names: names, firstNumber: 1)
        let xml = PapywizardWriter.text(project, lens: try #require(project.lens))
        #if canImport(FoundationXML) || os(macOS)
            let document = try XMLDocument(xmlString: xml)
            let root = try #require(document.rootElement())
            #expect(root.name == "papywizard")
            #expect(root.attribute(forName: "version")?.stringValue == "c")
            func value(_ path: String) throws -> String? { try document.nodes(forXPath: path).first?.stringValue }
            #expect(try value("/papywizard/header/general/title") == "crop.json")
            #expect(try value("/papywizard/header/shooting/@mode") == "mosaic")
            #expect(try value("/papywizard/header/shooting/cameraOrientation") == "portrait")
            #expect(try value("/papywizard/header/shooting/stabilizationDelay") == "1.5")
            #expect(try value("/papywizard/header/lens/@type") == "rectilinear")
            #expect(try value("/papywizard/header/lens/focal") == "24.0")
            // Crop factor: 43.27 mm (full-frame diagonal) / 28.2 mm (23.5 × 15.6) = 1.53.
            #expect(try value("/papywizard/header/camera/sensor/@coef") == "1.53")
            #expect(try value("/papywizard/header/camera/sensor/@ratio") == "3:2")
            let plan = try #require(program.panorama)
            #expect(try value("/papywizard/header/mosaic/nbPicts/@pitch") == String(plan.rows))
            #expect(try value("/papywizard/header/mosaic/nbPicts/@yaw") == String(plan.shotsPerRow.max() ?? 0))
            let picts = try document.nodes(forXPath: "/papywizard/shoot/pict").compactMap { $0 as? XMLElement }
            #expect(picts.count == program.steps.count)
            for (index, pict) in picts.enumerated() {
                #expect(pict.attribute(forName: "id")?.stringValue == String(index + 1))
                #expect(pict.attribute(forName: "bracket")?.stringValue == "1")
                let position = try #require(pict.elements(forName: "position").first)
                let pose = program.steps[index].pose
                #expect(position.attribute(forName: "yaw")?.stringValue == String(format: "%.1f", pose[0]))
                #expect(position.attribute(forName: "pitch")?.stringValue == String(format: "%.1f", pose[1]))
                #expect(position.attribute(forName: "roll")?.stringValue == "90.0")
            }
        #endif
        #expect(xml.hasPrefix("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<papywizard version=\"c\">\n  <header>\n"))
    }

    @Test func aFieldOfViewOnlyLensGetsTheFocalLengthThatGivesItBack() {
        // Hugin's importer spreads the crop factor's diagonal over the image's aspect ratio
        // and computes hfov = 2·atan(width / 2f): that must give the lens's hfov again.
        for (hfov, size) in [(54.0, PixelSize(width: 6000, height: 4000)), (70.0, PixelSize(width: 4000, height: 3000))] {
            let lens = CameraLens(horizontalDegrees: hfov, imageSize: size)
            let (focal, crop) = lens.focalAndCropFactor(imageSize: size)
            let w = Double(size.width)
            let h = Double(size.height)
            let sensorWidth = CameraLens.fullFrameDiagonalMillimetres / crop * w / (w * w + h * h).squareRoot()
            #expect(abs(2 * atan(sensorWidth / (2 * focal)) * 180 / .pi - hfov) < 1e-9)
        }
    }

    // MARK: shot logs

    /// Steps 1, 2, 2 again (a redo), 3; then a resumed run shoots step 4.
    let log = """
        {"event":"start","program":"p.json","programSha256":"\(String(repeating: "ab", count: 32))","steps":4,"startedAt":"2026-11-23T20:00:00Z"}
        {"event":"shot","step":1,"label":"a","pose":{"pan":-30,"tilt":10.5},"startSeconds":2,"endSeconds":2.25}
        {"event":"shot","step":2,"label":"b","pose":{"pan":0,"tilt":10.5},"startSeconds":5,"endSeconds":5.25}
        {"event":"shot","step":2,"label":"b","pose":{"pan":0.1,"tilt":10.5},"startSeconds":9,"endSeconds":9.25,"redo":true}
        {"event":"shot","step":3,"label":"c, the last","pose":{"pan":30,"tilt":10.5},"startSeconds":12,"endSeconds":12.25}
        {"event":"end","reason":"stopped","lastStep":3}
        {"event":"start","program":"p.json","programSha256":"\(String(repeating: "ab", count: 32))","steps":4,"startedAt":"2026-11-23T21:00:00Z","fromStep":4}
        {"event":"shot","step":4,"label":"d","pose":{"pan":200,"tilt":-5},"startSeconds":3,"endSeconds":3.5}
        {"event":"end","reason":"done","lastStep":4}

        """

    @Test func exportTakesTheLastTakeOfEachStepAndNumbersEveryTake() throws {
        let shotLog = try ShotLog(text: log, file: "run.jsonl")
        let project = StitchProject.export(shotLog, file: "run.jsonl", program: nil, lens: nil, imageSize: nil, names: names, firstNumber: 1)
        #expect(project.shots.map(\.step) == [1, 2, 3, 4])
        // Takes 1, 2, 3 (the redo), 4, 5: step 2's image is the third file.
        #expect(project.shots.map(\.imageName) == ["IMG_0001.JPG", "IMG_0003.JPG", "IMG_0004.JPG", "IMG_0005.JPG"])
        #expect(project.shots.map(\.yawDegrees) == [-30, 0.1, 30, -160])
        #expect(project.shots.map(\.pitchDegrees) == [10.5, 10.5, 10.5, -5])
        #expect(project.stitcherProblem == "the lens is missing")
        // Times count from each run's own start.
        #expect(project.shots[0].time == Date(timeIntervalSince1970: 1_795_464_000 + 2))
        #expect(project.shots[3].time == Date(timeIntervalSince1970: 1_795_464_000 + 3600 + 3))
        #expect(
            ShotListWriter.csv(project) == """
                index,step,bracket,label,pan,tilt,startSeconds,endSeconds,image,width,height,ev,time
                1,1,1,"a",-30,10.5,2,2.25,IMG_0001.JPG,,,,2026-11-23T20:00:02.000Z
                2,2,1,"b",0.1,10.5,9,9.25,IMG_0003.JPG,,,,2026-11-23T20:00:09.000Z
                3,3,1,"c, the last",30,10.5,12,12.25,IMG_0004.JPG,,,,2026-11-23T20:00:12.000Z
                4,4,1,"d",200,-5,3,3.5,IMG_0005.JPG,,,,2026-11-23T21:00:03.000Z

                """)
    }

    @Test func exportedPapywizardCarriesTheShotTimes() throws {
        let shotLog = try ShotLog(text: log, file: "run.jsonl")
        let lens = CameraLens(horizontalDegrees: 50, imageSize: PixelSize(width: 6000, height: 4000))
        let project = StitchProject.export(shotLog, file: "run.jsonl", program: nil, lens: lens, imageSize: nil, names: names, firstNumber: 1)
        let xml = PapywizardWriter.text(project, lens: lens)
        #expect(xml.contains("    <shooting mode=\"preset\">\n"))
        #expect(xml.contains("      <startTime>2026-11-23_20h00m02s</startTime>\n"))
        #expect(
            xml.contains(
                """
                    <pict id="2" bracket="1">
                      <time>2026-11-23_20h00m09s</time>
                      <position yaw="0.1" pitch="10.5" roll="0.0"/>
                    </pict>
                """))
        #expect(xml.contains("<position yaw=\"-160.0\" pitch=\"-5.0\" roll=\"0.0\"/>"))
    }

    @Test func planCSVIsTheOldPlanCSV() throws {
        let project = StitchProject.plan(try twoShotPanorama(), lens: nil, imageSize: nil, names: names, firstNumber: 1)
        #expect(
            ShotListWriter.csv(project) == """
                index,label,pan,tilt
                1,"shot 1 (row 1, column 1)",-20.00,0.00
                2,"shot 2 (row 1, column 2)",20.00,0.00

                """)
    }

    @Test func bracketsAreOneImageEachAndOneStackPerStep() throws {
        let hash = String(repeating: "cd", count: 32)
        var text = "{\"event\":\"start\",\"program\":\"p.json\",\"programSha256\":\"\(hash)\",\"steps\":2}\n"
        for (step, pan) in [(1, -10.0), (2, 10.0)] {
            for bracket in 1...3 {
                text +=
                    "{\"event\":\"shot\",\"step\":\(step),\"label\":\"s\(step)\",\"pose\":{\"pan\":\(pan),\"tilt\":0},\"startSeconds\":\(step * 10 + bracket),\"endSeconds\":\(step * 10 + bracket),\"bracket\":\(bracket)}\n"
            }
        }
        let lens = CameraLens(horizontalDegrees: 40, imageSize: PixelSize(width: 6000, height: 4000))
        let project = StitchProject.export(
            try ShotLog(text: text, file: "b.jsonl"), file: "b.jsonl", program: nil, lens: lens,
            imageSize: nil, names: names, firstNumber: 1)
        #expect(project.bracketCount == 3)
        let images = HuginProjectWriter.text(project, lens: lens).split(separator: "\n").filter { $0.hasPrefix("i ") }
        #expect(images.map { $0.split(separator: " ").first { $0.hasPrefix("j") } } == ["j0", "j=0", "j=0", "j1", "j=3", "j=3"])
        let xml = PapywizardWriter.text(project, lens: lens)
        #expect(xml.contains("<bracketing nbPicts=\"3\"/>"))
        #expect(xml.components(separatedBy: "bracket=\"1\"").count - 1 == 2)
        #expect(xml.contains("<pict id=\"6\" bracket=\"3\">"))
    }

    /// A bracket shot with a gphoto2 camera: each image is declared at the size the run
    /// measured its file at (not the lens's 6000×4000: nona refuses a size that differs)
    /// and carries its exposure value, one stop apart, from the settings it was shot with.
    @Test func exportedImagesHaveTheirMeasuredSizeAndExposure() throws {
        let hash = String(repeating: "cd", count: 32)
        var text = "{\"event\":\"start\",\"program\":\"p.json\",\"programSha256\":\"\(hash)\",\"steps\":1}\n"
        for (bracket, speed) in [(1, "0.0100s"), (2, "0.0050s"), (3, "0.0200s")] {
            let file = "/store/DCIM/GPH_000\(bracket).JPG"
            text +=
                "{\"event\":\"shot\",\"step\":1,\"label\":\"s\",\"pose\":{\"pan\":0,\"tilt\":0},\"startSeconds\":\(bracket),\"endSeconds\":\(bracket),\"bracket\":\(bracket),\"file\":\"\(file)\",\"settings\":{\"f-number\":\"f/8\",\"shutterspeed\":\"\(speed)\"}}\n"
            // The third frame was a raw file measured from its preview: no size of its own.
            let size = bracket < 3 ? ",\"width\":320,\"height\":240" : ""
            text +=
                "{\"event\":\"image\",\"step\":1,\"bracket\":\(bracket),\"file\":\"\(file)\",\"meanLevel\":0.5,\"brightnessEV\":0,\"clippedHigh\":0,\"clippedLow\":0\(size)}\n"
        }
        let log = try ShotLog(text: text, file: "b.jsonl")
        let lens = CameraLens(horizontalDegrees: 40, imageSize: PixelSize(width: 6000, height: 4000))
        let project = StitchProject.export(log, file: "b.jsonl", program: nil, lens: lens, imageSize: nil, names: names, firstNumber: 1)
        #expect(project.imageSize == PixelSize(width: 320, height: 240), "the measured size stands for the unmeasured")
        let images = HuginProjectWriter.text(project, lens: lens).split(separator: "\n").filter { $0.hasPrefix("i ") }
        #expect(images.allSatisfy { $0.hasPrefix("i w320 h240 ") }, "\(images)")
        // EV = log2(N² / t): f/8 at 1/100 s is 12.64, one stop less light at 1/50 s.
        let evs = images.compactMap { line in line.split(separator: " ").first { $0.hasPrefix("Eev") }.flatMap { Double($0.dropFirst(3)) } }
        #expect(evs.count == 3)
        if evs.count == 3 {
            #expect(abs(evs[0] - log2(64 / 0.01)) < 1e-5)
            #expect(abs(evs[1] - evs[0] - 1) < 1e-5 && abs(evs[2] - evs[0] + 1) < 1e-5)
        }
        let csv = ShotListWriter.csv(project).split(separator: "\n")
        // No time: the log has neither the shots' `at` nor the run's `startedAt`.
        #expect(csv[1].hasSuffix(",320,240,12.6439,"), "\(csv[1])")
        #expect(csv[3].hasSuffix(",,,11.6439,"), "\(csv[3])")
        // A --image-size given wins over what was measured.
        let given = StitchProject.export(
            log, file: "b.jsonl", program: nil, lens: lens, imageSize: PixelSize(width: 6000, height: 4000), names: names, firstNumber: 1)
        #expect(HuginProjectWriter.text(given, lens: lens).split(separator: "\n").filter { $0.hasPrefix("i w6000 h4000 ") }.count == 3)
    }

    @Test func exposureValuesAreOnOneScaleOrNone() {
        let a = [CameraSetting("shutterspeed", "1/100"), CameraSetting("f-number", "f/8"), CameraSetting("iso", "400")]
        let b = [CameraSetting("shutterspeed", "1/50"), CameraSetting("f-number", "f/8")]
        // b has no ISO: both values leave it out (relative, at the camera's own ISO).
        let values = ExposureValue.values(of: [a, b]).compactMap { $0 }
        #expect(values.count == 2 && abs(values[0] - log2(6400)) < 1e-9 && abs(values[1] - log2(3200)) < 1e-9)
        #expect(abs((ExposureValue.values(of: [a])[0] ?? 0) - (log2(6400) - 2)) < 1e-9, "ISO 400 is two stops more sensitive")
        #expect(ExposureValue.values(of: [a, [CameraSetting("f-number", "f/8")]]) == [nil, nil], "one unknown shutter: none")
    }

    @Test func jsonListsEveryShotAndReadsBack() throws {
        let program = try twoShotPanorama()
        let project = StitchProject.plan(program, lens: nil, imageSize: nil, names: names, firstNumber: 1)
        let root = try JSONParser.parse(ShotListWriter.json(project))
        guard case .object(let members) = root.value, let shots = members.first(where: { $0.key == "shots" }),
            case .array(let items) = shots.value.value
        else {
            Issue.record("no shots array")
            return
        }
        #expect(items.count == 2)
        guard case .object(let first) = items[0].value else {
            Issue.record("a shot is not an object")
            return
        }
        #expect(first.map(\.key) == ["index", "step", "label", "pose", "image", "yaw", "pitch"])
        if case .string(let image) = first[4].value.value { #expect(image.text == "IMG_0001.JPG") } else { Issue.record("image is not a string") }
        if case .number(let yaw) = first[5].value.value { #expect(yaw == -20) } else { Issue.record("yaw is not a number") }
    }

    // MARK: XMP sidecars and true times

    @Test func aShotsOwnTimeWinsOverItsRunsStart() throws {
        let shot = ShotLogShot(
            step: 1, label: "a", axisNames: ["pan"], pose: [1], startSeconds: 2, endSeconds: 2.5, at: "2026-11-23T20:00:02.437Z")
        let text = """
            {"event":"start","program":"p.json","programSha256":"\(String(repeating: "ab", count: 32))","steps":1,"startedAt":"2026-11-23T20:00:00Z"}
            \(shot.jsonLine())

            """
        let log = try ShotLog(text: text, file: "run.jsonl")
        #expect(log.shots == [shot], "the time is read back as written")
        let project = StitchProject.export(log, file: "run.jsonl", program: nil, lens: nil, imageSize: nil, names: names, firstNumber: 1)
        #expect(project.shots.first?.time.map { UTCTime.iso($0.timeIntervalSince1970) } == "2026-11-23T20:00:02.437Z")
        #expect(ShotListWriter.csv(project).hasSuffix(",2026-11-23T20:00:02.437Z\n"))
        #expect(ShotListWriter.json(project).contains(",\"time\":\"2026-11-23T20:00:02.437Z\""))
        let bad = text.replacingOccurrences(of: "2026-11-23T20:00:02.437Z", with: "yesterday")
        #expect(throws: FileError.self) { try ShotLog(text: bad, file: "run.jsonl") }
    }

    @Test func isoTimesHaveMillisecondsAndReadBack() {
        for unix in [0, 1_795_464_002.4375, 1_795_464_002.9996, -0.5, 951_782_400.001] {
            let text = UTCTime.iso(unix)
            #expect(abs((UTCTime.parse(text) ?? .nan) - unix) <= 0.0005 + 1e-9, "\(text)")
        }
        #expect(UTCTime.iso(1_795_464_002.9996) == "2026-11-23T20:00:03.000Z")
        #expect(UTCTime.iso(951_782_400.001) == "2000-02-29T00:00:00.001Z")
        #expect(UTCTime.iso(-0.5) == "1969-12-31T23:59:59.500Z")
    }

    @Test func exposuresAreWrittenAsExifRationals() {
        #expect(XMPSidecarWriter.exposureTime(1.0 / 250) == "1/250")
        #expect(XMPSidecarWriter.exposureTime(1.0 / 3) == "1/3")
        #expect(XMPSidecarWriter.exposureTime(0.3) == "3/10")
        #expect(XMPSidecarWriter.exposureTime(2.5) == "5/2")
        #expect(XMPSidecarWriter.exposureTime(30) == "30/1")
        // What a hostile or torn log may hold prints instead of trapping.
        for wild in [1e-300, -0.004, 0, 1e300, -1e300, .nan] { #expect(XMPSidecarWriter.exposureTime(wild).contains("/")) }
        #expect(XMPSidecarWriter.rational(5.6, maxDenominator: 100) == "28/5")
        #expect(XMPSidecarWriter.rational(8, maxDenominator: 100) == "8/1")
        #expect(XMPSidecarWriter.rational(1.4, maxDenominator: 100) == "7/5")
        #expect(XMPSidecarWriter.compensation("-0.333") == "-1/3")
        #expect(XMPSidecarWriter.compensation("0.7") == "2/3")
        #expect(XMPSidecarWriter.compensation("+1.5") == "3/2")
        #expect(XMPSidecarWriter.compensation("0") == "0/1")
        #expect(XMPSidecarWriter.compensation("-1/3") == "-1/3")
        #expect(XMPSidecarWriter.compensation("0.25") == "1/4")
        #expect(XMPSidecarWriter.compensation("auto") == nil)
        #expect(XMPSidecarWriter.sidecarName(forImage: "/cards/100CANON/IMG_0001.JPG") == "IMG_0001.xmp")
        #expect(XMPSidecarWriter.sidecarName(forImage: "DSC00042.ARW") == "DSC00042.xmp")
    }

    @Test func aSidecarIsWellFormedAndEscapesWhatItCarries() throws {
        var shot = StitchShot(
            imageNumber: 1, imageName: "a.jpg", step: 3, label: "row <1> & \"col\" 2", bracket: 2, pose: [10, .nan], yawDegrees: 10,
            pitchDegrees: 0, startSeconds: 4, endSeconds: 4.5, redo: true, time: Date(timeIntervalSince1970: 1_795_464_002.25), exposureValue: 8.3219)
        shot.settings = [CameraSetting("shutterspeed", "1/100"), CameraSetting("f-number", "f/4"), CameraSetting("iso", "200")]
        let text = XMPSidecarWriter.text(shot, axisNames: ["pan", "tilt & co"])
        #expect(text.contains(" exif:ExposureTime=\"1/100\""))
        #expect(text.contains(" exif:FNumber=\"4/1\""))
        #expect(text.contains(" exifEX:PhotographicSensitivity=\"200\""))
        #expect(text.contains("<rdf:li>200</rdf:li>"))
        #expect(text.contains(" exif:DateTimeOriginal=\"2026-11-23T20:00:02.250Z\""))
        #expect(text.contains(" rig:Label=\"row &lt;1&gt; &amp; &quot;col&quot; 2\""))
        #expect(text.contains(" rig:Redo=\"True\""))
        #expect(!text.contains("exif:ExposureBiasValue"), "no compensation logged, none written")
        #expect(!text.contains("tilt"), "an axis without a position is left out")
        #if canImport(FoundationXML) || os(macOS)
            let document = try XMLDocument(xmlString: text)
            #expect(document.rootElement()?.name == "x:xmpmeta")
        #endif
    }
}
