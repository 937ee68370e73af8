import Foundation

// libFuzzer's entry points (scripts/fuzz links this module with -sanitize=fuzzer). One
// binary holds every target; RIG_FUZZ_TARGET picks one. To add a
// target: a file with a `static func run(_ data: [UInt8])`, one line in `fuzzTargets`,
// a seed folder Fuzz/corpus/<name>/, and the module in the target's dependencies in Package.swift.

/// Every fuzz target by name.
let fuzzTargets: [String: @Sendable ([UInt8]) -> Void] = [
    "rigfile": RigFileTarget.run,
    "bui": BUIWriteTarget.run,
    "evdev": EvdevTarget.run,
    "blecontrol": BLEControlReplyTarget.run,
    "dfmoco": DFMocoTarget.run,
    "served": ServedProgramTarget.run,
]

/// The target chosen for this process (read once; a global `let` is initialized once,
/// thread-safely, on first use).
let chosenTarget: @Sendable ([UInt8]) -> Void = {
    let name = ProcessInfo.processInfo.environment["RIG_FUZZ_TARGET"] ?? ""
    guard let target = fuzzTargets[name] else {
        let names = fuzzTargets.keys.sorted().joined(separator: ", ")
        FileHandle.standardError.write(Data("rig-fuzz: set RIG_FUZZ_TARGET to one of: \(names)\n".utf8))
        exit(2)
    }
    return target
}()

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    _ = chosenTarget
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    chosenTarget(bytes)
    return 0
}

/// libFuzzer's driver: `int LLVMFuzzerRunDriver(int *argc, char ***argv,
/// int (*cb)(const uint8_t *, size_t))`, linked statically with -sanitize=fuzzer.
@_extern(c, "LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The executable's entry point. SwiftPM links an executable target with `main` aliased to
/// `<module>_main` (so that tests can link it), which hides libFuzzer's own `main`; this is
/// that function, and it hands over to libFuzzer's driver.
@_cdecl("rig_fuzz_main")
public func rigFuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { data, size in fuzzerTestOneInput(data, size) }
}

/// A broken invariant: trap so libFuzzer records the input as a crash.
func fuzzFail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("rig-fuzz: invariant broken: \(message)\n".utf8))
    abort()
}
