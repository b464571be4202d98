import Testing
@testable import AnnounceKit

@Suite struct ItemIDPrefixTests {
    let live = ["3f9c0a6e21b4", "3f1d22aa0b01", "a0b1c2d3e4f5"]

    @Test func aWholeLiveIDIsItself() {
        #expect(ItemIDPrefix.resolve("3f9c0a6e21b4", among: live) == .id("3f9c0a6e21b4"))
    }

    @Test func aUniquePrefixNamesItsItem() {
        #expect(ItemIDPrefix.resolve("3f9", among: live) == .id("3f9c0a6e21b4"))
        #expect(ItemIDPrefix.resolve("a", among: live) == .id("a0b1c2d3e4f5"))
    }

    @Test func anAmbiguousPrefixNamesTheCandidates() {
        #expect(ItemIDPrefix.resolve("3f", among: live) == .ambiguous(["3f1d22aa0b01", "3f9c0a6e21b4"]))
    }

    @Test func anIDThatMatchesNothingGoesAsGiven() {
        #expect(ItemIDPrefix.resolve("ffff", among: live) == .id("ffff"))
        #expect(ItemIDPrefix.resolve("3f9c0a6e21b4ff", among: live) == .id("3f9c0a6e21b4ff"))
    }
}
