#!/bin/sh
# A pinentry for tests, speaking the Assuan protocol on stdin/stdout like the real ones:
# answers GETPIN with the first line of the file $FAKE_PIN_FILE (the PIN itself never passes
# through this program's argv or environment), or cancels when FAKE_PIN_CANCEL=1. Every other
# command gets OK. With FAKE_PIN_LOG set it appends its argv, its environment and every command
# it received there, so a test can check what the program under test sent (SETDESC, ...) and
# that no PIN reached argv or the environment.
log() { [ -n "$FAKE_PIN_LOG" ] && printf '%s\n' "$*" >> "$FAKE_PIN_LOG"; return 0; }
log "ARGV: $0 $*"
if [ -n "$FAKE_PIN_LOG" ]; then env | sed 's/^/ENV: /' >> "$FAKE_PIN_LOG"; fi
echo "OK Pleased to meet you"
while IFS= read -r line; do
  log "$line"
  case "$line" in
    GETPIN*)
      if [ "$FAKE_PIN_CANCEL" = 1 ]; then
        echo "ERR 83886179 Operation cancelled <Pinentry>"
      else
        pin=$(head -n 1 "$FAKE_PIN_FILE")
        echo "D $pin"
        echo "OK"
      fi ;;
    # The caller may close its end right after BYE: that is no error worth printing.
    BYE*) echo "OK closing connection" 2>/dev/null; exit 0 ;;
    *) echo "OK" ;;
  esac
done
