/*
 * Tests of the C API of timed filters (ccf_timed_*), built by
 * scripts/test-c.sh with AddressSanitizer and UndefinedBehaviorSanitizer:
 * on a host clock, a key is found for its whole time to live and is gone
 * one generation length after it; refresh; saving and loading keep the
 * schedule (a key whose time ran out while saved is gone on load); the
 * system clock (a key inserted now is found; the host's time is refused);
 * NULL and bad arguments (never a crash, *out untouched); and threads
 * inserting and re-checking keys while another moves the host clock.
 *
 *   test_timed TMP_DIR
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

#define SENTINEL ((ccf_timed *)(uintptr_t)0x71e)

static const uint64_t SEED = 42;
static const uint64_t START = 1700000000000ull; /* wall-clock ms */

/* A filter on a host clock starting at START. */
static ccf_timed *timed(uint64_t ttl_ms, uint32_t generations) {
    ccf_timed *f = NULL;
    CHECK_STATUS(ccf_timed_new(20000, ttl_ms, generations, 0.0, CCF_TIMED_HOST_CLOCK, START,
                               &SEED, &f),
                 CCF_OK);
    CHECK(f != NULL);
    return f;
}

static void lives_its_time_to_live(void) {
    ccf_timed *f = timed(60000, 6); /* steps of 10 s */
    CHECK(ccf_timed_time_to_live_ms(f) == 60000);
    CHECK_STATUS(ccf_timed_insert(f, "session-7", 9), CCF_OK);
    CHECK(ccf_timed_contains(f, "session-7", 9));
    CHECK_STATUS(ccf_timed_set_time(f, START + 59999), CCF_OK);
    CHECK(ccf_timed_contains(f, "session-7", 9));
    CHECK(ccf_timed_len(f) == 1);
    CHECK_STATUS(ccf_timed_set_time(f, START + 70000), CCF_OK);
    CHECK(!ccf_timed_contains(f, "session-7", 9));
    CHECK(ccf_timed_len(f) == 0);
    /* A refresh restarts the time to live. */
    CHECK_STATUS(ccf_timed_insert_hash(f, 99), CCF_OK);
    CHECK_STATUS(ccf_timed_set_time(f, START + 120000), CCF_OK);
    CHECK_STATUS(ccf_timed_insert_hash(f, 99), CCF_OK);
    CHECK_STATUS(ccf_timed_set_time(f, START + 175000), CCF_OK);
    CHECK(ccf_timed_contains_hash(f, 99));
    /* Batches: the clock read once. */
    uint64_t hashes[300];
    bool found[300];
    for (int i = 0; i < 300; i++) hashes[i] = 1000 + (uint64_t)i;
    size_t inserted = 0;
    CHECK_STATUS(ccf_timed_insert_hash_batch(f, hashes, 300, &inserted), CCF_OK);
    CHECK(inserted == 300);
    ccf_timed_contains_hash_batch(f, hashes, 300, found);
    for (int i = 0; i < 300; i++) CHECK(found[i]);
    /* Bursts of up to 64: a hit mask, as the batch answers. */
    CHECK(ccf_timed_contains_hash_burst(f, hashes, 64) == UINT64_MAX);
    CHECK(ccf_timed_contains_hash_burst(f, hashes, 5) == 0x1f);
    CHECK(ccf_timed_contains_hash_burst(f, hashes, 65) == 0);
    CHECK(ccf_timed_contains_hash_burst(NULL, hashes, 5) == 0);
    uint64_t mixed[3] = {hashes[0], 424242, hashes[2]};
    CHECK((ccf_timed_contains_hash_burst(f, mixed, 3) & 0x5) == 0x5);
    const void *keys[2] = {"early", "later"};
    CHECK_STATUS(ccf_timed_insert(f, "early", 5), CCF_OK);
    CHECK((ccf_timed_contains_burst(f, keys, 5, 2) & 1) == 1);
    CHECK(ccf_timed_contains_burst(f, NULL, 5, 2) == 0);
    CHECK_STATUS(ccf_timed_set_time(f, START + 250000), CCF_OK);
    CHECK(ccf_timed_contains_hash_burst(f, hashes, 64) != UINT64_MAX);
    ccf_timed_contains_hash_batch(f, hashes, 300, found);
    size_t still = 0;
    for (int i = 0; i < 300; i++) still += found[i];
    CHECK(still <= 3); /* false positives only */
    ccf_timed_free(f);
}

