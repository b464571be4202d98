import AnnounceModel
import AnnounceOutput
import AnnounceSystem
import Synchronization

/// Single-producer single-consumer ring of interleaved frames. The decode side
/// writes into `writable`, the playback thread reads from `readable`; neither
/// locks. Regions are contiguous, so a frame never straddles the wrap.
final class PCMRing: @unchecked Sendable {
    let capacityFrames: Int
    let bytesPerFrame: Int
    private let storage: UnsafeMutableRawPointer
    /// Frames ever written / read; their difference is the fill.
    private let writeCount = Atomic<Int>(0)
    private let readCount = Atomic<Int>(0)

    init(capacityFrames: Int, bytesPerFrame: Int) {
        self.capacityFrames = capacityFrames
        self.bytesPerFrame = bytesPerFrame
        storage = .allocate(byteCount: capacityFrames * bytesPerFrame, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// Producer: where the next frames go and how many fit contiguously.
    func writable() -> (pointer: UnsafeMutableRawPointer, frames: Int) {
        let written = writeCount.load(ordering: .relaxed)
        let free = capacityFrames - (written - readCount.load(ordering: .acquiring))
        let offset = written % capacityFrames
        return (storage + offset * bytesPerFrame, min(free, capacityFrames - offset))
    }

    func commitWrite(_ frames: Int) {
        writeCount.add(frames, ordering: .releasing)
    }

    /// Consumer: the oldest frames and how many are contiguous.
    func readable() -> (pointer: UnsafeRawPointer, frames: Int) {
        let read = readCount.load(ordering: .relaxed)
        let filled = writeCount.load(ordering: .acquiring) - read
        let offset = read % capacityFrames
        return (UnsafeRawPointer(storage + offset * bytesPerFrame), min(filled, capacityFrames - offset))
    }

    func commitRead(_ frames: Int) {
        readCount.add(frames, ordering: .releasing)
    }

    /// Frames written and not yet read, wrap included.
    var filledFrames: Int {
        writeCount.load(ordering: .acquiring) - readCount.load(ordering: .acquiring)
    }

    /// At least half the capacity is free: worth waking the decode side for.
    var isHalfEmpty: Bool {
        writeCount.load(ordering: .acquiring) - readCount.load(ordering: .acquiring) <= capacityFrames / 2
    }
}
