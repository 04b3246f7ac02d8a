/*
 * Tests of ccf_set_table_allocator, built by scripts/test-c.sh with
 * AddressSanitizer and UndefinedBehaviorSanitizer: every table of every
 * kind of filter, made or loaded while an allocator is in force, comes
 * from it with the alignment asked and goes back to it with its size
 * when the filter is freed (a ledger of live blocks checks both, and
 * ASan checks nothing else touches them); a filter keeps its allocator
 * after another is set; a refusal is CCF_ALLOCATION_FAILED with *out
 * untouched, never a crash; blocks come back zeroed although the
 * allocator returns garbage; a growing filter's later levels come from
 * it too; threads insert and look up in such a filter; an allocator
 * without functions is refused.
 *
 *   test_memory TMP_DIR
 */
#define _POSIX_C_SOURCE 200809L

#include "concurrent_cuckoo.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_ulong checks;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        checks++;                                                                    \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

#define CHECK_STATUS(expr, want)                                                   \
    do {                                                                           \
        ccf_status got_ = (expr), want_ = (want);                                  \
        checks++;                                                                  \
        if (got_ != want_) {                                                       \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %s\n", __FILE__, \
                    __LINE__, #expr, (int)got_, ccf_status_message(got_), #want);  \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

/* A ledger of the blocks an allocator gave and has not had back. */
#define MAX_BLOCKS 256
struct ledger {
    pthread_mutex_t lock;
    void *block[MAX_BLOCKS];
    size_t size[MAX_BLOCKS];
    size_t live, given, taken_back;
    size_t refuse_from; /* sizes from here on are refused (0: none) */
};

static void *ledger_alloc(void *ctx, size_t size, size_t align) {
    struct ledger *l = ctx;
    CHECK(align >= 64 && align <= 4096 && (align & (align - 1)) == 0);
    if (l->refuse_from && size >= l->refuse_from) return NULL;
    void *block = NULL;
    if (posix_memalign(&block, align, size) != 0) return NULL;
    memset(block, 0xA5, size); /* garbage: the library must zero it */
    pthread_mutex_lock(&l->lock);
    CHECK(l->live < MAX_BLOCKS);
    l->block[l->live] = block;
    l->size[l->live] = size;
    l->live++;
    l->given++;
    pthread_mutex_unlock(&l->lock);
    return block;
}

static void ledger_free(void *ctx, void *block, size_t size) {
    struct ledger *l = ctx;
    pthread_mutex_lock(&l->lock);
    size_t i = 0;
    while (i < l->live && l->block[i] != block) i++;
    CHECK(i < l->live);         /* a block this allocator gave */
    CHECK(l->size[i] == size);  /* with its size */
    l->block[i] = l->block[l->live - 1];
    l->size[i] = l->size[l->live - 1];
    l->live--;
    l->taken_back++;
    pthread_mutex_unlock(&l->lock);
    free(block);
}

static struct ledger first = {.lock = PTHREAD_MUTEX_INITIALIZER};
static struct ledger second = {.lock = PTHREAD_MUTEX_INITIALIZER};
static const ccf_allocator FIRST = {ledger_alloc, ledger_free, &first};
static const ccf_allocator SECOND = {ledger_alloc, ledger_free, &second};
static const uint64_t SEED = 7;

struct worker {
    ccf_filter *f;
    uint64_t from;
};

static void *work(void *arg) {
    struct worker *w = arg;
    for (uint64_t k = w->from; k < w->from + 20000; k++) {
        CHECK_STATUS(ccf_insert(w->f, &k, sizeof k), CCF_OK);
        CHECK(ccf_contains(w->f, &k, sizeof k));
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_memory TMP_DIR\n");
        return 2;
    }
    char path[4096];

    /* Refused: an allocator without functions. */
    ccf_allocator broken = {NULL, ledger_free, &first};
    CHECK_STATUS(ccf_set_table_allocator(&broken), CCF_INVALID_ARGUMENT);

    CHECK_STATUS(ccf_set_table_allocator(&FIRST), CCF_OK);

    /* A plain filter: its tables from the allocator, zeroed, answering. */
    ccf_filter *f = NULL;
    CHECK_STATUS(ccf_new_with_options(1000000, 0.0, 16, &SEED, &f), CCF_OK);
    CHECK(first.live >= 3);
    CHECK(ccf_len(f) == 0);
    uint64_t absent = 12345;
    CHECK(!ccf_contains(f, &absent, sizeof absent)); /* garbage would read as keys */
    pthread_t t[4];
    struct worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (struct worker){f, (uint64_t)i * 1000000};
        CHECK(pthread_create(&t[i], NULL, work, &w[i]) == 0);
    }
    for (int i = 0; i < 4; i++) CHECK(pthread_join(t[i], NULL) == 0);
    CHECK(ccf_len(f) == 80000);
    snprintf(path, sizeof path, "%s/plain.ccf", argv[1]);
    CHECK_STATUS(ccf_save(f, path), CCF_OK);

    /* Another allocator now: the loaded copy takes it, the first filter
       keeps its own. */
    CHECK_STATUS(ccf_set_table_allocator(&SECOND), CCF_OK);
    size_t first_live = first.live;
    ccf_filter *g = NULL;
    CHECK_STATUS(ccf_load(path, &g), CCF_OK);
    CHECK(second.live >= 3 && first.live == first_live);
    for (uint64_t k = 0; k < 20000; k++) CHECK(ccf_contains(g, &k, sizeof k));
    ccf_free(f);
    CHECK(first.live == 0 && first.taken_back == first.given);
    ccf_free(g);
    CHECK(second.live == 0 && second.taken_back == second.given);

    /* Growing, windowed and timed filters, and their loads. */
    CHECK_STATUS(ccf_set_table_allocator(&FIRST), CCF_OK);
    ccf_scalable *s = NULL;
    CHECK_STATUS(ccf_scalable_new(1000, 0.0, &s), CCF_OK);
    size_t one_level = first.live;
    CHECK(one_level >= 3);
    for (uint64_t k = 0; k < 20000; k++) CHECK_STATUS(ccf_scalable_insert(s, &k, sizeof k), CCF_OK);
    CHECK(first.live > one_level); /* its later levels too */
    snprintf(path, sizeof path, "%s/growing.ccf", argv[1]);
    CHECK_STATUS(ccf_scalable_save(s, path), CCF_OK);
    ccf_scalable *s2 = NULL;
    CHECK_STATUS(ccf_scalable_load(path, &s2), CCF_OK);
    for (uint64_t k = 0; k < 20000; k++) CHECK(ccf_scalable_contains(s2, &k, sizeof k));
    ccf_scalable_free(s);
    ccf_scalable_free(s2);
    CHECK(first.live == 0);

    ccf_windowed *win = NULL;
    CHECK_STATUS(ccf_windowed_new(100000, 4, 0.0, &SEED, &win), CCF_OK);
    CHECK(first.live >= 3);
    uint64_t key = 99;
    CHECK_STATUS(ccf_windowed_insert(win, &key, sizeof key), CCF_OK);
    snprintf(path, sizeof path, "%s/windowed.ccf", argv[1]);
    CHECK_STATUS(ccf_windowed_save(win, path), CCF_OK);
    ccf_windowed *win2 = NULL;
    CHECK_STATUS(ccf_windowed_load(path, &win2), CCF_OK);
    CHECK(ccf_windowed_contains(win2, &key, sizeof key));
    ccf_windowed_free(win);
    ccf_windowed_free(win2);
    CHECK(first.live == 0);

    ccf_timed *tm = NULL;
    CHECK_STATUS(ccf_timed_new(100000, 60000, 4, 0.0, CCF_TIMED_HOST_CLOCK, 1700000000000ull,
                               &SEED, &tm),
                 CCF_OK);
    CHECK(first.live >= 3);
    CHECK_STATUS(ccf_timed_insert(tm, &key, sizeof key), CCF_OK);
    snprintf(path, sizeof path, "%s/timed.ccf", argv[1]);
    CHECK_STATUS(ccf_timed_save(tm, path), CCF_OK);
    ccf_timed *tm2 = NULL;
    CHECK_STATUS(ccf_timed_load(path, CCF_TIMED_HOST_CLOCK, 1700000000001ull, &tm2), CCF_OK);
    CHECK(ccf_timed_contains(tm2, &key, sizeof key));
    ccf_timed_free(tm);
    ccf_timed_free(tm2);
    CHECK(first.live == 0 && first.taken_back == first.given);

    /* A refusal: CCF_ALLOCATION_FAILED, *out untouched, nothing kept. */
    first.refuse_from = 1 << 20;
    ccf_filter *sentinel = (ccf_filter *)(uintptr_t)0x5e;
    ccf_filter *out = sentinel;
    CHECK_STATUS(ccf_new(10000000, 0.0, &out), CCF_ALLOCATION_FAILED);
    CHECK(out == sentinel);
    CHECK(first.live == 0);
    first.refuse_from = 0;

    /* The default again: nothing more from the ledgers. */
    CHECK_STATUS(ccf_set_table_allocator(NULL), CCF_OK);
    size_t given = first.given + second.given;
    CHECK_STATUS(ccf_new(100000, 0.0, &f), CCF_OK);
    ccf_free(f);
    CHECK(first.given + second.given == given);

    printf("test_memory: %lu checks passed\n", (unsigned long)checks);
    return 0;
}
