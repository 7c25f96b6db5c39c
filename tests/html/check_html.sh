#!/bin/sh
# check_html.sh — the report's HTML in a real browser (`make check-html`): builds reports from a
# real PyTorch training log (tlparse -i) and from a traced shell session with a pattern rewrite,
# then has headless Chromium (Debian's `chromium`) load index.html, a compile page, a
# provenance page, a pass page, the why page of a traced schedule (fusion decisions with the
# fusion picture) and a fusion picture with refused edges: each must load without a JavaScript
# error and give a screenshot (build/html-check/*.png). Skips cleanly (exit 0) without chromium.
#   usage: tests/html/check_html.sh [MINDUCTOR_BIN]
set -u
BIN=${1:-./minductor}
OUT=build/html-check
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
    echo "check-html: skipped (no chromium; apt-get install -y chromium)"
    exit 0
fi
rm -rf "$OUT" && mkdir -p "$OUT"
"$BIN" tlparse tests/fixtures/logs/cpu_mlp_train.log -i -o "$OUT/train" --no-browser >/dev/null || exit 1
"$BIN" -c "patterns tests/fixtures/patterns/user.pat; load tests/fixtures/patterns/double_relu.py; trace on $OUT/session.log; run; codegen; trace off" >/dev/null 2>&1 || exit 1
"$BIN" tlparse "$OUT/session.log" -i -o "$OUT/session" --no-browser >/dev/null || exit 1
# the why page: a transformer block scheduled for cuda (13 kernels, 3 refusals: cycles)
"$BIN" --device cuda -c "load bench/graphs/transformer_block.py; trace on $OUT/why_trace.log; run; sched; trace off" >/dev/null 2>&1 || exit 1
"$BIN" tlparse "$OUT/why_trace.log" -o "$OUT/why" --no-browser >/dev/null || exit 1
# the fusion picture alone: refused edges carry Inductor's reason
"$BIN" -c "load tests/fixtures/codegen/sched_split_outer_permuted_view.py; show fusion --svg $OUT/fusion.svg" >/dev/null 2>&1 || exit 1
fail=0
. tests/html/shot.sh
shot index "$OUT/train/index.html"
shot compile "$OUT/train/minductor/compile_-_0_0_0.html"
shot provenance "$OUT/train/provenance_tracking_-_0_0_0.html#s1-post-5"
shot passes "$OUT/session/minductor/passes_-_0_0_0.html"
shot provenance_session "$OUT/session/provenance_tracking_-_0_0_0.html"
shot passes_stages "$OUT/train/minductor/passes_-_0_0_0.html"
shot why "$OUT/why/minductor/why_-_0_0_0.html"
shot why_compile "$OUT/why/minductor/compile_-_0_0_0.html"
shot fusion "$OUT/fusion.svg"
[ $fail = 0 ] && echo "check-html: all pages load in Chromium; screenshots in $OUT/"
exit $fail
