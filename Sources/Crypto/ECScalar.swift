import COpenSSL

/// A secret scalar (an ephemeral private key, or PACE's nonce s): an OpenSSL BIGNUM flagged
/// constant-time and cleared when freed here.
public final class ECScalar {
    let bignum: OpaquePointer

    private init(owning bignum: OpaquePointer) {
        BN_set_flags(bignum, BN_FLG_CONSTTIME)
        self.bignum = bignum
    }

    deinit { BN_clear_free(bignum) }

    /// A big-endian unsigned integer (the decrypted nonce; fixed keys in known-answer tests).
    public convenience init(bytes: [UInt8]) throws {
        guard !bytes.isEmpty, let bignum = BN_bin2bn(bytes, Int32(bytes.count), nil) else {
            throw CryptoError("a scalar needs at least one byte")
        }
        self.init(owning: bignum)
    }

    /// A uniformly random private key in 1 ..< order of `group`.
    public static func random(in group: ECGroup) throws -> ECScalar {
        guard let bignum = BN_secure_new() else { throw CryptoError("out of memory") }
        let scalar = ECScalar(owning: bignum)
        repeat {
            guard BN_priv_rand_range(bignum, group.order) == 1 else { throw CryptoError("no random numbers: \(OpenSSLError.last())") }
        } while BN_is_zero(bignum) == 1
        return scalar
    }

    /// This scalar times the group's generator: the public key of a private key.
    public func publicPoint(on group: ECGroup) throws -> ECPoint {
        try ECPoint.generatorMultiple(self, on: group)
    }

    /// ECDH: the x-coordinate of this scalar times `peer`, padded to the coordinate length.
    public func sharedSecret(with peer: ECPoint) throws -> SecretBytes {
        let shared = try peer.multiplied(by: self)
        return SecretBytes(try shared.x())
    }
}
