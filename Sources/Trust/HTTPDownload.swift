import Foundation
import HTTP

extension TrustSettings {
    /// Downloads lists with the shared libcurl client (proxy, size limit and cancellation come
    /// from its options; national lists can be several megabytes). `notice` is told
    /// "downloading the trusted list from HOST…" once a download has taken a second, so that a
    /// wait for the network is not a silent one.
    public static func httpDownload(_ client: HTTPClient, timeout: Double = 60,
                                    notice: (@Sendable (String) -> Void)? = nil) -> TrustedListDownload {
        { url in
            let slow = notice.map { tell in
                DispatchWorkItem { tell("downloading the trusted list from \(URLComponents(string: url)?.host ?? url)…") }
            }
            if let slow { DispatchQueue.global().asyncAfter(deadline: .now() + 1, execute: slow) }
            defer { slow?.cancel() }
            return try client.send(.get(url, accept: "application/vnd.etsi.tsl+xml, application/xml, text/xml", timeout: timeout)).body
        }
    }
}
