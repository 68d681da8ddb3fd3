import CPKCS11

/// A CK_ATTRIBUTE array whose values live in memory it owns (so no nested pointer closures):
/// built with `add`, handed to a call with `withTemplate`, freed (and zeroed) when released.
final class AttributeTemplate {
    private var attributes: [CK_ATTRIBUTE] = []
    private var buffers: [UnsafeMutableRawBufferPointer] = []

    deinit {
        for buffer in buffers {
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            buffer.deallocate()
        }
    }

    func add(_ type: CK_ATTRIBUTE_TYPE, bytes: [UInt8]) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 8)
        buffer.copyBytes(from: bytes)
        buffers.append(buffer)
        attributes.append(CK_ATTRIBUTE(type: type, pValue: buffer.baseAddress, ulValueLen: CK_ULONG(bytes.count)))
    }

    func add(_ type: CK_ATTRIBUTE_TYPE, ulong value: CK_ULONG) {
        add(type, bytes: withUnsafeBytes(of: value) { Array($0) })
    }

    func add(_ type: CK_ATTRIBUTE_TYPE, bool value: Bool) {
        add(type, bytes: [CK_BBOOL(value ? CK_TRUE : CK_FALSE)])
    }

    func withTemplate<R>(_ body: (UnsafeMutablePointer<CK_ATTRIBUTE>, CK_ULONG) -> R) -> R {
        attributes.withUnsafeMutableBufferPointer { body($0.baseAddress!, CK_ULONG($0.count)) }
    }
}
