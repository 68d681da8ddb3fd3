#ifndef ASICFS_CCURL_H
#define ASICFS_CCURL_H
#include <curl/curl.h>

// libcurl is loaded the first time a request is made (ccurl_load), not when asicfs starts: it
// brings some twenty libraries (TLS, Kerberos, LDAP, SSH, IDN) that mounting, listing or
// verifying without the network would load for nothing, and loading them from a cold disk
// cost about 40 ms of every start. The functions below call libcurl's through pointers.

// 0 once libcurl is loaded and initialised (curl_global_init); -1 otherwise, with the reason
// in ccurl_load_error(). Safe to call from many threads; the work is done once.
int ccurl_load(void);
const char *ccurl_load_error(void);

CURL *ccurl_easy_init(void);
void ccurl_easy_cleanup(CURL *c);
CURLcode ccurl_easy_perform(CURL *c);
const char *ccurl_easy_strerror(CURLcode code);
struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *line);
void ccurl_slist_free_all(struct curl_slist *list);

// curl_easy_setopt/getinfo are variadic: one typed wrapper per argument kind.
CURLcode ccurl_setopt_long(CURL *c, CURLoption o, long v);
CURLcode ccurl_setopt_ptr(CURL *c, CURLoption o, void *v);
CURLcode ccurl_setopt_str(CURL *c, CURLoption o, const char *v);
CURLcode ccurl_setopt_off(CURL *c, CURLoption o, curl_off_t v);
CURLcode ccurl_setopt_writefn(CURL *c, size_t (*fn)(char *, size_t, size_t, void *));
CURLcode ccurl_getinfo_long(CURL *c, CURLINFO i, long *v);
CURLcode ccurl_getinfo_str(CURL *c, CURLINFO i, char **v);
// The progress callback (Sources/HTTP): lets a cancelled request stop mid-transfer.
CURLcode ccurl_setopt_xferinfofn(CURL *c, int (*fn)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t));
// TLS client identity (Sources/HTTP): the key and certificate go into OpenSSL's SSL_CTX from a
// callback, so curl never holds a passphrase; and curl builds the Authorization header itself
// from borrowed credentials (CURLAUTH_* are macros with casts, which Swift does not import).
CURLcode ccurl_setopt_sslctxfn(CURL *c, CURLcode (*fn)(CURL *, void *, void *));
// SPKI pins over the chain (ccurl_spki.c), from the same CURLOPT_SSL_CTX_FUNCTION: the server's
// chain must verify as usual and hold a certificate whose SubjectPublicKeyInfo hashes (SHA-256)
// to one of `count` 32-byte digests at `sha256`; else the handshake fails and `refused` is set.
// `pins` must live until the transfer ends.
struct ccurl_spki_pins {
    const unsigned char *sha256;
    size_t count;
    int refused;
};
void ccurl_require_spki_pins(void *ssl_ctx, struct ccurl_spki_pins *pins);
static inline long ccurl_auth_basic(void) { return (long)CURLAUTH_BASIC; }
static inline long ccurl_auth_bearer(void) { return (long)CURLAUTH_BEARER; }
#endif
