#ifndef ASICFS_CQRENCODE_SHIM_H
#define ASICFS_CQRENCODE_SHIM_H
// libqrencode: the module matrix of a QR code (Smart-ID v3 device links). Nothing to wrap.
#include <qrencode.h>
#endif
