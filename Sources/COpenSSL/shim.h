#ifndef CODECSESSIONS_COPENSSL_SHIM_H
#define CODECSESSIONS_COPENSSL_SHIM_H
// OpenSSL exposes several calls as macros over SSL_ctrl / BIO_ctrl that Swift
// cannot import; these wrappers give them names.
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/srtp.h>

static inline EVP_PKEY *COpenSSL_generate_p256(void) { return EVP_EC_gen("P-256"); }
static inline void COpenSSL_BIO_set_mem_eof_return(BIO *bio, int value) { BIO_set_mem_eof_return(bio, value); }
static inline long COpenSSL_DTLS_set_link_mtu(SSL *ssl, long mtu) { return DTLS_set_link_mtu(ssl, mtu); }
static inline long COpenSSL_DTLS_get_timeout(SSL *ssl, struct timeval *timeout) {
    return DTLSv1_get_timeout(ssl, timeout);
}
static inline long COpenSSL_DTLS_handle_timeout(SSL *ssl) { return DTLSv1_handle_timeout(ssl); }
static inline uint64_t COpenSSL_OP_NO_QUERY_MTU(void) { return SSL_OP_NO_QUERY_MTU; }
static inline int COpenSSL_SSL_VERIFY_PEER_REQUIRED(void) {
    return SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
}
/// An HMAC-SHA1 context keyed with `key` (reinitialized per message with EVP_MAC_init(ctx, NULL, 0, NULL)).
static inline EVP_MAC_CTX *COpenSSL_hmac_sha1(const unsigned char *key, size_t length) {
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (mac == NULL) return NULL;
    EVP_MAC_CTX *context = EVP_MAC_CTX_new(mac);
    EVP_MAC_free(mac);
    if (context == NULL) return NULL;
    char digest[] = "SHA1";
    OSSL_PARAM parameters[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0), OSSL_PARAM_construct_end()};
    if (EVP_MAC_init(context, key, length, parameters) != 1) {
        EVP_MAC_CTX_free(context);
        return NULL;
    }
    return context;
}
#endif
