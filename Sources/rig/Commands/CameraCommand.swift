import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigFormat
import RigGPhoto2
import RigRuntime
import RigSky

/// `rig camera`: the camera through libgphoto2, without moving anything.
struct CameraCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "camera",
        abstract: "See and set the camera over libgphoto2 (USB, or PTP/IP over Wi-Fi).",
        discussion: """
            Which camera: the rig's "camera" section (type gphoto2) with --rig, else --model/--port, \
            else the first camera libgphoto2 finds. Exit 1 when the camera cannot be reached, 2 when a \
            value is not one of the camera's choices.
            """,
        subcommands: [List.self, Info.self, Get.self, Set.self, Capture.self, Preview.self]
    )

    struct Which: ParsableArguments {
        @Option(help: ArgumentHelp("A rig file whose camera (type gphoto2) to use.", valueName: "rig.json"))
        var rig: String?

        @Option(help: ArgumentHelp("The camera's model as `rig camera list` prints it.", valueName: "model"))
        var model: String?

        @Option(help: ArgumentHelp("The camera's port: usb:BUS,DEV or ptpip:ADDRESS.", valueName: "port"))
        var port: String?

        func config() throws -> GPhoto2CameraConfig {
            var config = GPhoto2CameraConfig()
            if let rig {
                let loaded = try FileLoading.loadRig(rig)
                guard let camera = loaded.camera, camera.type == GPhoto2CameraConfig.type else {
                    printError("error: \(rig) has no \"camera\" of type \"gphoto2\"")
                    throw ExitCode(2)
                }
                do { config = try GPhoto2CameraConfig.parse(camera) } catch {
                    printError(error.description)
                    throw ExitCode(2)
                }
            }
            if let model { config.model = model }
            if let port { config.port = port }
            return config
        }

        func open() throws -> GPhoto2Camera {
            let config = try config()
            do { return try GPhoto2Camera.open(config, logger: Logger(label: "rig.camera")) } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The cameras libgphoto2 finds: model and port.")

        func run() throws {
            let found: [(model: String, port: String)]
            do { found = try GPhoto2Device.detect() } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
            if found.isEmpty {
                printError("no camera found (connected by USB, switched on, awake? a Wi-Fi camera is not listed: give --port ptpip:ADDRESS)")
                throw ExitCode(1)
            }
            for camera in found { print("\(camera.model)\t\(camera.port)") }
        }
    }

    struct Info: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The camera's model, port, battery, card (free space, the frames it says still fit) and exposure settings with their choices.")
        @OptionGroup var which: Which

        func run() throws {
            let camera = try which.open()
            defer { camera.close() }
            print("model: \(camera.model)")
            print("port: \(camera.port)")
            if let battery = camera.battery() { print("battery: \(battery)") }
            do throws(CameraError) {
                for card in try camera.storage() { print("card: " + Self.describe(card)) }
            } catch {
                print("card: not reported (\(error))")
            }
            let choices: CameraChoices
            do { choices = try camera.choices() } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
            for setting in CameraChoices.Setting.allCases {
                guard let widget = choices.widgets[setting] else {
                    print("\(setting.rawValue): not offered")
                    continue
                }
                print("\(setting.rawValue) (\(widget.name)): \(widget.current) [\(widget.choices.joined(separator: ", "))]")
            }
        }

        /// "GPVC Storage: 530 MB free of 1.1 GB, about 150 frames".
        static func describe(_ card: CameraStorage) -> String {
            var parts: [String] = []
            if let free = card.freeKiB { parts.append("\(Self.size(free)) free" + (card.capacityKiB.map { " of \(Self.size($0))" } ?? "")) }
            if let images = card.freeImages { parts.append("about \(images) frames") }
            return card.label + ": " + (parts.isEmpty ? "no figures reported" : parts.joined(separator: ", "))
        }

        static func size(_ kib: Int) -> String { decimalSize(bytes: Double(kib) * 1024) }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One setting with its choices, or every setting with its value.")
        @OptionGroup var which: Which
        @Argument(help: ArgumentHelp("A setting's name (shutterspeed, f-number, iso, …).", valueName: "name"))
        var name: String?

        func run() throws {
            let camera = try which.open()
            defer { camera.close() }
            do {
                if let name {
                    let widget = try camera.widget(name)
                    print("\(widget.name): \(widget.value ?? "")")
                    if !widget.choices.isEmpty { print("choices: \(widget.choices.joined(separator: ", "))") }
                    if widget.readOnly { print("read-only") }
                } else {
                    for widget in try camera.widgets() {
                        print("\(widget.name)\t\(widget.value ?? "")\t\(widget.label)\(widget.readOnly ? " (read-only)" : "")")
                    }
                }
            } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write one setting; a list setting takes only the camera's own choices.")
        @OptionGroup var which: Which
        @Argument(help: ArgumentHelp("The setting's name.", valueName: "name")) var name: String
        @Argument(help: ArgumentHelp("The value: one of the setting's choices (`rig camera get NAME`).", valueName: "value")) var value: String

        func run() throws {
            let camera = try which.open()
            defer { camera.close() }
            // An exposure setting is matched as a program's is: "1/200" finds the camera's
            // "0.0050", "f/8" its "8" (the camera's own spelling is what is written).
            var value = self.value
            if let choices = try? camera.choices(),
                let setting = choices.widgets.first(where: { $0.value.name == name })?.key,
                let widget = choices.widgets[setting], !widget.choices.contains(value)
            {
                let wanted: Exposure? =
                    switch setting {
                    case .shutter: Exposure(shutter: value)
                    case .aperture: Exposure(aperture: value)
                    case .iso: Exposure(iso: value)
                    case .ev: Double(value).map { Exposure(ev: $0) }
                    }
                if let wanted, case .success(let frames) = ExposureMatch.frames(wanted, bracket: nil, camera: choices),
                    let matched = frames.first?.first(where: { $0.name == name })
                {
                    value = matched.value
                }
            }
            // The camera checks the value against its own choices: a refusal is exit 2.
            do { try camera.set(name, value) } catch {
                printError("error: \(error)")
                throw ExitCode(error.refused ? 2 : 1)
            }
            let now = (try? camera.widget(name))?.value ?? value
            print("\(name): \(now)")
        }
    }

    struct Capture: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take one picture and print its file on the camera (and copy it with -o).")
        @OptionGroup var which: Which
        @Option(name: .shortAndLong, help: ArgumentHelp("Copy the picture into this folder.", valueName: "dir")) var output: String?

        func run() throws {
            // The folder first: the shutter fires only when the copy has somewhere to go.
            if let output {
                do { try OutputPath.checkFolder(output, option: "-o") } catch {
                    printError("error: \(error); nothing was taken")
                    throw ExitCode(2)
                }
            }
            let camera = try which.open()
            defer { camera.close() }
            let file: GPhoto2FilePath
            do { file = try camera.captureOne(within: camera.config.confirmSeconds + 30) } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
            print(file.description)
            guard let output else { return }
            // Never over an earlier picture: a camera that restarted its numbering reuses names.
            let path = OutputPath.unusedPath(for: file.name, in: output)
            do throws(any Error) {
                try AtomicFile.write([UInt8](camera.download(file)), to: path, createDirectory: true)
            } catch {
                printError("error: copying \(file) to \(path) failed: \(error); the picture stays on the camera as \(file)")
                throw ExitCode(1)
            }
            print(path)
        }
    }

    struct Preview: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Save one live-view frame (JPEG): the camera's own, or a \"sim\" camera's test scene at the rig's home pose.")
        @OptionGroup var which: Which
        @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the frame.", valueName: "file")) var output = "preview.jpg"

        func run() throws {
            do { try OutputPath.check(output, option: "-o", inputs: [which.rig].compactMap { $0 }) } catch {
                printError("error: \(error)")
                throw ExitCode(2)
            }
            let frame: LiveViewFrame
            if let rigPath = which.rig, let rig = try? FileLoading.loadRig(rigPath), let section = rig.camera, section.type == SimCamera.type {
                let config: (scene: SimScene?, preview: SimPreviewConfig?, shutterStepEV: Double?)
                do { config = try SimCamera.parseConfig(section) } catch {
                    printError(error.description)
                    throw ExitCode(2)
                }
                let camera = SimCamera(preview: config.preview, axisNames: rig.axes.map(\.name), restPose: rig.homePose)
                defer { camera.close() }
                guard let drawn = camera.previewFrame() else {
                    printError("error: \(camera.liveView.state.problem ?? LiveViewFeed.noLiveView)")
                    throw ExitCode(1)
                }
                frame = drawn
            } else {
                let camera = try which.open()
                defer { camera.close() }
                do { frame = try camera.previewFrame() } catch {
                    printError("error: \(error)")
                    throw ExitCode(1)
                }
            }
            do { try AtomicFile.write(frame.jpeg, to: output) } catch {
                printError("error: writing \(output) failed: \(error)")
                throw ExitCode(1)
            }
            let size = JPEG.decode(frame.jpeg).map { " (\($0.width)×\($0.height))" } ?? ""
            print("\(output)\(size)")
        }
    }
}
