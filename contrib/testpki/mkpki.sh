#!/usr/bin/env bash
# Makes a throwaway test PKI shaped like the Estonian one, for tests and the demo:
#   root CA -> issuing CA "TEST of ESTEID-LIKE 2025" -> signer (nonRepudiation, qcStatements)
#                                                  -> revoked signer
#                                                  -> RSA-2048 signer (for PKCS#11 tokens' RSA keys)
#                                                  -> authentication certificate (no nonRepudiation)
#   root CA -> TSA (critical timeStamping EKU);  issuing CA -> OCSP responders (EC, RSA, EC
#   with the BDOC time-mark policy 1.3.6.1.4.1.10015.4.1.2, and EC with SK's test time-mark
#   policy 1.3.6.1.4.1.10015.3.1.1)
# plus an openssl-ca index.txt (one good, one revoked), PKCS#12 files for both signers and an
# openssl config with the time-stamping section that tsa_ocsp_server.py uses.
# Usage: mkpki.sh DIR [OCSP-URL]    (the URL goes into the signers' AIA)
# Nothing here is a real identity; every key is generated on the spot.
set -euo pipefail
out=${1:?usage: mkpki.sh DIR [OCSP-URL]}
ocsp_url=${2:-http://127.0.0.1:18890/ocsp}
mkdir -p "$out"
cd "$out"
days=3650

cat > pki.cnf <<CNF
[ req ]
distinguished_name = dn
string_mask = utf8only
utf8 = yes
prompt = no
[ dn ]
CN = placeholder

[ root_ext ]
basicConstraints = critical, CA:true
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

[ issuing_ext ]
basicConstraints = critical, CA:true, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

[ signer_ext ]
basicConstraints = critical, CA:false
keyUsage = critical, nonRepudiation
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
authorityInfoAccess = OCSP;URI:$ocsp_url
certificatePolicies = 1.3.6.1.4.1.51361.1.1.1, 0.4.0.194112.1.2
1.3.6.1.5.5.7.1.3 = ASN1:SEQUENCE:qcs

[ qcs ]
compliance = SEQUENCE:qc_compliance
sscd = SEQUENCE:qc_sscd
type = SEQUENCE:qc_type

[ qc_compliance ]
id = OID:0.4.0.1862.1.1
[ qc_sscd ]
id = OID:0.4.0.1862.1.4
[ qc_type ]
id = OID:0.4.0.1862.1.6
types = SEQUENCE:qc_type_esign
[ qc_type_esign ]
esign = OID:0.4.0.1862.1.6.1

# An ID-card's authentication certificate: it must never be chosen to sign.
[ auth_ext ]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature, keyAgreement
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
authorityInfoAccess = OCSP;URI:$ocsp_url

[ ocsp_ext ]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = critical, OCSPSigning
1.3.6.1.5.5.7.48.1.5 = ASN1:NULL
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

# A BDOC time-mark responder names the time-mark policy, as SK's did.
[ ocsp_tm_ext ]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = critical, OCSPSigning
1.3.6.1.5.5.7.48.1.5 = ASN1:NULL
certificatePolicies = 1.3.6.1.4.1.10015.4.1.2
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

# SK's test time-mark responders name this policy instead (libdigidocpp's test configuration accepts it).
[ ocsp_tm_test_ext ]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = critical, OCSPSigning
1.3.6.1.5.5.7.48.1.5 = ASN1:NULL
certificatePolicies = 1.3.6.1.4.1.10015.3.1.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

[ tsa_ext ]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature, nonRepudiation
extendedKeyUsage = critical, timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

[ tsa ]
default_tsa = tsa_config1
[ tsa_config1 ]
dir = .
serial = ./tsaserial
crypto_device = builtin
signer_cert = ./tsa.pem
certs = ./tsa.pem
signer_key = ./tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
other_policies = 1.2.3.4.5.6
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = yes
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = sha256
CNF

key() { openssl genpkey -algorithm EC -pkeyopt "ec_paramgen_curve:$1" -out "$2" 2>/dev/null; }
# cert NAME KEY SUBJECT ISSUER-CERT ISSUER-KEY EXTENSION SERIAL
cert() {
  openssl req -new -config pki.cnf -key "$2" -subj "$3" -utf8 -out "$1.csr"
  openssl x509 -req -in "$1.csr" -CA "$4" -CAkey "$5" -set_serial "$7" -days $days \
    -extfile pki.cnf -extensions "$6" -out "$1.pem" 2>/dev/null
  rm -f "$1.csr"
}

key P-384 root.key
openssl req -new -x509 -config pki.cnf -key root.key -subj "/C=EE/O=asicfs test/CN=TEST of asicfs Root CA 2025" \
  -utf8 -days $days -extensions root_ext -set_serial 1 -out root.pem
key P-384 issuing.key
cert issuing issuing.key "/C=EE/O=asicfs test/CN=TEST of ESTEID-LIKE 2025" root.pem root.key issuing_ext 2
key P-384 signer.key
cert signer signer.key "/C=EE/SN=JÕEORG/GN=JAAK-KRISTJAN/serialNumber=PNOEE-38001085718/CN=JÕEORG,JAAK-KRISTJAN,38001085718" \
  issuing.pem issuing.key signer_ext 4096
key P-384 revoked.key
cert revoked revoked.key "/C=EE/SN=TÜHISTATUD/GN=TEST/serialNumber=PNOEE-39912319997/CN=TÜHISTATUD,TEST,39912319997" \
  issuing.pem issuing.key signer_ext 4097
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out signer-rsa.key 2>/dev/null
cert signer-rsa signer-rsa.key "/C=EE/SN=RSA-MÄNNIK/GN=MARI/serialNumber=PNOEE-48001010008/CN=RSA-MÄNNIK,MARI,48001010008" \
  issuing.pem issuing.key signer_ext 4098
key P-384 auth.key
cert auth auth.key "/C=EE/OU=authentication/SN=JÕEORG/GN=JAAK-KRISTJAN/serialNumber=PNOEE-38001085718/CN=JÕEORG,JAAK-KRISTJAN,38001085718" \
  issuing.pem issuing.key auth_ext 4099
key P-256 ocsp.key
cert ocsp ocsp.key "/C=EE/O=asicfs test/CN=TEST of asicfs OCSP RESPONDER 2025" issuing.pem issuing.key ocsp_ext 8192
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out ocsp-rsa.key 2>/dev/null
cert ocsp-rsa ocsp-rsa.key "/C=EE/O=asicfs test/CN=TEST of asicfs OCSP RESPONDER RSA 2025" issuing.pem issuing.key ocsp_ext 8193
key P-256 ocsp-tm.key
cert ocsp-tm ocsp-tm.key "/C=EE/O=asicfs test/CN=TEST of asicfs OCSP TIME-MARK RESPONDER 2025" issuing.pem issuing.key ocsp_tm_ext 8194
key P-256 ocsp-tm-test.key
cert ocsp-tm-test ocsp-tm-test.key "/C=EE/O=asicfs test/CN=TEST of asicfs OCSP TEST TIME-MARK RESPONDER 2025" issuing.pem issuing.key ocsp_tm_test_ext 8195
key P-256 tsa.key
cert tsa tsa.key "/C=EE/O=asicfs test/CN=TEST of asicfs TSA 2025" root.pem root.key tsa_ext 12288
echo 01 > tsaserial
# Signers of a test list of trusted lists and of the trusted list it points to (mklists.py, mktrustlist.py), RSA
# like the Estonian test lists' signer, self-signed as such signers are.
for signer in lotl-signer tl-signer; do
  openssl req -new -x509 -newkey rsa:2048 -nodes -keyout "$signer.key" -subj "/C=EE/CN=TEST of asicfs $signer" \
    -days $days -set_serial $((RANDOM + 20000)) -out "$signer.pem" 2>/dev/null
done

# openssl-ca database: V = valid, R = revoked (expiry, revocation time, serial in hex, file, DN).
expiry=$(openssl x509 -in signer.pem -noout -enddate | cut -d= -f2 | xargs -I{} date -u -d {} +%y%m%d%H%M%SZ)
subject() { openssl x509 -in "$1" -noout -subject -nameopt compat,utf8 | sed 's/^subject=//'; }
printf 'V\t%s\t\t1000\tunknown\t%s\n' "$expiry" "$(subject signer.pem)" > index.txt
printf 'R\t%s\t%s\t1001\tunknown\t%s\n' "$expiry" "$(date -u +%y%m%d%H%M%SZ)" "$(subject revoked.pem)" >> index.txt
printf 'V\t%s\t\t1002\tunknown\t%s\n' "$expiry" "$(subject signer-rsa.pem)" >> index.txt
printf 'V\t%s\t\t1003\tunknown\t%s\n' "$expiry" "$(subject auth.pem)" >> index.txt

cat issuing.pem root.pem > chain.pem
openssl pkcs12 -export -inkey signer.key -in signer.pem -certfile issuing.pem -passout pass:test1234 \
  -name signer -out signer.p12
openssl pkcs12 -export -inkey revoked.key -in revoked.pem -certfile issuing.pem -passout pass:test1234 \
  -name revoked -out revoked.p12
echo "test PKI in $out (PKCS#12 passphrase: test1234)"
