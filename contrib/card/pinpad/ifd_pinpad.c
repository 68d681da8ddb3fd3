/*
 * A PIN-pad reader for tests: a pcscd IFD handler that wraps vsmartcard's vpcd driver and adds
 * what a PIN-pad reader's driver offers (PC/SC part 10): CM_IOCTL_GET_FEATURE_REQUEST announces
 * FEATURE_VERIFY_PIN_DIRECT, and that feature takes a PIN_VERIFY_STRUCTURE, "types" the PIN into
 * the VERIFY command it carries and sends it to the card. What the person types is the file named
 * by $ASICFS_PINPAD_INPUT: the reader waits for it (up to 20 s, then a time-out, 64 00), reads
 * and removes it; "cancel" is the Cancel key (64 01). So a test can look at the waiting client
 * before it "types". Everything else goes to vpcd unchanged.
 *
 * Built by virtual-reader.sh (start DIR PORT --pinpad); nothing here is used outside the tests.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <PCSC/ifdhandler.h>
#include <PCSC/reader.h>

#define VPCD_DRIVER "/usr/lib/pcsc/drivers/serial/libifdvpcd.so"
/* The control code this reader gives FEATURE_VERIFY_PIN_DIRECT (any SCARD_CTL_CODE will do). */
#define IOCTL_VERIFY_PIN_DIRECT SCARD_CTL_CODE(3506)

static void *vpcd;

static void *real(const char *name) {
    if (!vpcd) vpcd = dlopen(VPCD_DRIVER, RTLD_NOW | RTLD_LOCAL);
    return vpcd ? dlsym(vpcd, name) : NULL;
}