static void saving_keeps_the_schedule(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/timed.ccf", dir);
    ccf_timed *f = timed(60000, 6);
    CHECK_STATUS(ccf_timed_insert(f, "early", 5), CCF_OK);
    CHECK_STATUS(ccf_timed_set_time(f, START + 30000), CCF_OK);
    CHECK_STATUS(ccf_timed_insert(f, "late", 4), CCF_OK);
    CHECK_STATUS(ccf_timed_save(f, path), CCF_OK);
    ccf_timed_free(f);
    /* Down for 40 s: "early" (70 s old) is gone on load, "late" is not. */
    ccf_timed *back = SENTINEL;
    CHECK_STATUS(ccf_timed_load(path, CCF_TIMED_HOST_CLOCK, START + 70000, &back), CCF_OK);
    CHECK(!ccf_timed_contains(back, "early", 5));
    CHECK(ccf_timed_contains(back, "late", 4));
    CHECK_STATUS(ccf_timed_set_time(back, START + 100000), CCF_OK);
    CHECK(!ccf_timed_contains(back, "late", 4));
    ccf_timed_free(back);
    /* On the system clock, the 2023 epoch's keys are long gone. */
    CHECK_STATUS(ccf_timed_load(path, 0, 0, &back), CCF_OK);
    CHECK(!ccf_timed_contains(back, "late", 4));
    ccf_timed_free(back);
    /* Damaged and foreign files are refused, *out untouched. */
    FILE *file = fopen(path, "r+b");
    CHECK(file != NULL);
    CHECK(fputc('X', file) != EOF);
    CHECK(fclose(file) == 0);
    back = SENTINEL;
    CHECK_STATUS(ccf_timed_load(path, CCF_TIMED_HOST_CLOCK, START, &back), CCF_CORRUPT);
    CHECK(back == SENTINEL);
    snprintf(path, sizeof path, "%s/no-such-file.ccf", dir);
    CHECK_STATUS(ccf_timed_load(path, 0, 0, &back), CCF_IO_ERROR);
    CHECK(back == SENTINEL);
}

static void the_system_clock(void) {
    ccf_timed *f = NULL;
    CHECK_STATUS(ccf_timed_new(1000, 3600000, 0, 0.0, 0, 0, NULL, &f), CCF_OK);
    CHECK_STATUS(ccf_timed_insert(f, "k", 1), CCF_OK);
    CHECK(ccf_timed_contains(f, "k", 1));
    CHECK_STATUS(ccf_timed_set_time(f, 5), CCF_INVALID_ARGUMENT);
    ccf_timed_free(f);
}

