import Crypto
import Foundation

/// The two-core deflate of a large source into a ZIP entry (pigz's scheme). The input is cut
/// into 1 MiB pieces that the two threads take one after the other from a shared counter. Each
/// reads its piece together with the 32 KiB before it (the dictionary that primes its
/// compressor), takes the piece's CRC and deflates it ending in a sync flush (the last piece
/// ends the stream), so the outputs, written in order, are one stream (1 MiB pieces cost well
/// under 0.1 % in size). Whoever finishes the oldest piece writes every finished piece in
/// order, joins the CRCs and feeds SHA-256, while the other goes on deflating, up to `slotCount`
/// pieces ahead.
///
/// The two threads never wait for each other at a fixed point: when they met after every 2 MiB
/// and one thread alone read, checked and wrote in between, a 256 MiB save spent about a third
/// of its time beyond the deflating itself.
final class ParallelDeflate: @unchecked Sendable {
    static let piece = 1 << 20
    static let window = 32 << 10
    static let slotCount = 4

    private let source: PosixFile
    private let size: Int64
    private let level: DeflateLevel
    private let file: PosixFile
    private let at: Int64
    private let hasher: Hasher?
    private let pieceCount: Int
    private let slots: [Slot]

    // Under `condition`: the next piece to take and to write, whether a thread is writing,
    // and the first failure (which stops both).
    private let condition = NSCondition()
    private var nextToTake = 0
    private var nextToWrite = 0
    private var writing = false
    private var failure: Error?
    // Touched only by the thread that is writing (`writing` passes it on under `condition`).
    private var crc: UInt32 = 0
    private var compressed: Int64 = 0
    private var doneInput: Int64 = 0

    init(source: PosixFile, size: Int64, level: DeflateLevel, into file: PosixFile, at: Int64, hasher: Hasher?) {
        self.source = source
        self.size = size
        self.level = level
        self.file = file
        self.at = at
        self.hasher = hasher
        pieceCount = Int((size + Int64(Self.piece) - 1) / Int64(Self.piece))
        slots = (0..<Self.slotCount).map { _ in Slot() }
    }

    /// Deflates on this thread and on `helper`; returns the CRC-32 of the input and the size of
    /// what was written. `progress` is told the input written so far (on this thread only).
    func run(helper: HelperThread, progress: (Int64) -> Void) throws -> (crc: UInt32, compressed: Int64) {
        helper.begin { [self] in work(progress: nil) }
        withoutActuallyEscaping(progress) { work(progress: $0) }
        try helper.wait()
        if let failure = condition.withLock({ failure }) { throw failure }
        return (crc, compressed)
    }

    /// Takes pieces until none are left (or one failed), deflating each and writing what is
    /// ready in order.
    private func work(progress: ((Int64) -> Void)?) {
        let deflater: Deflater
        do { deflater = try Deflater(level: level) } catch { return fail(error) }
        while let index = take() {
            let slot = slots[index % Self.slotCount]
            do {
                try slot.fill(index: index, from: source, size: size, deflater: deflater)
            } catch {
                return fail(error)
            }
            if finished(slot) { writeFinished() }
            if let progress { progress(condition.withLock { doneInput }) }
        }
    }

    /// The next piece to deflate, once its slot is free (the piece `slotCount` before it is
    /// written); nil when every piece is taken or one failed.
    private func take() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        while failure == nil, nextToTake < pieceCount, nextToTake >= nextToWrite + Self.slotCount {
            condition.wait()
        }
        guard failure == nil, nextToTake < pieceCount else { return nil }
        nextToTake += 1
        return nextToTake - 1
    }

    /// Marks `slot` deflated; whether this thread should now write (no one else is).
    private func finished(_ slot: Slot) -> Bool {
        condition.withLock {
            slot.isDeflated = true
            guard !writing else { return false }
            writing = true
            return true
        }
    }

    /// Writes the oldest pieces while they are deflated, then gives up the writing.
    private func writeFinished() {
        while true {
            let slot: Slot? = condition.withLock {
                let oldest = slots[nextToWrite % Self.slotCount]
                guard failure == nil, nextToWrite < pieceCount, oldest.isDeflated else {
                    writing = false
                    return nil
                }
                return oldest
            }
            guard let slot else { return }
            do {
                try file.write(slot.output, at: at + compressed)
            } catch {
                condition.withLock { writing = false }
                return fail(error)
            }
            compressed += Int64(slot.output.count)
            crc = CRC32.combine(crc, slot.crc, secondLength: Int64(slot.piece.count))
            hasher?.update(slot.piece)
            condition.withLock {
                doneInput += Int64(slot.piece.count)
                slot.isDeflated = false
                nextToWrite += 1
                condition.broadcast()
            }
        }
    }

    private func fail(_ error: Error) {
        condition.withLock {
            if failure == nil { failure = error }
            condition.broadcast()
        }
    }

    /// One piece in flight: its input (after up to 32 KiB of dictionary), CRC and output.
    private final class Slot: @unchecked Sendable {
        private let input = UnsafeMutableRawBufferPointer.allocate(byteCount: ParallelDeflate.window + ParallelDeflate.piece,
                                                                   alignment: 16)
        // Room for a piece that does not compress (stored blocks add a few bytes per 64 KiB).
        private let room = UnsafeMutableRawBufferPointer.allocate(byteCount: ParallelDeflate.piece + ParallelDeflate.piece / 2,
                                                                  alignment: 16)
        private(set) var piece = UnsafeRawBufferPointer(start: nil, count: 0)
        private(set) var output = UnsafeRawBufferPointer(start: nil, count: 0)
        private(set) var crc: UInt32 = 0
        /// Under the deflate's condition: deflated and not yet written.
        var isDeflated = false

        deinit {
            input.deallocate()
            room.deallocate()
        }

        /// Reads piece `index` and the dictionary before it, and deflates it.
        func fill(index: Int, from source: PosixFile, size: Int64, deflater: Deflater) throws {
            let start = Int64(index) * Int64(ParallelDeflate.piece)
            let count = Int(min(Int64(ParallelDeflate.piece), size - start))
            let before = Int(min(Int64(ParallelDeflate.window), start))
            let first = ParallelDeflate.window - before
            let end = ParallelDeflate.window + count
            try source.read(into: UnsafeMutableRawBufferPointer(rebasing: input[first..<end]), at: start - Int64(before))
            piece = UnsafeRawBufferPointer(rebasing: input[ParallelDeflate.window..<end])
            crc = CRC32.update(0, piece)
            let produced: Int
            do {
                produced = try deflater.deflatePiece(
                    piece, dictionary: UnsafeRawBufferPointer(rebasing: input[first..<ParallelDeflate.window]),
                    last: start + Int64(count) >= size, into: room)
            } catch {
                throw ContainerError.unsupported("ISA-L failed to compress '\(source.path)'")
            }
            output = UnsafeRawBufferPointer(rebasing: room[0..<produced])
        }
    }
}
