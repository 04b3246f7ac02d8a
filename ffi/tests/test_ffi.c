/*
 * Tests of the C API, from C: every function, every status, NULL arguments,
 * save/load, files written by Rust, the golden files of tests/data, and
 * threads. scripts/test-c.sh builds this file against the static and the
 * shared library (with AddressSanitizer and UBSan) and runs it as
 *
 *   test_ffi RUST_FILE C_FILE GOLDEN_DIR TMP_DIR
 *
 * RUST_FILE: written by `cargo run -p concurrent-cuckoo-ffi --example
 * interop -- write RUST_FILE` (the interop filter, built by Rust);
 * C_FILE: where this program saves the same filter built from C, for
 * `interop -- check C_FILE`; GOLDEN_DIR: tests/data; TMP_DIR: an empty
 * scratch directory.
 *
 * Every check that fails prints its file, line and expression and exits
 * with status 1.
 */
#define _POSIX_C_SOURCE 200809L

#include "concurrent_cuckoo.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Counted from every thread: atomic, so `checks++` is one atomic add. */
static atomic_ulong checks;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        checks++;                                                                    \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

#define CHECK_STATUS(expr, want)                                                       \
    do {                                                                               \
        ccf_status got_ = (expr), want_ = (want);                                      \
        checks++;                                                                      \
        if (got_ != want_) {                                                           \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %s = %d (%s)\n",     \
                    __FILE__, __LINE__, #expr, (int)got_, ccf_status_message(got_),    \
                    #want, (int)want_, ccf_status_message(want_));                     \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

/* A pointer no call may write: *out must keep it on every error. */
#define SENTINEL ((ccf_filter *)(uintptr_t)0x5e47)

static const char *rust_file, *c_file, *golden_dir, *tmp_dir;

static uint64_t fmix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static char *path_in(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    CHECK(p != NULL);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* The whole file, or NULL if it cannot be read. */
static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    unsigned char *buf = malloc(cap);
    CHECK(buf != NULL);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            CHECK(buf != NULL);
        }
    }
    CHECK(!ferror(f));
    fclose(f);
    *len = n;
    return buf;
}

static void write_file(const char *path, const unsigned char *bytes, size_t len) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(fwrite(bytes, 1, len, f) == len);
    CHECK(fclose(f) == 0);
}

static void key_text(char *buf, size_t cap, const char *prefix, unsigned i) {
    snprintf(buf, cap, "%s-%u", prefix, i);
}

/* ---------------------------------------------------------------------- */

static void test_version_and_messages(void) {
    const char *v = ccf_version();
    CHECK(v != NULL && strlen(v) >= 5 && strchr(v, '.') != NULL);
    const char *b = ccf_probe_backend();
    CHECK(b != NULL);
    CHECK(!strcmp(b, "sse2") || !strcmp(b, "sse2+avx2") || !strcmp(b, "neon") ||
          !strcmp(b, "portable"));

    const ccf_status all[] = {CCF_OK,          CCF_FULL,           CCF_TOO_MANY_DUPLICATES,
                              CCF_INVALID_ARGUMENT, CCF_ALLOCATION_FAILED, CCF_IO_ERROR,
                              CCF_CORRUPT,     CCF_INTERNAL_ERROR};
    const size_t count = sizeof all / sizeof all[0];
    CHECK(CCF_OK == 0);
    for (size_t i = 0; i < count; i++) {
        const char *m = ccf_status_message(all[i]);
        CHECK(m != NULL && strlen(m) > 0);
        CHECK(strcmp(m, "unknown status") != 0);
        /* A static string: the same pointer every time. */
        CHECK(m == ccf_status_message(all[i]));
        for (size_t j = 0; j < i; j++) CHECK(strcmp(m, ccf_status_message(all[j])) != 0);
    }
    CHECK(!strcmp(ccf_status_message(CCF_OK), "ok"));
    /* Values outside the enum are answered, not trusted. */
    CHECK(!strcmp(ccf_status_message((ccf_status)count), "unknown status"));
    CHECK(!strcmp(ccf_status_message((ccf_status)-1), "unknown status"));
    CHECK(!strcmp(ccf_status_message((ccf_status)1000000), "unknown status"));
}

