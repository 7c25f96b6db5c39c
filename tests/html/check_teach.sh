#!/bin/bash
# check_teach.sh — the teaching pages in a real browser (part of `make check-html`): a shell
# session serves its live view (`serve`) while headless Chromium (Debian's `chromium`) takes a
# screenshot of it, then writes its transcript (`save transcript FILE.html`), which Chromium
# opens too; after `quit` the port must be closed. Screenshots: build/html-check/teach_*.png.
# Skips cleanly (exit 0) without chromium.
#   usage: tests/html/check_teach.sh [MINDUCTOR_BIN]
set -u
BIN=${1:-./minductor}
OUT=build/html-check
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
    echo "check-teach: skipped (no chromium; apt-get install -y chromium)"
    exit 0
fi
mkdir -p "$OUT"
rm -f "$OUT"/teach_* "$OUT/fifo"
fail=0
fetch() {  # PORT PATH: the body of an HTTP GET on 127.0.0.1 (bash's /dev/tcp)
    exec 5<>"/dev/tcp/127.0.0.1/$1" || return 1
    printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1:%s\r\n\r\n' "$2" "$1" >&5
    cat <&5
    exec 5<&-
}
. tests/html/shot.sh
# the shell reads commands from a fifo so it stays up while the browser looks
mkfifo "$OUT/fifo"
"$BIN" -k < "$OUT/fifo" > "$OUT/teach_shell.txt" 2>&1 &
shell=$!
exec 3>"$OUT/fifo"
echo "serve 8300-8399; load examples/ln_gelu.py; inputs examples/inputs/ln_gelu; run; lower; sched; show fx --svg $OUT/teach_fx.svg" >&3
port=""
for i in $(seq 1 100); do
    port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$OUT/teach_shell.txt" | head -1)
    if [ -n "$port" ] && grep -q "wrote $OUT/teach_fx.svg" "$OUT/teach_shell.txt"; then break; fi
    sleep 0.1
done
if [ -z "$port" ]; then echo "not ok - serve: no port in the shell's output"; cat "$OUT/teach_shell.txt"; fail=1
else
    # the page is rebuilt after each command: wait until it shows the last one
    for i in $(seq 1 100); do fetch "$port" /live 2>/dev/null | grep -q "teach_fx.svg" && break; sleep 0.1; done
    shot teach_serve "http://127.0.0.1:$port/" 2400
fi
echo "save transcript $OUT/teach_transcript.html; save transcript $OUT/teach_transcript.md" >&3
for i in $(seq 1 100); do grep -q "teach_transcript.md" "$OUT/teach_shell.txt" && break; sleep 0.1; done
shot teach_transcript "file://$(pwd)/$OUT/teach_transcript.html" 2400
echo quit >&3
exec 3>&-
wait $shell
if [ -n "$port" ] && (exec 4<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then
    echo "not ok - serve: port $port still answers after quit"; fail=1
else
    echo "ok - serve: the port is closed after quit"
fi
rm -f "$OUT/fifo"
[ $fail = 0 ] && echo "check-teach: the live view and the transcript load in Chromium; screenshots in $OUT/"
exit $fail