#define FORWARD(name, args, call) \
    RESPONSECODE name args { \
        RESPONSECODE (*f) args = real(#name); \
        return f ? f call : IFD_COMMUNICATION_ERROR; \
    }

FORWARD(IFDHCreateChannelByName, (DWORD Lun, LPSTR DeviceName), (Lun, DeviceName))
FORWARD(IFDHCreateChannel, (DWORD Lun, DWORD Channel), (Lun, Channel))
FORWARD(IFDHCloseChannel, (DWORD Lun), (Lun))
FORWARD(IFDHGetCapabilities, (DWORD Lun, DWORD Tag, PDWORD Length, PUCHAR Value), (Lun, Tag, Length, Value))
FORWARD(IFDHSetCapabilities, (DWORD Lun, DWORD Tag, DWORD Length, PUCHAR Value), (Lun, Tag, Length, Value))
FORWARD(IFDHSetProtocolParameters, (DWORD Lun, DWORD Protocol, UCHAR Flags, UCHAR PTS1, UCHAR PTS2, UCHAR PTS3),
        (Lun, Protocol, Flags, PTS1, PTS2, PTS3))
FORWARD(IFDHPowerICC, (DWORD Lun, DWORD Action, PUCHAR Atr, PDWORD AtrLength), (Lun, Action, Atr, AtrLength))
FORWARD(IFDHTransmitToICC, (DWORD Lun, SCARD_IO_HEADER SendPci, PUCHAR TxBuffer, DWORD TxLength, PUCHAR RxBuffer,
                            PDWORD RxLength, PSCARD_IO_HEADER RecvPci),
        (Lun, SendPci, TxBuffer, TxLength, RxBuffer, RxLength, RecvPci))
FORWARD(IFDHICCPresence, (DWORD Lun), (Lun))

/* What the person "types": up to 12 digits, or "cancel"; 0 for nothing within 20 s. */
static int typed(char *out, size_t size) {
    const char *path = getenv("ASICFS_PINPAD_INPUT");
    FILE *file = NULL;
    for (int waited = 0; path && !(file = fopen(path, "r")) && waited < 400; waited++) usleep(50000);
    if (!file) return 0;
    size_t n = fread(out, 1, size - 1, file);
    fclose(file);
    unlink(path);
    while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r')) n--;
    out[n] = 0;
    return n > 0;
}

static RESPONSECODE answer(PUCHAR rx, DWORD rxLength, LPDWORD returned, UCHAR sw1, UCHAR sw2) {
    if (rxLength < 2) return IFD_COMMUNICATION_ERROR;
    rx[0] = sw1;
    rx[1] = sw2;
    *returned = 2;
    return IFD_SUCCESS;
}

RESPONSECODE IFDHControl(DWORD Lun, DWORD dwControlCode, PUCHAR TxBuffer, DWORD TxLength, PUCHAR RxBuffer,
                         DWORD RxLength, LPDWORD pdwBytesReturned) {
    *pdwBytesReturned = 0;
    if (dwControlCode == CM_IOCTL_GET_FEATURE_REQUEST) {
        if (RxLength < 6) return IFD_COMMUNICATION_ERROR;
        DWORD code = IOCTL_VERIFY_PIN_DIRECT;
        UCHAR tlv[6] = {FEATURE_VERIFY_PIN_DIRECT, 4, code >> 24, code >> 16, code >> 8, code};
        memcpy(RxBuffer, tlv, 6);
        *pdwBytesReturned = 6;
        return IFD_SUCCESS;
    }
    if (dwControlCode != IOCTL_VERIFY_PIN_DIRECT) {
        RESPONSECODE (*f)(DWORD, DWORD, PUCHAR, DWORD, PUCHAR, DWORD, LPDWORD) = real("IFDHControl");
        return f ? f(Lun, dwControlCode, TxBuffer, TxLength, RxBuffer, RxLength, pdwBytesReturned) : IFD_ERROR_NOT_SUPPORTED;
    }
    /* PIN_VERIFY_STRUCTURE: 19 bytes, then the APDU (ulDataLength, little-endian, at 15). */
    if (TxLength < 19) return IFD_COMMUNICATION_ERROR;
    DWORD length = TxBuffer[15] | TxBuffer[16] << 8 | TxBuffer[17] << 16 | (DWORD)TxBuffer[18] << 24;
    if (length != TxLength - 19 || length < 5 || length > 5 + 255) return IFD_COMMUNICATION_ERROR;
    UCHAR apdu[261];
    memcpy(apdu, TxBuffer + 19, length);
    UCHAR format = TxBuffer[2];
    int position = (format >> 3) & 0x0F;           /* PIN position in the data, in bytes (bit 7 set) */
    int maxDigits = TxBuffer[5], minDigits = TxBuffer[6];
    char pin[64];
    if (!typed(pin, sizeof pin)) return answer(RxBuffer, RxLength, pdwBytesReturned, 0x64, 0x00);
    if (strcmp(pin, "cancel") == 0) return answer(RxBuffer, RxLength, pdwBytesReturned, 0x64, 0x01);
    int digits = (int)strlen(pin);
    if (digits < minDigits || digits > maxDigits || 5 + position + digits > (int)length)
        return answer(RxBuffer, RxLength, pdwBytesReturned, 0x64, 0x03);
    if ((format & 0x03) != 0x02) return IFD_COMMUNICATION_ERROR;  /* only ASCII PINs */
    memcpy(apdu + 5 + position, pin, digits);
    memset(pin, 0, sizeof pin);
    SCARD_IO_HEADER pci = {SCARD_PROTOCOL_T1, 8}, received_pci = {0, 0};
    DWORD received = RxLength;
    RESPONSECODE (*transmit)(DWORD, SCARD_IO_HEADER, PUCHAR, DWORD, PUCHAR, PDWORD, PSCARD_IO_HEADER) = real("IFDHTransmitToICC");
    RESPONSECODE rc = transmit ? transmit(Lun, pci, apdu, length, RxBuffer, &received, &received_pci) : IFD_COMMUNICATION_ERROR;
    memset(apdu, 0, sizeof apdu);
    if (rc == IFD_SUCCESS) *pdwBytesReturned = received;
    return rc;
}
