/// Every way reading, decrypting or writing an encrypted container fails, each with one sentence.
public struct CDOCError: Error, CustomStringConvertible, Equatable {
    public enum Code: String, Sendable {
        case notEncrypted = "not_encrypted"          // neither CDOC2 nor CDOC 1.x XML
        case malformed                               // structure broken, truncated, bad XML
        case unsupported                             // a method/capsule asicfs does not implement
        case noRecipient = "no_recipient"            // the key/password opens no recipient
        case severalRecipients = "several_recipients"
        case wrongKey = "wrong_key"                  // header MAC / key unwrap / tag fails with the chosen recipient
        case tampered                                // payload authentication failed
        case unsafeName = "unsafe_name"              // a file name the unpacking rules refuse
        case limit                                   // bomb, too many files, too large
        case needsKeyServer = "needs_key_server"
        case io
    }
    public let code: Code
    public let description: String
    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
