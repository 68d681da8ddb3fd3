#!/usr/bin/env bash
# The main job end to end on sample files: create a container, list it, extract, add, remove,
# check the result with independent tools (unzip, Python's zipfile), mount it, and sign it
# (PKCS#12, XAdES LT) against a throwaway test PKI with a loopback time-stamp server and OCSP
# responder, from the command line and from inside the mount, then validate and unsign; then
# Mobile-ID, Smart-ID and a remote signing service (CSC API, mutual TLS) through their simulators.
set -euo pipefail
asicfs=$(realpath "${1:-.build/debug/asicfs}")
asicfs_src=$(realpath "$(dirname "$0")")
work=$(mktemp -d /tmp/asicfs-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
export PATH="$(dirname "$asicfs"):$PATH"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }
# A signature's status reads "checking" while it is validated in the background (nothing in a
# mount waits for the network); this waits, at most a minute, for the verdict.
validated() { for _ in $(seq 600); do [ "$(head -n 1 "$1")" != checking ] && return 0; sleep 0.1; done; return 1; }

step "Sample files"
printf 'Contract between Alice and Bob.\nSigned in Tallinn.\n' > contract.txt
printf 'Annex: price list\n' > 'annex öäüõ.txt'
python3 -c "import sys; sys.stdout.write(''.join('line %d of the report\n' % i for i in range(200000)))" > report.csv
ls -l

step "Create a container with two data files"
run asicfs create doc.asice contract.txt 'annex öäüõ.txt'

step "List it (table and JSON)"
run asicfs ls doc.asice
run asicfs ls doc.asice --json

step "Add a larger file (appended; the rest of the container is not rewritten)"
run asicfs add doc.asice report.csv
run asicfs ls doc.asice

step "Extract everything into out/ and compare with the originals"
mkdir out
run asicfs extract doc.asice -d out
for f in contract.txt 'annex öäüõ.txt' report.csv; do cmp "$f" "out/$f" && echo "identical: $f"; done
run asicfs extract doc.asice contract.txt --stdout

step "Remove a data file"
run asicfs remove doc.asice 'annex öäüõ.txt'
run asicfs ls doc.asice

step "Check the container with independent tools"
run unzip -t doc.asice
python3 - doc.asice <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
first = z.infolist()[0]
assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED
print("python zipfile:", z.namelist(), "-", "CRC OK" if z.testzip() is None else "CRC ERROR")
PY

step "Mount the container as a folder"
mkdir mnt
run asicfs mount doc.asice mnt
trap 'fusermount3 -u -z "$work/mnt" 2>/dev/null || true; rm -rf "$work"' EXIT
run ls -l mnt
run cat mnt/contract.txt
run cat mnt/.asicfs/container

step "Copy a file in, rename one, read one out, through the mount"
printf 'Signed minutes of the meeting.\n' > minutes.txt
run cp minutes.txt mnt/
run mkdir mnt/annexes
run mv mnt/report.csv mnt/annexes/report.csv
run head -n 2 mnt/annexes/report.csv
run ls -lR mnt

step "Unmount (waits until the container is saved) and look at the container on disk"
run asicfs umount mnt
run asicfs ls doc.asice

step "A throwaway test PKI with an RFC 3161 time-stamp server and an OCSP responder on loopback"
testpki="$(dirname "$asicfs_src")/contrib/testpki"
mkdir pki
python3 "$testpki/tsa_ocsp_server.py" --pki "$work/pki" --port 0 --exit-with-parent > server.out 2> server.err &
server=$!
trap 'kill $server 2>/dev/null; fusermount3 -u -z "$work/mnt" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do grep -q '^PORT ' server.out 2>/dev/null && break; sleep 0.05; done
port=$(sed -n 's/^PORT //p' server.out)
run "$testpki/mkpki.sh" "$work/pki" "http://127.0.0.1:$port/ocsp" > /dev/null
openssl x509 -in pki/signer.pem -noout -subject -nameopt utf8
printf 'test1234\n' > pki/passphrase
chmod 600 pki/passphrase
# The demo's settings: this TSA, and the test root as the only trust anchor (no EU trusted list).
export XDG_CONFIG_HOME="$work/config"
mkdir -p config/asicfs
cat > config/asicfs/config <<CONF
tsa-url = http://127.0.0.1:$port/tsa
tsl = none
trust-anchors = $work/pki/root.pem
cache-dir = $work/cache
CONF
run cat config/asicfs/config

