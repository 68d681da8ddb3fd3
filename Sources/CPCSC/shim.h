#ifndef ASICFS_CPCSC_SHIM_H
#define ASICFS_CPCSC_SHIM_H
#include <PCSC/winscard.h>
#include <PCSC/wintypes.h>

// SCARD_PCI_T0/T1 are macros over global structs.
static inline const SCARD_IO_REQUEST *cpcsc_pci_t0(void) { return SCARD_PCI_T0; }
static inline const SCARD_IO_REQUEST *cpcsc_pci_t1(void) { return SCARD_PCI_T1; }
#endif
