#ifndef ASICFS_CCURL_SHIM_H
#define ASICFS_CCURL_SHIM_H
#include <curl/curl.h>

// curl_easy_setopt/getinfo are variadic: one typed wrapper per argument kind.
static inline CURLcode ccurl_setopt_long(CURL *c, CURLoption o, long v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode ccurl_setopt_ptr(CURL *c, CURLoption o, void *v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode ccurl_setopt_str(CURL *c, CURLoption o, const char *v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode ccurl_setopt_off(CURL *c, CURLoption o, curl_off_t v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode ccurl_setopt_writefn(CURL *c, size_t (*fn)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fn);
}
static inline CURLcode ccurl_getinfo_long(CURL *c, CURLINFO i, long *v) { return curl_easy_getinfo(c, i, v); }
static inline CURLcode ccurl_getinfo_str(CURL *c, CURLINFO i, char **v) { return curl_easy_getinfo(c, i, v); }
#endif

// The progress callback (Sources/HTTP): lets a cancelled request stop mid-transfer.
#ifndef ASICFS_CCURL_SHIM_XFERINFO_H
#define ASICFS_CCURL_SHIM_XFERINFO_H
static inline CURLcode ccurl_setopt_xferinfofn(CURL *c, int (*fn)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t)) {
    return curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, fn);
}
#endif

// TLS client identity (Sources/HTTP): the key and certificate go into OpenSSL's SSL_CTX from a
// callback, so curl never holds a passphrase; and curl builds the Authorization header itself
// from borrowed credentials (CURLAUTH_* are macros with casts, which Swift does not import).
#ifndef ASICFS_CCURL_SHIM_CLIENT_IDENTITY_H
#define ASICFS_CCURL_SHIM_CLIENT_IDENTITY_H
static inline CURLcode ccurl_setopt_sslctxfn(CURL *c, CURLcode (*fn)(CURL *, void *, void *)) {
    return curl_easy_setopt(c, CURLOPT_SSL_CTX_FUNCTION, fn);
}
static inline long ccurl_auth_basic(void) { return (long)CURLAUTH_BASIC; }
static inline long ccurl_auth_bearer(void) { return (long)CURLAUTH_BEARER; }
#endif