static void test_new_and_options(void) {
    ccf_filter *f = NULL;
    CHECK_STATUS(ccf_new(1000, 0.0, &f), CCF_OK);
    CHECK(f != NULL);
    CHECK(ccf_fingerprint_bits(f) == 16);
    CHECK(ccf_capacity(f) >= 1000 && ccf_capacity(f) % 8 == 0);
    CHECK(ccf_len(f) == 0 && ccf_is_empty(f));
    CHECK(ccf_load_factor(f) == 0.0);
    CHECK(ccf_memory_usage(f) >= ccf_capacity(f) * 2);
    CHECK(ccf_false_positive_bound(f) == 8.0 / 65536.0);
    ccf_free(f);

    /* The rate picks the narrowest fingerprint whose bound 8/2^bits meets it. */
    const struct {
        double rate;
        uint32_t bits;
    } rates[] = {{0.05, 8}, {0.03125, 8}, {0.01, 16}, {1.3e-4, 16}, {1e-4, 32}, {2e-9, 32}};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        f = NULL;
        CHECK_STATUS(ccf_new(100, rates[i].rate, &f), CCF_OK);
        CHECK(ccf_fingerprint_bits(f) == rates[i].bits);
        CHECK(ccf_false_positive_bound(f) <= rates[i].rate);
        ccf_free(f);
    }

    /* Bad parameters: CCF_INVALID_ARGUMENT and *out untouched. */
    const double bad_rates[] = {1.0, 1.5, -0.5, 1e-12, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad_rates / sizeof bad_rates[0]; i++) {
        f = SENTINEL;
        CHECK_STATUS(ccf_new(100, bad_rates[i], &f), CCF_INVALID_ARGUMENT);
        CHECK(f == SENTINEL);
    }
    f = SENTINEL;
    CHECK_STATUS(ccf_new(SIZE_MAX, 0.0, &f), CCF_INVALID_ARGUMENT);
    CHECK(f == SENTINEL);
    CHECK_STATUS(ccf_new(100, 0.0, NULL), CCF_INVALID_ARGUMENT);
    /* -0.0 compares equal to 0: the default. */
    f = NULL;
    CHECK_STATUS(ccf_new(100, -0.0, &f), CCF_OK);
    CHECK(ccf_fingerprint_bits(f) == 16);
    ccf_free(f);
    /* Capacity 0 is a valid (tiny) filter. */
    f = NULL;
    CHECK_STATUS(ccf_new(0, 0.0, &f), CCF_OK);
    CHECK(ccf_capacity(f) == 8);
    CHECK_STATUS(ccf_insert(f, "x", 1), CCF_OK);
    CHECK(ccf_contains(f, "x", 1));
    ccf_free(f);

    /* Options: explicit widths, invalid widths, widths too short for the rate. */
    const uint32_t widths[] = {8, 16, 32};
    for (size_t i = 0; i < 3; i++) {
        f = NULL;
        CHECK_STATUS(ccf_new_with_options(500, 0.0, widths[i], NULL, &f), CCF_OK);
        CHECK(ccf_fingerprint_bits(f) == widths[i]);
        CHECK_STATUS(ccf_insert(f, "k", 1), CCF_OK);
        CHECK(ccf_contains(f, "k", 1));
        ccf_free(f);
    }
    const uint32_t bad_widths[] = {1, 4, 12, 24, 64, UINT32_MAX};
    for (size_t i = 0; i < sizeof bad_widths / sizeof bad_widths[0]; i++) {
        f = SENTINEL;
        CHECK_STATUS(ccf_new_with_options(500, 0.0, bad_widths[i], NULL, &f),
                     CCF_INVALID_ARGUMENT);
        CHECK(f == SENTINEL);
    }
    f = SENTINEL;
    CHECK_STATUS(ccf_new_with_options(500, 1e-4, 8, NULL, &f), CCF_INVALID_ARGUMENT);
    CHECK(f == SENTINEL);
    f = NULL;
    CHECK_STATUS(ccf_new_with_options(500, 0.05, 32, NULL, &f), CCF_OK); /* wider is fine */
    CHECK(ccf_fingerprint_bits(f) == 32);
    ccf_free(f);
    CHECK_STATUS(ccf_new_with_options(500, 0.0, 16, NULL, NULL), CCF_INVALID_ARGUMENT);

    /* A fixed seed gives identical filters (identical saved files); other
     * seeds, different ones. */
    uint64_t seed = 42, other = 43;
    ccf_filter *a = NULL, *b = NULL, *c = NULL;
    CHECK_STATUS(ccf_new_with_options(2000, 0.0, 16, &seed, &a), CCF_OK);
    CHECK_STATUS(ccf_new_with_options(2000, 0.0, 16, &seed, &b), CCF_OK);
    CHECK_STATUS(ccf_new_with_options(2000, 0.0, 16, &other, &c), CCF_OK);
    char key[32];
    for (unsigned i = 0; i < 1500; i++) {
        key_text(key, sizeof key, "seeded", i);
        CHECK_STATUS(ccf_insert(a, key, strlen(key)), CCF_OK);
        CHECK_STATUS(ccf_insert(b, key, strlen(key)), CCF_OK);
        CHECK_STATUS(ccf_insert(c, key, strlen(key)), CCF_OK);
    }
    char *pa = path_in(tmp_dir, "seed-a.ccf"), *pb = path_in(tmp_dir, "seed-b.ccf"),
         *pc = path_in(tmp_dir, "seed-c.ccf");
    CHECK_STATUS(ccf_save(a, pa), CCF_OK);
    CHECK_STATUS(ccf_save(b, pb), CCF_OK);
    CHECK_STATUS(ccf_save(c, pc), CCF_OK);
    size_t la, lb, lc;
    unsigned char *ba = read_file(pa, &la), *bb = read_file(pb, &lb), *bc = read_file(pc, &lc);
    CHECK(ba && bb && bc && la == lb && la == lc);
    CHECK(memcmp(ba, bb, la) == 0);
    CHECK(memcmp(ba, bc, la) != 0);
    free(ba), free(bb), free(bc), free(pa), free(pb), free(pc);
    ccf_free(a), ccf_free(b), ccf_free(c);
}

/* The kernel refuses a single anonymous mapping larger than RAM plus swap
 * unless overcommit is set to "always" (1). Returns 1 when a 64 GiB table
 * must fail to allocate here, 0 when it might succeed. */
static int big_allocation_must_fail(uint64_t bytes) {
    FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
    if (!f) return 0;
    int mode = -1;
    int ok = fscanf(f, "%d", &mode) == 1;
    fclose(f);
    if (!ok || mode == 1) return 0;
    f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    uint64_t total_kib = 0, v;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "MemTotal: %" SCNu64, &v) == 1 ||
            sscanf(line, "SwapTotal: %" SCNu64, &v) == 1)
            total_kib += v;
    }
    fclose(f);
    return total_kib > 0 && total_kib * 1024 < bytes;
}

static void test_allocation_failure(void) {
#if SIZE_MAX > 0xFFFFFFFFu
    /* 15e9 items with 32-bit fingerprints: about 4.2e9 buckets of 16
     * bytes, 62 GiB; just under the 2^32-bucket limit, so not a
     * capacity overflow. */
    const uint64_t bytes = 62ull << 30;
    int must_fail = big_allocation_must_fail(bytes);
    ccf_filter *f = SENTINEL;
    ccf_status s = ccf_new_with_options(15000000000ull, 0.0, 32, NULL, &f);
    if (must_fail) {
        CHECK_STATUS(s, CCF_ALLOCATION_FAILED);
        CHECK(f == SENTINEL);
    } else {
        printf("  note: this machine may map 62 GiB (overcommit), so allocation failure "
               "is not forced; ccf_new returned %s\n",
               ccf_status_message(s));
        CHECK(s == CCF_OK || s == CCF_ALLOCATION_FAILED);
        if (s == CCF_OK) ccf_free(f);
    }
    /* A capacity past the 2^32-bucket limit is an argument error, not an
     * allocation failure. */
    f = SENTINEL;
    CHECK_STATUS(ccf_new_with_options(20000000000ull, 0.0, 32, NULL, &f),
                 CCF_INVALID_ARGUMENT);
    CHECK(f == SENTINEL);

    /* A file whose valid header claims that table: ccf_load must fail to
     * allocate it (or, where it can, find the body missing). */
    unsigned char h[72] = {0x89, 'C', 'U', 'C', 'K', 'O', 'O', '\n', 2, 0, 32, 4, 5};
    uint64_t buckets = 1ull << 32;
    for (int i = 0; i < 8; i++) h[16 + i] = (unsigned char)(buckets >> (8 * i));
    h[32] = 1; /* the default hasher's id */
    char *p = path_in(tmp_dir, "huge-header.ccf");
    write_file(p, h, sizeof h);
    f = SENTINEL;
    s = ccf_load(p, &f);
    if (big_allocation_must_fail(64ull << 30)) {
        CHECK_STATUS(s, CCF_ALLOCATION_FAILED);
    } else {
        CHECK(s == CCF_ALLOCATION_FAILED || s == CCF_CORRUPT);
    }
    CHECK(f == SENTINEL);
    free(p);
#endif
}

