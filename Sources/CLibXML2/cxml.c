#include "cxml.h"
#include "lazy_library.h"
#include <stdlib.h>
#include <string.h>

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
    xmlParserCtxtPtr (*create_push_parser_ctxt)(xmlSAXHandlerPtr, void *, const char *, int, const char *);
    int (*parse_chunk)(xmlParserCtxtPtr, const char *, int, int);
    int (*ctxt_use_options)(xmlParserCtxtPtr, int);
    int (*sax_version)(xmlSAXHandler *, int);
    void (*stop_parser)(xmlParserCtxtPtr);
    void (*set_generic_error_func)(void *, xmlGenericErrorFunc);
} api;

// libxml2 prints errors it cannot tie to a parser (such as "Memory allocation failed") through
// its per-thread generic handler, to stderr by default; asicfs reports errors itself.
static void quiet_generic(void *context, const char *message, ...) {
    (void)context;
    (void)message;
}

static void quiet_structured(void *context, xmlErrorPtr error) {
    (void)context;
    (void)error;
}

static void quiet_thread(void) { api.set_generic_error_func(NULL, quiet_generic); }

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
    { "xmlCreatePushParserCtxt", (void **)&api.create_push_parser_ctxt },
    { "xmlParseChunk", (void **)&api.parse_chunk },
    { "xmlCtxtUseOptions", (void **)&api.ctxt_use_options },
    { "xmlSAXVersion", (void **)&api.sax_version },
    { "xmlStopParser", (void **)&api.stop_parser },
    { "xmlSetGenericErrorFunc", (void **)&api.set_generic_error_func },
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
    quiet_thread();
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

struct cxml_push {
    xmlParserCtxtPtr ctxt;
    xmlSAXHandler sax;
    // libxml2's own tree-building handlers, called for everything not diverted.
    startElementNsSAX2Func start;
    endElementNsSAX2Func end;
    charactersSAXFunc characters;
    cdataBlockSAXFunc cdata;
    const char *const *path;
    int path_length;
    int depth;
    int matched;  // how many leading names of path the open elements match
    cxml_text_fn text;
    cxml_edge_fn edge;
    void *info;
    int options;
    const char *name;
    int doctype;
    // libxml2 detects the encoding from the first 4 bytes, given when the parser is created.
    char head[4];
    int head_length;
};

static struct cxml_push *push_of(void *ctx) { return ((xmlParserCtxtPtr)ctx)->_private; }

static void push_start(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri, int nb_namespaces,
                       const xmlChar **namespaces, int nb_attributes, int nb_defaulted, const xmlChar **attributes) {
    struct cxml_push *push = push_of(ctx);
    push->depth++;
    if (push->matched == push->depth - 1 && push->depth <= push->path_length
        && strcmp((const char *)localname, push->path[push->depth - 1]) == 0) {
        push->matched = push->depth;
    }
    push->start(ctx, localname, prefix, uri, nb_namespaces, namespaces, nb_attributes, nb_defaulted, attributes);
    if (push->edge != NULL && push->matched == push->path_length && push->depth == push->path_length
        && push->edge(push->info, push->ctxt->node, 1) != 0) {
        api.stop_parser(push->ctxt);
    }
}

static void push_end(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri) {
    struct cxml_push *push = push_of(ctx);
    if (push->edge != NULL && push->matched == push->path_length && push->depth == push->path_length
        && push->edge(push->info, NULL, 0) != 0) {
        api.stop_parser(push->ctxt);
    }
    if (push->matched == push->depth) push->matched--;
    push->depth--;
    push->end(ctx, localname, prefix, uri);
}

static int diverting(const struct cxml_push *push) {
    return push->matched == push->path_length && push->depth == push->path_length;
}

static void push_characters(void *ctx, const xmlChar *text, int length) {
    struct cxml_push *push = push_of(ctx);
    if (!diverting(push)) {
        push->characters(ctx, text, length);
    } else if (push->text(push->info, text, length) != 0) {
        api.stop_parser(push->ctxt);
    }
}

static void push_cdata(void *ctx, const xmlChar *text, int length) {
    struct cxml_push *push = push_of(ctx);
    if (!diverting(push)) {
        push->cdata(ctx, text, length);
    } else if (push->text(push->info, text, length) != 0) {
        api.stop_parser(push->ctxt);
    }
}

