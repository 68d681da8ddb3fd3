#ifndef ASICFS_CPCSC_SHIM_H
#define ASICFS_CPCSC_SHIM_H
#include <PCSC/winscard.h>
#include <PCSC/wintypes.h>
#include <PCSC/reader.h>

// SCARD_PCI_T0/T1 are macros over global structs.
static inline const SCARD_IO_REQUEST *cpcsc_pci_t0(void) { return SCARD_PCI_T0; }
static inline const SCARD_IO_REQUEST *cpcsc_pci_t1(void) { return SCARD_PCI_T1; }
// SCARD_CTL_CODE is a function-like macro.
static inline unsigned long cpcsc_get_feature_request(void) { return CM_IOCTL_GET_FEATURE_REQUEST; }
#endif