step "Sign with the command line (PKCS#12 identity; XAdES LT: time-stamp + OCSP)"
cp doc.asice cli-signed.asice
run asicfs sign cli-signed.asice --method pkcs12 file=pki/signer.p12 passphrase-file=pki/passphrase role=Author city=Tallinn
run asicfs verify cli-signed.asice
run unzip -l cli-signed.asice

step "A signed container is read-only in the mount"
cp cli-signed.asice signed.asice
run asicfs mount signed.asice mnt
run ls mnt mnt/.asicfs/signatures
run cat "mnt/.asicfs/signatures/$(ls mnt/.asicfs/signatures | head -n 1)/signer"
if cp minutes.txt mnt/ 2>&1; then echo "unexpected success"; exit 1; fi
run cat mnt/.asicfs/status/last-error
run asicfs umount mnt

step "Sign with a PKCS#11 token: a SoftHSM token in this folder, found through p11-kit (no module path)"
# SoftHSM reads its tokens from SOFTHSM2_CONF; Debian registers it with p11-kit.
export SOFTHSM2_CONF="$work/softhsm2.conf"
mkdir tokens
printf 'directories.tokendir = %s/tokens\nobjectstore.backend = file\n' "$work" > "$SOFTHSM2_CONF"
printf '4321\n' > pki/token-pin
chmod 600 pki/token-pin
softhsm=/usr/lib/softhsm/libsofthsm2.so
run softhsm2-util --init-token --free --label "asicfs demo" --so-pin 87654321 --pin 4321 > /dev/null
openssl pkcs8 -topk8 -nocrypt -in pki/signer.key -out pki/signer.p8
run softhsm2-util --import pki/signer.p8 --token "asicfs demo" --label signer --id 01 --pin 4321
rm pki/signer.p8
for cert in signer issuing; do openssl x509 -in "pki/$cert.pem" -outform der -out "pki/$cert.der"; done
pkcs11-tool --module $softhsm --token-label "asicfs demo" --login --pin 4321 --write-object pki/signer.der --type cert --id 01 --label signer > /dev/null
pkcs11-tool --module $softhsm --token-label "asicfs demo" --login --pin 4321 --write-object pki/issuing.der --type cert --id c0 --label CA > /dev/null
run asicfs tokens module=$softhsm
cp doc.asice token-signed.asice
printf '$ asicfs sign token-signed.asice --method pkcs11 "label=asicfs demo" pin-fd=3 3<pki/token-pin\n'
asicfs sign token-signed.asice --method pkcs11 "label=asicfs demo" pin-fd=3 3<pki/token-pin
run asicfs verify token-signed.asice

step "Sign inside a mount: write the request to .asicfs/sign/pkcs12, wait, look at the signature folder"
cp doc.asice mounted.asice
run asicfs mount mounted.asice mnt
run cat mnt/.asicfs/sign/pkcs12
request="file=$work/pki/signer.p12 passphrase-file=$work/pki/passphrase role=Reviewer"
printf '$ echo "%s" > mnt/.asicfs/sign/pkcs12\n' "$request"
echo "$request" > mnt/.asicfs/sign/pkcs12
run cat mnt/.asicfs/status/wait
run ls mnt/.asicfs/signatures
folder="mnt/.asicfs/signatures/$(ls mnt/.asicfs/signatures | head -n 1)"
validated "$folder/status"
run cat "$folder/status" "$folder/method" "$folder/signer"
run cat "$folder/report"
grep -qx VALID <(head -n 1 "$folder/status") || { echo "the new signature is not VALID"; exit 1; }
if cp minutes.txt mnt/again.txt 2>&1; then echo "unexpected success"; exit 1; fi
run asicfs umount mnt
run asicfs verify mounted.asice

