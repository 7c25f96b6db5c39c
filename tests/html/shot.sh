# shot.sh — sourced by check_html.sh and check_teach.sh (`make check-html`): their one browser step.
# shot NAME PAGE [HEIGHT]: headless Chromium ($CHROME) loads PAGE (a URL, or a file path taken
# from the repository root) in a 1400 x HEIGHT window (1000 by default) and saves
# $OUT/NAME.png; prints a TAP line, "not ok" (and sets fail=1) when there is no screenshot or
# the page threw a JavaScript error. The trick: a fresh profile per shot, so runs never share
# state. Example: shot index "$OUT/train/index.html"
shot() {
    case $2 in *://*) url=$2 ;; *) url="file://$(pwd)/$2" ;; esac
    prof=$(mktemp -d)
    "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
        --no-first-run --user-data-dir="$prof" --enable-logging=stderr --v=0 --hide-scrollbars \
        --window-size=1400,${3:-1000} --screenshot="$OUT/$1.png" "$url" >"$OUT/$1.log" 2>&1
    rm -rf "$prof"
    size=$(stat -c %s "$OUT/$1.png" 2>/dev/null || echo 0)
    if [ "$size" -lt 10000 ]; then echo "not ok - $1: no screenshot ($2)"; fail=1; return; fi
    if grep -q "Uncaught" "$OUT/$1.log"; then echo "not ok - $1: JavaScript error:"; grep "Uncaught" "$OUT/$1.log"; fail=1; return; fi
    echo "ok - $1: $2 ($size bytes)"
}
