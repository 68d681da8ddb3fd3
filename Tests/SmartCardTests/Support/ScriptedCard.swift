import SmartCard
import XCTest

/// A card that answers a fixed transcript: each command must match its step byte for byte
/// (a mismatch fails the test and answers 6F00). After the transcript, commands go to `then`.
final class ScriptedCard: CardChannel {
    struct Step {
        let command: [UInt8]
        let response: [UInt8]
    }

    private var steps: [Step]
    private let file: StaticString, line: UInt
    var then: CardChannel?
    private(set) var sent: [[UInt8]] = []

    init(_ steps: [(command: String, response: String)], file: StaticString = #filePath, line: UInt = #line) {
        self.steps = steps.map { Step(command: bytes($0.command), response: bytes($0.response)) }
        self.file = file
        self.line = line
    }

    var isFinished: Bool { steps.isEmpty }

    func transmit(_ command: CommandAPDU) throws -> ResponseAPDU {
        sent.append(command.bytes)
        guard !steps.isEmpty else {
            guard let then else {
                XCTFail("an unexpected command \(Hex.string(command.bytes))", file: file, line: line)
                return ResponseAPDU(sw: 0x6F00)
            }
            return try then.transmit(command)
        }
        let step = steps.removeFirst()
        guard command.bytes == step.command else {
            XCTFail("sent \(Hex.string(command.bytes)), the transcript has \(Hex.string(step.command))", file: file, line: line)
            return ResponseAPDU(sw: 0x6F00)
        }
        return try ResponseAPDU(bytes: step.response)
    }
}
