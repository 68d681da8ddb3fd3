#ifndef ASICFS_CXML_H
#define ASICFS_CXML_H
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

// libxml2 is loaded the first time a document is parsed (dlopen, cxml.c),
// not when asicfs starts: with the ICU and liblzma it brings, loading it from a cold disk cost
// about 25 ms of every start, mounts included, where the container check (which parses) runs
// after the mount answers. This module gives libxml2's types; its functions are called through
// the cxml_ functions below, which have libxml2's signatures.

// 0 once libxml2 is loaded and initialised (xmlInitParser); -1 otherwise, with the reason in
// cxml_load_error(). Safe to call from many threads; the work is done once. The functions
// below may be called only after it returned 0.
int cxml_load(void);
const char *cxml_load_error(void);

xmlParserCtxtPtr cxml_NewParserCtxt(void);
void cxml_FreeParserCtxt(xmlParserCtxtPtr ctxt);
xmlDocPtr cxml_CtxtReadMemory(xmlParserCtxtPtr ctxt, const char *buffer, int size, const char *URL,
                              const char *encoding, int options);
xmlErrorPtr cxml_CtxtGetLastError(void *ctx);
void cxml_FreeDoc(xmlDocPtr cur);
xmlNodePtr cxml_DocGetRootElement(const xmlDoc *doc);
xmlChar *cxml_GetNoNsProp(const xmlNode *node, const xmlChar *name);
xmlChar *cxml_GetNsProp(const xmlNode *node, const xmlChar *name, const xmlChar *nameSpace);
xmlChar *cxml_NodeGetContent(const xmlNode *cur);
xmlChar *cxml_Strdup(const xmlChar *cur);
xmlOutputBufferPtr cxml_AllocOutputBuffer(xmlCharEncodingHandlerPtr encoder);
int cxml_OutputBufferClose(xmlOutputBufferPtr out);
const xmlChar *cxml_OutputBufferGetContent(xmlOutputBufferPtr out);
size_t cxml_OutputBufferGetSize(xmlOutputBufferPtr out);
int cxml_C14NExecute(xmlDocPtr doc, xmlC14NIsVisibleCallback is_visible_callback, void *user_data, int mode,
                     xmlChar **inclusive_ns_prefixes, int with_comments, xmlOutputBufferPtr buf);
// xmlFree (a variable holding libxml2's deallocator).
void cxml_free(void *p);

// A push parser that builds a document like xmlCtxtReadMemory, except that the text directly
// inside the element at `path` (local names from the root) goes to `text` instead of the tree:
// a CDOC 1.x payload is gigabytes of base64 in one element. `text` returns nonzero to stop.
// Any DOCTYPE stops the parse (cxml_push_saw_doctype). libxml2's messages are never printed.
typedef int (*cxml_text_fn)(void *info, const xmlChar *text, int length);
struct cxml_push;
struct cxml_push *cxml_push_new(const char *const *path, int path_length, cxml_text_fn text, void *info,
                                int options, const char *name);
// Called when the element at `path` starts (`element`, in the tree being built, with its
// attributes; `entering` 1) and when it ends (NULL, 0): a DDOC's DataFile begins and ends a file.
// Nonzero stops the parse.
typedef int (*cxml_edge_fn)(void *info, xmlNodePtr element, int entering);
void cxml_push_set_edges(struct cxml_push *push, cxml_edge_fn edge);
// Feeds `size` bytes; `terminate` on the last call. 0, or libxml2's error number.
int cxml_push_feed(struct cxml_push *push, const char *bytes, int size, int terminate);
int cxml_push_saw_doctype(const struct cxml_push *push);
// 1 when the parser stands inside the element at `path`, between its tags, with every byte fed so
// far parsed (none held back): the bytes that follow may then be taken as that element's text
// without libxml2, and the parser resumed at the next markup.
int cxml_push_idle_in_diverted(const struct cxml_push *push);
// The parsed document once the last feed returned 0 (the caller owns it), else NULL.
xmlDocPtr cxml_push_take_document(struct cxml_push *push);
xmlErrorPtr cxml_push_last_error(struct cxml_push *push);
void cxml_push_free(struct cxml_push *push);
#endif
