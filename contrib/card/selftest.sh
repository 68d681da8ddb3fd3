#!/usr/bin/env bash
# Self-test of the virtual ID card: unit tests, then a private pcscd (virtual-reader.sh) with
# emulated cards driven by opensc-tool, pkcs15-tool, pkcs11-tool and pcsc.py (raw PC/SC).
# Exits non-zero on any failure. Usage: selftest.sh [PORT]   (default 36000; needs no other pcscd)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
py=/usr/bin/python3
port=${1:-36000}
work=$(mktemp -d)
vr="$here/virtual-reader.sh"
fails=0
pkcs11=/usr/lib/x86_64-linux-gnu/opensc-pkcs11.so

cleanup() { "$vr" stop "$work/reader" >/dev/null 2>&1; rm -rf "$work"; }
trap cleanup EXIT

ok()   { echo "ok   $*"; }
bad()  { echo "FAIL $*"; fails=$((fails + 1)); }
# expect NAME ACTUAL EXPECTED
expect() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi; }
# raw READER APDU... -> "SW DATA" lines (pcsc.py: no automatic 61xx/6Cxx handling)
raw() { "$py" "$here/pcsc.py" "$@"; }
# sw_of N OUTPUT: status word of the N-th line
sw_of() { echo "$2" | sed -n "${1}p" | cut -d' ' -f1; }
data_of() { echo "$2" | sed -n "${1}p" | cut -d' ' -f2; }
# osc READER APDU...: opensc-tool -s, prints the status word of each APDU
osc() { local r=$1; shift; local args=(); for a in "$@"; do args+=(-s "$a"); done
        opensc-tool -r "$r" "${args[@]}" 2>&1 | sed -n 's/^Received (SW1=0x\(..\), SW2=0x\(..\)).*/\1\2/p' | tr a-f A-F; }
