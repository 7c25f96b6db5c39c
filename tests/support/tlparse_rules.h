/* tlparse_rules.h — the file list real tlparse writes for a log, computed by the tests on
 * their own (a second implementation, written from tlparse's lib.rs / parsers.rs / types.rs and
 * the rules in trace/README.md, "Output layout", sharing no code with trace/), and a check of
 * an output directory against it: compile_directory.json's keys and entries, and every file on
 * disk outside minductor/. Used by tests/test_tlparse.c on fixture logs, on damaged logs, and on
 * every real log under ../shared when it is there. */
#ifndef TLPARSE_RULES_H
#define TLPARSE_RULES_H

#include <stdbool.h>
#include <stddef.h>

typedef struct TlrFile { char *url, *name; int number; const char *suffix; bool readable; } TlrFile;
typedef struct TlrDir { char *key; TlrFile *f; int n; } TlrDir;
typedef struct TlrLayout {
    TlrDir *d; int n;              /* compile_directory.json keys in first-seen order */
    char **files; int nfiles;      /* every file the output directory must hold, sorted */
    int n_glog, n_json, n_md5;     /* tlparse's fail_glog, fail_json, fail_payload_md5 */
    int n_other_rank, n_parser;    /* other_rank; fail_parser + fail_dynamo_guards_json */
    bool unknown_key;              /* the "unknown" key exists (--strict-compile-id fails) */
} TlrLayout;

/* Compute tlparse's layout for log (plain_text = -p, export_mode = -e, provenance = -i). */
int tlr_expect(const char *log, bool plain_text, bool export_mode, bool provenance, TlrLayout *out);
void tlr_free(TlrLayout *l);
/* Compare out_dir with want: 0 when compile_directory.json (keys, urls, names, numbers,
 * suffixes, readable_url presence) and the files on disk outside minductor/ match; else the
 * number of differences, the first few described in why. */
int tlr_check(const char *out_dir, const TlrLayout *want, char *why, size_t n);

#endif
