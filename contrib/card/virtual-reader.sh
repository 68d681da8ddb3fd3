#!/usr/bin/env bash
# A private pcscd with vsmartcard's vpcd reader driver, for tests and the demo.
#
#   virtual-reader.sh start DIR [PORT] [--pinpad]
#                                        start pcscd (reader config, pid and log in DIR);
#                                        --pinpad: readers with a PIN pad (pinpad/ifd_pinpad.c,
#                                        built into DIR; what is "typed" is read from
#                                        DIR/pinpad-input at each PIN entry)
#   virtual-reader.sh stop DIR           stop the emulators started with `insert`, then pcscd
#   virtual-reader.sh insert DIR [--reader 0|1] [--wait] -- EMULATOR-ARGS...
#                                        start esteid_card.py on reader 0 (PORT) or 1 (PORT+1);
#                                        --wait: return once a client sees the card
#   virtual-reader.sh remove DIR [--reader 0|1]   stop that emulator (= pull the card out)
#
# PORT defaults to 36000 (0x8CA0). vpcd makes two readers, "Virtual PCD 00 00" on PORT and
# "Virtual PCD 00 01" on PORT+1; a card is an esteid_card.py process connected to that port.
# Only one pcscd can run per machine (/run/pcscd/pcscd.comm is fixed): `start` refuses when
# another pcscd runs, and removes /run/pcscd/pcscd.{comm,pid} left by a pcscd that died.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
run=/run/pcscd
driver=/usr/lib/pcsc/drivers/serial/libifdvpcd.so
python=/usr/bin/python3

die() { echo "virtual-reader.sh: $*" >&2; exit 1; }

# alive PID: true while PID exists and is not a zombie (kill -0 succeeds on zombies).
alive() { local s; s=$(ps -o stat= -p "$1" 2>/dev/null | tr -d ' ') || return 1; [ -n "$s" ] && [ "${s#Z}" = "$s" ]; }

# stop_pid PID: SIGTERM, wait up to 5 s, then SIGKILL.
stop_pid() {
  local pid=$1 i
  alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 50); do alive "$pid" || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  for i in $(seq 20); do alive "$pid" || return 0; sleep 0.1; done
}

# pids of live pcscd processes (a zombie left by a dead parent does not count)
running_pcscd() { { ps -C pcscd -o pid=,stat= || true; } | awk '$2 !~ /^Z/ {print $1}'; }

port_of() { cat "$1/port" 2>/dev/null || die "$1 has no running reader (start it first)"; }

cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: virtual-reader.sh start DIR [PORT] | stop DIR | insert DIR [--reader N] [--wait] -- ARGS | remove DIR [--reader N]"
shift 2

case $cmd in
start)
  port=36000; pinpad=0
  for arg in "$@"; do
    case $arg in
      --pinpad) pinpad=1 ;;
      *) port=$arg ;;
    esac
  done
  mkdir -p "$dir/reader.conf.d"
  dir=$(cd "$dir" && pwd)
  name="Virtual PCD"
  if [ $pinpad = 1 ]; then
    # A PIN-pad reader: our IFD handler around vpcd's (see pinpad/ifd_pinpad.c).
    cc -shared -fPIC -O2 $(pkg-config --cflags libpcsclite) -o "$dir/libifd-pinpad.so" "$here/pinpad/ifd_pinpad.c" -ldl \
      || die "cannot build the PIN-pad reader driver"
    driver=$dir/libifd-pinpad.so
    name="Virtual PIN pad"
  fi
  if [ -f "$dir/pcscd.pid" ] && alive "$(cat "$dir/pcscd.pid")"; then
    echo "pcscd already running (pid $(cat "$dir/pcscd.pid"), port $(cat "$dir/port"))"; exit 0
  fi
  other=$(running_pcscd)
  if [ -n "$other" ]; then
    die "another pcscd is running (pid $(echo $other | tr '\n' ' ')), not started by this harness; stop it first (only one pcscd can run per machine)"
  fi
  # No pcscd runs: anything left in /run/pcscd is stale (a pcscd killed with -9).
  rm -f "$run/pcscd.comm" "$run/pcscd.pid"
  hex=$(printf '0x%04X' "$port")
  cat > "$dir/reader.conf.d/vpcd" <<CONF
