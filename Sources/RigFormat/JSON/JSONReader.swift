/// Reads one JSON value with its context: typed accessors that fail with a `FileError`
/// naming the file, line, column, JSON path and what would be valid.
public struct ValueReader: Sendable {
    public let node: JSONNode
    public let context: JSONContext

    public init(_ node: JSONNode, _ context: JSONContext) {
        self.node = node
        self.context = context
    }

    public var location: SourceLocation { node.location }
    public var path: String { context.path }

    public func error(_ message: String) -> FileError {
        context.error(message, at: node.location)
    }

    private func typeError(_ expected: String) -> FileError {
        error("expected \(expected), found \(node.value.kindName)")
    }

    public func number() throws(FileError) -> Double {
        guard case .number(let value) = node.value else { throw typeError("a number") }
        return value
    }

    /// A number inside `range`; the message names the range and the unit.
    public func number(in range: ClosedRange<Double>, unit: String = "") throws(FileError) -> Double {
        let value = try number()
        guard range.contains(value) else {
            let suffix = unit.isEmpty ? "" : " \(unit)"
            throw error("\(format(value))\(suffix) is out of range; valid: \(format(range.lowerBound))…\(format(range.upperBound))\(suffix)")
        }
        return value
    }

    public func positiveNumber(unit: String = "") throws(FileError) -> Double {
        let value = try number()
        guard value > 0 else {
            let suffix = unit.isEmpty ? "" : " \(unit)"
            throw error("\(format(value))\(suffix) must be greater than 0")
        }
        return value
    }

    public func integer(in range: ClosedRange<Int>? = nil) throws(FileError) -> Int {
        guard case .number(let value) = node.value else { throw typeError("an integer") }
        guard value.rounded() == value, abs(value) < 1e15, let int = Int(exactly: value) else {
            throw error("expected an integer, found \(format(value))")
        }
        if let range, !range.contains(int) {
            throw error("\(int) is out of range; valid: \(range.lowerBound)…\(range.upperBound)")
        }
        return int
    }

    public func bool() throws(FileError) -> Bool {
        guard case .bool(let value) = node.value else { throw typeError("true or false") }
        return value
    }

    public func string() throws(FileError) -> String {
        guard case .string(let string) = node.value else { throw typeError("a string") }
        return string.text
    }

    /// `valid`: what a good value looks like, for the message.
    public func nonEmptyString(valid: String? = nil) throws(FileError) -> String {
        let value = try string()
        guard !value.isEmpty else { throw error("must not be empty" + (valid.map { "; valid: \($0)" } ?? "")) }
        return value
    }

    /// A string that must be one of `choices`.
    public func oneOf(_ choices: [String]) throws(FileError) -> String {
        let quoted = choices.map { "\"\($0)\"" }.joined(separator: ", ")
        guard case .string(let string) = node.value else { throw typeError("one of \(quoted)") }
        let value = string.text
        guard choices.contains(value) else {
            throw error("\"\(elided(value))\" is not valid; valid: \(quoted)")
        }
        return value
    }

    public func isNull() -> Bool {
        if case .null = node.value { return true }
        return false
    }

    public func array() throws(FileError) -> ValueReaderArray {
        guard case .array(let elements) = node.value else { throw typeError("an array") }
        return ValueReaderArray(elements: elements, context: context)
    }

    public func nonEmptyArray() throws(FileError) -> ValueReaderArray {
        let elements = try array()
        guard !elements.isEmpty else { throw error("must not be empty") }
        return elements
    }

    /// An array of exactly `count` numbers, such as `[x, y]`.
    public func numbers(count: Int) throws(FileError) -> [Double] {
        let elements = try array()
        guard elements.count == count else {
            throw error("expected an array of \(count) numbers, found \(elements.count) element\(elements.count == 1 ? "" : "s")")
        }
        var result: [Double] = []
        for element in elements { result.append(try element.number()) }
        return result
    }

