import CGPhoto2
import FoundationEssentials
import Glibc
import struct RigRuntime.CameraStorage

/// A libgphoto2 result that is an error: the call, the library's words, and what to do.
public struct GPhoto2Error: Error, Sendable, CustomStringConvertible {
    public var code: Int32
    public var what: String

    public init(_ code: Int32, _ what: String) {
        self.code = code
        self.what = what
    }

    public var description: String { "\(what): \(Self.explain(code))" }

    /// The camera asked to be asked again later.
    public var isBusy: Bool { code == GP_ERROR_CAMERA_BUSY }

    static func explain(_ code: Int32) -> String {
        let text = String(cString: gp_result_as_string(code))
        switch code {
        case GP_ERROR_IO_USB_FIND, GP_ERROR_MODEL_NOT_FOUND:
            return "\(text) (is the camera plugged in, switched on and awake? `rig camera list` shows what libgphoto2 finds)"
        case GP_ERROR_IO_USB_CLAIM:
            return "\(text): another program holds the camera (on a desktop, gvfs-gphoto2-volume-monitor often does: stop it)"
        case GP_ERROR_CAMERA_BUSY:
            return "\(text) (the camera is busy: still writing, in its menus, or in playback)"
        case GP_ERROR_NO_SPACE:
            return "\(text): the card is full"
        case GP_ERROR_IO, GP_ERROR_IO_READ, GP_ERROR_IO_WRITE:
            return "\(text) (the camera stopped answering: unplugged, switched off, or its battery ran out?)"
        case GP_ERROR_BAD_PARAMETERS:
            return
                "\(text): the camera has no such setting, or will not take it in its present mode (set the mode dial to M for shutter and aperture; `rig camera get` lists its settings and choices)"
        case GP_ERROR_NOT_SUPPORTED:
            return "\(text): this camera cannot do that over USB with libgphoto2 (try its own menu, or another setting)"
        case GP_ERROR_TIMEOUT:
            return "\(text): the camera did not answer in time (asleep? set its auto power-off to off for a long shoot)"
        case GP_ERROR_CAMERA_ERROR:
            return
                "\(text): the camera refused (autofocus that found nothing: set the lens to MF; no lens attached; a card missing or locked)"
        case GP_ERROR_FILE_NOT_FOUND:
            return "\(text): the picture is not on the camera (deleted, or the card was changed)"
        default:
            return text
        }
    }
}

/// One setting of the camera, as libgphoto2 describes it.
public struct GPhoto2Widget: Sendable, Equatable {
    public var name: String
    public var label: String
    /// "radio", "menu", "text", "range", "toggle", "date", "button".
    public var type: String
    public var value: String?
    public var choices: [String]
    public var readOnly: Bool
}

/// A file on the camera.
public struct GPhoto2FilePath: Sendable, Equatable, CustomStringConvertible {
    public var folder: String
    public var name: String
    public var description: String { folder.hasSuffix("/") ? folder + name : folder + "/" + name }
}

/// What libgphoto2 reported while the rig waited.
public enum GPhoto2Event: Sendable, Equatable {
    case fileAdded(GPhoto2FilePath)
    case captureComplete
    case timeout
    /// Anything else, in libgphoto2's words ("PTP Event 400a, Param1 …").
    case other(String)

    /// What an unknown event means for a shot, if anything: PTP StoreFull and StoreRemoved.
    public var shotProblem: String? {
        guard case .other(let text) = self else { return nil }
        let lower = text.lowercased()
        if lower.contains("event 400a") { return "the card is full (PTP StoreFull)" }
        if lower.contains("event 4005") { return "the card was removed (PTP StoreRemoved)" }
        return nil
    }
}

/// One opened camera: thin, blocking calls into libgphoto2. Not thread-safe (libgphoto2
/// is not, per camera): only `GPhoto2Worker`'s thread touches it.
public final class GPhoto2Device: @unchecked Sendable {
    private let context: OpaquePointer
    private var camera: UnsafeMutablePointer<Camera>?
    public let model: String
    public let port: String