# rs2der HEX96: raw r||s -> DER signature file $2
rs2der() { "$py" -c "import sys
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature as e
b=bytes.fromhex(sys.argv[1]); n=len(b)//2
open(sys.argv[2],'wb').write(e(int.from_bytes(b[:n],'big'),int.from_bytes(b[n:],'big')))" "$1" "$2"; }
insert() { "$vr" insert "$work/reader" --wait "$@"; }
remove() { "$vr" remove "$work/reader" "$@"; }

echo "== unit tests"
if (cd "$here" && "$py" -m unittest -q test_pace_worked_example test_cards 2>&1 | tail -3); then ok "unit tests"; else bad "unit tests"; fi

echo "== test PKI"
bash "$here/../testpki/mkpki.sh" "$work/pki" >/dev/null 2>&1 && bash "$here/make-card-pki.sh" "$work/pki" >/dev/null \
  && ok "mkpki.sh + make-card-pki.sh" || { bad "PKI"; exit 1; }
P=$work/pki
idemia=(--kind idemia --sign-cert $P/signer.pem --sign-key $P/signer.key --auth-cert $P/card-auth.pem --auth-key $P/card-auth.key)
thales=(--kind thales --sign-cert $P/signer2.pem --sign-key $P/signer2.key --auth-cert $P/card-auth2.pem --auth-key $P/card-auth2.key)
MAIN=00A4040C10A000000077010800070000FE00000100
QSCD=00A4040C1051534344204170706C69636174696F6E
PIN1=31323334FFFFFFFFFFFFFFFF
PIN2=3132333435FFFFFFFFFFFFFF
head -c 1000 /dev/urandom > "$work/msg.bin"
openssl dgst -sha384 -binary "$work/msg.bin" > "$work/hash48.bin"
HASH=$(od -An -tx1 -v "$work/hash48.bin" | tr -d ' \n' | tr a-f A-F)
openssl x509 -in $P/signer.pem -pubkey -noout > "$work/signer.pub"
openssl x509 -in $P/card-auth.pem -pubkey -noout > "$work/auth.pub"
openssl x509 -in $P/signer2.pem -pubkey -noout > "$work/signer2.pub"

echo "== harness"
"$vr" start "$work/reader" "$port" || exit 1
opensc-tool -l | grep -q "Virtual PCD 00 01" && ok "two vpcd readers" || bad "readers"
if "$vr" start "$work/other" $((port + 10)) >/dev/null 2>&1; then bad "second pcscd was not refused"; "$vr" stop "$work/other"; else ok "a second pcscd is refused"; fi

echo "== IDEMIA, contact, T=1"
insert -- "${idemia[@]}" --state "$work/idemia.json" --log "$work/idemia.log" || bad "insert"
expect "IDEMIA ATR" "$(opensc-tool -r 0 -a 2>/dev/null)" "3b:db:96:00:80:b1:fe:45:1f:83:00:12:23:3f:53:65:49:44:0f:90:00:f1"
expect "OpenSC driver" "$(opensc-tool -r 0 -n 2>/dev/null | tail -1)" "EstEID 2018"
out=$(raw 0 $MAIN 00A4090404ADF1340100)
fci=$(data_of 2 "$out")
expect "FCI has the size in tag 80" "${fci:0:8}" "620B8002"
size=$((16#${fci:8:4}))
apdus=($MAIN 00A4090C04ADF13401); off=0
while [ $off -lt $size ]; do apdus+=($(printf '00B0%04X00' $off)); off=$((off + 192)); done
out=$(raw 0 "${apdus[@]}")
maxlen=$(echo "$out" | tail -n +3 | awk '{print length($2)/2}' | sort -n | tail -1)
expect "READ BINARY Le 00 returns at most 0xC0" "$maxlen" "192"
echo "$out" | tail -n +3 | cut -d' ' -f2 | tr -d '\n' | "$py" -c "import sys; sys.stdout.buffer.write(bytes.fromhex(sys.stdin.read()))" > "$work/auth.der"
openssl x509 -in $P/card-auth.pem -outform DER | cmp -s - "$work/auth.der" && ok "auth certificate read back in 0xC0 chunks" || bad "auth certificate"
out=$(raw 0 $MAIN 00A40804063F00ADF2341F 00B0000010)
expect "08 path from MF, smaller Le honoured" "$(data_of 3 "$out" | awk '{print length($0)/2}')" "16"
out=$(raw 0 $MAIN 00A4010C025000 00A4020C025006 00B0000000 00A4000C 00A4020C02D003 00B000000B)
expect "personal code from 5000/5006" "$(data_of 4 "$out")" "$(printf 38001085718 | od -An -tx1 | tr -d ' \n' | tr a-f A-F)"
expect "D003 = 04 09 document number" "$(data_of 7 "$out")" "0409$(printf AB0123456 | od -An -tx1 | tr -d ' \n' | tr a-f A-F)"
out=$(raw 0 $MAIN 002000010C31323335FFFFFFFFFFFFFFFF 00200001 002000010C313233340000000000000000 002000010C$PIN1 00200001 \
          00CB3FFF0A4D087006BF810102A08000 00CB3FFF0A4D087006BF810502A08000 $QSCD 00CB3FFF0A4D087006BF810502A08000)
expect "VERIFY counters (wrong, query, 00-padded, right, query)" "$(echo "$out" | sed -n 2,6p | cut -d' ' -f1 | tr '\n' ' ')" "63C2 63C2 63C1 9000 9000 "
expect "GET DATA PIN1 in main: 3 left after the right PIN" "$(data_of 7 "$out" | cut -c27-28)" "03"
expect "GET DATA PIN2 in main -> 6A88" "$(sw_of 8 "$out")" "6A88"
expect "GET DATA PIN2 in QSCD" "$(data_of 10 "$out" | cut -c1-10)" "701EBF8105"
out=$(raw 0 $QSCD 002241B60680015484019F 002A9E9A30${HASH}00 002000850C$PIN2 002A9E9A30${HASH}00 002A9E9A30${HASH}00)
expect "PSO without PIN2 -> 6982" "$(sw_of 3 "$out")" "6982"
rs2der "$(data_of 5 "$out")" "$work/sig.der"
openssl dgst -sha384 -verify "$work/signer.pub" -signature "$work/sig.der" "$work/msg.bin" >/dev/null && ok "PSO:CDS r||s verifies with openssl" || bad "PSO signature"
expect "second PSO after one VERIFY -> 6982" "$(sw_of 6 "$out")" "6982"
out=$(raw 0 00A4040C0DE828BD080FF2504F5420415750 002241A406800104840181 002000010C$PIN1 0088000030${HASH}00)
rs2der "$(data_of 4 "$out")" "$work/ia.der"
openssl dgst -sha384 -verify "$work/auth.pub" -signature "$work/ia.der" "$work/msg.bin" >/dev/null && ok "INTERNAL AUTHENTICATE with the auth key" || bad "INTERNAL AUTHENTICATE"
expect "opensc-tool -s APDUs" "$(osc 0 $MAIN 00A4090404ADF2341F00 00B0000000 | tr '\n' ' ')" "9000 9000 9000 "

echo "== OpenSC binding (pkcs15-tool, pkcs11-tool)"
dump=$(pkcs15-tool -r 0 --dump 2>&1)
echo "$dump" | grep -q "Serial number  : AB0123456" && ok "pkcs15-tool: serial from D003" || bad "pkcs15-tool serial"
echo "$dump" | grep -q "Allkirjastamine" && echo "$dump" | grep -q "Isikutuvastus" && ok "pkcs15-tool: certificates and keys" || bad "pkcs15-tool objects"
slots=$(pkcs11-tool --module $pkcs11 -L 2>&1)
echo "$slots" | grep -q "(PIN2)" && ok "pkcs11-tool -L: PIN1 and PIN2 tokens" || bad "pkcs11-tool -L"
objs=$(pkcs11-tool --module $pkcs11 --slot-index 1 -O 2>&1)
echo "$objs" | grep -q "label:      Allkirjastamine" && ok "pkcs11-tool -O: signing certificate" || bad "pkcs11-tool -O"
: > "$work/idemia.log"
pkcs11-tool --module $pkcs11 --slot-index 1 --login --pin 12345 --sign --mechanism ECDSA --id 02 \
  -i "$work/hash48.bin" -o "$work/p11.sig" --signature-format openssl >/dev/null 2>&1 \
  && openssl dgst -sha384 -verify "$work/signer.pub" -signature "$work/p11.sig" "$work/msg.bin" >/dev/null \
  && ok "pkcs11-tool --sign (ECDSA, id 02) verifies with openssl" || bad "pkcs11-tool sign"
expect "log: one PSO for the pkcs11 signature" "$(grep -c '^> 00 2A 9E 9A' "$work/idemia.log")" "1"
grep -q "^> 00 20 00 85 Lc=0C" "$work/idemia.log" && ok "log has VERIFY headers" || bad "log VERIFY"
if grep -qi "3132333435\|31 32 33 34 35" "$work/idemia.log"; then bad "PIN in log"; else ok "no PIN in the log"; fi

echo "== state survives re-insertion, card pulled mid-command"
raw 0 $QSCD 002000850C3939393939FFFFFFFFFFFFFF >/dev/null
remove
insert -- "${idemia[@]}" --state "$work/idemia.json" --pull-on 2A --log "$work/pull.log"
expect "re-inserted card keeps the PIN2 counter" "$(raw 0 $QSCD 00200085 | sed -n 2p | cut -d' ' -f1)" "63C2"
out=$(raw 0 $QSCD 002241B60680015484019F 002000850C$PIN2 002A9E9A30${HASH}00 2>&1)
echo "$out" | tail -1 | grep -qE "^(ERROR|EMPTY)" && ok "pulled on PSO: transmit fails or returns nothing ($(echo "$out" | tail -1 | cut -c1-40))" || bad "pull-on: $out"
sleep 0.3
opensc-tool -l 2>/dev/null | grep -qE "^0 +No" && ok "reader 0 empty after the pull" || bad "card still present after pull"
remove

echo "== IDEMIA, T=0"
insert -- "${idemia[@]}" --t0 --state "$work/t0.json" --log "$work/t0.log"
out=$(raw 0 $MAIN 00A4090404ADF1340100 00C000000D 00B0000000 00B00000C0 $QSCD 002241B60680015484019F 002000850C$PIN2 002A9E9A30${HASH}00 00C0000060)
expect "T=0: SELECT with FCI -> 61 0D" "$(sw_of 2 "$out")" "610D"
expect "T=0: GET RESPONSE -> FCI" "$(data_of 3 "$out" | cut -c1-8)" "620B8002"
expect "T=0: READ BINARY Le 00 -> 6C C0" "$(sw_of 4 "$out")" "6CC0"
expect "T=0: READ BINARY Le C0" "$(sw_of 5 "$out") $(data_of 5 "$out" | awk '{print length($0)/2}')" "9000 192"
expect "T=0: PSO -> 61 60" "$(sw_of 9 "$out")" "6160"
rs2der "$(data_of 10 "$out")" "$work/t0.der"
openssl dgst -sha384 -verify "$work/signer.pub" -signature "$work/t0.der" "$work/msg.bin" >/dev/null && ok "T=0: signature from GET RESPONSE verifies" || bad "T=0 signature"
expect "T=0 via OpenSC (automatic 61xx/6Cxx)" "$(osc 0 $MAIN 00A4090404ADF1340100 00B0000000 | tr '\n' ' ')" "9000 9000 9000 "
grep -q "^> 00 C0 00 00 Le=0D" "$work/t0.log" && ok "log shows GET RESPONSE" || bad "log GET RESPONSE"

echo "== Thales on reader 1 (two cards at once)"
insert --reader 1 -- "${thales[@]}" --state "$work/thales.json" --log "$work/thales.log"
expect "Thales ATR" "$(opensc-tool -r 1 -a 2>/dev/null)" "3b:ff:96:00:00:80:31:fe:43:80:31:b8:53:65:49:44:64:b0:85:05:10:12:23:3f:1d"
T_AID=00A4040C0CA000000063504B43532D3135
out=$(raw 1 $T_AID 00A4080404ADF2342100 00CB00FF05A003830182 002000820C313233343500000000000000 002241B606800154840105 \
          002A90A0329030${HASH} 002A9E9A00 00A4080C02DFDD 00A4020C025001 00B0000000)
fci=$(data_of 2 "$out")
expect "Thales FCI: size in tag 81 after the other tags" "$(echo "$fci" | grep -c '8102....$')" "1"
expect "Thales GET DATA: DF21 remaining / DF2F changed" "$(data_of 3 "$out")" "A00B830182DF210103DF2F0101"
rs2der "$(data_of 7 "$out")" "$work/th.der"
openssl dgst -sha384 -verify "$work/signer2.pub" -signature "$work/th.der" "$work/msg.bin" >/dev/null && ok "Thales PSO:HASH + PSO:CDS verifies" || bad "Thales signature"
expect "Thales personal data DFDD/5001" "$(data_of 10 "$out")" "$(printf TAMM | od -An -tx1 | tr -d ' \n' | tr a-f A-F)"
expect "Thales PUK cannot be changed" "$(raw 1 $T_AID 0024008318313732353834303300000000383736353433323100000000 | sed -n 2p | cut -d' ' -f1)" "6985"
remove --reader 1
remove

echo "== IDEMIA, contactless (PACE with CAN)"
insert -- "${idemia[@]}" --contactless --can 123456 --state "$work/cl.json" --log "$work/cl.log"
atr=$(opensc-tool -r 0 -a 2>/dev/null)
expect "contactless ATR" "$atr" "3b:8b:80:01:00:12:23:3f:53:65:49:44:0f:90:00:a0"
out=$(raw 0 00A4020C02011C 00B0000000 $MAIN 00A4090C04ADF13401 00B0000000 002000850C$PIN2)
expect "pre-PACE: EF.CardAccess, AID allowed; the rest 6982" "$(echo "$out" | cut -d' ' -f1 | tr '\n' ' ')" "9000 9000 9000 6982 6982 6982 "
expect "EF.CardAccess = PACEInfo GM-AES-256, P-256" "$(data_of 2 "$out")" "31143012060A04007F0007020204020402010202010C"
expect "wrong CAN -> 63 00" "$(raw 0 --pace 654321 | head -1)" "PACE FAILED 6300"
out=$(raw 0 --pace 123456 $QSCD 002241B60680015484019F 002000850C$PIN2 002A9E9A30${HASH}00 00A4080404ADF1340100 00B0000000)
expect "PACE" "$(echo "$out" | head -1)" "PACE OK"
rs2der "$(data_of 5 "$out")" "$work/cl.der"
openssl dgst -sha384 -verify "$work/signer.pub" -signature "$work/cl.der" "$work/msg.bin" >/dev/null && ok "signature through secure messaging verifies" || bad "SM signature"
expect "READ BINARY through SM: 0xC0 bytes" "$(data_of 7 "$out" | awk '{print length($0)/2}')" "192"
grep -q "^>> 00 2A 9E 9A" "$work/cl.log" && ok "log shows the unwrapped PSO" || bad "log unwrapped"
remove

echo
if [ $fails = 0 ]; then echo "selftest: all passed"; else echo "selftest: $fails FAILED"; fi
[ $fails = 0 ]
