// swift-tools-version: 6.1
// rig's benchmark suite: a package of its own so that rig's build, tests and CI never
// fetch or build package-benchmark. Run from this folder: `swift package benchmark`.
import PackageDescription

let package = Package(
    name: "rig-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "rig", path: ".."),
        // Only the malloc-counting trait: the default RuntimeInterposer trait would pull in
        // a package that is not needed for these metrics.
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
    ],
    targets: [
        // Benchmark executables must live in Benchmarks/<target> for the plugin to find them.
        .executableTarget(
            name: "RigCoreBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "RigCore", package: "rig"),
                .product(name: "RigFormat", package: "rig"),
            ],
            path: "Benchmarks/RigCoreBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "RigRuntimeBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "RigCore", package: "rig"),
                .product(name: "RigRuntime", package: "rig"),
            ],
            path: "Benchmarks/RigRuntimeBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "RigOutputBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "RigCore", package: "rig"),
                .product(name: "RigRuntime", package: "rig"),
                .product(name: "RigPCA9685", package: "rig"),
                .product(name: "RigBLEControl", package: "rig"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/RigOutputBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
