/*
 * Tests of ccf_view_v2 (and v1), concurrent_cuckoo_inline.h and
 * ccf_prefetch_hash (scripts/test-c.sh builds and runs it with sanitizers):
 *
 * - agreement: for 8-, 16- and 32-bit filters, with finalized and with
 *   uniform hashes (CCF_UNIFORM_HASHES), and filters loaded from format
 *   version 1 files (raw hashes), ccf_view_contains_hash answers exactly
 *   as ccf_contains_hash for every hash tried, present or absent (the same
 *   false positives: the inline index, fingerprint and probe are the
 *   library's); only 16-bit filters get the inline lookup (1 finalized,
 *   2 uniform), and ccf_view_v1 only for finalized ones;
 * - fallback: when the version of the key's pair changes during a lookup,
 *   the answer comes from the library (a view over decoy memory whose
 *   version words another thread keeps bumping);
 * - threads: readers looking pinned keys up inline while writers churn a
 *   nearly full table (fingerprints move along cuckoo paths, bumping the
 *   versions the inline lookup validates against) never miss one.
 *
 *   test_view GOLDEN_DIR
 */
#define _POSIX_C_SOURCE 200809L

#include "concurrent_cuckoo.h"
#include "concurrent_cuckoo_inline.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long checks;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        checks++;                                                                    \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

static const uint64_t SEED = 0x5eed;

static uint64_t key(uint64_t i) {
    uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 33)) * 0xFF51AFD7ED558CCDull;
    z = (z ^ (z >> 33)) * 0xC4CEB9FE1A85EC53ull;
    return z ^ (z >> 33);
}

/* Every hash 0..n of key(): the inline lookup (and prefetch) against the
 * library's. Returns how many were found. */
static size_t check_agreement(const ccf_filter *f, uint64_t n) {
    const ccf_view view = ccf_view_v2(f), old = ccf_view_v1(f);
    size_t found = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t h = key(i);
        ccf_view_prefetch_hash(&view, h);
        ccf_prefetch_hash(f, h);
        bool inline_answer = ccf_view_contains_hash(&view, h);
        CHECK(inline_answer == ccf_contains_hash(f, h));
        CHECK(ccf_view_contains_hash(&old, h) == inline_answer);
        found += inline_answer;
    }
    /* Hashes with all their entropy in the low or the high bits. */
    for (uint64_t i = 0; i < 4096; i++) {
        CHECK(ccf_view_contains_hash(&view, i) == ccf_contains_hash(f, i));
        CHECK(ccf_view_contains_hash(&view, i << 48) == ccf_contains_hash(f, i << 48));
    }
    return found;
}

/* The inline_lookup a 16-bit filter's view has: 2 with uniform hashes. */
static uint32_t inline_kind(uint32_t flags) {
    return (flags & CCF_UNIFORM_HASHES) ? 2 : 1;
}

