#include "ccurl.h"
#include <string.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

// libcurl's CURLOPT_PINNEDPUBLICKEY compares the leaf's key only; a pin on the issuing CA or the
// root (which survives the yearly renewal of the leaf) needs the chain OpenSSL verified.

static int spki_is_pinned(X509 *certificate, const struct ccurl_spki_pins *pins) {
    unsigned char *der = NULL;
    int length = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(certificate), &der);
    if (length <= 0) return 0;
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_length = 0;
    int hashed = EVP_Digest(der, (size_t)length, digest, &digest_length, EVP_sha256(), NULL);
    OPENSSL_free(der);
    if (!hashed || digest_length != 32) return 0;
    for (size_t i = 0; i < pins->count; i++)
        if (memcmp(digest, pins->sha256 + 32 * i, 32) == 0) return 1;
    return 0;
}

// Replaces X509_verify_cert for the handshake: the usual verification first (CA store, dates,
// purpose), then the verified chain must hold a pinned key.
static int verify_then_check_pins(X509_STORE_CTX *context, void *argument) {
    struct ccurl_spki_pins *pins = argument;
    int verified = X509_verify_cert(context);
    if (verified <= 0) return verified;
    STACK_OF(X509) *chain = X509_STORE_CTX_get0_chain(context);
    for (int i = 0; i < sk_X509_num(chain); i++)
        if (spki_is_pinned(sk_X509_value(chain, i), pins)) return 1;
    pins->refused = 1;
    X509_STORE_CTX_set_error(context, X509_V_ERR_APPLICATION_VERIFICATION);
    return 0;
}

void ccurl_require_spki_pins(void *ssl_ctx, struct ccurl_spki_pins *pins) {
    SSL_CTX_set_cert_verify_callback(ssl_ctx, verify_then_check_pins, pins);
}
