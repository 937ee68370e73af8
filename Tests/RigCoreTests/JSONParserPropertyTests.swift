import PropertyBased
import Testing

@testable import RigCore
@testable import RigFormat
@testable import RigSky

/// A random JSON tree and a random (valid) way of writing it.
private struct JSONSample: Sendable {
    indirect enum Tree: Sendable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        case array([Tree])
        case object([(String, Tree)])
    }
    var tree: Tree
    var text: String

    static let alphabet: [Unicode.Scalar] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{1}", "\u{1F}", "é", "中", "😀", "\u{7F}", "\u{2028}"]

    static func make(seed: UInt64) -> JSONSample {
        var g = SplitMix64(seed: seed)
        let tree = randomTree(depth: 0, &g)
        return JSONSample(tree: tree, text: write(tree, &g))
    }

    static func randomString(_ g: inout SplitMix64) -> String {
        var s = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...8, using: &g) { s.append(alphabet.randomElement(using: &g) ?? "a") }
        return String(s)
    }

    static func randomTree(depth: Int, _ g: inout SplitMix64) -> Tree {
        switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &g) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &g))
        case 2:
            let choices = [
                0, -0.0, 1, -17, 3.25, 1e-7, 6.02e23, Double.random(in: -1e6...1e6, using: &g), Double(Int.random(in: -1_000_000...1_000_000, using: &g)),
            ]
            return .number(choices.randomElement(using: &g) ?? 0)
        case 3: return .string(randomString(&g))
        case 4: return .array((0..<Int.random(in: 0...4, using: &g)).map { _ in randomTree(depth: depth + 1, &g) })
        default:
            var keys = Set<String>()
            var members: [(String, Tree)] = []
            for _ in 0..<Int.random(in: 0...4, using: &g) {
                let key = randomString(&g)
                if keys.insert(key).inserted { members.append((key, randomTree(depth: depth + 1, &g))) }
            }
            return .object(members)
        }
    }

    static func space(_ g: inout SplitMix64) -> String {
        ["", "", " ", "\n", "\t ", "\r\n  "].randomElement(using: &g) ?? ""
    }

    static func write(_ tree: Tree, _ g: inout SplitMix64) -> String {
        switch tree {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let x):
            if x == x.rounded(), abs(x) < 1e15 { return x == 0 && x.sign == .minus ? "-0" : String(Int(x)) }
            return String(x)
        case .string(let s): return quote(s, &g)
        case .array(let items):
            return "[" + space(&g) + items.map { write($0, &g) }.joined(separator: space(&g) + "," + space(&g)) + space(&g) + "]"
        case .object(let members):
            return "{" + space(&g)
                + members.map { quote($0.0, &g) + space(&g) + ":" + space(&g) + write($0.1, &g) }
                .joined(separator: "," + space(&g)) + space(&g) + "}"
        }
    }

    static func hex4(_ v: UInt32) -> String {
        let digits = String(v, radix: 16, uppercase: Bool.random())
        return String(repeating: "0", count: 4 - digits.count) + digits
    }

    static func quote(_ s: String, _ g: inout SplitMix64) -> String {
        var out = "\""
        for c in s.unicodeScalars {
            let escapeAnyway = Int.random(in: 0..<4, using: &g) == 0
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += escapeAnyway ? "\\u000a" : "\\n"
            case "\t": out += "\\t"
            case "/" where escapeAnyway: out += "\\/"
            case _ where c.value < 0x20: out += "\\u" + hex4(c.value)
            case _ where escapeAnyway && c.value > 0xFFFF:
                let v = c.value - 0x10000
                out += "\\u" + hex4(0xD800 + (v >> 10)) + "\\u" + hex4(0xDC00 + (v & 0x3FF))
            case _ where escapeAnyway: out += "\\u" + hex4(c.value)
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }

    static func same(_ tree: Tree, _ node: JSONNode) -> Bool {
        switch (tree, node.value) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.string(let a), .string(let b)): return a.unicodeScalars.elementsEqual(b.text.unicodeScalars)
        case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0.unicodeScalars.elementsEqual($1.key.unicodeScalars) && same($0.1, $1.value) }
        default: return false
        }
    }
}

@Suite struct JSONParserPropertyTests {
    @Test func parsesWhatAnyValidWriterWrites() async {
        await propertyCheck(count: 500, input: Generator(run: { rng in JSONSample.make(seed: rng.next()) })) { sample in
            do {
                let node = try JSONParser.parse(sample.text)
                #expect(JSONSample.same(sample.tree, node), "\(sample.text)")
            } catch {
                Issue.record("rejected \(sample.text): \(error)")
            }
        }
    }