    /// Cameras libgphoto2 finds: model and port.
    public static func detect() throws(GPhoto2Error) -> [(model: String, port: String)] {
        guard let context = gp_context_new() else { throw GPhoto2Error(GP_ERROR_NO_MEMORY, "libgphoto2 context") }
        defer { gp_context_unref(context) }
        var list: OpaquePointer?
        try check(gp_list_new(&list), "listing cameras")
        defer { gp_list_free(list) }
        let count = gp_camera_autodetect(list, context)
        if count < 0 { throw GPhoto2Error(count, "detecting cameras") }
        var found: [(String, String)] = []
        for i in 0..<count {
            var name: UnsafePointer<CChar>?
            var value: UnsafePointer<CChar>?
            gp_list_get_name(list, i, &name)
            gp_list_get_value(list, i, &value)
            found.append((name.map { String(cString: $0) } ?? "?", value.map { String(cString: $0) } ?? "?"))
        }
        return found
    }

    /// Opens the camera `model` on `port` (either may be nil: the first that matches).
    public init(model: String?, port: String?) throws(GPhoto2Error) {
        guard let context = gp_context_new() else { throw GPhoto2Error(GP_ERROR_NO_MEMORY, "libgphoto2 context") }
        self.context = context
        do throws(GPhoto2Error) {
            let found = try Self.detect()
            guard
                let pick = found.first(where: { (model == nil || $0.model == model) && (port == nil || $0.port == port) })
                    ?? Self.unlisted(model: model, port: port)
            else {
                let what = [model.map { "model \"\($0)\"" }, port.map { "port \($0)" }].compactMap { $0 }.joined(separator: " on ")
                let seen = found.isEmpty ? "no camera at all" : found.map { "\($0.model) on \($0.port)" }.joined(separator: "; ")
                throw GPhoto2Error(GP_ERROR_MODEL_NOT_FOUND, "no camera \(what.isEmpty ? "found" : "with \(what)") (libgphoto2 sees \(seen))")
            }
            self.model = pick.model
            self.port = pick.port
            var camera: UnsafeMutablePointer<Camera>?
            try Self.check(gp_camera_new(&camera), "creating the camera")
            self.camera = camera
            try setAbilities(model: pick.model)
            try setPort(pick.port)
            try Self.check(gp_camera_init(camera, context), "connecting to \(pick.model) on \(pick.port)")
        } catch {
            if let camera { gp_camera_unref(camera) }
            camera = nil
            gp_context_unref(context)
            throw error
        }
    }

    /// A PTP/IP camera is not autodetected: open it by its port alone.
    private static func unlisted(model: String?, port: String?) -> (model: String, port: String)? {
        guard let port, port.hasPrefix("ptpip:") else { return nil }
        return (model ?? "PTP/IP Camera", port)
    }

    private func setAbilities(model: String) throws(GPhoto2Error) {
        var list: OpaquePointer?
        try Self.check(gp_abilities_list_new(&list), "loading camera drivers")
        defer { gp_abilities_list_free(list) }
        try Self.check(gp_abilities_list_load(list, context), "loading camera drivers")
        let index = gp_abilities_list_lookup_model(list, model)
        if index < 0 { throw GPhoto2Error(index, "libgphoto2 has no driver for \"\(model)\"") }
        var abilities = CameraAbilities()
        try Self.check(gp_abilities_list_get_abilities(list, index, &abilities), "reading the driver of \(model)")
        try Self.check(gp_camera_set_abilities(camera, abilities), "choosing the driver of \(model)")
    }

    private func setPort(_ path: String) throws(GPhoto2Error) {
        var list: OpaquePointer?
        try Self.check(gp_port_info_list_new(&list), "listing ports")
        defer { gp_port_info_list_free(list) }
        try Self.check(gp_port_info_list_load(list), "listing ports")
        let index = gp_port_info_list_lookup_path(list, path)
        if index < 0 { throw GPhoto2Error(index, "no port \(path)") }
        var info: GPPortInfo?
        try Self.check(gp_port_info_list_get_info(list, index, &info), "reading port \(path)")
        try Self.check(gp_camera_set_port_info(camera, info), "choosing port \(path)")
    }