static void test_byte_keys(void) {
    ccf_filter *f = NULL;
    CHECK_STATUS(ccf_new(10000, 0.0, &f), CCF_OK);
    unsigned char key[300];
    /* Lengths 0..299 cross the hasher's 16- and 128-byte paths. */
    for (size_t len = 0; len < sizeof key; len++) {
        for (size_t j = 0; j < len; j++) key[j] = (unsigned char)(j * 31 + len);
        CHECK_STATUS(ccf_insert(f, key, len), CCF_OK);
    }
    CHECK(ccf_len(f) == sizeof key);
    CHECK(!ccf_is_empty(f));
    for (size_t len = 0; len < sizeof key; len++) {
        for (size_t j = 0; j < len; j++) key[j] = (unsigned char)(j * 31 + len);
        CHECK(ccf_contains(f, key, len));
    }
    /* The empty key: NULL or not, it is the same key (inserted above). */
    CHECK(ccf_contains(f, NULL, 0));
    CHECK(ccf_contains(f, "", 0));
    CHECK(ccf_contains(f, "ignored", 0));
    /* NULL with a length is refused, never read. */
    CHECK_STATUS(ccf_insert(f, NULL, 1), CCF_INVALID_ARGUMENT);
    CHECK(!ccf_contains(f, NULL, 5));
    CHECK(!ccf_remove(f, NULL, 5));
    CHECK(ccf_len(f) == sizeof key);

    /* Absent keys: false positives stay rare (bound 8/2^16 per lookup). */
    char text[32];
    unsigned fp = 0;
    for (unsigned i = 0; i < 20000; i++) {
        key_text(text, sizeof text, "absent", i);
        fp += ccf_contains(f, text, strlen(text));
    }
    CHECK(fp <= 10);

    /* Remove: one copy each; a second remove finds nothing. */
    for (size_t len = 0; len < sizeof key; len += 2) {
        for (size_t j = 0; j < len; j++) key[j] = (unsigned char)(j * 31 + len);
        CHECK(ccf_remove(f, key, len));
    }
    CHECK(ccf_len(f) == sizeof key / 2);
    unsigned still = 0;
    for (size_t len = 0; len < sizeof key; len++) {
        for (size_t j = 0; j < len; j++) key[j] = (unsigned char)(j * 31 + len);
        if (len % 2) {
            CHECK(ccf_contains(f, key, len));
        } else {
            still += ccf_contains(f, key, len); /* only by a false positive */
        }
    }
    CHECK(still <= 2);

    /* A multiset of at most 8 copies. */
    ccf_filter *d = NULL;
    CHECK_STATUS(ccf_new(100, 0.0, &d), CCF_OK);
    for (int i = 0; i < 8; i++) CHECK_STATUS(ccf_insert(d, "dup", 3), CCF_OK);
    CHECK_STATUS(ccf_insert(d, "dup", 3), CCF_TOO_MANY_DUPLICATES);
    CHECK(ccf_len(d) == 8); /* the refused insert changed nothing */
    for (int i = 0; i < 8; i++) CHECK(ccf_remove(d, "dup", 3));
    CHECK(!ccf_remove(d, "dup", 3));
    CHECK(!ccf_contains(d, "dup", 3));
    CHECK(ccf_is_empty(d));

    /* insert_unique: set semantics; `added` reports, and may be NULL. */
    bool added = false;
    CHECK_STATUS(ccf_insert_unique(d, "u", 1, &added), CCF_OK);
    CHECK(added);
    added = true;
    CHECK_STATUS(ccf_insert_unique(d, "u", 1, &added), CCF_OK);
    CHECK(!added);
    CHECK_STATUS(ccf_insert_unique(d, "u", 1, NULL), CCF_OK);
    CHECK_STATUS(ccf_insert_unique(d, "v", 1, NULL), CCF_OK);
    CHECK(ccf_len(d) == 2);
    added = true;
    CHECK_STATUS(ccf_insert_unique(d, NULL, 3, &added), CCF_INVALID_ARGUMENT);
    CHECK(!added);
    /* A key that ccf_insert stored 8 times (in a filter of its own, so no
     * other key can hold a slot of its two buckets): insert_unique sees it
     * present. */
    ccf_filter *w = NULL;
    CHECK_STATUS(ccf_new(100, 0.0, &w), CCF_OK);
    for (int i = 0; i < 8; i++) CHECK_STATUS(ccf_insert(w, "w", 1), CCF_OK);
    added = true;
    CHECK_STATUS(ccf_insert_unique(w, "w", 1, &added), CCF_OK);
    CHECK(!added);
    ccf_free(w);
    CHECK_STATUS(ccf_insert(d, "w", 1), CCF_OK);

    /* clear */
    CHECK_STATUS(ccf_clear(d), CCF_OK);
    CHECK(ccf_is_empty(d) && !ccf_contains(d, "u", 1) && !ccf_contains(d, "w", 1));
    CHECK_STATUS(ccf_insert(d, "u", 1), CCF_OK); /* usable after clear */
    CHECK(ccf_contains(d, "u", 1));
    ccf_free(d);
    ccf_free(f);
}

