#!/bin/sh
# seeds.sh — build the seed corpora build-fuzz/seed-<target>/ from tests/fixtures (run from the
# repository root; `make fuzz-run` calls it). Big logs are cut into ~4 KB pieces at envelope
# lines so the fuzzer starts from many small, valid records.
set -e
S=build-fuzz
mkdir -p $S
rm -rf $S/seed-fx $S/seed-json $S/seed-npy $S/seed-trace $S/seed-sym $S/seed-shell $S/seed-patterns
mkdir -p $S/seed-fx $S/seed-json $S/seed-npy $S/seed-trace $S/seed-sym $S/seed-shell $S/seed-patterns
n=0
for f in $(find tests/fixtures -name '*.py' | sort); do n=$((n+1)); cp "$f" $S/seed-fx/s$n.py; done
# graph JSON: the FX fixtures converted, plus 200 random graphs (JSON and FX text)
if [ -x $S/graph_seeds ]; then
    $S/graph_seeds $S/seed-json $S/seed-fx 200 $(find tests/fixtures -name '*.py' | sort)
fi
# the unseen logs of the surfaces added last (a while_loop, SymFloat sizes, a user's custom op,
# gcd / lcm, integer div / rem by zero, the special polynomials): their post-grad graphs as FX
# text (when build/minductor is built) and, below, their trace pieces
U=$S/unseen-logs
rm -rf $U && mkdir -p $U
tar xzf tests/fixtures/unseen/logs.tgz -C $U cuda_while_loop.log cpu_custom_op_library.log cpu_dynamic_true_train.log \
    cpu_gcd_lcm_isin.log cpu_remainder_fmod_floordiv.log cpu_special_polynomials.log cpu_special_fns.log cpu_associative_scan.log
if [ -x build/minductor ]; then
    for l in $U/*.log; do
        for cid in $(build/minductor -q -c "load $l" 2>&1 | awk '$1 ~ /^[0-9]+\/[0-9]+(_[0-9]+)?$/ && /has a graph/ && $2 != "restarted:" {print $1}'); do
            for k in 1 2; do
                out=$S/seed-fx/u_$(basename $l .log)_$(echo $cid | tr / _)_$k.py
                build/minductor -q -c "load $l $cid inductor_post_grad_graph#$k; graph" 2>/dev/null | sed -n '/^class /,$p' > $out
                [ -s $out ] || rm -f $out
            done
        done
    done
fi
# compiled runs (fuzz_exec): the higher-order ops' fixtures and the unseen graphs above (a
# while_loop, gcd / lcm, div / rem / fmod of integers, the special polynomials, SymFloat sizes,
# a custom op)
rm -rf $S/seed-exec && mkdir -p $S/seed-exec
cp tests/fixtures/hop/while_loop.py tests/fixtures/hop/while_body_zero_div.py tests/fixtures/hop/cond_two_results.py \
    tests/fixtures/hop/cond_dynamic.py $S/seed-exec/
for f in $S/seed-fx/u_*.py; do [ -f "$f" ] && [ $(wc -c < "$f") -lt 8000 ] && cp "$f" $S/seed-exec/; done
n=0
for f in $(find tests/fixtures -name '*.npy' -size -16k | sort); do n=$((n+1)); cp "$f" $S/seed-npy/s$n.npy; done
# logs: pieces of about 4 KB starting at an envelope line
for f in $(find tests/fixtures $U -name '*.log' | sort); do
    awk -v dir=$S/seed-trace -v base=$(basename "$f" .log) '
        BEGIN { part = 0; bytes = 0 }
        /^[VIWE][0-9]/ && bytes > 4000 { part++; bytes = 0 }
        part < 40 { print > (dir "/" base "_" part ".log"); bytes += length($0) + 1 }' "$f"
done
# size expressions: the bracketed sizes/strides of FX annotations and the index expressions
# of the lowered IR dumps, one per file
{ find tests/fixtures -name '*.py' | xargs grep -oh '"[a-z0-9]*\[[^]"]*\]' | sed 's/^"[a-z0-9]*\[//; s/\]$//' |
      tr ',' '\n' | sed 's/^ *//' | grep '[a-z]'
  find tests/fixtures -name 'ir_*.txt' | xargs grep -oh '^ *index[0-9]* = .*$' | sed 's/^ *index[0-9]* = //'
  find tests/fixtures -name 'ir_*.txt' | xargs grep -oh '\(ModularIndexing\|FloorDiv\|Min\|Max\)([^)]*)'
} | sort -u | head -300 | awk -v dir=$S/seed-sym '{ f = dir "/e" NR; printf "%s", $0 > f; close(f) }'
# SymFloat expressions (core/base/symfloat.c; fuzz_sym feeds every input to it too): the Sym(...)
# annotations with a float function or literal of the fixtures and of the unseen graphs above
find tests/fixtures $S/seed-fx -name '*.py' | xargs grep -oh 'Sym([^"]*)"' | sed 's/^Sym(//; s/)"$//' |
    grep 'TrueDiv\|ToFloat\|TruncTo\|RoundTo\|RoundDecimal\|PowByNatural\|FloatPow\|OpaqueUnaryFn_\|[0-9]\.[0-9]' |
    sort -u | head -100 | awk -v dir=$S/seed-sym '{ f = dir "/f" NR; printf "%s", $0 > f; close(f) }'