FRIENDLYNAME "$name"
DEVICENAME   /dev/null:$hex
LIBPATH      $driver
CHANNELID    $hex
CONF
  echo "$port" > "$dir/port"
  ASICFS_PINPAD_INPUT="$dir/pinpad-input" setsid pcscd -f -c "$dir/reader.conf.d" >"$dir/pcscd.log" 2>&1 < /dev/null &
  echo $! > "$dir/pcscd.pid"
  for i in $(seq 100); do
    if [ -S "$run/pcscd.comm" ] && ss -ltnH "sport = :$port" | grep -q .; then
      echo "pcscd running (pid $(cat "$dir/pcscd.pid")), readers: \"$name 00 00\" on port $port, \"$name 00 01\" on port $((port + 1))"
      exit 0
    fi
    alive "$(cat "$dir/pcscd.pid")" || break
    sleep 0.05
  done
  cat "$dir/pcscd.log" >&2
  stop_pid "$(cat "$dir/pcscd.pid")"
  die "pcscd did not come up (log above)"
  ;;
stop)
  [ -d "$dir" ] || exit 0
  for f in "$dir"/card-*.pid; do
    [ -e "$f" ] || continue
    stop_pid "$(cat "$f")"; rm -f "$f"
  done
  if [ -f "$dir/pcscd.pid" ]; then
    pid=$(cat "$dir/pcscd.pid")
    stop_pid "$pid"
    rm -f "$dir/pcscd.pid"
    # pcscd empties /run/pcscd on SIGTERM; after a SIGKILL the files stay behind.
    [ -n "$(running_pcscd)" ] || rm -f "$run/pcscd.comm" "$run/pcscd.pid"
  fi
  ;;
insert)
  reader=0; wait=0
  while [ $# -gt 0 ]; do
    case $1 in
      --reader) reader=$2; shift 2 ;;
      --wait) wait=1; shift ;;
      --) shift; break ;;
      *) die "insert: unknown option $1 (emulator arguments go after --)" ;;
    esac
  done
  port=$(( $(port_of "$dir") + reader ))
  pidf="$dir/card-$reader.pid"
  if [ -f "$pidf" ] && alive "$(cat "$pidf")"; then die "reader $reader already has a card (pid $(cat "$pidf"))"; fi
  "$python" "$here/esteid_card.py" --port "$port" "$@" >>"$dir/card-$reader.out" 2>&1 < /dev/null &
  echo $! > "$pidf"
  if [ $wait = 1 ]; then
    for i in $(seq 100); do
      if opensc-tool -l 2>/dev/null | grep -E "^$reader +Yes" >/dev/null; then exit 0; fi
      alive "$(cat "$pidf")" || { cat "$dir/card-$reader.out" >&2; die "emulator exited"; }
      sleep 0.05
    done
    die "card on reader $reader not seen by pcscd within 5 s"
  fi
  ;;
remove)
  reader=0
  [ "${1:-}" = --reader ] && reader=$2
  pidf="$dir/card-$reader.pid"
  [ -f "$pidf" ] || exit 0
  stop_pid "$(cat "$pidf")"; rm -f "$pidf"
  # Return once pcscd has noticed (it polls the reader), so a following insert is not
  # mistaken for the old card.
  for i in $(seq 100); do
    opensc-tool -l 2>/dev/null | grep -E "^$reader +Yes" >/dev/null || exit 0
    sleep 0.05
  done
  die "pcscd still reports a card in reader $reader"
  ;;
*)
  die "unknown command $cmd"
  ;;
esac
