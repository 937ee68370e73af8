// Convenience constructors for the shapes BlueZ uses, and optional accessors that return nil
// on any other shape (so decoding a peer's reply never traps).

extension DBusValue {
    /// `as`.
    public static func strings(_ values: [String]) -> DBusValue {
        .array(element: "s", values.map(DBusValue.string))
    }

    /// `ao`.
    public static func objectPaths(_ values: [String]) -> DBusValue {
        .array(element: "o", values.map(DBusValue.objectPath))
    }

    /// `a{sv}` from plain values; each value is wrapped in a variant. Keys are sorted so the
    /// wire order is deterministic.
    public static func vardict(_ values: [String: DBusValue]) -> DBusValue {
        .dictionary(
            key: "s", value: "v",
            values.sorted { $0.key < $1.key }.map {
                DBusDictEntry(.string($0.key), .variant($0.value))
            })
    }

    public var byte: UInt8? { if case .byte(let v) = self { v } else { nil } }
    public var bool: Bool? { if case .boolean(let v) = self { v } else { nil } }
    public var int16: Int16? { if case .int16(let v) = self { v } else { nil } }
    public var uint16: UInt16? { if case .uint16(let v) = self { v } else { nil } }
    public var int32: Int32? { if case .int32(let v) = self { v } else { nil } }
    public var uint32: UInt32? { if case .uint32(let v) = self { v } else { nil } }
    public var int64: Int64? { if case .int64(let v) = self { v } else { nil } }
    public var uint64: UInt64? { if case .uint64(let v) = self { v } else { nil } }
    public var double: Double? { if case .double(let v) = self { v } else { nil } }
    public var unixFD: DBusUnixFD? { if case .unixFD(let v) = self { v } else { nil } }

    /// The text of an `s`, `o` or `g` value.
    public var string: String? {
        switch self {
        case .string(let v), .objectPath(let v), .signature(let v): v
        default: nil
        }
    }

    /// The contents of a variant; any other value is returned as is.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { inner.unwrapped } else { self }
    }

    /// `ay` (also accepts an `array("y", …)`).
    public var bytes: [UInt8]? {
        switch self {
        case .bytes(let v): return v
        case .array("y", let items):
            var out: [UInt8] = []
            out.reserveCapacity(items.count)
            for item in items {
                guard let b = item.byte else { return nil }
                out.append(b)
            }
            return out
        default: return nil
        }
    }

    /// The elements of any array (`bytes` become `.byte` values).
    public var arrayElements: [DBusValue]? {
        switch self {
        case .array(_, let items): items
        case .bytes(let b): b.map(DBusValue.byte)
        default: nil
        }
    }

    /// `as`, `ao` or `ag` as Swift strings.
    public var strings: [String]? {
        guard let items = arrayElements else { return nil }
        var out: [String] = []
        for item in items {
            guard let s = item.string else { return nil }
            out.append(s)
        }
        return out
    }

    /// A dictionary whose keys are strings or object paths, values as stored (variants kept).
    public var stringKeyedDictionary: [String: DBusValue]? {
        guard case .dictionary(_, _, let entries) = self else { return nil }
        var out: [String: DBusValue] = [:]
        for entry in entries {
            guard let k = entry.key.string else { return nil }
            out[k] = entry.value
        }
        return out
    }

    /// `a{sv}` with the variants unwrapped.
    public var vardict: [String: DBusValue]? {
        guard case .dictionary(_, "v", _) = self, let dict = stringKeyedDictionary else { return nil }
        return dict.mapValues(\.unwrapped)
    }

    /// The fields of a struct.
    public var fields: [DBusValue]? { if case .structure(let v) = self { v } else { nil } }
}