    deinit { close() }

    /// Releases the camera (idempotent).
    public func close() {
        guard let camera else { return }
        self.camera = nil
        gp_camera_exit(camera, context)
        gp_camera_unref(camera)
        gp_context_unref(context)
    }

    // MARK: Settings

    /// One setting by name, with its choices.
    public func widget(_ name: String) throws(GPhoto2Error) -> GPhoto2Widget {
        var widget: OpaquePointer?
        try Self.check(gp_camera_get_single_config(openCamera(), name, &widget, context), "reading \"\(name)\"")
        defer { gp_widget_free(widget) }
        return Self.describe(widget)
    }

    /// Every setting the camera offers (the leaves of its widget tree).
    public func widgets() throws(GPhoto2Error) -> [GPhoto2Widget] {
        var root: OpaquePointer?
        try Self.check(gp_camera_get_config(openCamera(), &root, context), "reading the camera's settings")
        defer { gp_widget_free(root) }
        var out: [GPhoto2Widget] = []
        func walk(_ widget: OpaquePointer?) {
            let count = gp_widget_count_children(widget)
            if count <= 0 {
                let described = Self.describe(widget)
                if described.type != "section" && described.type != "window" { out.append(described) }
                return
            }
            for i in 0..<count {
                var child: OpaquePointer?
                if gp_widget_get_child(widget, i, &child) >= GP_OK { walk(child) }
            }
        }
        walk(root)
        return out
    }

    /// Writes `value` to setting `name`. Radio and menu settings take only their own choices
    /// (the caller checks; libgphoto2 would pass an unknown one to the camera).
    public func set(_ name: String, _ value: String) throws(GPhoto2Error) {
        var widget: OpaquePointer?
        let camera = try openCamera()
        try Self.check(gp_camera_get_single_config(camera, name, &widget, context), "reading \"\(name)\"")
        defer { gp_widget_free(widget) }
        var type = GP_WIDGET_TEXT
        gp_widget_get_type(widget, &type)
        var result: Int32
        switch type {
        case GP_WIDGET_TOGGLE, GP_WIDGET_DATE:
            guard var number = Int32(value) else { throw GPhoto2Error(GP_ERROR_BAD_PARAMETERS, "\"\(name)\" takes a whole number") }
            result = gp_widget_set_value(widget, &number)
        case GP_WIDGET_RANGE:
            guard var number = Float(value) else { throw GPhoto2Error(GP_ERROR_BAD_PARAMETERS, "\"\(name)\" takes a number") }
            result = gp_widget_set_value(widget, &number)
        default:
            result = value.withCString { gp_widget_set_value(widget, $0) }
        }
        try Self.check(result, "setting \"\(name)\" to \"\(value)\"")
        try Self.check(gp_camera_set_single_config(camera, name, widget, context), "setting \"\(name)\" to \"\(value)\"")
    }

