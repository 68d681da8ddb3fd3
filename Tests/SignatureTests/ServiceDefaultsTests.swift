import Configuration
import Foundation
import HTTP
@testable import Signing
import TestTools
import Trust
import XCTest

/// Mobile-ID and Smart-ID out of the box: SK's production services by default (which need the
/// user's own relying party, and say so), the demo ones with `demo = yes` or `tsl = test`, and
/// TLS to SK's hosts anchored in the built-in DigiCert CA and root without any tls-cert.
final class ServiceDefaultsTests: XCTestCase {
    func context(_ settings: [String]) throws -> SignerContext {
        let configuration = try Configuration.load(explicitPath: "/dev/null", overrides: ["tsl=none"] + settings)
        return SignerContext(environment: try SignatureEnvironment(configuration: configuration), cancellation: Cancellation())
    }

    func failure(_ make: () throws -> Any) -> String {
        do { _ = try make(); return "" } catch { return "\(error)" }
    }

    func testProductionIsTheDefaultAndNeedsTheUsersOwnRelyingParty() throws {
        XCTAssertTrue(failure { try MobileIDClient(context: try self.context([])) }
            .hasPrefix("Mobile-ID in production needs your own relying party, agreed with SK ID Solutions"))
        XCTAssertTrue(failure { try SmartIDClient(context: try self.context([])) }
            .hasPrefix("Smart-ID in production needs your own relying party, agreed with SK ID Solutions"))
        let own = ["mobile-id.relying-party-uuid=12345678-1234-1234-1234-123456789abc", "mobile-id.relying-party-name=Example",
                   "smart-id.relying-party-uuid=12345678-1234-1234-1234-123456789abc", "smart-id.relying-party-name=Example"]
        let mobile = try MobileIDClient(context: try context(own))
        XCTAssertEqual(mobile.service.baseURL, "https://mid.sk.ee/mid-api")
        XCTAssertEqual(mobile.relyingPartyName, "Example")
        // RP API v3 unless smart-id.api (or an older configuration's /v2 smart-id.url) says v2.
        let smartV3 = try SmartIDClient(context: try context(own))
        XCTAssertEqual(smartV3.service.baseURL, "https://rp-api.smart-id.com/v3")
        XCTAssertEqual(smartV3.schemeName, "smart-id")
        XCTAssertEqual(try SmartIDClient(context: try context(own + ["smart-id.api=v2"])).service.baseURL, "https://rp-api.smart-id.com/v2")
        let older = try SmartIDClient(context: try context(own + ["smart-id.url=https://rp-api.smart-id.com/v2/"]))
        XCTAssertEqual(older.api, .v2)
        XCTAssertTrue(failure { try self.context(["smart-id.api=v4"]) }.contains("'smart-id.api' must be one of v2, v3"))
    }

    func testDemoYesOrTheTestListsSelectSKsDemoServices() throws {
        for settings in [["demo=yes"], ["tsl=test"]] {
            let mobile = try MobileIDClient(context: try context(settings))
            XCTAssertEqual(mobile.service.baseURL, "https://tsp.demo.sk.ee/mid-api", "\(settings)")
            XCTAssertEqual(mobile.relyingPartyUUID, "00000000-0000-0000-0000-000000000000")
            XCTAssertEqual(mobile.relyingPartyName, "DEMO")
            let smart = try SmartIDClient(context: try context(settings))
            XCTAssertEqual(smart.service.baseURL, "https://sid.demo.sk.ee/smart-id-rp/v3", "\(settings)")
            XCTAssertEqual(smart.schemeName, "smart-id-demo")
            XCTAssertEqual(smart.relyingPartyUUID, "00000000-0000-4000-8000-000000000000")
        }
        XCTAssertTrue(failure { try self.context(["demo=maybe"]) }.contains("'demo' must be one of no, yes"))
    }

    /// Only SK's hosts get the built-in anchors; any other service must be pinned.
    func testOtherServicesStillNeedAPinnedCertificate() throws {
        let message = failure { try MobileIDClient(context: try self.context(["mobile-id.url=https://mid.example.org/mid-api",
                                                                              "mobile-id.relying-party-uuid=12345678-1234-1234-1234-123456789abc",
                                                                              "mobile-id.relying-party-name=Example"])) }
        XCTAssertTrue(message.hasPrefix("Mobile-ID: no TLS certificate to pin is configured for https://mid.example.org/mid-api"), message)
        XCTAssertTrue(failure { try MobileIDClient(context: try self.context(["demo=yes", "mobile-id.url=http://tsp.demo.sk.ee/mid-api"])) }
            .contains("no TLS certificate to pin"), "plain HTTP to an SK host gets no built-in anchor")
    }

    /// SK's hosts are checked by the built-in key pins over the system CA store: DigiCert's issuing
    /// CA and root for every host, and a demo host's own key; no certificate is pinned as anchor.
    func testSKHostsGetTheBuiltInKeyPinsOverTheSystemStore() throws {
        let caPins = ["Wec45nQiFwKvHtuHxSAMGkt19k+uPSw9JlEkxhvYPHk=", "i7WTqTvh0OioIruIfFR4kMPnBqrS2rdiVPl/s2uC/CY="]
        let demoMobile = try MobileIDClient(context: try context(["demo=yes"])).service.http.options
        XCTAssertEqual(demoMobile.spkiPins, caPins + ["Fnjp3/Yi4oPFBG+GtDV2ZVJEPcVVJA5r/T7QK+VXPpM="])
        XCTAssertEqual(demoMobile.pinnedCertificates, [])
        XCTAssertNil(demoMobile.caFile)
        let demoSmart = try SmartIDClient(context: try context(["demo=yes"])).service.http.options
        XCTAssertEqual(demoSmart.spkiPins, caPins + ["Ps1Im3KeB0Q4AlR+/J9KFd/MOznaARdwo4gURPCLaVA="])
        let own = ["mobile-id.relying-party-uuid=12345678-1234-1234-1234-123456789abc", "mobile-id.relying-party-name=Example"]
        XCTAssertEqual(try MobileIDClient(context: try context(own)).service.http.options.spkiPins, caPins)
        // mobile-id.tls-cert still pins by file, and then no key pins apply.
        let pinned = try MobileIDClient(context: try context(["demo=yes", "mobile-id.tls-cert=/etc/ssl/certs/ca-certificates.crt"]))
            .service.http.options
        XCTAssertEqual(pinned.pinnedCertificates, [.pemFile("/etc/ssl/certs/ca-certificates.crt")])
        XCTAssertEqual(pinned.spkiPins, [])
    }
}