static void test_hashes(void) {
    ccf_filter *f = NULL;
    CHECK_STATUS(ccf_new(10000, 0.0, &f), CCF_OK);
    for (uint64_t i = 0; i < 5000; i++) CHECK_STATUS(ccf_insert_hash(f, fmix64(i)), CCF_OK);
    CHECK(ccf_len(f) == 5000);
    for (uint64_t i = 0; i < 5000; i++) CHECK(ccf_contains_hash(f, fmix64(i)));
    unsigned fp = 0;
    for (uint64_t i = 5000; i < 25000; i++) fp += ccf_contains_hash(f, fmix64(i));
    CHECK(fp <= 10);
    for (uint64_t i = 0; i < 5000; i += 2) CHECK(ccf_remove_hash(f, fmix64(i)));
    CHECK(ccf_len(f) == 2500);
    for (uint64_t i = 1; i < 5000; i += 2) CHECK(ccf_contains_hash(f, fmix64(i)));

    uint64_t h = fmix64(1u << 30);
    for (int i = 0; i < 8; i++) CHECK_STATUS(ccf_insert_hash(f, h), CCF_OK);
    CHECK_STATUS(ccf_insert_hash(f, h), CCF_TOO_MANY_DUPLICATES);
    for (int i = 0; i < 8; i++) CHECK(ccf_remove_hash(f, h));
    CHECK(!ccf_remove_hash(f, h));

    bool added = false;
    CHECK_STATUS(ccf_insert_unique_hash(f, h, &added), CCF_OK);
    CHECK(added);
    CHECK_STATUS(ccf_insert_unique_hash(f, h, &added), CCF_OK);
    CHECK(!added);
    CHECK_STATUS(ccf_insert_unique_hash(f, h, NULL), CCF_OK);
    CHECK(ccf_len(f) == 2501);
    ccf_free(f);
}

/* Fill a small filter to its first refused insert: CCF_FULL, nothing lost. */
static void test_full(void) {
    ccf_filter *f = NULL;
    CHECK_STATUS(ccf_new(1000, 0.0, &f), CCF_OK);
    size_t slots = ccf_capacity(f);
    uint64_t n = 0;
    ccf_status s;
    while ((s = ccf_insert_hash(f, fmix64(n + 77))) == CCF_OK) {
        n++;
        CHECK(n <= slots);
    }
    CHECK_STATUS(s, CCF_FULL);
    CHECK(ccf_len(f) == n);
    CHECK(ccf_load_factor(f) > 0.85 && ccf_load_factor(f) <= 1.0);
    for (uint64_t i = 0; i < n; i++) CHECK(ccf_contains_hash(f, fmix64(i + 77)));
    /* Byte-key inserts into the full table fail the same way, and
     * insert_unique reports not added. */
    char key[32];
    unsigned full = 0;
    for (unsigned i = 0; i < 50; i++) {
        key_text(key, sizeof key, "more", i);
        bool added = true;
        ccf_status u = ccf_insert_unique(f, key, strlen(key), &added);
        CHECK(u == CCF_FULL || u == CCF_OK);
        if (u == CCF_FULL) {
            CHECK(!added);
            full++;
        }
    }
    CHECK(full > 0);
    ccf_free(f);
}

static void test_batches(void) {
    ccf_filter *f = NULL;
    CHECK_STATUS(ccf_new(10000, 0.0, &f), CCF_OK);
    enum { N = 200 }; /* more than one 64-key chunk, and a partial one */
    uint64_t hashes[N];
    bool out[N], want[N];
    for (unsigned i = 0; i < N; i++) {
        hashes[i] = fmix64(i + 1000);
        if (i % 3 == 0) CHECK_STATUS(ccf_insert_hash(f, hashes[i]), CCF_OK);
    }
    memset(out, 0xAA, sizeof out); /* not valid bools: must all be overwritten */
    ccf_contains_hash_batch(f, hashes, N, out);
    for (unsigned i = 0; i < N; i++) {
        want[i] = ccf_contains_hash(f, hashes[i]);
        CHECK(out[i] == want[i]);
        if (i % 3 == 0) CHECK(out[i]);
    }

    /* Byte keys, with the empty key, one invalid key and long keys. */
    char text[N][40];
    const void *keys[N];
    size_t lens[N];
    for (unsigned i = 0; i < N; i++) {
        key_text(text[i], sizeof text[i], i % 2 ? "batch-odd-key-with-a-longer-name" : "b", i);
        keys[i] = text[i];
        lens[i] = strlen(text[i]);
        if (i % 4 == 1) CHECK_STATUS(ccf_insert(f, keys[i], lens[i]), CCF_OK);
    }
    keys[70] = NULL, lens[70] = 0; /* the empty key: inserted below */
    keys[71] = NULL, lens[71] = 9; /* invalid: false */
    keys[129] = NULL, lens[129] = 1; /* invalid, in another chunk, was inserted */
    CHECK_STATUS(ccf_insert(f, NULL, 0), CCF_OK);
    memset(out, 0xAA, sizeof out);
    ccf_contains_batch(f, keys, lens, N, out);
    for (unsigned i = 0; i < N; i++) {
        bool single = ccf_contains(f, keys[i], lens[i]);
        CHECK(out[i] == single);
        if (i % 4 == 1 && i != 129) CHECK(out[i]);
    }
    CHECK(out[70] && !out[71] && !out[129]);

    /* NULL arguments: out set to false when there is an out, nothing
     * written (and no crash) otherwise; n == 0 does nothing. */
    memset(out, 1, sizeof out);
    ccf_contains_hash_batch(NULL, hashes, N, out);
    for (unsigned i = 0; i < N; i++) CHECK(!out[i]);
    memset(out, 1, sizeof out);
    ccf_contains_hash_batch(f, NULL, N, out);
    for (unsigned i = 0; i < N; i++) CHECK(!out[i]);
    ccf_contains_hash_batch(f, hashes, N, NULL);
    ccf_contains_hash_batch(NULL, NULL, N, NULL);
    memset(out, 1, sizeof out);
    ccf_contains_hash_batch(f, hashes, 0, out);
    ccf_contains_hash_batch(f, NULL, 0, out);
    CHECK(out[0]);

    memset(out, 1, sizeof out);
    ccf_contains_batch(f, NULL, lens, N, out);
    for (unsigned i = 0; i < N; i++) CHECK(!out[i]);
    memset(out, 1, sizeof out);
    ccf_contains_batch(f, keys, NULL, N, out);
    for (unsigned i = 0; i < N; i++) CHECK(!out[i]);
    memset(out, 1, sizeof out);
    ccf_contains_batch(NULL, keys, lens, N, out);
    for (unsigned i = 0; i < N; i++) CHECK(!out[i]);
    ccf_contains_batch(f, keys, lens, N, NULL);
    ccf_contains_batch(NULL, NULL, NULL, N, NULL);
    memset(out, 1, sizeof out);
    ccf_contains_batch(f, keys, lens, 0, out);
    CHECK(out[0]);
    ccf_free(f);
}