    private static func describe(_ widget: OpaquePointer?) -> GPhoto2Widget {
        var name: UnsafePointer<CChar>?
        var label: UnsafePointer<CChar>?
        var type = GP_WIDGET_TEXT
        var readOnly: Int32 = 0
        gp_widget_get_name(widget, &name)
        gp_widget_get_label(widget, &label)
        gp_widget_get_type(widget, &type)
        gp_widget_get_readonly(widget, &readOnly)
        var value: String?
        var choices: [String] = []
        let typeName: String
        switch type {
        case GP_WIDGET_RADIO, GP_WIDGET_MENU, GP_WIDGET_TEXT:
            typeName = type == GP_WIDGET_TEXT ? "text" : (type == GP_WIDGET_RADIO ? "radio" : "menu")
            var text: UnsafePointer<CChar>?
            if withUnsafeMutablePointer(to: &text, { gp_widget_get_value(widget, $0) }) >= GP_OK, let text { value = String(cString: text) }
            if type != GP_WIDGET_TEXT {
                for i in 0..<max(0, gp_widget_count_choices(widget)) {
                    var choice: UnsafePointer<CChar>?
                    if gp_widget_get_choice(widget, i, &choice) >= GP_OK, let choice { choices.append(String(cString: choice)) }
                }
            }
        case GP_WIDGET_RANGE:
            typeName = "range"
            var number: Float = 0
            if gp_widget_get_value(widget, &number) >= GP_OK { value = String(number) }
            var low: Float = 0
            var high: Float = 0
            var step: Float = 0
            if gp_widget_get_range(widget, &low, &high, &step) >= GP_OK { choices = ["\(low)…\(high) step \(step)"] }
        case GP_WIDGET_TOGGLE, GP_WIDGET_DATE:
            typeName = type == GP_WIDGET_TOGGLE ? "toggle" : "date"
            var number: Int32 = 0
            if gp_widget_get_value(widget, &number) >= GP_OK { value = String(number) }
        case GP_WIDGET_BUTTON: typeName = "button"
        case GP_WIDGET_SECTION: typeName = "section"
        default: typeName = "window"
        }
        return GPhoto2Widget(
            name: name.map { String(cString: $0) } ?? "", label: label.map { String(cString: $0) } ?? "", type: typeName, value: value,
            choices: choices, readOnly: readOnly != 0)
    }

    // MARK: Capture

    /// Starts a capture; the new file comes as `fileAdded` from `waitForEvent`.
    public func triggerCapture() throws(GPhoto2Error) {
        try Self.check(gp_camera_trigger_capture(openCamera(), context), "triggering the shutter")
    }

    /// Takes a picture and returns its file once the camera has it.
    public func capture() throws(GPhoto2Error) -> GPhoto2FilePath {
        var path = CameraFilePath()
        try Self.check(gp_camera_capture(openCamera(), GP_CAPTURE_IMAGE, &path, context), "capturing")
        return Self.path(path)
    }

    /// Waits up to `milliseconds` for the camera's next event.
    public func waitForEvent(milliseconds: Int) throws(GPhoto2Error) -> GPhoto2Event {
        var type = GP_EVENT_UNKNOWN
        var data: UnsafeMutableRawPointer?
        try Self.check(gp_camera_wait_for_event(openCamera(), Int32(clamping: milliseconds), &type, &data, context), "waiting for the camera")
        defer { free(data) }
        switch type {
        case GP_EVENT_FILE_ADDED:
            guard let data else { return .other("a file without its path") }
            return .fileAdded(Self.path(data.load(as: CameraFilePath.self)))
        case GP_EVENT_CAPTURE_COMPLETE: return .captureComplete
        case GP_EVENT_TIMEOUT: return .timeout
        case GP_EVENT_UNKNOWN:
            return .other(data.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "")
        default: return .other("")
        }
    }

    public enum FileKind: Sendable {
        /// The file as the camera wrote it.
        case normal
        /// The camera's small JPEG of it (of a raw file too).
        case preview
    }

    /// The file's bytes.
    public func download(_ file: GPhoto2FilePath, type: FileKind = .normal) throws(GPhoto2Error) -> Data {
        var cameraFile: OpaquePointer?
        try Self.check(gp_file_new(&cameraFile), "downloading \(file)")
        defer { gp_file_unref(cameraFile) }
        let kind = type == .normal ? GP_FILE_TYPE_NORMAL : GP_FILE_TYPE_PREVIEW
        try Self.check(gp_camera_file_get(openCamera(), file.folder, file.name, kind, cameraFile, context), "downloading \(file)")
        var bytes: UnsafePointer<CChar>?
        var size: UInt = 0
        try Self.check(gp_file_get_data_and_size(cameraFile, &bytes, &size), "downloading \(file)")
        guard let bytes else { return Data() }
        return Data(bytes: bytes, count: Int(size))
    }

