import HTTP

extension TrustSettings {
    /// Downloads lists with the shared libcurl client (proxy, size limit and cancellation come
    /// from its options; national lists can be several megabytes).
    public static func httpDownload(_ client: HTTPClient, timeout: Double = 60) -> TrustedListDownload {
        { url in
            try client.send(.get(url, accept: "application/vnd.etsi.tsl+xml, application/xml, text/xml", timeout: timeout)).body
        }
    }
}
