/* file_queue.c — a background writer for the report's many small files. tlparse hands each
 * finished file (path + bytes, copied) to a queue; one thread creates and writes them while
 * parsing goes on, so file creation (slow on some file systems) overlaps with reading the log.
 * The queue holds at most max_bytes; put() waits when it is full, so memory stays bounded. */
#include "trace_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct FqJob { struct FqJob *next; char *path; char *data; size_t n; } FqJob;

struct FileQueue {
    pthread_t th;
    bool threaded, done;
    pthread_mutex_t mu;
    pthread_cond_t cv_put, cv_take;
    FqJob *head, *tail;
    size_t bytes, max_bytes;
    char err[600];              /* first failure */
};

static void write_one(FileQueue *q, const char *path, const char *data, size_t n) {
    FILE *f = fopen(path, "w");
    bool bad = !f;
    if (f) {
        if (fwrite(data, 1, n, f) != n) bad = true;
        if (fclose(f) != 0) bad = true;
    }
    if (bad && !q->err[0]) snprintf(q->err, sizeof q->err, "%.500s: cannot write: %s", path, strerror(errno));
}

static void *worker(void *arg) {
    FileQueue *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->head && !q->done) pthread_cond_wait(&q->cv_take, &q->mu);
        FqJob *j = q->head;
        if (!j) break;                      /* done and drained */
        q->head = j->next;
        if (!q->head) q->tail = NULL;
        pthread_mutex_unlock(&q->mu);
        write_one(q, j->path, j->data, j->n);
        pthread_mutex_lock(&q->mu);
        q->bytes -= j->n;
        pthread_cond_signal(&q->cv_put);
        free(j->path);
        free(j->data);
        free(j);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

FileQueue *fq_new(size_t max_bytes) {
    FileQueue *q = mi_xcalloc(1, sizeof *q);
    q->max_bytes = max_bytes;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv_put, NULL);
    pthread_cond_init(&q->cv_take, NULL);
    q->threaded = pthread_create(&q->th, NULL, worker, q) == 0;
    return q;
}

void fq_put(FileQueue *q, const char *path, const char *data, size_t n) {
    if (!q->threaded) { write_one(q, path, data, n); return; }
    FqJob *j = mi_xmalloc(sizeof *j);
    j->next = NULL;
    j->path = mi_xstrdup(path);
    j->data = mi_xmalloc(n ? n : 1);
    memcpy(j->data, data, n);
    j->n = n;
    pthread_mutex_lock(&q->mu);
    while (q->bytes > 0 && q->bytes + n > q->max_bytes) pthread_cond_wait(&q->cv_put, &q->mu);
    if (q->tail) q->tail->next = j; else q->head = j;
    q->tail = j;
    q->bytes += n;
    pthread_cond_signal(&q->cv_take);
    pthread_mutex_unlock(&q->mu);
}

int fq_finish(FileQueue *q, char *err, size_t errn) {
    if (!q) return 0;
    if (q->threaded) {
        pthread_mutex_lock(&q->mu);
        q->done = true;
        pthread_cond_signal(&q->cv_take);
        pthread_mutex_unlock(&q->mu);
        pthread_join(q->th, NULL);
    }
    int rc = q->err[0] ? -1 : 0;
    if (rc && err) snprintf(err, errn, "%s", q->err);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv_put);
    pthread_cond_destroy(&q->cv_take);
    free(q);
    return rc;
}
