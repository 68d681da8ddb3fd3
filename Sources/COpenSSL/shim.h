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
#include <openssl/provider.h>
#include <openssl/ssl.h>
#include <openssl/hmac.h>

// Macros Swift cannot call.
static inline int copenssl_evp_pkey_public_key(void) { return EVP_PKEY_PUBLIC_KEY; }
static inline EVP_PKEY *copenssl_ec_gen(const char *curve) { return EVP_EC_gen(curve); }
static inline void copenssl_free(void *p) { OPENSSL_free(p); }
static inline long copenssl_bio_mem_data(BIO *b, char **pp) { return BIO_get_mem_data(b, pp); }
static inline int copenssl_sk_x509_num(const STACK_OF(X509) *s) { return sk_X509_num(s); }
static inline X509 *copenssl_sk_x509_value(const STACK_OF(X509) *s, int i) { return sk_X509_value(s, i); }
static inline unsigned long copenssl_name_flags_rfc2253_utf8(void) { return XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB; }
static inline void copenssl_sk_x509_pop_free(STACK_OF(X509) *s) { sk_X509_pop_free(s, X509_free); }
// Stack accessors (macros) used by Crypto/CertificateDetails.swift.
static inline int copenssl_sk_asn1_object_num(const STACK_OF(ASN1_OBJECT) *s) { return sk_ASN1_OBJECT_num(s); }
static inline ASN1_OBJECT *copenssl_sk_asn1_object_value(const STACK_OF(ASN1_OBJECT) *s, int i) { return sk_ASN1_OBJECT_value(s, i); }
static inline void copenssl_sk_asn1_object_pop_free(STACK_OF(ASN1_OBJECT) *s) { sk_ASN1_OBJECT_pop_free(s, ASN1_OBJECT_free); }
static inline int copenssl_sk_policyinfo_num(const STACK_OF(POLICYINFO) *s) { return sk_POLICYINFO_num(s); }
static inline ASN1_OBJECT *copenssl_policyinfo_oid(const STACK_OF(POLICYINFO) *s, int i) { return sk_POLICYINFO_value(s, i)->policyid; }
static inline void copenssl_policies_free(STACK_OF(POLICYINFO) *s) { sk_POLICYINFO_pop_free(s, POLICYINFO_free); }
static inline int copenssl_sk_string_num(const STACK_OF(OPENSSL_STRING) *s) { return sk_OPENSSL_STRING_num(s); }
static inline const char *copenssl_sk_string_value(const STACK_OF(OPENSSL_STRING) *s, int i) { return sk_OPENSSL_STRING_value(s, i); }
static inline unsigned long copenssl_name_flags_rfc2253(void) { return XN_FLAG_RFC2253; }
static inline STACK_OF(X509) *copenssl_sk_x509_new(void) { return sk_X509_new_null(); }
static inline int copenssl_sk_x509_push(STACK_OF(X509) *s, X509 *x) { return sk_X509_push(s, x); }
static inline void copenssl_sk_x509_free(STACK_OF(X509) *s) { sk_X509_free(s); }
#endif

// Time-stamp and OCSP helpers (Crypto/TimeStamp*.swift, Crypto/OCSP*.swift): headers and stack macros.
#ifndef ASICFS_COPENSSL_SHIM_TS_OCSP_H
#define ASICFS_COPENSSL_SHIM_TS_OCSP_H
#include <openssl/cms.h>
#include <openssl/rand.h>
static inline int copenssl_sk_utf8string_num(const STACK_OF(ASN1_UTF8STRING) *s) { return sk_ASN1_UTF8STRING_num(s); }
static inline ASN1_UTF8STRING *copenssl_sk_utf8string_value(const STACK_OF(ASN1_UTF8STRING) *s, int i) { return sk_ASN1_UTF8STRING_value(s, i); }
static inline int copenssl_sk_cms_signerinfo_num(STACK_OF(CMS_SignerInfo) *s) { return sk_CMS_SignerInfo_num(s); }
static inline CMS_SignerInfo *copenssl_sk_cms_signerinfo_value(STACK_OF(CMS_SignerInfo) *s, int i) { return sk_CMS_SignerInfo_value(s, i); }
static inline const ASN1_ITEM *copenssl_ocsp_respdata_item(void) { return ASN1_ITEM_rptr(OCSP_RESPDATA); }
#endif

// AES, CMAC and elliptic-curve arithmetic for PACE and secure messaging (Crypto/AES.swift,
// Crypto/CMAC.swift, Crypto/EC*.swift): these functions import as they are; only the headers are needed.
#ifndef ASICFS_COPENSSL_SHIM_PACE_H
#define ASICFS_COPENSSL_SHIM_PACE_H
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/kdf.h>
#include <openssl/ec.h>
#include <openssl/bn.h>
#endif

// Encrypted containers (Crypto/ConcatKDF.swift, AESGCM.swift, AESKeyWrap.swift): EVP_KDF's header.
#ifndef ASICFS_COPENSSL_SHIM_CDOC1_H
#define ASICFS_COPENSSL_SHIM_CDOC1_H
#include <openssl/kdf.h>
static inline int copenssl_cipher_ctx_wrap_allow(void) { return EVP_CIPHER_CTX_FLAG_WRAP_ALLOW; }
#endif
