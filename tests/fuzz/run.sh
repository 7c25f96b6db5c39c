#!/bin/sh
# run.sh TARGET SECONDS — run build-fuzz/fuzz_TARGET niced for SECONDS on its seed corpus
# (tests/fuzz/seeds.sh; fuzz_passes and fuzz_lower use the FX seeds; fuzz_exec, which runs cc per
# input, its own few and a 60 s per-input timeout; fuzz_lower, whose IR interpreter takes seconds on a
# 64K-element seed when the shared machine is loaded, 30 s) plus the corpus it grows in build-fuzz/corpus-TARGET; crashers, leaks and
# timeouts land in build-fuzz/crash-TARGET/. The log is build-fuzz/logs/TARGET.log; the last
# line of the summary (execs, coverage, corpus) is appended to build-fuzz/logs/summary.txt.
set -e
t=$1; secs=${2:-600}
timeout=10
B=build-fuzz
mkdir -p $B/corpus-$t $B/crash-$t $B/logs
seed=$B/seed-$t
case $t in
    passes) maxlen=16384; seed=$B/seed-fx ;;
    lower) maxlen=16384; seed=$B/seed-fx; timeout=30 ;;
    exec) maxlen=16384; timeout=60 ;;
    patterns) maxlen=16384 ;;
    sym|shell) maxlen=512 ;;
    session) maxlen=24 ;;
    npy) maxlen=16384 ;;
    serve) maxlen=9000 ;;
    *) maxlen=65536 ;;
esac
start=$(date -u +%H:%M:%S)
rc=0
nice -n 19 $B/fuzz_$t -max_total_time=$secs -rss_limit_mb=2048 -timeout=$timeout -max_len=$maxlen \
    -print_final_stats=1 -artifact_prefix=$B/crash-$t/ $B/corpus-$t $seed \
    > $B/logs/$t.log 2>&1 || rc=$?
last=$(grep -E '^#[0-9]+' $B/logs/$t.log | tail -1)
execs=$(grep stat::number_of_executed_units $B/logs/$t.log | awk '{print $2}')
echo "$t start=$start secs=$secs rc=$rc execs=$execs crashers=$(ls $B/crash-$t | wc -l) :: $last" \
    >> $B/logs/summary.txt
tail -1 $B/logs/summary.txt
exit 0
