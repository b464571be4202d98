import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

/// Resolution is not Equatable (each conformance costs every client start), so the tests
/// compare what it names.
private func named(_ resolution: ItemIDPrefix.Resolution) -> [ItemID] {
    switch resolution {
    case .id(let id): [id]
    case .ambiguous(let candidates): ["ambiguous"] + candidates
    }
}

@Suite struct ItemIDPrefixTests {
    let live: [ItemID] = ["3f9c0a6e21b4", "3f1d22aa0b01", "a0b1c2d3e4f5"]

    @Test func aWholeLiveIDIsItself() {
        #expect(named(ItemIDPrefix.resolve("3f9c0a6e21b4", among: live)) == ["3f9c0a6e21b4"])
    }

    @Test func aUniquePrefixNamesItsItem() {
        #expect(named(ItemIDPrefix.resolve("3f9", among: live)) == ["3f9c0a6e21b4"])
        #expect(named(ItemIDPrefix.resolve("a", among: live)) == ["a0b1c2d3e4f5"])
    }

    @Test func anAmbiguousPrefixNamesTheCandidates() {
        #expect(named(ItemIDPrefix.resolve("3f", among: live)) == ["ambiguous", "3f1d22aa0b01", "3f9c0a6e21b4"])
    }

    @Test func anIDThatMatchesNothingGoesAsGiven() {
        #expect(named(ItemIDPrefix.resolve("ffff", among: live)) == ["ffff"])
        #expect(named(ItemIDPrefix.resolve("3f9c0a6e21b4ff", among: live)) == ["3f9c0a6e21b4ff"])
    }
}