step "rm -rf of the control folder changes nothing; writing remove removes the signature: the container becomes editable"
cp mounted.asice unsign.asice
run asicfs mount unsign.asice mnt
if rm -rf mnt/.asicfs 2>/dev/null; then echo "unexpected success"; exit 1; fi
run ls -A mnt/.asicfs/signatures
signature="mnt/.asicfs/signatures/$(ls mnt/.asicfs/signatures | head -n 1)"
printf '$ echo remove > %s/remove\n' "$signature"
echo remove > "$signature/remove"
run ls -A mnt/.asicfs/signatures
run cp minutes.txt mnt/again.txt
run asicfs umount mnt
run asicfs ls unsign.asice

step "Mobile-ID and Smart-ID: simulators on loopback (HTTPS, pinned), signing with keys the test PKI certified"
sims="$(dirname "$asicfs_src")/contrib/simulators"
# Started from this shell (not a $(...) subshell): they stop when the demo ends.
python3 "$sims/mobile_id_simulator.py" --pki "$work/pki" --folder "$work/mobile-id" --port 0 --confirm-after 2 \
  --exit-with-parent > mobile-id.out 2> mobile-id.err &
mid=$!
python3 "$sims/smart_id_simulator.py" --pki "$work/pki" --folder "$work/smart-id" --port 0 --confirm-after 2 \
  --exit-with-parent > smart-id.out 2> smart-id.err &
sid=$!
trap 'kill $server $mid $sid 2>/dev/null; fusermount3 -u -z "$work/mnt" 2>/dev/null || true; rm -rf "$work"' EXIT
port_of() { for _ in $(seq 200); do grep -q '^PORT ' "$1" 2>/dev/null && break; sleep 0.05; done; sed -n 's/^PORT //p' "$1"; }
mid_port=$(port_of mobile-id.out)
sid_port=$(port_of smart-id.out)
# The phone services send no certificate chain: the issuing CA comes from the anchors.
cat >> config/asicfs/config <<CONF
trust-anchors = $work/pki/chain.pem
mobile-id.url = https://127.0.0.1:$mid_port/mid-api
mobile-id.tls-cert = $work/mobile-id/tls.pem
smart-id.url = https://127.0.0.1:$sid_port/smart-id-rp/v2
smart-id.tls-cert = $work/smart-id/tls.pem
notify = no
CONF
run tail -n 6 config/asicfs/config

step "Mobile-ID from the command line: the verification code first, then the phone confirms"
cp doc.asice phone.asice
run asicfs sign phone.asice --method mobile-id phone=+37200000766 idcode=60001019906

