import COpenSSL

/// OSSL_PARAM arrays for EVP_KDF/EVP_MAC calls. OpenSSL keeps pointers into the names and
/// buffers, so they live in memory this object owns until the call is over; octet buffers may
/// hold key material and are wiped when it goes.
final class OpenSSLParameters {
    private var allocations: [(UnsafeMutableRawPointer, Int)] = []
    private var parameters: [OSSL_PARAM] = []

    private func copy(_ bytes: UnsafeRawBufferPointer) -> UnsafeMutableRawPointer {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 8)
        if let base = bytes.baseAddress, bytes.count > 0 { memory.copyMemory(from: base, byteCount: bytes.count) }
        allocations.append((memory, max(bytes.count, 1)))
        return memory
    }

    private func name(_ text: String) -> UnsafeMutablePointer<CChar> {
        let bytes = Array(text.utf8CString)
        return bytes.withUnsafeBytes { copy($0) }.assumingMemoryBound(to: CChar.self)
    }

    func utf8(_ key: String, _ value: String) {
        let valuePointer = name(value)
        parameters.append(OSSL_PARAM_construct_utf8_string(name(key), valuePointer, 0))
    }

    func octets(_ key: String, _ value: UnsafeRawBufferPointer) {
        parameters.append(OSSL_PARAM_construct_octet_string(name(key), copy(value), value.count))
    }

    func octets(_ key: String, _ value: [UInt8]) { value.withUnsafeBytes { octets(key, $0) } }

    func int(_ key: String, _ value: Int32) {
        var value = value
        let pointer = withUnsafeBytes(of: &value) { copy($0) }.assumingMemoryBound(to: Int32.self)
        parameters.append(OSSL_PARAM_construct_int(name(key), pointer))
    }

    func uint(_ key: String, _ value: UInt32) {
        var value = value
        let pointer = withUnsafeBytes(of: &value) { copy($0) }.assumingMemoryBound(to: UInt32.self)
        parameters.append(OSSL_PARAM_construct_uint(name(key), pointer))
    }

    func with<R>(_ body: (UnsafePointer<OSSL_PARAM>) throws -> R) rethrows -> R {
        let terminated = parameters + [OSSL_PARAM_construct_end()]
        return try terminated.withUnsafeBufferPointer { try body($0.baseAddress!) }
    }

    deinit {
        for (memory, count) in allocations {
            explicit_bzero(memory, count)
            memory.deallocate()
        }
    }
}

/// One EVP_KDF derivation: `name` is OpenSSL's ("HKDF", "PBKDF2", "SSKDF").
enum OpenSSLKDF {
    static func derive(_ name: String, length: Int, _ parameters: OpenSSLParameters) throws -> SecretBytes {
        guard let kdf = EVP_KDF_fetch(nil, name, nil) else { throw CryptoError("OpenSSL has no \(name): \(OpenSSLError.last())") }
        defer { EVP_KDF_free(kdf) }
        guard let context = EVP_KDF_CTX_new(kdf) else { throw CryptoError("out of memory") }
        defer { EVP_KDF_CTX_free(context) }
        var out = [UInt8](repeating: 0, count: length)
        let status = parameters.with { EVP_KDF_derive(context, &out, length, $0) }
        guard status == 1 else {
            SecretBytes.zero(&out)
            throw CryptoError("\(name) failed: \(OpenSSLError.last())")
        }
        defer { SecretBytes.zero(&out) }
        return SecretBytes(out)
    }
}