/* Every function given a NULL filter: an error or the documented value. */
static void test_null_filter(void) {
    bool added = true;
    ccf_free(NULL);
    CHECK_STATUS(ccf_insert(NULL, "k", 1), CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_insert(NULL, NULL, 0), CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_insert_unique(NULL, "k", 1, &added), CCF_INVALID_ARGUMENT);
    CHECK(!added);
    CHECK(!ccf_contains(NULL, "k", 1));
    CHECK(!ccf_remove(NULL, "k", 1));
    CHECK_STATUS(ccf_insert_hash(NULL, 1), CCF_INVALID_ARGUMENT);
    added = true;
    CHECK_STATUS(ccf_insert_unique_hash(NULL, 1, &added), CCF_INVALID_ARGUMENT);
    CHECK(!added);
    CHECK(!ccf_contains_hash(NULL, 1));
    CHECK(!ccf_remove_hash(NULL, 1));
    CHECK(ccf_len(NULL) == 0);
    CHECK(ccf_is_empty(NULL));
    CHECK(ccf_capacity(NULL) == 0);
    CHECK(ccf_load_factor(NULL) == 0.0);
    CHECK(ccf_memory_usage(NULL) == 0);
    CHECK(ccf_fingerprint_bits(NULL) == 0);
    CHECK(ccf_false_positive_bound(NULL) == 0.0);
    CHECK_STATUS(ccf_clear(NULL), CCF_INVALID_ARGUMENT);
    char *p = path_in(tmp_dir, "null.ccf");
    CHECK_STATUS(ccf_save(NULL, p), CCF_INVALID_ARGUMENT);
    CHECK(access(p, F_OK) != 0); /* nothing was created */
    free(p);
}

/* Saves `f` to `path` and returns the file's bytes. */
static unsigned char *save_and_read(const ccf_filter *f, const char *path, size_t *len) {
    CHECK_STATUS(ccf_save(f, path), CCF_OK);
    unsigned char *bytes = read_file(path, len);
    CHECK(bytes != NULL && *len > 72);
    return bytes;
}

static void check_load_refused(const char *path, ccf_status want) {
    ccf_filter *f = SENTINEL;
    CHECK_STATUS(ccf_load(path, &f), want);
    CHECK(f == SENTINEL);
}

static void test_save_load(void) {
    ccf_filter *f = NULL;
    CHECK_STATUS(ccf_new_with_options(3000, 0.0, 8, NULL, &f), CCF_OK);
    char key[32];
    for (unsigned i = 0; i < 2000; i++) {
        key_text(key, sizeof key, "saved", i);
        CHECK_STATUS(ccf_insert(f, key, strlen(key)), CCF_OK);
    }
    CHECK_STATUS(ccf_insert_hash(f, 12345), CCF_OK);
    char *path = path_in(tmp_dir, "round-trip.ccf");
    size_t len;
    unsigned char *bytes = save_and_read(f, path, &len);
    CHECK(len == 72 + ccf_capacity(f)); /* 8-bit fingerprints: a byte a slot */

    ccf_filter *g = NULL;
    CHECK_STATUS(ccf_load(path, &g), CCF_OK);
    CHECK(g != NULL && g != f);
    CHECK(ccf_len(g) == ccf_len(f) && ccf_len(g) == 2001);
    CHECK(ccf_capacity(g) == ccf_capacity(f));
    CHECK(ccf_fingerprint_bits(g) == 8);
    for (unsigned i = 0; i < 2000; i++) {
        key_text(key, sizeof key, "saved", i);
        CHECK(ccf_contains(g, key, strlen(key)));
    }
    CHECK(ccf_contains_hash(g, 12345));
    /* Same answers for absent keys too (same seed and table). */
    for (unsigned i = 0; i < 5000; i++) {
        key_text(key, sizeof key, "not-saved", i);
        CHECK(ccf_contains(g, key, strlen(key)) == ccf_contains(f, key, strlen(key)));
    }
    /* A loaded filter is a full filter: it saves to the same bytes... */
    char *again = path_in(tmp_dir, "round-trip-again.ccf");
    size_t len2;
    unsigned char *bytes2 = save_and_read(g, again, &len2);
    CHECK(len2 == len && memcmp(bytes, bytes2, len) == 0);
    free(bytes2);
    /* ...and takes writes. */
    CHECK_STATUS(ccf_insert(g, "after-load", 10), CCF_OK);
    CHECK(ccf_contains(g, "after-load", 10));

    /* Saving over an existing file replaces it, leaving no temporary file. */
    CHECK_STATUS(ccf_save(g, path), CCF_OK);
    ccf_filter *h = NULL;
    CHECK_STATUS(ccf_load(path, &h), CCF_OK);
    CHECK(ccf_len(h) == 2002 && ccf_contains(h, "after-load", 10));
    ccf_free(h);

    /* A path that is not UTF-8 is still a path on Unix. */
    char *odd = path_in(tmp_dir, "\xff\xfe-not-utf8.ccf");
    CHECK_STATUS(ccf_save(f, odd), CCF_OK);
    h = NULL;
    CHECK_STATUS(ccf_load(odd, &h), CCF_OK);
    CHECK(ccf_len(h) == 2001);
    ccf_free(h);
    free(odd);

    /* I/O errors. */
    char *missing = path_in(tmp_dir, "no-such-file.ccf");
    check_load_refused(missing, CCF_IO_ERROR);
    check_load_refused(tmp_dir, CCF_IO_ERROR); /* a directory */
    char *no_dir = path_in(tmp_dir, "no-such-dir/f.ccf");
    CHECK_STATUS(ccf_save(f, no_dir), CCF_IO_ERROR);
    CHECK_STATUS(ccf_save(f, tmp_dir), CCF_IO_ERROR); /* a directory: rename fails */
    CHECK_STATUS(ccf_save(f, "/"), CCF_IO_ERROR);     /* names no file */
    struct stat st;
    CHECK(stat(tmp_dir, &st) == 0 && S_ISDIR(st.st_mode));

    /* Argument errors. */
    CHECK_STATUS(ccf_save(f, NULL), CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_save(f, ""), CCF_INVALID_ARGUMENT);
    check_load_refused(NULL, CCF_INVALID_ARGUMENT);
    check_load_refused("", CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_load(path, NULL), CCF_INVALID_ARGUMENT);

    /* Corrupt files. */
    char *bad = path_in(tmp_dir, "bad.ccf");
    write_file(bad, (const unsigned char *)"", 0);
    check_load_refused(bad, CCF_CORRUPT); /* empty */
    write_file(bad, (const unsigned char *)"not a filter at all, just some text\n", 36);
    check_load_refused(bad, CCF_CORRUPT); /* bad magic */
    write_file(bad, bytes, 30);
    check_load_refused(bad, CCF_CORRUPT); /* truncated header */
    write_file(bad, bytes, len - 1);
    check_load_refused(bad, CCF_CORRUPT); /* truncated checksum */
    unsigned char *copy = malloc(len + 1);
    CHECK(copy != NULL);
    memcpy(copy, bytes, len);
    copy[len] = 0;
    write_file(bad, copy, len + 1);
    check_load_refused(bad, CCF_CORRUPT); /* a byte after the end */
    copy[72 + 100] ^= 0x10;
    write_file(bad, copy, len);
    check_load_refused(bad, CCF_CORRUPT); /* a flipped bit in the body */
    memcpy(copy, bytes, len);
    copy[8] = 3;
    write_file(bad, copy, len);
    check_load_refused(bad, CCF_CORRUPT); /* format version 3 (unknown) */
    memcpy(copy, bytes, len);
    copy[32] = 7;
    write_file(bad, copy, len);
    check_load_refused(bad, CCF_CORRUPT); /* another hasher */
    memcpy(copy, bytes, len);
    copy[len - 1] ^= 1;
    write_file(bad, copy, len);
    check_load_refused(bad, CCF_CORRUPT); /* checksum */
    /* The intact bytes still load (the checks above are about the damage). */
    write_file(bad, bytes, len);
    h = NULL;
    CHECK_STATUS(ccf_load(bad, &h), CCF_OK);
    ccf_free(h);

    free(copy), free(bad), free(missing), free(no_dir), free(again), free(bytes), free(path);
    ccf_free(g);
    ccf_free(f);
}