step "Smart-ID inside a mount: the code appears in .asicfs/status/smart-id before the app asks for PIN2"
run asicfs mount phone.asice mnt
run cat mnt/.asicfs/sign/smart-id
printf '$ echo "country=EE idcode=30303039914 display=confirmation" > mnt/.asicfs/sign/smart-id\n'
echo "country=EE idcode=30303039914 display=confirmation" > mnt/.asicfs/sign/smart-id
for _ in $(seq 100); do grep -q '^waiting-for-user' mnt/.asicfs/status/smart-id && break; sleep 0.05; done
run cat mnt/.asicfs/status/smart-id
run cat mnt/.asicfs/status/wait
run ls mnt/.asicfs/signatures
for folder in mnt/.asicfs/signatures/*; do
  validated "$folder/status"
  printf '%s: %s (%s)\n' "$(basename "$folder")" "$(head -n 1 "$folder/status")" "$(cat "$folder/method")"
  grep -qx VALID <(head -n 1 "$folder/status") || { echo "a signature is not VALID"; exit 1; }
done
run asicfs umount mnt
run asicfs verify phone.asice

# The configuration above names a .../v2 URL, so it keeps RP API v2; -o smart-id.url=.../v3 (or
# smart-id.api = v3, the default for a new configuration) switches to v3.
sid_v3="smart-id.url=https://127.0.0.1:$sid_port/smart-id-rp/v3"
step "Smart-ID RP API v3 from the command line: the service makes the verification code; the signature is RSA-PSS"
cp doc.asice smart-v3.asice
run asicfs sign smart-v3.asice --method smart-id country=EE idcode=30303039914 -o "$sid_v3"
printf '$ unzip -p smart-v3.asice META-INF/signatures0.xml | grep -o "SignatureMethod Algorithm=[^>]*"\n'
unzip -p smart-v3.asice META-INF/signatures0.xml | grep -o 'SignatureMethod Algorithm=[^>]*' | tee method.txt
grep -q 'sha256-rsa-MGF1' method.txt || { echo "the v3 signature is not RSA-PSS"; exit 1; }

step "Smart-ID v3 QR signing in a mount: status/smart-id.png holds the current QR code, renewed each second"
run asicfs mount smart-v3.asice mnt -o "$sid_v3"
printf '$ echo qr=yes > mnt/.asicfs/sign/smart-id\n'
echo qr=yes > mnt/.asicfs/sign/smart-id
for _ in $(seq 100); do grep -q '^device link: ' mnt/.asicfs/status/smart-id && break; sleep 0.05; done
run cat mnt/.asicfs/status/smart-id
# What a phone sees: the PNG decoded by zbarimg, then "scanned" through the simulator's mock endpoint
# (the demo service's automated-testing interface), which accepts only the current link.
cat mnt/.asicfs/status/smart-id.png > qr.png
printf '$ zbarimg --quiet --raw qr.png\n'
# (zbarimg's ImageMagick complains about a missing D-Bus on stderr: kept in a file, shown on failure.)
link=$(zbarimg --quiet --raw qr.png 2> zbarimg.err) || { cat zbarimg.err; exit 1; }
echo "$link"
case "$link" in https://*deviceLinkType=QR*authCode=*) ;; *) echo "the QR code holds no device link"; exit 1 ;; esac
run python3 "$sims/smart_id_simulator.py" scan --port "$sid_port" --cert "$work/smart-id/tls.pem" \
  --document PNOEE-30303039914-MOCK-Q "$link"
run cat mnt/.asicfs/status/wait
run asicfs umount mnt
run asicfs verify smart-v3.asice

step "Remote signing (CSC API) over mutual TLS: a loopback signing service that requires a client certificate"
# Its shebang is Debian's python3, which has python3-cryptography.
"$sims/csc_simulator.py" --pki "$work/pki" --folder "$work/csc" --port 0 --client-certificates required \
  --exit-with-parent > csc.out 2> csc.err &
csc=$!
trap 'kill $server $mid $sid $csc 2>/dev/null; fusermount3 -u -z "$work/mnt" 2>/dev/null || true; rm -rf "$work"' EXIT
# The first start makes its keys and certificates: give it longer than the others.
for _ in $(seq 600); do grep -q '^PORT ' csc.out 2>/dev/null && break; sleep 0.05; done
csc_port=$(port_of csc.out)
# The client identity's passphrase is in a file; the service knows alice by her certificate (no login).
printf 'client-secret\n' > csc-client.pass
chmod 600 csc-client.pass
cat >> config/asicfs/config <<CONF
remote.url = https://127.0.0.1:$csc_port/csc/v1
remote.tls-cert = $work/csc/tls.pem
remote.client-identity = $work/csc/alice-client.p12
remote.client-identity-passphrase-file = $work/csc-client.pass
CONF
run tail -n 4 config/asicfs/config
run asicfs remote credentials
cp doc.asice remote.asice
run asicfs sign remote.asice --method remote credential=alice-rsa role=Director
run asicfs verify remote.asice

step "The Estonian ID-card: pcscd with two virtual readers and an emulated card (contrib/card)"
card="$(dirname "$asicfs_src")/contrib/card"
if pgrep -x pcscd > /dev/null; then
  # Only one pcscd can run on a machine; the demo does not touch one it did not start.
  echo "another pcscd is running: the virtual ID-card part is left out (stop pcscd to see it)"
else
  run "$card/make-card-pki.sh" "$work/pki"
  run "$card/virtual-reader.sh" start "$work/readers"
  trap 'kill $server $mid $sid 2>/dev/null; "$card/virtual-reader.sh" stop "$work/readers"; fusermount3 -u -z "$work/mnt" 2>/dev/null || true; rm -rf "$work"' EXIT
  card_args=(--kind idemia --sign-cert "$work/pki/signer.pem" --sign-key "$work/pki/signer.key"
             --auth-cert "$work/pki/card-auth.pem" --auth-key "$work/pki/card-auth.key" --state "$work/card.json")
  run "$card/virtual-reader.sh" insert "$work/readers" --wait -- "${card_args[@]}"
  run asicfs card status
  run asicfs card pins
  run asicfs card certs

  step "Sign with the ID-card in a contact reader (PIN2 from a descriptor here; pinentry or a PIN pad otherwise)"
  cp doc.asice id-card.asice
  printf '$ asicfs sign id-card.asice --method id-card pin-fd=3 3<pin2\n'
  printf '12345\n' > pin2
  asicfs sign id-card.asice --method id-card pin-fd=3 3<pin2
  rm pin2
  run asicfs verify id-card.asice

  step "The same card on a contactless reader: PACE with the CAN, then secure messaging"
  run "$card/virtual-reader.sh" remove "$work/readers"
  run "$card/virtual-reader.sh" insert "$work/readers" --wait -- "${card_args[@]}" --contactless --can 123456
  run asicfs card status
  run asicfs card status can=123456
  printf '12345\n' > pin2
  printf '$ asicfs sign id-card.asice --method id-card can=123456 pin-fd=3 3<pin2\n'
  asicfs sign id-card.asice --method id-card can=123456 pin-fd=3 3<pin2
  rm pin2
  run asicfs verify id-card.asice
  run "$card/virtual-reader.sh" stop "$work/readers"
fi

step "Browse mode: mount a folder; every container in it is a folder, everything else passes through"
mkdir -p folder/contracts
cp doc.asice folder/contracts/doc.asice
cp cli-signed.asice folder/contracts/SIGNED.ASICE
printf 'not a container, just a file with that name\n' > folder/contracts/broken.bdoc
printf 'Meeting at 10.\n' > folder/notes.txt
run asicfs mount folder mnt
run ls -l mnt mnt/contracts
run ls mnt/contracts/doc.asice mnt/contracts/SIGNED.ASICE/.asicfs/signatures
run cat mnt/contracts/broken.bdoc
run mkdir mnt/contracts/new.asice
run cp mnt/notes.txt mnt/contracts/doc.asice/contract.txt mnt/contracts/new.asice/
run ls -l mnt/contracts/new.asice
run asicfs umount mnt
run ls -l folder/contracts
run asicfs ls folder/contracts/new.asice

step "A refusal on the phone ends the signing with one sentence; the container is unchanged"
cp phone.asice before-refusal.asice
if asicfs sign phone.asice --method mobile-id phone=+37201100266 idcode=60001019950; then echo "unexpected success"; exit 1; fi
cmp phone.asice before-refusal.asice && echo "container unchanged"

step "A wrong passphrase: one clear error, the container unchanged"
printf 'wrong\n' > pki/wrong
cp doc.asice unsigned.asice
if asicfs sign unsigned.asice --method pkcs12 file=pki/signer.p12 passphrase-file=pki/wrong; then echo "unexpected success"; exit 1; fi
cmp doc.asice unsigned.asice && echo "container unchanged"

step "Refusals keep the container intact"
cp doc.asice before.asice
if asicfs add doc.asice contract.txt; then echo "unexpected success"; exit 1; fi
cmp doc.asice before.asice && echo "container unchanged"
if asicfs ls /etc/hostname; then echo "unexpected success"; exit 1; fi

printf '\nDemo finished: every step above ran for real.\n'