    /// An array of exactly `count` numbers, each inside `range`; the error points at the
    /// element that is out of range and names the range.
    public func numbers(count: Int, in range: ClosedRange<Double>, unit: String = "") throws(FileError) -> [Double] {
        let elements = try array()
        guard elements.count == count else {
            throw error("expected an array of \(count) numbers, found \(elements.count) element\(elements.count == 1 ? "" : "s")")
        }
        var result: [Double] = []
        for element in elements { result.append(try element.number(in: range, unit: unit)) }
        return result
    }

    /// The value of `key` if this is an object that has it; for pointing an error at a
    /// value that was read earlier.
    public func member(_ key: String) -> ValueReader? {
        guard case .object(let members) = node.value, let member = members.first(where: { $0.key == key }) else { return nil }
        return ValueReader(member.value, context.appending(key: key))
    }

    public func object() throws(FileError) -> ObjectReader {
        guard case .object(let members) = node.value else { throw typeError("an object") }
        return ObjectReader(members: members, node: node, context: context)
    }
}

/// Reads the members of one JSON object. Call `finish()` after reading: any key nobody
/// asked for is an error that lists the valid keys.
public final class ObjectReader {
    public let members: [JSONMember]
    public let node: JSONNode
    public let context: JSONContext
    private var asked: [String] = []

    public init(members: [JSONMember], node: JSONNode, context: JSONContext) {
        self.members = members
        self.node = node
        self.context = context
    }

    public var location: SourceLocation { node.location }
    public var keys: [String] { members.map(\.key) }

    public func error(_ message: String) -> FileError {
        context.error(message, at: node.location)
    }

    public func has(_ key: String) -> Bool {
        members.contains { $0.key == key }
    }

    /// The value of `key`, or nil if absent. The key counts as known either way.
    public func optional(_ key: String) -> ValueReader? {
        if !asked.contains(key) { asked.append(key) }
        guard let member = members.first(where: { $0.key == key }) else { return nil }
        return ValueReader(member.value, context.appending(key: key))
    }

    /// The value of `key`; its absence is an error at the object.
    public func required(_ key: String, _ what: String = "") throws(FileError) -> ValueReader {
        guard let value = optional(key) else {
            let hint = what.isEmpty ? "" : " (\(what))"
            throw error("missing required key \"\(key)\"\(hint)")
        }
        return value
    }

    /// Marks keys as known without reading them (read by someone else).
    public func allow(_ keys: String...) {
        allow(keys)
    }

    public func allow(_ keys: [String]) {
        for key in keys where !asked.contains(key) { asked.append(key) }
    }

    /// Rejects unknown keys, naming the first one and the valid ones.
    public func finish() throws(FileError) {
        for member in members where !asked.contains(member.key) {
            let ctx = context.appending(key: member.key)
            let valid = asked.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
            var message = "unknown key \"\(elided(member.key))\""
            if let close = closest(to: member.key, in: asked) { message += " (did you mean \"\(close)\"?)" }
            message += "; valid keys here: \(valid)"
            throw ctx.error(message, at: member.keyLocation)
        }
    }

    private func closest(to key: String, in candidates: [String]) -> String? {
        // Edit distance is quadratic: a key much longer than every valid key cannot be a
        // typo of one (the distance would exceed the threshold anyway), so skip the search.
        let longest = candidates.map(\.utf8.count).max() ?? 0
        guard key.utf8.count <= 2 * longest + 2 else { return nil }
        let lowered = key.lowercased()
        var best: (String, Int)?
        for candidate in candidates {
            let distance = editDistance(lowered, candidate.lowercased())
            guard distance <= max(1, key.count / 3) else { continue }
            if let current = best, current.1 <= distance { continue }
            best = (candidate, distance)
        }
        return best?.0
    }
}

public func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}

/// The elements of an array value, each read with its own path (`$.keys[3]`). A reader is
/// made when an element is reached: a million-element array does not make a million paths
/// up front.
public struct ValueReaderArray: RandomAccessCollection, Sendable {
    public let elements: [JSONNode]
    public let context: JSONContext

    public var startIndex: Int { 0 }
    public var endIndex: Int { elements.count }

    public subscript(index: Int) -> ValueReader {
        ValueReader(elements[index], context.appending(index: index))
    }
}
