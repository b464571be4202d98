import Testing

@testable import AnnounceSystem

/// A restart decodes the spool with concurrentMap: every element once, in order, whatever the
/// number of threads against the number of elements (more threads than elements included).
struct ConcurrentMapTests {
    @Test(arguments: [(0, 4), (1, 4), (3, 8), (512, 25), (513, 32), (526, 25), (1000, 2), (7, 7)])
    func everyElementOnceInOrder(count: Int, threads: Int) {
        let elements = Array(0..<count)
        #expect(concurrentMap(elements, threads: threads) { $0 * 3 + 1 } == elements.map { $0 * 3 + 1 })
    }

    @Test func theProcessorsUsableAreCounted() {
        #expect(usableProcessors >= 1)
    }
}
