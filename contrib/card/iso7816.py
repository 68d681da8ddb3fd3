"""ISO/IEC 7816-4 helpers shared by the emulated cards: APDU parsing, BER-TLV, status words,
ISO padding and a small error type that carries a status word."""

from dataclasses import dataclass


class CardError(Exception):
    """Raised by a command handler to answer with a bare status word."""

    def __init__(self, sw):
        super().__init__(f"SW {sw:04X}")
        self.sw = sw


# Status words used by the cards (names as in ISO 7816-4).
SW_OK = 0x9000
SW_WRONG_LENGTH = 0x6700
SW_SECURITY_NOT_SATISFIED = 0x6982
SW_AUTH_BLOCKED = 0x6983
SW_REF_DATA_NOT_USABLE = 0x6984
SW_CONDITIONS_NOT_SATISFIED = 0x6985
SW_NO_CURRENT_EF = 0x6986
SW_SM_DATA_OBJECTS_MISSING = 0x6987
SW_SM_DATA_OBJECTS_INCORRECT = 0x6988
SW_WRONG_DATA = 0x6A80
SW_FUNC_NOT_SUPPORTED = 0x6A81
SW_FILE_NOT_FOUND = 0x6A82
SW_WRONG_P1P2 = 0x6A86
SW_REF_DATA_NOT_FOUND = 0x6A88
SW_WRONG_P1P2_OFFSET = 0x6B00
SW_INS_NOT_SUPPORTED = 0x6D00
SW_CLA_NOT_SUPPORTED = 0x6E00
SW_UNKNOWN = 0x6F00


@dataclass
class Apdu:
    """A short command APDU. `le` is None when absent, else 1..256 (a 00 byte means 256)."""
    cla: int
    ins: int
    p1: int
    p2: int
    data: bytes = b""
    le: int = None
    lc_present: bool = False

    @classmethod
    def parse(cls, raw):
        if len(raw) < 4:
            raise CardError(SW_WRONG_LENGTH)
        cla, ins, p1, p2 = raw[0], raw[1], raw[2], raw[3]
        body = raw[4:]
        if not body:                                   # case 1
            return cls(cla, ins, p1, p2)
        if len(body) == 1:                             # case 2
            return cls(cla, ins, p1, p2, le=body[0] or 256)
        lc = body[0]
        if lc == 0:                                    # extended length: the cards use short APDUs only
            raise CardError(SW_WRONG_LENGTH)
        if len(body) == 1 + lc:                        # case 3
            return cls(cla, ins, p1, p2, bytes(body[1:]), lc_present=True)
        if len(body) == 2 + lc:                        # case 4
            return cls(cla, ins, p1, p2, bytes(body[1:1 + lc]), body[1 + lc] or 256, True)
        raise CardError(SW_WRONG_LENGTH)

    def encode(self):
        out = bytes([self.cla, self.ins, self.p1, self.p2])
        if self.data or self.lc_present:
            out += bytes([len(self.data)]) + self.data
        if self.le is not None:
            out += bytes([self.le & 0xFF])
        return out

    def header(self):
        """The log form: CLA INS P1 P2 [Lc] [Le] — never the data (it may hold PINs)."""
        s = f"{self.cla:02X} {self.ins:02X} {self.p1:02X} {self.p2:02X}"
        if self.data or self.lc_present:
            s += f" Lc={len(self.data):02X}"
        if self.le is not None:
            s += f" Le={self.le & 0xFF:02X}"
        return s


def sw_bytes(sw):
    return bytes([sw >> 8, sw & 0xFF])


def tlv(tag, value):
    """BER-TLV with a 1- or 2-byte tag given as int, definite length."""
    tag_b = tag.to_bytes(2, "big") if tag > 0xFF else bytes([tag])
    n = len(value)
    if n < 0x80:
        ln = bytes([n])
    elif n < 0x100:
        ln = bytes([0x81, n])
    else:
        ln = bytes([0x82, n >> 8, n & 0xFF])
    return tag_b + ln + bytes(value)


def parse_tlv(data):
    """Parses a flat BER-TLV sequence into a list of (tag, value). Raises CardError(6A80) when
    malformed. Tags: 1 byte, or 2+ when the low 5 bits are all set."""
    out = []
    i = 0
    try:
        while i < len(data):
            if data[i] in (0x00, 0xFF):            # padding between objects
                i += 1
                continue
            tag = data[i]
            i += 1
            if tag & 0x1F == 0x1F:
                while True:
                    tag = (tag << 8) | data[i]
                    i += 1
                    if not data[i - 1] & 0x80:
                        break
            ln = data[i]
            i += 1
            if ln == 0x81:
                ln = data[i]
                i += 1
            elif ln == 0x82:
                ln = (data[i] << 8) | data[i + 1]
                i += 2
            elif ln > 0x82:
                raise CardError(SW_WRONG_DATA)
            if i + ln > len(data):
                raise CardError(SW_WRONG_DATA)
            out.append((tag, bytes(data[i:i + ln])))
            i += ln
    except IndexError:
        raise CardError(SW_WRONG_DATA)
    return out


def iso_pad(data, block):
    """ISO/IEC 7816-4 padding (80 00 ...) to a multiple of `block` (always adds at least 80)."""
    data = bytes(data) + b"\x80"
    return data + b"\x00" * (-len(data) % block)


def iso_unpad(data):
    i = len(data) - 1
    while i >= 0 and data[i] == 0:
        i -= 1
    if i < 0 or data[i] != 0x80:
        raise CardError(SW_SM_DATA_OBJECTS_INCORRECT)
    return bytes(data[:i])


def hexs(b):
    return " ".join(f"{x:02X}" for x in b)
