import XCTest

final class TrustTestsPlaceholder: XCTestCase {
    func testModuleLoads() { XCTAssertTrue(true) }
}