    // MARK: Storage

    /// The camera's storages (its cards) with their free space and the frames the camera
    /// says still fit, as far as it reports them.
    public func storage() throws(GPhoto2Error) -> [CameraStorage] {
        var list: UnsafeMutablePointer<CameraStorageInformation>?
        var count: Int32 = 0
        try Self.check(gp_camera_get_storageinfo(openCamera(), &list, &count, context), "reading the camera's storage")
        guard let list else { return [] }
        defer { free(list) }
        return (0..<max(0, Int(count))).map { index in
            var info = list[index]
            let fields = Int(info.fields.rawValue)
            func has(_ field: CameraStorageInfoFields) -> Bool { fields & Int(field.rawValue) != 0 }
            let label = withUnsafeBytes(of: &info.label) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let description = withUnsafeBytes(of: &info.description) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            return CameraStorage(
                label: has(GP_STORAGEINFO_DESCRIPTION) && !description.isEmpty ? description : label,
                capacityKiB: has(GP_STORAGEINFO_MAXCAPACITY) ? Int(clamping: info.capacitykbytes) : nil,
                freeKiB: has(GP_STORAGEINFO_FREESPACEKBYTES) ? Int(clamping: info.freekbytes) : nil,
                freeImages: has(GP_STORAGEINFO_FREESPACEIMAGES) ? Int(clamping: info.freeimages) : nil)
        }
    }

    // MARK: Live view

    /// One live-view frame, the camera's own bytes (a JPEG on the cameras libgphoto2
    /// drives); `GP_ERROR_NOT_SUPPORTED` (-6) from a camera that has no live view.
    public func capturePreview() throws(GPhoto2Error) -> [UInt8] {
        var cameraFile: OpaquePointer?
        try Self.check(gp_file_new(&cameraFile), "live view")
        defer { gp_file_unref(cameraFile) }
        try Self.check(gp_camera_capture_preview(openCamera(), cameraFile, context), "live view")
        var bytes: UnsafePointer<CChar>?
        var size: UInt = 0
        try Self.check(gp_file_get_data_and_size(cameraFile, &bytes, &size), "live view")
        guard let bytes, size > 0 else { return [] }
        return bytes.withMemoryRebound(to: UInt8.self, capacity: Int(size)) { Array(UnsafeBufferPointer(start: $0, count: Int(size))) }
    }

    /// Releases the viewfinder after live view (the mirror comes down, the sensor rests):
    /// `viewfinder` (Nikon, Sony) or `eosviewfinder` (Canon) to 0, where the camera has one.
    public func releaseViewfinder() {
        for name in ["viewfinder", "eosviewfinder"] where (try? widget(name)) != nil {
            try? set(name, "0")
            return
        }
    }

    /// libgphoto2 said the camera cannot do this (no live view: the virtual camera's -6).
    public static func isUnsupported(_ error: GPhoto2Error) -> Bool { error.code == GP_ERROR_NOT_SUPPORTED }

    public func delete(_ file: GPhoto2FilePath) throws(GPhoto2Error) {
        try Self.check(gp_camera_file_delete(openCamera(), file.folder, file.name, context), "deleting \(file) from the camera")
    }

    private func openCamera() throws(GPhoto2Error) -> UnsafeMutablePointer<Camera> {
        guard let camera else { throw GPhoto2Error(GP_ERROR_BAD_PARAMETERS, "the camera is closed") }
        return camera
    }

    private static func path(_ path: CameraFilePath) -> GPhoto2FilePath {
        var path = path
        let folder = withUnsafeBytes(of: &path.folder) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let name = withUnsafeBytes(of: &path.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return GPhoto2FilePath(folder: folder, name: name)
    }

    static func check(_ result: Int32, _ what: @autoclosure () -> String) throws(GPhoto2Error) {
        if result < GP_OK { throw GPhoto2Error(result, what()) }
    }
}