static void test_agreement(void) {
    const uint32_t widths[] = {8, 16, 32};
    for (int k = 0; k < 6; k++) {
        const uint32_t width = widths[k % 3], flags = k < 3 ? 0 : CCF_UNIFORM_HASHES;
        ccf_filter *f = NULL;
        CHECK(ccf_new_with_flags(20000, 0.0, width, &SEED, flags, &f) == CCF_OK);
        CHECK(ccf_uniform_hashes(f) == (flags != 0));
        const ccf_view view = ccf_view_v2(f);
        CHECK(view.filter == f);
        CHECK(view.inline_lookup == (width == 16 ? inline_kind(flags) : 0));
        CHECK(ccf_view_v1(f).inline_lookup == (width == 16 && flags == 0));
        /* Empty: nothing found, by either. */
        CHECK(check_agreement(f, 1000) == 0);
        enum { ITEMS = 18000 };
        for (uint64_t i = 0; i < ITEMS; i++) CHECK(ccf_insert_hash(f, key(i)) == CCF_OK);
        for (uint64_t i = 0; i < ITEMS; i++) CHECK(ccf_view_contains_hash(&view, key(i)));
        /* Present and absent hashes; the absent ones' false positives are
         * the same hashes for both. */
        size_t found = check_agreement(f, 200000);
        CHECK(found >= ITEMS && found < 200000);
        /* Removes leave both agreeing too. */
        for (uint64_t i = 0; i < ITEMS; i += 2) CHECK(ccf_remove_hash(f, key(i)));
        check_agreement(f, 50000);
        /* Saved and loaded, the filter keeps its hashes' treatment. */
        char path[] = "/tmp/ccf-test-view-XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0);
        close(fd);
        CHECK(ccf_save(f, path) == CCF_OK);
        ccf_filter *loaded = NULL;
        CHECK(ccf_load(path, &loaded) == CCF_OK);
        unlink(path);
        CHECK(ccf_uniform_hashes(loaded) == (flags != 0));
        CHECK(ccf_view_v2(loaded).inline_lookup == view.inline_lookup);
        for (uint64_t i = 0; i < 50000; i++) CHECK(ccf_contains_hash(loaded, key(i)) == ccf_contains_hash(f, key(i)));
        check_agreement(loaded, 20000);
        ccf_free(loaded);
        ccf_free(f);
    }
    /* A NULL filter: a view that calls the library, which answers false. */
    const ccf_view none = ccf_view_v2(NULL);
    CHECK(none.filter == NULL && none.inline_lookup == 0);
    CHECK(ccf_view_v1(NULL).inline_lookup == 0 && !ccf_uniform_hashes(NULL));
    /* A flag this library does not know. */
    ccf_filter *g = NULL;
    CHECK(ccf_new_with_flags(1000, 0.0, 16, &SEED, 2, &g) == CCF_INVALID_ARGUMENT && g == NULL);
    CHECK(!ccf_view_contains_hash(&none, 7));
    ccf_view_prefetch_hash(&none, 7);
    ccf_prefetch_hash(NULL, 7);
}

/* Filters saved in format version 1 use raw hashes, as CCF_UNIFORM_HASHES:
 * the 16-bit one gets the uniform inline lookup from ccf_view_v2 (none
 * from ccf_view_v1), and every view answers as the library. */
