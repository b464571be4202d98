import Foundation
import Testing

@testable import AnnounceModel

/// Ids and device names are types of their own in the code and bare strings everywhere else:
/// on the wire, in the spool, as the keys of a map. Checked with Foundation's JSONSerialization.
@Suite struct TypedStringTests {
    private struct Sample: Codable, Equatable {
        var id: ItemID
        var device: DeviceName?
        var heard: [ItemID: Int]
        var devices: [DeviceName]
    }

    @Test func theyCodeAsTheirStrings() throws {
        let sample = Sample(
            id: "3f9c0a6e21b4", device: "file:FILE=/tmp/x.wav,FORMAT=wav", heard: ["a0b1c2d3e4f5": 7],
            devices: ["hw:0", "pulse"])
        let bytes = try #require(JSONCoding.encode(sample))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary)
        #expect(object["id"] as? String == "3f9c0a6e21b4")
        #expect(object["device"] as? String == "file:FILE=/tmp/x.wav,FORMAT=wav")
        #expect((object["heard"] as? NSDictionary)?["a0b1c2d3e4f5"] as? Int == 7)
        #expect(object["devices"] as? [String] == ["hw:0", "pulse"])
        #expect(try JSONDecoder().decode(Sample.self, from: Data(bytes)) == sample)
    }

    @Test func onlyWhatTheDaemonMakesIsAWellFormedID() {
        #expect(ItemID.random().isWellFormed)
        #expect(ItemID.random().rawValue.count == 12)
        for bad: ItemID in ["", "../x", "3F9C", "3f9c 0a", "\(String(repeating: "a", count: 33))"] {
            #expect(!bad.isWellFormed, "\(bad)")
        }
    }

    @Test func theyAreListedAsText() {
        #expect(([ItemID("a1"), "b2"]).listed == "a1, b2")
        #expect("\(DeviceName("hw:1"))" == "hw:1")
    }
}
