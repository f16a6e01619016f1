// JSONValue: its text is what RFC 8259 says, Foundation's parser reads it
// back, and keys keep their order (or are sorted when asked).
import Foundation
import MediaCore
import Testing

@Suite struct JSONValueTests {
    @Test func textIsIndentedEscapedAndHasNoInfinity() throws {
        let value = JSONValue.object([
            ("name", .string("a \"b\"\n\u{1}")), ("n", .int(3)), ("x", .double(.infinity)),
            ("list", .array([.bool(true), .null])), ("empty", .object([])),
        ])
        let text = value.serialized()
        #expect(
            text
                == "{\n  \"name\": \"a \\\"b\\\"\\n\\u0001\",\n  \"n\": 3,\n  \"x\": null,\n"
                + "  \"list\": [\n    true,\n    null\n  ],\n  \"empty\": {}\n}")
        let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        #expect(parsed?["name"] as? String == "a \"b\"\n\u{1}")
        #expect(parsed?["n"] as? Int == 3)
        #expect(parsed?["x"] is NSNull)
    }

    @Test func sortedObjectsListTheirKeysInOrder() {
        let text = JSONValue.sorted(["b": .int(2), "a": .int(1), "c": .sorted(["z": .null, "y": .null])])
            .serialized()
        #expect(text == "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": {\n    \"y\": null,\n    \"z\": null\n  }\n}")
    }
}
