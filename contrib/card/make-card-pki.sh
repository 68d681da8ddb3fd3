#!/usr/bin/env bash
# Adds ID-card material to a test PKI made by contrib/testpki/mkpki.sh (run that first):
#   card-auth.pem/card-auth.key        authentication certificate for the signer.pem person (P-384,
#                            keyUsage digitalSignature+keyAgreement, EKU clientAuth)
#   signer2.pem/signer2.key  a second person's signing certificate (P-384, nonRepudiation,
#                            qcStatements: mkpki.sh's signer_ext)
#   card-auth2.pem/card-auth2.key      the second person's authentication certificate
#   expired.pem/expired.key  an expired signing certificate for the signer.pem person
#                            (valid 2020-01-01 .. 2023-01-01, signer_ext)
# All are issued by the issuing CA "TEST of ESTEID-LIKE 2025" and added to index.txt as good
# ("V"), so tsa_ocsp_server.py answers "good" for them. Serials: 0x1010..0x1013.
# Usage: make-card-pki.sh PKI-DIR     Nothing here is a real identity.
set -euo pipefail
dir=${1:?usage: make-card-pki.sh PKI-DIR (made by contrib/testpki/mkpki.sh)}
cd "$dir"
for f in pki.cnf issuing.pem issuing.key signer.pem index.txt; do
  [ -e "$f" ] || { echo "make-card-pki.sh: $dir/$f missing; run contrib/testpki/mkpki.sh first" >&2; exit 1; }
done
ocsp_url=$(sed -n 's/^authorityInfoAccess = OCSP;URI://p' pki.cnf | head -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/ca.cnf" <<CNF
[ ca ]
default_ca = card_ca
[ card_ca ]
database = $work/index.txt
new_certs_dir = $work
serial = $work/serial
certificate = $PWD/issuing.pem
private_key = $PWD/issuing.key
default_md = sha384
default_days = 3650
policy = any
preserve = yes
email_in_dn = no
unique_subject = no
utf8 = yes
string_mask = utf8only
[ any ]
countryName = optional
surname = optional
givenName = optional
serialNumber = optional
commonName = supplied
organizationName = optional
[ auth_ext ]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature, keyAgreement
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
authorityInfoAccess = OCSP;URI:$ocsp_url
certificatePolicies = 1.3.6.1.4.1.51361.1.1.1
CNF

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$1" 2>/dev/null; }
# issue NAME KEY SUBJECT EXTFILE EXTSECTION SERIAL-HEX [STARTDATE ENDDATE]
issue() {
  : > "$work/index.txt"
  echo "$6" > "$work/serial"
  openssl req -new -config pki.cnf -key "$2" -subj "$3" -utf8 -out "$work/$1.csr"
  local dates=()
  [ $# -ge 8 ] && dates=(-startdate "$7" -enddate "$8")
  openssl ca -batch -config "$work/ca.cnf" -extfile "$4" -extensions "$5" -in "$work/$1.csr" \
    -out "$work/$1.crt" -notext -utf8 "${dates[@]}" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  openssl x509 -in "$work/$1.crt" -out "$1.pem"
  cat "$work/index.txt" >> index.txt
}


# The same person has several certificates now: openssl ocsp must not insist on unique subjects.
echo "unique_subject = no" > index.txt.attr

person1="/C=EE/SN=JÕEORG/GN=JAAK-KRISTJAN/serialNumber=PNOEE-38001085718/CN=JÕEORG,JAAK-KRISTJAN,38001085718"
# Second person: personal code 49002124277 (female, born 1990-02-12, valid check digit).
person2="/C=EE/SN=TAMM/GN=MARI-LIIS/serialNumber=PNOEE-49002124277/CN=TAMM,MARI-LIIS,49002124277"

key card-auth.key
issue card-auth card-auth.key "$person1" "$work/ca.cnf" auth_ext 1010
key signer2.key
issue signer2 signer2.key "$person2" pki.cnf signer_ext 1011
key card-auth2.key
issue card-auth2 card-auth2.key "$person2" "$work/ca.cnf" auth_ext 1012
key expired.key
issue expired expired.key "$person1" pki.cnf signer_ext 1013 20200101000000Z 20230101000000Z
echo "card PKI added in $dir: card-auth, signer2, card-auth2, expired (.pem/.key)"