/* ---------------------------------------------------------------------- */
/* Interop with Rust: the filter of ffi/examples/interop.rs, built here. */

enum { INTEROP_TEXT = 2000, INTEROP_BINARY_MAX = 300, INTEROP_HASHES = 500 };
static const uint64_t INTEROP_SEED = 0x0123456789ABCDEFull;

static size_t interop_binary_key(unsigned char *buf, size_t len) {
    for (size_t j = 0; j < len; j++) buf[j] = (unsigned char)(j * 31 + len * 7 + 1);
    return len;
}

/* Builds the interop filter exactly as `build()` in interop.rs does. */
static ccf_filter *interop_build(void) {
    ccf_filter *f = NULL;
    CHECK_STATUS(ccf_new_with_options(10000, 0.0, 16, &INTEROP_SEED, &f), CCF_OK);
    char key[32];
    unsigned char bin[INTEROP_BINARY_MAX];
    for (unsigned i = 0; i < INTEROP_TEXT; i++) {
        key_text(key, sizeof key, "interop", i);
        CHECK_STATUS(ccf_insert(f, key, strlen(key)), CCF_OK);
    }
    for (size_t len = 0; len < INTEROP_BINARY_MAX; len++)
        CHECK_STATUS(ccf_insert(f, bin, interop_binary_key(bin, len)), CCF_OK);
    for (uint64_t i = 0; i < INTEROP_HASHES; i++)
        CHECK_STATUS(ccf_insert_hash(f, fmix64(i + 1)), CCF_OK);
    for (unsigned i = 0; i < INTEROP_TEXT; i += 5) {
        key_text(key, sizeof key, "interop", i);
        CHECK(ccf_remove(f, key, strlen(key)));
    }
    return f;
}

static void interop_check_answers(const ccf_filter *f) {
    CHECK(ccf_len(f) == INTEROP_TEXT - INTEROP_TEXT / 5 + INTEROP_BINARY_MAX + INTEROP_HASHES);
    CHECK(ccf_fingerprint_bits(f) == 16);
    char key[32];
    for (unsigned i = 0; i < INTEROP_TEXT; i++) {
        if (i % 5 == 0) continue;
        key_text(key, sizeof key, "interop", i);
        CHECK(ccf_contains(f, key, strlen(key)));
    }
    unsigned char bin[INTEROP_BINARY_MAX];
    for (size_t len = 0; len < INTEROP_BINARY_MAX; len++)
        CHECK(ccf_contains(f, bin, interop_binary_key(bin, len)));
    for (uint64_t i = 0; i < INTEROP_HASHES; i++) CHECK(ccf_contains_hash(f, fmix64(i + 1)));
}

static void test_rust_interop(void) {
    /* Rust wrote the filter: C loads it and finds every key. */
    ccf_filter *from_rust = NULL;
    CHECK_STATUS(ccf_load(rust_file, &from_rust), CCF_OK);
    interop_check_answers(from_rust);

    /* C builds the same filter with the same seed: since C byte keys hash
     * as Rust &[u8] keys, the table is identical, byte for byte. */
    ccf_filter *mine = interop_build();
    interop_check_answers(mine);
    size_t rust_len, c_len;
    unsigned char *rust_bytes = read_file(rust_file, &rust_len);
    unsigned char *c_bytes = save_and_read(mine, c_file, &c_len);
    CHECK(rust_bytes != NULL);
    CHECK(rust_len == c_len);
    CHECK(memcmp(rust_bytes, c_bytes, c_len) == 0);
    /* c_file stays for `interop -- check`. */
    free(rust_bytes), free(c_bytes);
    ccf_free(mine);
    ccf_free(from_rust);
}