static void test_version1_files(const char *golden_dir) {
    const char *names[] = {"v1-fp8.bin", "v1-fp16.bin", "v1-fp32.bin"};
    for (int g = 0; g < 3; g++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", golden_dir, names[g]);
        ccf_filter *f = NULL;
        CHECK(ccf_load(path, &f) == CCF_OK);
        CHECK(ccf_uniform_hashes(f));
        CHECK(ccf_view_v1(f).inline_lookup == 0);
        CHECK(ccf_view_v2(f).inline_lookup == (g == 1 ? 2 : 0));
        check_agreement(f, 20000);
        ccf_free(f);
    }
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

enum { READERS = 2 };

struct shared {
    ccf_filter *f;
    uint64_t pinned;
    atomic_bool stop;
    atomic_ulong misses, lookups;
};

static void *reader(void *arg) {
    struct shared *s = arg;
    const ccf_view view = ccf_view_v2(s->f);
    unsigned long misses = 0, lookups = 0;
    while (!atomic_load(&s->stop)) {
        for (uint64_t i = 0; i < s->pinned; i++) misses += !ccf_view_contains_hash(&view, key(i));
        lookups += s->pinned;
    }
    atomic_fetch_add(&s->misses, misses);
    atomic_fetch_add(&s->lookups, lookups);
    return NULL;
}


/* `pinned` keys stay while `churn` others are inserted until the table
 * is full and removed again, for `seconds`, in a table made for
 * `capacity`: inserts near full load move fingerprints along cuckoo
 * paths, under readers that look the pinned keys up inline. */
static void run_threads(size_t capacity, uint64_t pinned, uint64_t churn, double seconds, uint32_t flags) {
    struct shared s;
    memset(&s, 0, sizeof s);
    s.pinned = pinned;
    CHECK(ccf_new_with_flags(capacity, 0.0, 16, &SEED, flags, &s.f) == CCF_OK);
    CHECK(ccf_view_v2(s.f).inline_lookup == inline_kind(flags));
    for (uint64_t i = 0; i < pinned; i++) CHECK(ccf_insert_hash(s.f, key(i)) == CCF_OK);
    pthread_t threads[READERS];
    for (int t = 0; t < READERS; t++) CHECK(pthread_create(&threads[t], NULL, reader, &s) == 0);
    double end = now() + seconds;
    unsigned long rounds = 0;
    while (now() < end) {
        size_t added = 0;
        for (uint64_t i = 0; i < churn; i++) {
            if (ccf_insert_hash(s.f, key(pinned + i)) != CCF_OK) break;
            added++;
        }
        for (uint64_t i = 0; i < added; i++) CHECK(ccf_remove_hash(s.f, key(pinned + i)));
        rounds++;
    }
    atomic_store(&s.stop, true);
    for (int t = 0; t < READERS; t++) CHECK(pthread_join(threads[t], NULL) == 0);
    ccf_filter_stats stats;
    CHECK(ccf_stats(s.f, &stats, sizeof stats) == CCF_OK);
    printf("  threads, %zu buckets, flags %u: %lu churn rounds, %llu relocations, %lu inline lookups, %lu misses\n",
           (size_t)stats.bucket_count, flags, rounds, (unsigned long long)stats.relocations, atomic_load(&s.lookups),
           atomic_load(&s.misses));
    CHECK(stats.relocations > 0);
    CHECK(atomic_load(&s.lookups) > 0);
    CHECK(atomic_load(&s.misses) == 0);
    ccf_free(s.f);
}

struct bumper {
    uint64_t *word;
    atomic_bool stop;
};

static void *bump_version(void *arg) {
    struct bumper *b = arg;
    while (!atomic_load_explicit(&b->stop, memory_order_relaxed))
        __atomic_fetch_add(b->word, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* The inline lookup answers from the view's memory while the version
 * stays, and from the library when it changed. The decoy view's buckets
 * are empty, so it answers false for a key the filter holds; with its
 * version words bumped by another thread, some lookups see a change, and
 * only the library's answer (true) can come back. A lookup that skipped
 * the version check would never answer true. */
static void test_fallback(uint32_t flags) {
    ccf_filter *f = NULL;
    CHECK(ccf_new_with_flags(1000, 0.0, 16, &SEED, flags, &f) == CCF_OK);
    CHECK(ccf_insert_hash(f, key(1)) == CCF_OK);
    const ccf_view real = ccf_view_v2(f);
    CHECK(real.inline_lookup == inline_kind(flags));
    uint64_t *buckets = calloc(real.bucket_count, sizeof *buckets);
    uint64_t *versions = calloc(real.version_mask + 1, sizeof *versions);
    CHECK(buckets != NULL && versions != NULL);
    ccf_view decoy = real;
    decoy.buckets = buckets;
    decoy.versions = versions;
    /* The version word of key(1)'s pair, the only one bumped. */
    ccf_inline_location loc = ccf_inline_locate(&real, key(1));
    struct bumper b = {versions + (((loc.i1 ^ loc.i2) >> 1) & real.version_mask), false};
    CHECK(ccf_view_contains_hash(&real, key(1)));
    CHECK(!ccf_view_contains_hash(&decoy, key(1)));
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, bump_version, &b) == 0);
    unsigned long tries = 0, library = 0;
    /* Ends at the first change seen: a few thousand lookups usually, but
     * two threads sharing a busy core may need seconds. */
    double end = now() + 20.0;
    while (library == 0 && now() < end)
        for (int i = 0; i < 1000; i++, tries++) library += ccf_view_contains_hash(&decoy, key(1));
    atomic_store(&b.stop, true);
    CHECK(pthread_join(thread, NULL) == 0);
    printf("  fallback, flags %u: %lu of %lu lookups saw the version change\n", flags, library, tries);
    CHECK(library > 0);
    free(buckets);
    free(versions);
    ccf_free(f);
}

static void test_threads(void) {
    /* About 12,300 slots: 9000 pinned keys, 3000 churned. */
    run_threads(11000, 9000, 3000, 0.4, 0);
    /* 22 buckets, 88 slots, filled by every churn round: it moves pinned keys
     * many times a millisecond, under readers of those 40 keys. */
    run_threads(56, 40, 48, 0.4, 0);
    run_threads(56, 40, 48, 0.4, CCF_UNIFORM_HASHES);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_agreement();
    printf("test view_agreement ... ok\n");
    test_version1_files(argv[1]);
    printf("test view_version1_files ... ok\n");
    test_fallback(0);
    test_fallback(CCF_UNIFORM_HASHES);
    printf("test view_fallback ... ok\n");
    test_threads();
    printf("test view_threads ... ok\n");
    printf("test_view: 4 passed, 0 failed (%lu checks)\n", checks);
    return 0;
}
