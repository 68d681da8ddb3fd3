#include "ccurl.h"
#include <stdio.h>
#include "lazy_library.h"

// libcurl's functions, found with dlsym once (see ccurl.h for why it is not linked).
static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} api;

static int start_curl(char *error, size_t size) {
    if (api.global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK) return 0;
    snprintf(error, size, "libcurl could not start (curl_global_init failed)");
    return -1;
}

static const struct lazy_symbol symbols[] = {
    { "curl_global_init", (void **)&api.global_init },
    { "curl_easy_init", (void **)&api.easy_init },
    { "curl_easy_cleanup", (void **)&api.easy_cleanup },
    { "curl_easy_perform", (void **)&api.easy_perform },
    { "curl_easy_strerror", (void **)&api.easy_strerror },
    { "curl_easy_setopt", (void **)&api.easy_setopt },
    { "curl_easy_getinfo", (void **)&api.easy_getinfo },
    { "curl_slist_append", (void **)&api.slist_append },
    { "curl_slist_free_all", (void **)&api.slist_free_all },
    { NULL, NULL },
};

// The soname Debian's libcurl4 (and libcurl3-gnutls's sibling) installs.
static struct lazy_library library = {
    .soname = "libcurl.so.4", .package = "libcurl4", .symbols = symbols, .start = start_curl,
    .lock = PTHREAD_MUTEX_INITIALIZER, .loaded = -1,
};

int ccurl_load(void) { return lazy_library_load(&library); }

const char *ccurl_load_error(void) { return library.error; }

// Callers have had ccurl_load() return 0 before any of these.
CURL *ccurl_easy_init(void) { return api.easy_init(); }
void ccurl_easy_cleanup(CURL *c) { api.easy_cleanup(c); }
CURLcode ccurl_easy_perform(CURL *c) { return api.easy_perform(c); }
const char *ccurl_easy_strerror(CURLcode code) { return api.easy_strerror(code); }
struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *line) { return api.slist_append(list, line); }
void ccurl_slist_free_all(struct curl_slist *list) { api.slist_free_all(list); }

CURLcode ccurl_setopt_long(CURL *c, CURLoption o, long v) { return api.easy_setopt(c, o, v); }
CURLcode ccurl_setopt_ptr(CURL *c, CURLoption o, void *v) { return api.easy_setopt(c, o, v); }
CURLcode ccurl_setopt_str(CURL *c, CURLoption o, const char *v) { return api.easy_setopt(c, o, v); }
CURLcode ccurl_setopt_off(CURL *c, CURLoption o, curl_off_t v) { return api.easy_setopt(c, o, v); }
CURLcode ccurl_setopt_writefn(CURL *c, size_t (*fn)(char *, size_t, size_t, void *)) {
    return api.easy_setopt(c, CURLOPT_WRITEFUNCTION, fn);
}
CURLcode ccurl_getinfo_long(CURL *c, CURLINFO i, long *v) { return api.easy_getinfo(c, i, v); }
CURLcode ccurl_getinfo_str(CURL *c, CURLINFO i, char **v) { return api.easy_getinfo(c, i, v); }
CURLcode ccurl_setopt_xferinfofn(CURL *c, int (*fn)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t)) {
    return api.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, fn);
}
CURLcode ccurl_setopt_sslctxfn(CURL *c, CURLcode (*fn)(CURL *, void *, void *)) {
    return api.easy_setopt(c, CURLOPT_SSL_CTX_FUNCTION, fn);
}