/* The golden files of tests/data (encoded by Rust, pinned by
 * tests/golden.rs) hold 20 byte-slice keys: byte b of key i is
 * (b * 7 + i) mod 256, for b < 13 * i. */
static void test_golden_files(void) {
    const char *names[] = {"v1-fp8", "v1-fp16", "v1-fp32"};
    const uint32_t bits[] = {8, 16, 32};
    for (int g = 0; g < 3; g++) {
        char name[64];
        snprintf(name, sizeof name, "%s.txt", names[g]);
        char *txt = path_in(golden_dir, name);
        FILE *t = fopen(txt, "r");
        CHECK(t != NULL);
        char line[256];
        size_t want_len = 0;
        while (fgets(line, sizeof line, t))
            if (sscanf(line, "len %zu", &want_len) == 1) break;
        fclose(t);
        CHECK(want_len > 0);

        snprintf(name, sizeof name, "%s.bin", names[g]);
        char *bin = path_in(golden_dir, name);
        ccf_filter *f = NULL;
        CHECK_STATUS(ccf_load(bin, &f), CCF_OK);
        CHECK(ccf_fingerprint_bits(f) == bits[g]);
        CHECK(ccf_len(f) == want_len);
        unsigned char key[13 * 20];
        const void *keys[20];
        size_t lens[20];
        static unsigned char storage[20][13 * 20];
        for (unsigned i = 0; i < 20; i++) {
            for (unsigned b = 0; b < 13 * i; b++) key[b] = (unsigned char)(b * 7 + i);
            CHECK(ccf_contains(f, key, 13 * i));
            memcpy(storage[i], key, 13 * i);
            keys[i] = storage[i];
            lens[i] = 13 * i;
        }
        bool out[20];
        ccf_contains_batch(f, keys, lens, 20, out);
        for (unsigned i = 0; i < 20; i++) CHECK(out[i]);
        ccf_free(f);
        free(txt), free(bin);
    }
}

/* ---------------------------------------------------------------------- */
/* Threads: readers check keys inserted before they start while writers
 * insert and remove their own keys (moving fingerprints around), one
 * thread saves a snapshot, and two threads race insert_unique on one key
 * set. Exact expectations: zero misses, exact lengths. */

enum {
    BASE_KEYS = 40000,
    WRITERS = 2,
    WRITER_KEYS = 50000,
    READERS = 2,
    UNIQUE_THREADS = 2,
    UNIQUE_KEYS = 5000
};

struct shared {
    ccf_filter *f;
    pthread_barrier_t start;
    atomic_int writers_left;
    atomic_ulong misses;
    atomic_ulong reader_passes;
    atomic_ulong overlapping_passes; /* started while a writer ran */
    const char *snapshot;
    bool unique_added[UNIQUE_THREADS][UNIQUE_KEYS];
};

struct worker {
    struct shared *s;
    unsigned id;
};

static void base_key(char *buf, size_t cap, unsigned i) { key_text(buf, cap, "base", i); }

static void *reader(void *arg) {
    struct worker *w = arg;
    struct shared *s = w->s;
    pthread_barrier_wait(&s->start);
    char text[32][32];
    const void *keys[32];
    size_t lens[32];
    bool out[32];
    unsigned long misses = 0;
    int last = 0;
    /* Full passes over the base keys until one pass starts after every
     * writer has finished (so at least one pass overlaps them, and one
     * sees the final state). */
    while (!last) {
        last = atomic_load(&s->writers_left) == 0;
        if (!last) atomic_fetch_add(&s->overlapping_passes, 1);
        for (unsigned i = 0; i < BASE_KEYS; i += 32) {
            unsigned n = BASE_KEYS - i < 32 ? BASE_KEYS - i : 32;
            for (unsigned j = 0; j < n; j++) {
                base_key(text[j], sizeof text[j], i + j);
                keys[j] = text[j];
                lens[j] = strlen(text[j]);
            }
            if ((i / 32 + w->id) % 2) {
                ccf_contains_batch(s->f, keys, lens, n, out);
                for (unsigned j = 0; j < n; j++) misses += !out[j];
            } else {
                for (unsigned j = 0; j < n; j++) misses += !ccf_contains(s->f, keys[j], lens[j]);
            }
        }
        atomic_fetch_add(&s->reader_passes, 1);
    }
    atomic_fetch_add(&s->misses, misses);
    return NULL;
}

static void writer_key(char *buf, size_t cap, unsigned writer, unsigned i) {
    snprintf(buf, cap, "writer-%u-%u", writer, i);
}

static void *writer(void *arg) {
    struct worker *w = arg;
    struct shared *s = w->s;
    pthread_barrier_wait(&s->start);
    char key[32];
    unsigned long misses = 0;
    for (unsigned i = 0; i < WRITER_KEYS; i++) {
        writer_key(key, sizeof key, w->id, i);
        CHECK_STATUS(ccf_insert(s->f, key, strlen(key)), CCF_OK);
        misses += !ccf_contains(s->f, key, strlen(key));
        /* Remove every other key some time after inserting it. */
        if (i >= 100 && i % 2 == 0) {
            writer_key(key, sizeof key, w->id, i - 100);
            CHECK(ccf_remove(s->f, key, strlen(key)));
        }
    }
    for (unsigned i = WRITER_KEYS - 100; i < WRITER_KEYS; i += 2) {
        writer_key(key, sizeof key, w->id, i);
        CHECK(ccf_remove(s->f, key, strlen(key)));
    }
    /* Own odd keys are all still there. */
    for (unsigned i = 1; i < WRITER_KEYS; i += 2) {
        writer_key(key, sizeof key, w->id, i);
        misses += !ccf_contains(s->f, key, strlen(key));
    }
    atomic_fetch_add(&s->misses, misses);
    atomic_fetch_sub(&s->writers_left, 1);
    return NULL;
}

