// swift-tools-version: 6.1
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "rig",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "rig", targets: ["rig"]),
        // For the benchmark package in Benchmarks/, which depends on this one by path.
        .library(name: "RigFormat", targets: ["RigFormat"]),
        .library(name: "RigCore", targets: ["RigCore"]),
        .library(name: "RigRuntime", targets: ["RigRuntime"]),
        .library(name: "RigPCA9685", targets: ["RigPCA9685"]),
        .library(name: "RigBLEControl", targets: ["RigBLEControl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.4.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.0"),
        // No default traits: "FullFoundation" would bring full Foundation (and its ICU data) back.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // Without its "SubprocessFoundation" trait: FoundationEssentials only.
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.2", traits: []),
    ],
    targets: [
        // Pure motion core: models, file parsing, interpolation, planning, limits, the loop's
        // step function. No C modules, no I/O.
        // Below the core: JSON with source locations, the file errors and the bounds every
        // number is held to, and the text formatting every module prints with.
        .target(name: "RigFormat", swiftSettings: strict),
        // Sky and light: sun, moon and star positions, tracks, exposure values and ramps.
        .target(name: "RigSky", dependencies: ["RigFormat"], swiftSettings: strict),
        // Motion and programs: rigs, programs, the player, the program host, the limiter.
        .target(name: "RigCore", dependencies: ["RigFormat", "RigSky"], swiftSettings: strict),
        // Stitching and plots: Hugin/Papywizard/CSV/XMP exports from shot logs, SVG plots.
        .target(
            name: "RigStitch", dependencies: ["RigCore", "RigFormat", "RigSky", .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strict),
        // The one errno/EINTR helper, below everything that makes system calls.
        .target(
            name: "RigSyscall", dependencies: [.product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),

        // C shims: only what Swift cannot import (variadic prctl, ioctl request macros).
        .target(name: "CLinux"),
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CI2C", providers: [.apt(["libi2c-dev"])]),
        .systemLibrary(name: "CGPIOD", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
        .systemLibrary(name: "CGPhoto2", pkgConfig: "libgphoto2", providers: [.apt(["libgphoto2-dev"])]),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        // QR codes for `rig serve`'s pairing URL (Debian's libqrencode).
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // MQTT 5 for groups of rigs (Debian's libmosquitto).
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),

        // Real-time loop, clocks, simulated rig, trace, terminal view, output protocol.
        .target(
            name: "RigRuntime",
            dependencies: [
                "RigSky", "RigFormat", "RigCore", "RigSyscall", "CLinux", "CTurboJPEG",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ], swiftSettings: strict),

        // D-Bus over libdbus-1, and BlueZ on top of it (central and GATT server).
        .target(
            name: "RigDBus",
            dependencies: [
                "CDBus", "RigSyscall",
                .product(name: "Logging", package: "swift-log"),
            ], swiftSettings: strict),
        .target(
            name: "RigBluetooth",
            dependencies: [
                "RigDBus",
                .product(name: "Logging", package: "swift-log"),
            ], swiftSettings: strict),

        // Outputs and inputs.
        .target(
            name: "RigBLEControl",
            dependencies: [
                "RigFormat", "RigCore", "RigSyscall", "RigRuntime", "RigDBus", "RigBluetooth",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ], swiftSettings: strict),
        .target(
            name: "RigPCA9685",
            dependencies: [
                "RigFormat", "RigCore", "RigRuntime", "CI2C",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ], swiftSettings: strict),
        .target(
            name: "RigGamepad",
            dependencies: [
                "RigFormat", "RigCore", "RigRuntime", "CLinux",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ], swiftSettings: strict),
        .target(
            name: "RigStepSync",
            dependencies: [
                "RigFormat", "RigCore", "RigRuntime", "RigDBus", "RigBluetooth", "CGPIOD",
                .product(name: "Logging", package: "swift-log"),
            ], swiftSettings: strict),

        // Camera control through libgphoto2: settings, confirmed captures, downloads.
        .target(
            name: "RigGPhoto2",
            dependencies: [
                "RigSky", "RigFormat", "RigCore", "RigRuntime", "CGPhoto2", "CTurboJPEG",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ], swiftSettings: strict),

        // Several rigs on one timeline: the group link over MQTT (libmosquitto), a session part.
        .target(
            name: "RigGroup",
            dependencies: [
                "RigFormat", "RigCore", "RigRuntime", "CMosquitto",
                .product(name: "Logging", package: "swift-log"),
            ], swiftSettings: strict),

        // `rig serve`: the HTTP API and phone page on Hummingbird (only this module and the
        // executable compile against it).
        .target(
            name: "RigServe",
            dependencies: [
                "RigSky", "RigFormat", "RigCore", "RigRuntime", "RigGamepad", "RigGroup", "CQREncode",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ], resources: [.embedInCode("Resources/openapi.json"), .embedInCode("Resources/index.html")], swiftSettings: strict),

        // Dragonframe's DFMoco protocol without I/O: line framing, parsing, the device state
        // machine and go-motion planning.
        .target(name: "RigDFMoco", dependencies: ["RigFormat", "RigCore"], swiftSettings: strict),
        // The composition root for devices: each driver reads its own rig file section.
        .target(
            name: "RigDevices",
            dependencies: [
                "RigFormat", "RigCore", "RigRuntime", "RigPCA9685", "RigBLEControl", "RigStepSync", "RigGPhoto2", "RigDFMoco", "RigGamepad", "RigGroup",
                .product(name: "Logging", package: "swift-log"),
            ], swiftSettings: strict),
        // `rig serve dfmoco`: the DFMoco device on TCP or a serial line, driving the rig's
        // command source through the session runner.
        .target(
            name: "RigDFMocoServer",
            dependencies: [
                "RigFormat", "RigCore", "RigSyscall", "RigRuntime", "RigDFMoco",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ], swiftSettings: strict),

        .executableTarget(
            name: "rig",
            dependencies: [
                "RigStitch", "RigSky", "RigFormat", "RigCore", "RigSyscall", "RigRuntime", "RigDBus", "RigBluetooth", "RigBLEControl", "RigPCA9685",
                "RigGamepad", "RigStepSync",
                "RigDFMocoServer", "RigServe", "RigGPhoto2", "RigDevices", "RigGroup",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ], swiftSettings: strict),

        // Shared by the test targets: tool lookup (the .build-venv made by scripts/setup --test),
        // private D-Bus and BlueZ emulator processes.
        .target(
            name: "RigTestSupport",
            dependencies: [
                "RigFormat", "RigCore", "RigRuntime",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ], path: "Tests/RigTestSupport", swiftSettings: strict),

        .testTarget(
            name: "RigCoreTests",
            dependencies: [
                "RigStitch", "RigSky", "RigFormat", "RigCore", "RigDevices", "RigBLEControl", "RigPCA9685", "RigTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ], exclude: ["sky_reference.py"], swiftSettings: strict),
        .testTarget(
            name: "RigRuntimeTests",
            dependencies: [
                "RigCore", "RigRuntime", "RigSky", "RigTestSupport", .product(name: "Logging", package: "swift-log"),
            ], swiftSettings: strict),
        .testTarget(name: "RigDBusTests", dependencies: ["RigDBus", "RigTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "RigBLEControlTests",
            dependencies: [
                "RigCore", "RigRuntime", "RigBLEControl", "RigDBus", "RigTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ], exclude: ["fake_blecontrol_board.py"], swiftSettings: strict),
        .testTarget(
            name: "RigPCA9685Tests",
            dependencies: [
                "RigTestSupport",
                "RigFormat", "RigCore", "RigRuntime", "RigPCA9685",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ], exclude: ["adafruit_reference.py"], swiftSettings: strict),
        .testTarget(
            name: "RigGamepadTests",
            dependencies: [
                "RigFormat", "RigCore", "RigRuntime", "RigGamepad", "RigTestSupport", "CLinux",
                .product(name: "SystemPackage", package: "swift-system"),
            ], swiftSettings: strict),
        .testTarget(
            name: "RigStepSyncTests",
            dependencies: [
                "RigFormat", "RigCore", "RigRuntime", "RigDBus", "RigBluetooth", "RigStepSync", "RigTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ], exclude: ["cascable_sim.py"], swiftSettings: strict),
        .testTarget(
            name: "RigServeTests",
            dependencies: [
                "RigSky", "RigCore", "RigFormat", "RigRuntime", "RigServe", "RigTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: [
                "schemathesis.toml", "serve_browser.py", "serve_builder.py", "serve_field.py", "serve_flood.py", "serve_pairing.py", "serve_liveview.py",
            ],
            swiftSettings: strict),
        .testTarget(name: "RigDFMocoTests", dependencies: ["RigFormat", "RigCore", "RigDFMoco"], swiftSettings: strict),
        .testTarget(name: "RigCLITests", dependencies: ["RigSky", "RigFormat", "RigCore", "RigTestSupport"], swiftSettings: strict),
        .testTarget(name: "RigGroupTests", dependencies: ["RigGroup", "RigRuntime", "RigTestSupport"], swiftSettings: strict),
    ]
)

// Fuzzing (docs/fuzzing.md): `scripts/fuzz` builds with RIG_FUZZ=1 into .build-fuzz with
// -sanitize=fuzzer, which supplies main; ordinary builds and tests never see this target.
if Context.environment["RIG_FUZZ"] != nil {
    package.targets.append(
        .executableTarget(
            name: "rig-fuzz",
            dependencies: [
                "RigCore", "RigFormat", "RigStitch", "RigRuntime", "RigBluetooth", "RigBLEControl", "RigPCA9685", "RigGamepad", "RigStepSync",
                "RigDFMoco", .product(name: "Logging", package: "swift-log"),
            ], path: "Fuzz/Sources/rig-fuzz", swiftSettings: strict + [.unsafeFlags(["-parse-as-library", "-enable-experimental-feature", "Extern"])]))
    package.products.append(.executable(name: "rig-fuzz", targets: ["rig-fuzz"]))
}
