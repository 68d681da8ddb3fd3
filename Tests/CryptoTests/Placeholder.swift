import XCTest

final class CryptoTestsPlaceholder: XCTestCase {
    func testModuleLoads() { XCTAssertTrue(true) }
}
