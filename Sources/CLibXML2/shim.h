#ifndef ASICFS_CLIBXML2_SHIM_H
#define ASICFS_CLIBXML2_SHIM_H
// Debian builds libxml2 with ICU; its <unicode/ucnv.h> clashes with Foundation's ICU module.
// We never use the ICU members of xmlCharEncodingHandler, so turn the ICU include off.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlsave.h>
#include <libxml/c14n.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

// xmlFree is a mutable global function pointer, which Swift 6 refuses to touch directly.
static inline void cxml_free(void *p) { xmlFree(p); }
#endif