for e in 's0' 'x0 + 64*x1' '(x0//4) % 8' 'ModularIndexing(x0, 2, 4)' 'FloorDiv(s0 + 1, 2)' \
         'Min(s0, 8)' 'Max(1, s1 - 2)' '2*s0*s1 + x1' \
         'IntTrueDiv(8*s0*s1, 8) - 1.0' 'FloatTrueDiv(1.0, IntTrueDiv(s0, 8))' 'TruncToInt(IntTrueDiv(s0, 3))' \
         'PowByNatural(s0, 3) + RoundToInt(2.5)' 'ToFloat(s1)*0.5' 'RoundDecimal(IntTrueDiv(s0, 7), 2)' \
         'OpaqueUnaryFn_sqrt(ToFloat(s0))' 'LShift(s0, 3) + RShift(s1, 1)' 'FloorToInt(FloatPow(2.0, ToFloat(s1)))' \
         'CeilDiv(-7, s0) + Mod(-7, s1)'; do
    printf '%s' "$e" > $S/seed-sym/b$(printf '%s' "$e" | cksum | cut -d' ' -f1)
done
# shell lines: the scripts under tests/fixtures/scripts plus a few quoting cases
n=0
for f in $(find tests/fixtures/scripts examples -name '*.mi' -o -name '*.txt' 2>/dev/null | sort); do
    n=$((n+1)); cp "$f" $S/seed-shell/s$n
done
printf '%s' "load 'a b.py'; graph # c" > $S/seed-shell/q1
printf '%s' 'set rtol "1e-3" \"x\" '"'"'y z'"'" > $S/seed-shell/q2
printf '%s' 'passes; step; step; diff 1 2; back' > $S/seed-shell/q3
# pattern files: each fixture alone (applied to fuzz_patterns' built-in graph) and followed by
# "===" and a small FX fixture graph
n=0
for p in $(find tests/fixtures/patterns -name '*.pat' | sort); do
    n=$((n+1)); cp "$p" $S/seed-patterns/p$n.pat
    for f in $(find tests/fixtures/patterns tests/fixtures/fx -name '*.py' -size -3k | sort | head -12); do
        n=$((n+1)); { cat "$p"; printf '\n===\n'; cat "$f"; } > $S/seed-patterns/p$n.pat
    done
done
# HTTP request heads for the server's handler (fuzz_serve): the live page, its polls, files,
# ways out of the root, bad methods, hosts and escapes
rm -rf $S/seed-serve && mkdir -p $S/seed-serve
n=0
for r in 'GET / HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n\r\n' 'GET /live HTTP/1.1\r\nHost: localhost:8000\r\n\r\n' \
         'GET /gen HTTP/1.0\r\n\r\n' 'HEAD /index.html HTTP/1.1\r\nHost: 127.0.0.1:8001\r\n\r\n' \
         'GET /sub/a.txt HTTP/1.1\r\n\r\n' 'GET /sub/ HTTP/1.1\r\n\r\n' 'GET /out HTTP/1.1\r\n\r\n' \
         'GET /%2e%2e/etc/passwd HTTP/1.1\r\n\r\n' 'GET /sub/..%2Fout HTTP/1.1\r\n\r\n' \
         'POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc' 'GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n' \
         'GET /a%00b HTTP/1.1\n\n' 'GET /?x=1#frag HTTP/1.1\n\n' 'GET / HTTP/1.1\r\nHost: 127.0.0.1:8000'; do
    n=$((n+1)); printf "%b" "$r" > $S/seed-serve/r$n
done
# sessions: byte strings, each byte a command of fuzz_session's vocabulary (load, inputs, step,
# set ..., patterns, lower, sched)
rm -rf $S/seed-session; mkdir -p $S/seed-session
printf '\000\005\010\010\020\024\035\037' > $S/seed-session/a
printf '\004\005\041\010\037\040' > $S/seed-session/b
printf '\035\003\006\016\030\032\034\040' > $S/seed-session/c
for d in fx json npy trace sym shell patterns session serve exec; do echo "seed-$d: $(ls $S/seed-$d | wc -l) files"; done