    @Test func locationsPointAtTheValues() throws {
        // Line 3, column 12 (after a tab counted as one column and a two-byte "é").
        let node = try JSONParser.parse("{\n  \"é\": [1,\n\t\"x\", [true]]}")
        guard case .object(let members) = node.value, case .array(let items) = members[0].value.value else {
            Issue.record("unexpected shape")
            return
        }
        #expect(members[0].keyLocation == SourceLocation(line: 2, column: 3))
        #expect(members[0].value.location == SourceLocation(line: 2, column: 8))
        #expect(items[0].location == SourceLocation(line: 2, column: 9))
        #expect(items[1].location == SourceLocation(line: 3, column: 2))
        #expect(items[2].location == SourceLocation(line: 3, column: 7))
    }

    @Test(arguments: [
        "", " ", "[1 2]", "{\"a\" 1}", "{1: 2}", "tru", "nul", "-", "1.", "1e", "01", "\"\\u12\"", "\"\\ud800\"",
        "\"\\udc00x\"", "[", "{\"a\":}", "\u{FEFF}", "NaN", "Infinity", "1e400", "[-]", "'a'",
    ])
    func rejectsInvalidDocuments(_ text: String) {
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(text) }
    }

    /// A keyframe file repeats a handful of keys and values a million times: each text is
    /// kept once per document, whether it was written with escapes or without.
    @Test func repeatedStringsShareOneReference() throws {
        let node = try JSONParser.parse(#"[{"interp": "linear"}, {"interp": "lin\u0065ar"}, {"interp": "ease"}]"#)
        guard case .array(let items) = node.value, items.count == 3,
            case .object(let first) = items[0].value, case .object(let second) = items[1].value,
            case .object(let third) = items[2].value,
            case .string(let a) = first[0].value.value, case .string(let b) = second[0].value.value,
            case .string(let c) = third[0].value.value
        else {
            Issue.record("unexpected shape")
            return
        }
        #expect(first[0].name === second[0].name)
        #expect(first[0].name === third[0].name)
        #expect(a === b)
        #expect(a.text == "linear" && c.text == "ease")
        #expect(a !== c)
        #expect(items[1].location == SourceLocation(line: 1, column: 24))
        #expect(second[0].value.location == SourceLocation(line: 1, column: 35))
    }

    @Test func rejectsDeepNesting() {
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(String(repeating: "[", count: 300) + String(repeating: "]", count: 300)) }
        #expect(throws: Never.self) { try JSONParser.parse(String(repeating: "[", count: 200) + String(repeating: "]", count: 200)) }
    }

    /// Duplicate keys are found by a scan in small objects and by a set in large ones (a
    /// scan per key over 200,000 keys would be 2·10^10 comparisons): both ways, and across
    /// the switch between them, the duplicate is reported where it stands.
    @Test(arguments: ["k3", "k15", "k16", "k17", "k199999"])
    func duplicateKeysAreFoundInObjectsOfAnySize(_ repeated: String) {
        var text = "{"
        for k in 0..<200_000 { text += "\"k\(k)\": 0, " }
        let column = text.count + 1
        text += "\"\(repeated)\": 1}"
        #expect(throws: JSONSyntaxError(message: "duplicate key \"\(repeated)\"", location: SourceLocation(line: 1, column: column))) {
            try JSONParser.parse(text)
        }
        // Below the switch: a duplicate among a few keys.
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(#"{"a": 1, "b": 2, "a": 3}"#) }
        #expect(throws: Never.self) { try JSONParser.parse(#"{"a": 1, "b": 2, "c": 3}"#) }
    }

    @Test func aDocumentHoldsAtMostMaxValuesValues() throws {
        // Ten values: the array and its nine elements.
        let text = "[" + Array(repeating: "0", count: 9).joined(separator: ",") + "]"
        var fits = JSONParser(text, maxValues: 10)
        #expect(throws: Never.self) { try fits.parseDocument() }
        var over = JSONParser(text + " ", maxValues: 9)
        #expect(
            throws: JSONSyntaxError(
                message: "more than 9 values in one file; valid: at most 9 (a program of 1,000,000 keyframes has about 4,000,000)",
                location: SourceLocation(line: 1, column: 18), path: "$[8]")
        ) { try over.parseDocument() }
        #expect(JSONParser.defaultMaxValues >= 5_000_000, "a million-keyframe program must fit")
    }

    /// A syntax error names where it is: a duplicate key deep in a file is reported at
    /// the object that holds it, not at `$`.
    @Test func aSyntaxErrorNamesThePathItIsIn() throws {
        let text = #"{"axes": [{"name": "pan"}, {"name": "tilt", "channel": 1, "name": "x"}]}"#
        do {
            var parser = JSONParser(text)
            _ = try parser.parseDocument()
            Issue.record("a duplicate key was accepted")
        } catch {
            #expect(error.fileError(file: "r.json").description == #"r.json:1:59: error: $.axes[1]: duplicate key "name""#)
        }
    }
}
