import Crypto
import Foundation
import HTTP
import TestTools
import XCTest

/// The test PKI and its loopback TSA/OCSP server, started once per test class that asks for it.
final class LoopbackPKI: @unchecked Sendable {
    let folder: TemporaryFolder
    let services: TestServices
    let http: HTTPClient

    init() throws {
        folder = try TemporaryFolder("crypto-pki")
        services = try TestServices.start(makingPKIIn: folder.path + "/pki")
        http = try HTTPClient(.init(version: "test"))
    }

    var pki: TestPKI { services.pki }

    func stop() {
        services.stop()
        folder.remove()
    }

    func certificate(_ path: String) throws -> Certificate {
        try Certificate.parse(Array(try XCTUnwrap(FileManager.default.contents(atPath: path))))
    }

    func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let path = folder.path + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
}

/// A test class whose tests share one `LoopbackPKI`: started before its first test, stopped after its last.
class LoopbackPKITestCase: XCTestCase {
    nonisolated(unsafe) private static var shared: LoopbackPKI?
    var loopback: LoopbackPKI { Self.shared! }

    override func setUpWithError() throws {
        try super.setUpWithError()
        if Self.shared == nil { Self.shared = try LoopbackPKI() }
    }

    override class func tearDown() {
        shared?.stop()
        shared = nil
        super.tearDown()
    }
}
