#ifndef ASICFS_COPENSSL_SHIM_H
#define ASICFS_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/err.h>
#include <openssl/bio.h>
#include <openssl/ocsp.h>
#include <openssl/ts.h>
#include <openssl/pkcs12.h>
#include <openssl/crypto.h>

// Macros Swift cannot call.
static inline void copenssl_free(void *p) { OPENSSL_free(p); }
static inline long copenssl_bio_mem_data(BIO *b, char **pp) { return BIO_get_mem_data(b, pp); }
static inline int copenssl_sk_x509_num(const STACK_OF(X509) *s) { return sk_X509_num(s); }
static inline X509 *copenssl_sk_x509_value(const STACK_OF(X509) *s, int i) { return sk_X509_value(s, i); }
static inline unsigned long copenssl_name_flags_rfc2253_utf8(void) { return XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB; }
static inline void copenssl_sk_x509_pop_free(STACK_OF(X509) *s) { sk_X509_pop_free(s, X509_free); }
#endif
