import XCTest

final class SignatureTestsPlaceholder: XCTestCase {
    func testModuleLoads() { XCTAssertTrue(true) }
}
