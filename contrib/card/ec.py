"""Small pure-Python elliptic-curve arithmetic (short Weierstrass, Jacobian coordinates).

PACE generic mapping needs scalar multiplication with a *non-standard* generator
G' = s*G + H, which the `cryptography` package cannot do; this is fast enough for tests
(a few milliseconds per multiplication on 256-bit curves). Not constant time: test use only."""

import secrets


class Curve:
    def __init__(self, name, p, a, b, gx, gy, n, h=1):
        self.name, self.p, self.a, self.b, self.n, self.h = name, p, a, b, n, h
        self.G = (gx, gy)
        self.size = (p.bit_length() + 7) // 8

    # -- affine helpers ---------------------------------------------------------------------
    def on_curve(self, P):
        if P is None:
            return False
        x, y = P
        return 0 <= x < self.p and 0 <= y < self.p and (y * y - (x * x * x + self.a * x + self.b)) % self.p == 0

    def encode(self, P):
        """Uncompressed SEC1 encoding 04 || X || Y."""
        x, y = P
        return b"\x04" + x.to_bytes(self.size, "big") + y.to_bytes(self.size, "big")

    def decode(self, data):
        """Decodes an uncompressed point and checks it is on the curve (ValueError otherwise)."""
        if len(data) != 1 + 2 * self.size or data[0] != 4:
            raise ValueError("not an uncompressed point")
        P = (int.from_bytes(data[1:1 + self.size], "big"), int.from_bytes(data[1 + self.size:], "big"))
        if not self.on_curve(P):
            raise ValueError("point not on curve")
        return P

    # -- Jacobian arithmetic (X, Y, Z) with x = X/Z^2, y = Y/Z^3; None = infinity -----------
    def _to_jac(self, P):
        return None if P is None else (P[0], P[1], 1)

    def _to_aff(self, J):
        if J is None or J[2] % self.p == 0:
            return None
        zi = pow(J[2], -1, self.p)
        zi2 = zi * zi % self.p
        return (J[0] * zi2 % self.p, J[1] * zi2 * zi % self.p)

    def _dbl(self, J):
        if J is None:
            return None
        X, Y, Z = J
        p = self.p
        if Y % p == 0:
            return None
        YY = Y * Y % p
        S = 4 * X * YY % p
        ZZ = Z * Z % p
        M = (3 * X * X + self.a * ZZ * ZZ) % p
        X3 = (M * M - 2 * S) % p
        Y3 = (M * (S - X3) - 8 * YY * YY) % p
        Z3 = 2 * Y * Z % p
        return (X3, Y3, Z3)

    def _add(self, J1, J2):
        if J1 is None:
            return J2
        if J2 is None:
            return J1
        p = self.p
        X1, Y1, Z1 = J1
        X2, Y2, Z2 = J2
        Z1Z1 = Z1 * Z1 % p
        Z2Z2 = Z2 * Z2 % p
        U1 = X1 * Z2Z2 % p
        U2 = X2 * Z1Z1 % p
        S1 = Y1 * Z2 * Z2Z2 % p
        S2 = Y2 * Z1 * Z1Z1 % p
        if U1 == U2:
            return self._dbl(J1) if S1 == S2 else None
        H = (U2 - U1) % p
        R = (S2 - S1) % p
        HH = H * H % p
        HHH = H * HH % p
        V = U1 * HH % p
        X3 = (R * R - HHH - 2 * V) % p
        Y3 = (R * (V - X3) - S1 * HHH) % p
        Z3 = H * Z1 * Z2 % p
        return (X3, Y3, Z3)

    def add(self, P, Q):
        return self._to_aff(self._add(self._to_jac(P), self._to_jac(Q)))

    def mul(self, k, P):
        """k*P by double-and-add (left to right)."""
        k %= self.n
        R = None
        J = self._to_jac(P)
        for bit in bin(k)[2:] if k else "":
            R = self._dbl(R)
            if bit == "1":
                R = self._add(R, J)
        return self._to_aff(R)

    def random_scalar(self):
        return 1 + secrets.randbelow(self.n - 1)


# NIST P-256 (secp256r1), FIPS 186-4 D.1.2.3 — PACE parameterId 12.
P256 = Curve(
    "P-256",
    p=0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF,
    a=0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFC,
    b=0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B,
    gx=0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
    gy=0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5,
    n=0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
)

# brainpoolP256r1, RFC 5639 3.4 — PACE parameterId 13; the curve of the ICAO worked example.
BRAINPOOL_P256R1 = Curve(
    "brainpoolP256r1",
    p=0xA9FB57DBA1EEA9BC3E660A909D838D726E3BF623D52620282013481D1F6E5377,
    a=0x7D5A0975FC2C3057EEF67530417AFFE7FB8055C126DC5C6CE94A4B44F330B5D9,
    b=0x26DC5C6CE94A4B44F330B5D9BBD77CBF958416295CF7E1CE6BCCDC18FF8C07B6,
    gx=0x8BD2AEB9CB7E57CB2C4B482FFC81B7AFB9DE27E1E3BD23C23A4453BD9ACE3262,
    gy=0x547EF835C3DAC4FD97F8461A14611DC9C27745132DED8E545C1D54C72F046997,
    n=0xA9FB57DBA1EEA9BC3E660A909D838D718C397AA3B561A6F7901E0E82974856A7,
)

# PACE standardized domain parameter IDs (BSI TR-03110-3 / ICAO 9303-11 table) we support.
BY_PARAMETER_ID = {12: P256, 13: BRAINPOOL_P256R1}
