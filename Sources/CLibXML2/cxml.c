#include "cxml.h"
#include "lazy_library.h"

// libxml2's functions, found with dlsym once (see cxml.h for why it is not linked).
static struct {
    void (*init_parser)(void);
    xmlParserCtxtPtr (*new_parser_ctxt)(void);
    void (*free_parser_ctxt)(xmlParserCtxtPtr);
    xmlDocPtr (*ctxt_read_memory)(xmlParserCtxtPtr, const char *, int, const char *, const char *, int);
    xmlErrorPtr (*ctxt_get_last_error)(void *);
    void (*free_doc)(xmlDocPtr);
    xmlNodePtr (*doc_get_root_element)(const xmlDoc *);
    xmlChar *(*get_no_ns_prop)(const xmlNode *, const xmlChar *);
    xmlChar *(*get_ns_prop)(const xmlNode *, const xmlChar *, const xmlChar *);
    xmlChar *(*node_get_content)(const xmlNode *);
    xmlChar *(*strdup)(const xmlChar *);
    xmlOutputBufferPtr (*alloc_output_buffer)(xmlCharEncodingHandlerPtr);
    int (*output_buffer_close)(xmlOutputBufferPtr);
    const xmlChar *(*output_buffer_get_content)(xmlOutputBufferPtr);
    size_t (*output_buffer_get_size)(xmlOutputBufferPtr);
    int (*c14n_execute)(xmlDocPtr, xmlC14NIsVisibleCallback, void *, int, xmlChar **, int, xmlOutputBufferPtr);
    xmlFreeFunc *free;
} api;

static int start_parser(char *error, size_t size) {
    (void)error;
    (void)size;
    api.init_parser();
    return 0;
}

static const struct lazy_symbol symbols[] = {
    { "xmlInitParser", (void **)&api.init_parser },
    { "xmlNewParserCtxt", (void **)&api.new_parser_ctxt },
    { "xmlFreeParserCtxt", (void **)&api.free_parser_ctxt },
    { "xmlCtxtReadMemory", (void **)&api.ctxt_read_memory },
    { "xmlCtxtGetLastError", (void **)&api.ctxt_get_last_error },
    { "xmlFreeDoc", (void **)&api.free_doc },
    { "xmlDocGetRootElement", (void **)&api.doc_get_root_element },
    { "xmlGetNoNsProp", (void **)&api.get_no_ns_prop },
    { "xmlGetNsProp", (void **)&api.get_ns_prop },
    { "xmlNodeGetContent", (void **)&api.node_get_content },
    { "xmlStrdup", (void **)&api.strdup },
    { "xmlAllocOutputBuffer", (void **)&api.alloc_output_buffer },
    { "xmlOutputBufferClose", (void **)&api.output_buffer_close },
    { "xmlOutputBufferGetContent", (void **)&api.output_buffer_get_content },
    { "xmlOutputBufferGetSize", (void **)&api.output_buffer_get_size },
    { "xmlC14NExecute", (void **)&api.c14n_execute },
    { "xmlFree", (void **)&api.free },
    { NULL, NULL },
};

// The soname Debian's libxml2 installs.
static struct lazy_library library = {
    .soname = "libxml2.so.2", .package = "libxml2", .symbols = symbols, .start = start_parser,
    .lock = PTHREAD_MUTEX_INITIALIZER, .loaded = -1,
};

int cxml_load(void) { return lazy_library_load(&library); }

const char *cxml_load_error(void) { return library.error; }

xmlParserCtxtPtr cxml_NewParserCtxt(void) { return api.new_parser_ctxt(); }
void cxml_FreeParserCtxt(xmlParserCtxtPtr ctxt) { api.free_parser_ctxt(ctxt); }
xmlDocPtr cxml_CtxtReadMemory(xmlParserCtxtPtr ctxt, const char *buffer, int size, const char *URL,
                              const char *encoding, int options) {
    return api.ctxt_read_memory(ctxt, buffer, size, URL, encoding, options);
}
xmlErrorPtr cxml_CtxtGetLastError(void *ctx) { return api.ctxt_get_last_error(ctx); }
void cxml_FreeDoc(xmlDocPtr cur) { api.free_doc(cur); }
xmlNodePtr cxml_DocGetRootElement(const xmlDoc *doc) { return api.doc_get_root_element(doc); }
xmlChar *cxml_GetNoNsProp(const xmlNode *node, const xmlChar *name) { return api.get_no_ns_prop(node, name); }
xmlChar *cxml_GetNsProp(const xmlNode *node, const xmlChar *name, const xmlChar *nameSpace) {
    return api.get_ns_prop(node, name, nameSpace);
}
xmlChar *cxml_NodeGetContent(const xmlNode *cur) { return api.node_get_content(cur); }
xmlChar *cxml_Strdup(const xmlChar *cur) { return api.strdup(cur); }
xmlOutputBufferPtr cxml_AllocOutputBuffer(xmlCharEncodingHandlerPtr encoder) { return api.alloc_output_buffer(encoder); }
int cxml_OutputBufferClose(xmlOutputBufferPtr out) { return api.output_buffer_close(out); }
const xmlChar *cxml_OutputBufferGetContent(xmlOutputBufferPtr out) { return api.output_buffer_get_content(out); }
size_t cxml_OutputBufferGetSize(xmlOutputBufferPtr out) { return api.output_buffer_get_size(out); }
int cxml_C14NExecute(xmlDocPtr doc, xmlC14NIsVisibleCallback is_visible_callback, void *user_data, int mode,
                     xmlChar **inclusive_ns_prefixes, int with_comments, xmlOutputBufferPtr buf) {
    return api.c14n_execute(doc, is_visible_callback, user_data, mode, inclusive_ns_prefixes, with_comments, buf);
}
void cxml_free(void *p) { (*api.free)(p); }