static void bad_arguments(void) {
    ccf_timed *f = SENTINEL;
    CHECK_STATUS(ccf_timed_new(100, 1000, 4, 0.0, 0, 0, NULL, NULL), CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_timed_new(100, 1000, 4, 0.0, 7, 0, NULL, &f), CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_timed_new(100, 0, 4, 0.0, 0, 0, NULL, &f), CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_timed_new(100, 3, 4, 0.0, 0, 0, NULL, &f), CCF_INVALID_ARGUMENT);
    /* 252 steps (a window of 253) is the longest; 40 at a rate of 1e-8 is
     * more than its tags count (4 at most). */
    CHECK_STATUS(ccf_timed_new(100, 60000, 253, 0.0, 0, 0, NULL, &f), CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_timed_new(100, 60000, 40, 1e-8, 0, 0, NULL, &f), CCF_INVALID_ARGUMENT);
    ccf_timed *wide = NULL; /* the longest window, in 32-bit slots */
    CHECK_STATUS(ccf_timed_new(1000, 60000, 252, 1e-6, 0, 0, NULL, &wide), CCF_OK);
    CHECK_STATUS(ccf_timed_insert(wide, "k", 1), CCF_OK);
    CHECK(ccf_timed_contains(wide, "k", 1) && ccf_timed_time_to_live_ms(wide) >= 60000);
    ccf_timed_free(wide);
    CHECK_STATUS(ccf_timed_new(100, 60000, 4, 1.5, 0, 0, NULL, &f), CCF_INVALID_ARGUMENT);
    CHECK(f == SENTINEL);
    CHECK_STATUS(ccf_timed_insert(NULL, "k", 1), CCF_INVALID_ARGUMENT);
    CHECK(!ccf_timed_contains(NULL, "k", 1));
    CHECK_STATUS(ccf_timed_set_time(NULL, 1), CCF_INVALID_ARGUMENT);
    CHECK(ccf_timed_len(NULL) == 0);
    CHECK(ccf_timed_time_to_live_ms(NULL) == 0);
    CHECK_STATUS(ccf_timed_save(NULL, "x"), CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_timed_load("x", 9, 0, &f), CCF_INVALID_ARGUMENT);
    CHECK(f == SENTINEL);
    ccf_timed_free(NULL);
}

/* Writers insert their own keys and re-check recent ones while a clock
 * thread moves the host's time: a key must be found whenever the time
 * read after the lookup is within its time to live from the time read
 * before its insert. */
enum { WRITERS = 3, KEYS = 4000 };
static ccf_timed *shared;
static atomic_ullong host_now;
static atomic_int writers_done;
static const uint64_t TTL = 200;

static void *clock_thread(void *arg) {
    (void)arg;
    struct timespec pause = {0, 200000};
    for (int i = 0; i < 50000 && atomic_load(&writers_done) < WRITERS; i++) {
        uint64_t now = atomic_fetch_add(&host_now, 1) + 1;
        CHECK_STATUS(ccf_timed_set_time(shared, now), CCF_OK);
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static void *writer_thread(void *arg) {
    uint64_t t = (uint64_t)(uintptr_t)arg;
    static _Thread_local uint64_t at[KEYS];
    for (uint64_t i = 0; i < KEYS; i++) {
        uint64_t key = t << 32 | i;
        at[i] = atomic_load(&host_now);
        CHECK_STATUS(ccf_timed_insert_hash(shared, key), CCF_OK);
        for (uint64_t back = 0; back < 8 && back * 97 <= i; back++) {
            uint64_t j = i - back * 97, old = t << 32 | j;
            bool found = ccf_timed_contains_hash(shared, old);
            /* The filter's clock only moves forward from host_now's value. */
            if (atomic_load(&host_now) < at[j] + TTL) CHECK(found);
        }
    }
    atomic_fetch_add(&writers_done, 1);
    return NULL;
}

static void threads_beside_a_moving_clock(void) {
    shared = timed(TTL, 4);
    atomic_store(&host_now, START);
    pthread_t clock, writers[WRITERS];
    CHECK(pthread_create(&clock, NULL, clock_thread, NULL) == 0);
    for (uintptr_t t = 0; t < WRITERS; t++)
        CHECK(pthread_create(&writers[t], NULL, writer_thread, (void *)t) == 0);
    for (int t = 0; t < WRITERS; t++) CHECK(pthread_join(writers[t], NULL) == 0);
    CHECK(pthread_join(clock, NULL) == 0);
    ccf_timed_free(shared);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_timed TMP_DIR\n");
        return 2;
    }
    lives_its_time_to_live();
    saving_keeps_the_schedule(argv[1]);
    the_system_clock();
    bad_arguments();
    threads_beside_a_moving_clock();
    printf("test_timed: %lu checks passed\n", (unsigned long)atomic_load(&checks));
    return 0;
}