static void *saver(void *arg) {
    struct worker *w = arg;
    struct shared *s = w->s;
    pthread_barrier_wait(&s->start);
    CHECK_STATUS(ccf_save(s->f, s->snapshot), CCF_OK);
    return NULL;
}

static void *unique_inserter(void *arg) {
    struct worker *w = arg;
    struct shared *s = w->s;
    pthread_barrier_wait(&s->start);
    char key[32];
    for (unsigned i = 0; i < UNIQUE_KEYS; i++) {
        key_text(key, sizeof key, "unique", i);
        bool added = false;
        CHECK_STATUS(ccf_insert_unique(s->f, key, strlen(key), &added), CCF_OK);
        s->unique_added[w->id][i] = added;
    }
    return NULL;
}

static void test_threads(void) {
    static struct shared s;
    memset(&s, 0, sizeof s);
    /* Peak load about 80% (95k items in 117k slots): inserts move
     * fingerprints (cuckoo paths), which is what could make a careless
     * reader miss a key. */
    CHECK_STATUS(ccf_new(105000, 0.0, &s.f), CCF_OK);
    char key[32];
    for (unsigned i = 0; i < BASE_KEYS; i++) {
        base_key(key, sizeof key, i);
        CHECK_STATUS(ccf_insert(s.f, key, strlen(key)), CCF_OK);
    }
    atomic_init(&s.writers_left, WRITERS);
    atomic_init(&s.misses, 0);
    atomic_init(&s.reader_passes, 0);
    atomic_init(&s.overlapping_passes, 0);
    char *snapshot = path_in(tmp_dir, "snapshot.ccf");
    s.snapshot = snapshot;

    enum { THREADS = READERS + WRITERS + 1 + UNIQUE_THREADS };
    pthread_t threads[THREADS];
    struct worker workers[THREADS];
    CHECK(pthread_barrier_init(&s.start, NULL, THREADS) == 0);
    unsigned t = 0;
    for (unsigned i = 0; i < READERS; i++, t++) {
        workers[t] = (struct worker){&s, i};
        CHECK(pthread_create(&threads[t], NULL, reader, &workers[t]) == 0);
    }
    for (unsigned i = 0; i < WRITERS; i++, t++) {
        workers[t] = (struct worker){&s, i};
        CHECK(pthread_create(&threads[t], NULL, writer, &workers[t]) == 0);
    }
    workers[t] = (struct worker){&s, 0};
    CHECK(pthread_create(&threads[t], NULL, saver, &workers[t]) == 0);
    t++;
    for (unsigned i = 0; i < UNIQUE_THREADS; i++, t++) {
        workers[t] = (struct worker){&s, i};
        CHECK(pthread_create(&threads[t], NULL, unique_inserter, &workers[t]) == 0);
    }
    for (t = 0; t < THREADS; t++) CHECK(pthread_join(threads[t], NULL) == 0);
    pthread_barrier_destroy(&s.start);

    CHECK(atomic_load(&s.misses) == 0);
    CHECK(atomic_load(&s.reader_passes) >= 2 * READERS);
    printf("  threads: %lu reader passes over the %d base keys, %lu of them begun while "
           "writers ran\n",
           atomic_load(&s.reader_passes), BASE_KEYS, atomic_load(&s.overlapping_passes));

    /* insert_unique: never both threads for one key. */
    size_t unique = 0;
    for (unsigned i = 0; i < UNIQUE_KEYS; i++) {
        CHECK(!(s.unique_added[0][i] && s.unique_added[1][i]));
        unique += s.unique_added[0][i] || s.unique_added[1][i];
    }
    /* Only a key indistinguishable from one already present is not added. */
    CHECK(unique >= UNIQUE_KEYS - 10);

    /* Exact length: base keys, the writers' odd keys, the unique adds. */
    CHECK(ccf_len(s.f) == BASE_KEYS + WRITERS * (WRITER_KEYS / 2) + unique);
    for (unsigned i = 0; i < BASE_KEYS; i++) {
        base_key(key, sizeof key, i);
        CHECK(ccf_contains(s.f, key, strlen(key)));
    }
    for (unsigned w = 0; w < WRITERS; w++)
        for (unsigned i = 1; i < WRITER_KEYS; i += 2) {
            writer_key(key, sizeof key, w, i);
            CHECK(ccf_contains(s.f, key, strlen(key)));
        }

    /* The snapshot taken while writers ran is one consistent state that
     * holds every base key. */
    ccf_filter *snap = NULL;
    CHECK_STATUS(ccf_load(snapshot, &snap), CCF_OK);
    CHECK(ccf_len(snap) >= BASE_KEYS);
    for (unsigned i = 0; i < BASE_KEYS; i++) {
        base_key(key, sizeof key, i);
        CHECK(ccf_contains(snap, key, strlen(key)));
    }
    ccf_free(snap);
    free(snapshot);
    ccf_free(s.f);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s RUST_FILE C_FILE GOLDEN_DIR TMP_DIR\n", argv[0]);
        return 2;
    }
    rust_file = argv[1], c_file = argv[2], golden_dir = argv[3], tmp_dir = argv[4];
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress lines before any failure message */
    printf("concurrent-cuckoo C API %s, probe %s\n", ccf_version(), ccf_probe_backend());

    struct {
        const char *name;
        void (*run)(void);
    } tests[] = {
        {"version_and_messages", test_version_and_messages},
        {"new_and_options", test_new_and_options},
        {"allocation_failure", test_allocation_failure},
        {"byte_keys", test_byte_keys},
        {"hashes", test_hashes},
        {"full", test_full},
        {"batches", test_batches},
        {"null_filter", test_null_filter},
        {"save_load", test_save_load},
        {"rust_interop", test_rust_interop},
        {"golden_files", test_golden_files},
        {"threads", test_threads},
    };
    const size_t count = sizeof tests / sizeof tests[0];
    for (size_t i = 0; i < count; i++) {
        unsigned long before = checks;
        tests[i].run();
        printf("test %s ... ok (%lu checks)\n", tests[i].name, checks - before);
    }
    printf("test_ffi: %zu passed, 0 failed\n", count);
    return 0;
}