static void push_doctype(void *ctx, const xmlChar *name, const xmlChar *external_id, const xmlChar *system_id) {
    (void)name;
    (void)external_id;
    (void)system_id;
    struct cxml_push *push = push_of(ctx);
    push->doctype = 1;
    api.stop_parser(push->ctxt);
}

struct cxml_push *cxml_push_new(const char *const *path, int path_length, cxml_text_fn text, void *info,
                                int options, const char *name) {
    struct cxml_push *push = calloc(1, sizeof *push);
    if (push == NULL) return NULL;
    api.sax_version(&push->sax, 2);
    push->start = push->sax.startElementNs;
    push->end = push->sax.endElementNs;
    push->characters = push->sax.characters;
    push->cdata = push->sax.cdataBlock;
    push->sax.startElementNs = push_start;
    push->sax.endElementNs = push_end;
    push->sax.characters = push_characters;
    push->sax.ignorableWhitespace = push_characters;
    push->sax.cdataBlock = push_cdata;
    push->sax.internalSubset = push_doctype;
    push->sax.externalSubset = push_doctype;
    push->sax.entityDecl = NULL;
    push->sax.serror = quiet_structured;
    push->sax.error = quiet_generic;
    push->sax.warning = quiet_generic;
    push->path = path;
    push->path_length = path_length;
    push->text = text;
    push->info = info;
    push->options = options;
    push->name = name;
    return push;
}

static int push_create(struct cxml_push *push) {
    push->ctxt = api.create_push_parser_ctxt(&push->sax, NULL, push->head, push->head_length, push->name);
    if (push->ctxt == NULL) return XML_ERR_NO_MEMORY;
    push->ctxt->_private = push;
    api.ctxt_use_options(push->ctxt, push->options);
    return 0;
}

int cxml_push_feed(struct cxml_push *push, const char *bytes, int size, int terminate) {
    quiet_thread();
    if (push->ctxt == NULL) {
        while (size > 0 && push->head_length < 4) {
            push->head[push->head_length++] = *bytes++;
            size--;
        }
        if (push->head_length < 4 && !terminate) return 0;
        if (push_create(push) != 0) return XML_ERR_NO_MEMORY;
    }
    int status = api.parse_chunk(push->ctxt, bytes, size, terminate);
    if (push->doctype) return XML_ERR_INTERNAL_ERROR;
    if (status == 0 && push->ctxt->disableSAX != 0) status = push->ctxt->errNo != 0 ? push->ctxt->errNo : XML_ERR_USER_STOP;
    if (status == 0 && terminate && !push->ctxt->wellFormed) status = push->ctxt->errNo != 0 ? push->ctxt->errNo : XML_ERR_INTERNAL_ERROR;
    return status;
}

void cxml_push_set_edges(struct cxml_push *push, cxml_edge_fn edge) { push->edge = edge; }

int cxml_push_saw_doctype(const struct cxml_push *push) { return push->doctype; }

int cxml_push_idle_in_diverted(const struct cxml_push *push) {
    if (push->ctxt == NULL || push->ctxt->input == NULL || push->ctxt->inputNr != 1) return 0;
    if (push->ctxt->instate != XML_PARSER_CONTENT || push->ctxt->disableSAX != 0) return 0;
    return diverting(push) && push->ctxt->input->cur == push->ctxt->input->end;
}

xmlDocPtr cxml_push_take_document(struct cxml_push *push) {
    if (push->ctxt == NULL || !push->ctxt->wellFormed) return NULL;
    xmlDocPtr doc = push->ctxt->myDoc;
    push->ctxt->myDoc = NULL;
    return doc;
}

xmlErrorPtr cxml_push_last_error(struct cxml_push *push) {
    return push->ctxt == NULL ? NULL : api.ctxt_get_last_error(push->ctxt);
}

void cxml_push_free(struct cxml_push *push) {
    if (push == NULL) return;
    if (push->ctxt != NULL) {
        if (push->ctxt->myDoc != NULL) api.free_doc(push->ctxt->myDoc);
        push->ctxt->myDoc = NULL;
        api.free_parser_ctxt(push->ctxt);
    }
    free(push);
}
