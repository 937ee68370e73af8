/// Changes a JSON document's text where it must and nowhere else: a value replaced, an
/// object member replaced, removed or added, every other byte (layout, order, numbers as
/// written) left as it was. Places come from the parse of the same bytes (`JSONNode` and
/// `JSONMember` locations); the edits are collected and applied together.
public struct JSONSourceEdit {
    public let original: [UInt8]
    private var splices: [(range: Range<Int>, text: [UInt8])] = []

    public init(bytes: [UInt8]) { original = bytes }

    /// Why an edit could not be placed (the document is not the one the nodes came from).
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// The bytes of `node`'s value.
    public func extent(of node: JSONNode) throws(Problem) -> Range<Int> {
        guard let start = JSONParser.byteOffset(of: node.location, in: original) else { throw Problem(description: "no value at \(node.location)") }
        do { return try JSONParser.valueExtent(at: start, in: original) } catch {
            throw Problem(description: "no value at \(node.location): \(error.message)")
        }
    }

    /// The bytes of a member, from its key's opening quote to the end of its value.
    public func extent(of member: JSONMember) throws(Problem) -> Range<Int> {
        guard let start = JSONParser.byteOffset(of: member.keyLocation, in: original) else {
            throw Problem(description: "no key at \(member.keyLocation)")
        }
        return start..<(try extent(of: member.value)).upperBound
    }

    /// Replaces `node`'s value with `text` (JSON text, as `JSONText` writes it).
    public mutating func replace(_ node: JSONNode, with text: String) throws(Problem) {
        splices.append((try extent(of: node), Array(text.utf8)))
    }

    /// Replaces a whole member (key and value) with `text` (`"key": value`).
    public mutating func replace(_ member: JSONMember, with text: String) throws(Problem) {
        splices.append((try extent(of: member), Array(text.utf8)))
    }

    /// Removes a member of `object` with the comma that joined it to its neighbour.
    public mutating func remove(_ member: JSONMember, of object: JSONNode) throws(Problem) {
        var range = try extent(of: member)
        // The comma before it (and the space before the key), else the one after it and
        // the space up to the next key: the object's other members keep their layout.
        var before = range.lowerBound - 1
        while before >= 0, isSpace(original[before]) { before -= 1 }
        if before >= 0, original[before] == UInt8(ascii: ",") {
            range = before..<range.upperBound
        } else {
            var after = range.upperBound
            while after < original.count, isSpace(original[after]) { after += 1 }
            if after < original.count, original[after] == UInt8(ascii: ",") {
                after += 1
                while after < original.count, isSpace(original[after]) { after += 1 }
                range = range.lowerBound..<after
            }
        }
        splices.append((range, []))
    }

    /// Adds `"key": valueText` right after `member`, separated as `member` is from the
    /// member before it (", " on one line, or a line break and its indent).
    public mutating func insert(key: String, valueText: String, after member: JSONMember) throws(Problem) {
        let range = try extent(of: member)
        var separator = ", "
        var i = range.lowerBound - 1
        while i >= 0, original[i] == 0x20 || original[i] == 0x09 { i -= 1 }
        if i >= 0, original[i] == 0x0A || original[i] == 0x0D {
            separator = ",\n" + String(decoding: original[(i + 1)..<range.lowerBound], as: UTF8.self)
        }
        splices.append((range.upperBound..<range.upperBound, Array((separator + JSONText.string(key) + ": " + valueText).utf8)))
    }

    /// The document with every edit made. Edits must not overlap.
    public func applied() throws(Problem) -> [UInt8] {
        let ordered = splices.sorted { $0.range.lowerBound < $1.range.lowerBound }
        for i in ordered.indices.dropFirst() where ordered[i].range.lowerBound < ordered[i - 1].range.upperBound {
            throw Problem(description: "two edits overlap")
        }
        var out = original
        for splice in ordered.reversed() { out.replaceSubrange(splice.range, with: splice.text) }
        return out
    }

    private func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
}
