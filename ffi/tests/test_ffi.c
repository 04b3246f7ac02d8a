/*
 * Tests of the C API, from C: every function, every status, NULL arguments,
 * batch writes, counts and statistics, save/load, frozen (mapped) filters,
 * growing (scalable) filters, files written by Rust, the golden files of
 * tests/data, and threads (and a second process, on a frozen filter).
 * scripts/test-c.sh builds this file against the static and the shared
 * library (with AddressSanitizer and UBSan) and runs it as
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

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

    /* A file whose valid header claims that table: ccf_load refuses it as
     * corrupt before allocating anything, since the claim exceeds the
     * file's length (it used to try the 64 GiB allocation first). */
    unsigned char h[72] = {0x89, 'C', 'U', 'C', 'K', 'O', 'O', '\n', 2, 0, 32, 4, 5};
    uint64_t buckets = 1ull << 32;
    for (int i = 0; i < 8; i++) h[16 + i] = (unsigned char)(buckets >> (8 * i));
    h[32] = 1; /* the default hasher's id */
    char *p = path_in(tmp_dir, "huge-header.ccf");
    write_file(p, h, sizeof h);
    f = SENTINEL;
    CHECK_STATUS(ccf_load(p, &f), CCF_CORRUPT);
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
    const void *key = "k";
    size_t len = 1, inserted = 7;
    uint64_t hash = 1;
    bool removed = true;
    CHECK_STATUS(ccf_insert_batch(NULL, &key, &len, 1, &inserted), CCF_INVALID_ARGUMENT);
    CHECK(inserted == 0);
    inserted = 7;
    CHECK_STATUS(ccf_insert_hash_batch(NULL, &hash, 1, &inserted), CCF_INVALID_ARGUMENT);
    CHECK(inserted == 0);
    CHECK_STATUS(ccf_remove_batch(NULL, &key, &len, 1, &removed), CCF_INVALID_ARGUMENT);
    CHECK(!removed);
    removed = true;
    CHECK_STATUS(ccf_remove_hash_batch(NULL, &hash, 1, &removed), CCF_INVALID_ARGUMENT);
    CHECK(!removed);
    CHECK(ccf_count(NULL, "k", 1) == 0);
    CHECK(ccf_count_hash(NULL, 1) == 0);
    ccf_filter_stats stats;
    CHECK_STATUS(ccf_stats(NULL, &stats, sizeof(ccf_filter_stats)), CCF_INVALID_ARGUMENT);
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
    CHECK(errno == ENOENT); /* the status's documented errno */
    check_load_refused(tmp_dir, CCF_IO_ERROR); /* a directory */
    CHECK(errno == EISDIR);
    char *no_dir = path_in(tmp_dir, "no-such-dir/f.ccf");
    errno = 0;
    CHECK_STATUS(ccf_save(f, no_dir), CCF_IO_ERROR);
    CHECK(errno == ENOENT);
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
/* Batch writes, counts, statistics. */

static const uint64_t BATCH_SEED = 0xB47C4ull;
enum { KEY_TEXT = 48 };

/* Keys "prefix-(first + i)" for i < n, in text[i], with keys[i] and lens[i]
 * describing them as C passes a batch. */
static void make_keys(char (*text)[KEY_TEXT], const void **keys, size_t *lens, unsigned n,
                      const char *prefix, unsigned first) {
    for (unsigned i = 0; i < n; i++) {
        key_text(text[i], KEY_TEXT, prefix, first + i);
        keys[i] = text[i];
        lens[i] = strlen(text[i]);
    }
}

static ccf_filter *seeded(size_t capacity, uint32_t bits) {
    ccf_filter *f = NULL;
    CHECK_STATUS(ccf_new_with_options(capacity, 0.0, bits, &BATCH_SEED, &f), CCF_OK);
    return f;
}

/* The filter's saved bytes: two snapshots compare equal exactly when the
 * filter did not change in between (same table, same length). */
static unsigned char *snapshot(const ccf_filter *f, size_t *len) {
    char *p = path_in(tmp_dir, "snapshot-compare.ccf");
    unsigned char *bytes = save_and_read(f, p, len);
    free(p);
    return bytes;
}

static void check_unchanged(const ccf_filter *f, const unsigned char *before, size_t len) {
    size_t now_len;
    unsigned char *now = snapshot(f, &now_len);
    CHECK(now_len == len && memcmp(now, before, len) == 0);
    free(now);
}

static void test_insert_batches(void) {
    enum { N = 200 }; /* more than three 64-key chunks */
    static char text[N][KEY_TEXT];
    const void *keys[N];
    size_t lens[N];
    make_keys(text, keys, lens, N, "insert-batch", 0);
    keys[100] = NULL, lens[100] = 0; /* the empty key, as NULL */

    ccf_filter *f = seeded(10000, 16);
    size_t inserted = 12345;
    CHECK_STATUS(ccf_insert_batch(f, keys, lens, N, &inserted), CCF_OK);
    CHECK(inserted == N);
    CHECK(ccf_len(f) == N);
    for (unsigned i = 0; i < N; i++) CHECK(ccf_contains(f, keys[i], lens[i]));
    CHECK(ccf_contains(f, "", 0));

    /* The same keys one at a time into a twin (same seed): the same
     * filter, byte for byte. */
    ccf_filter *twin = seeded(10000, 16);
    for (unsigned i = 0; i < N; i++) CHECK_STATUS(ccf_insert(twin, keys[i], lens[i]), CCF_OK);
    size_t la, lb;
    unsigned char *ba = snapshot(f, &la);
    check_unchanged(twin, ba, la);
    free(ba);
    ccf_free(twin);

    /* `inserted` may be NULL. */
    CHECK_STATUS(ccf_insert_batch(f, keys, lens, 10, NULL), CCF_OK);
    CHECK(ccf_len(f) == N + 10);

    /* One NULL key with a length, in the last chunk: the whole batch is
     * refused before anything is inserted. */
    ba = snapshot(f, &la);
    keys[190] = NULL, lens[190] = 4;
    inserted = 12345;
    CHECK_STATUS(ccf_insert_batch(f, keys, lens, N, &inserted), CCF_INVALID_ARGUMENT);
    CHECK(inserted == 0);
    CHECK_STATUS(ccf_insert_batch(f, keys, lens, N, NULL), CCF_INVALID_ARGUMENT);
    keys[0] = NULL, lens[0] = 1; /* and in the first position */
    CHECK_STATUS(ccf_insert_batch(f, keys, lens, 1, &inserted), CCF_INVALID_ARGUMENT);
    CHECK(inserted == 0);
    /* Other argument errors; n == 0 accepts NULL arrays. */
    make_keys(text, keys, lens, N, "insert-batch", 0);
    inserted = 12345;
    CHECK_STATUS(ccf_insert_batch(NULL, keys, lens, N, &inserted), CCF_INVALID_ARGUMENT);
    CHECK(inserted == 0);
    inserted = 12345;
    CHECK_STATUS(ccf_insert_batch(f, NULL, lens, N, &inserted), CCF_INVALID_ARGUMENT);
    CHECK(inserted == 0);
    CHECK_STATUS(ccf_insert_batch(f, keys, NULL, N, &inserted), CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_insert_batch(NULL, NULL, NULL, 0, &inserted), CCF_INVALID_ARGUMENT);
    inserted = 12345;
    CHECK_STATUS(ccf_insert_batch(f, NULL, NULL, 0, &inserted), CCF_OK);
    CHECK(inserted == 0);
    CHECK_STATUS(ccf_insert_batch(f, keys, lens, 0, NULL), CCF_OK);
    check_unchanged(f, ba, la);
    free(ba);

    /* Hashes. */
    uint64_t hashes[N];
    for (unsigned i = 0; i < N; i++) hashes[i] = fmix64(i + 5000);
    inserted = 12345;
    CHECK_STATUS(ccf_insert_hash_batch(f, hashes, N, &inserted), CCF_OK);
    CHECK(inserted == N);
    CHECK(ccf_len(f) == 2 * N + 10);
    for (unsigned i = 0; i < N; i++) CHECK(ccf_contains_hash(f, hashes[i]));
    CHECK_STATUS(ccf_insert_hash_batch(f, hashes, 5, NULL), CCF_OK);
    CHECK(ccf_len(f) == 2 * N + 15 && ccf_count_hash(f, hashes[4]) == 2);
    ba = snapshot(f, &la);
    inserted = 12345;
    CHECK_STATUS(ccf_insert_hash_batch(NULL, hashes, N, &inserted), CCF_INVALID_ARGUMENT);
    CHECK(inserted == 0);
    inserted = 12345;
    CHECK_STATUS(ccf_insert_hash_batch(f, NULL, N, &inserted), CCF_INVALID_ARGUMENT);
    CHECK(inserted == 0);
    CHECK_STATUS(ccf_insert_hash_batch(NULL, NULL, 0, NULL), CCF_INVALID_ARGUMENT);
    inserted = 12345;
    CHECK_STATUS(ccf_insert_hash_batch(f, NULL, 0, &inserted), CCF_OK);
    CHECK(inserted == 0);
    check_unchanged(f, ba, la);
    free(ba);
    ccf_free(f);

    /* CCF_TOO_MANY_DUPLICATES: 12 copies of one key, 8 go in (each kind
     * in a filter of its own, so no other key shares its buckets). */
    const void *dup_keys[12];
    size_t dup_lens[12];
    uint64_t dup_hashes[12];
    for (unsigned i = 0; i < 12; i++) {
        dup_keys[i] = "dup";
        dup_lens[i] = 3;
        dup_hashes[i] = fmix64(77);
    }
    ccf_filter *d = seeded(100, 16);
    inserted = 12345;
    CHECK_STATUS(ccf_insert_batch(d, dup_keys, dup_lens, 12, &inserted), CCF_TOO_MANY_DUPLICATES);
    CHECK(inserted == 8);
    CHECK(ccf_len(d) == 8 && ccf_count(d, "dup", 3) == 8);
    ccf_filter_stats s;
    CHECK_STATUS(ccf_stats(d, &s, sizeof(ccf_filter_stats)), CCF_OK);
    CHECK(s.inserts == 8 && s.duplicate_refusals == 1 && s.failed_inserts == 0);
    ccf_free(d);
    d = seeded(100, 16);
    inserted = 12345;
    CHECK_STATUS(ccf_insert_hash_batch(d, dup_hashes, 12, &inserted), CCF_TOO_MANY_DUPLICATES);
    CHECK(inserted == 8);
    CHECK(ccf_len(d) == 8 && ccf_count_hash(d, fmix64(77)) == 8);
    ccf_free(d);

    /* A refusal in a later chunk: 60 distinct keys, then 12 copies of one
     * key across the chunk boundary; the ninth copy (index 68) stops it. */
    static char mixed_text[60][KEY_TEXT];
    const void *mixed[72];
    size_t mixed_lens[72];
    make_keys(mixed_text, mixed, mixed_lens, 60, "mixed", 0);
    for (unsigned i = 60; i < 72; i++) mixed[i] = "dup", mixed_lens[i] = 3;
    d = seeded(10000, 16);
    inserted = 12345;
    CHECK_STATUS(ccf_insert_batch(d, mixed, mixed_lens, 72, &inserted), CCF_TOO_MANY_DUPLICATES);
    CHECK(inserted == 68);
    CHECK(ccf_len(d) == 68 && ccf_count(d, "dup", 3) == 8);
    for (unsigned i = 0; i < 60; i++) CHECK(ccf_contains(d, mixed[i], mixed_lens[i]));
    ccf_free(d);

    /* CCF_FULL on a tiny filter (2 buckets, 8 slots): the batch stops
     * exactly where the same inserts one at a time into a twin stop, and
     * keeps the keys before that one. */
    for (int kind = 0; kind < 2; kind++) {
        ccf_filter *a = seeded(0, 16), *b = seeded(0, 16);
        CHECK(ccf_capacity(a) == 8);
        size_t first_refused = 0;
        ccf_status want = CCF_OK;
        for (unsigned i = 0; i < 20 && want == CCF_OK; i++) {
            want = kind ? ccf_insert_hash(b, hashes[i]) : ccf_insert(b, keys[i], lens[i]);
            if (want == CCF_OK) first_refused = i + 1;
        }
        CHECK_STATUS(want, CCF_FULL);
        inserted = 12345;
        ccf_status got = kind ? ccf_insert_hash_batch(a, hashes, 20, &inserted)
                              : ccf_insert_batch(a, keys, lens, 20, &inserted);
        CHECK_STATUS(got, CCF_FULL);
        CHECK(inserted == first_refused && inserted >= 4 && inserted <= 8);
        CHECK(ccf_len(a) == inserted);
        for (size_t i = 0; i < inserted; i++)
            CHECK(kind ? ccf_contains_hash(a, hashes[i]) : ccf_contains(a, keys[i], lens[i]));
        ba = snapshot(a, &la);
        unsigned char *bb = snapshot(b, &lb);
        CHECK(la == lb && memcmp(ba, bb, la) == 0);
        free(ba), free(bb);
        CHECK_STATUS(ccf_stats(a, &s, sizeof(ccf_filter_stats)), CCF_OK);
        CHECK(s.inserts == inserted && s.failed_inserts == 1);
        ccf_free(a), ccf_free(b);
    }
}

static void test_remove_batches(void) {
    enum { N = 200 };
    static char text[N][KEY_TEXT];
    const void *keys[2 * N];
    size_t lens[2 * N];
    uint64_t hashes[2 * N];
    make_keys(text, keys, lens, N, "remove-batch", 0);
    keys[50] = NULL, lens[50] = 0; /* the empty key */
    for (unsigned i = 0; i < N; i++) hashes[i] = fmix64(i + 90000);
    /* The batch lists every key twice: N keys, then the same N again. */
    memcpy(keys + N, keys, N * sizeof keys[0]);
    memcpy(lens + N, lens, N * sizeof lens[0]);
    memcpy(hashes + N, hashes, N * sizeof hashes[0]);

    for (int kind = 0; kind < 2; kind++) {
        /* Key i has i % 4 copies; the keys with none are absent (no false
         * positive for them with this seed: checked). */
        ccf_filter *f = seeded(10000, 16);
        size_t total = 0, left = 0;
        for (unsigned i = 0; i < N; i++) {
            for (unsigned c = 0; c < i % 4; c++)
                CHECK_STATUS(kind ? ccf_insert_hash(f, hashes[i]) : ccf_insert(f, keys[i], lens[i]),
                             CCF_OK);
            total += i % 4;
            left += i % 4 == 3;
            if (i % 4 == 0)
                CHECK(!(kind ? ccf_contains_hash(f, hashes[i]) : ccf_contains(f, keys[i], lens[i])));
        }
        CHECK(ccf_len(f) == total);
        bool removed[2 * N];
        memset(removed, 0xAA, sizeof removed); /* not valid bools: all overwritten */
        CHECK_STATUS(kind ? ccf_remove_hash_batch(f, hashes, 2 * N, removed)
                          : ccf_remove_batch(f, keys, lens, 2 * N, removed),
                     CCF_OK);
        size_t removed_count = 0;
        for (unsigned i = 0; i < N; i++) {
            /* One copy per listing, in order: the first needs 1 copy, the
             * second 2. */
            CHECK(removed[i] == (i % 4 >= 1));
            CHECK(removed[N + i] == (i % 4 >= 2));
            removed_count += removed[i] + removed[N + i];
            size_t copies = kind ? ccf_count_hash(f, hashes[i]) : ccf_count(f, keys[i], lens[i]);
            CHECK(copies == (i % 4 == 3));
        }
        CHECK(ccf_len(f) == left && total - removed_count == left);

        /* `removed` NULL: only the removes. */
        CHECK_STATUS(kind ? ccf_insert_hash_batch(f, hashes, N, NULL)
                          : ccf_insert_batch(f, keys, lens, N, NULL),
                     CCF_OK);
        CHECK(ccf_len(f) == left + N);
        CHECK_STATUS(kind ? ccf_remove_hash_batch(f, hashes, N, NULL)
                          : ccf_remove_batch(f, keys, lens, N, NULL),
                     CCF_OK);
        CHECK(ccf_len(f) == left);

        /* Argument errors: nothing removed, every flag false. */
        CHECK_STATUS(kind ? ccf_insert_hash_batch(f, hashes, N, NULL)
                          : ccf_insert_batch(f, keys, lens, N, NULL),
                     CCF_OK);
        size_t la;
        unsigned char *before = snapshot(f, &la);
        memset(removed, 1, sizeof removed);
        CHECK_STATUS(kind ? ccf_remove_hash_batch(NULL, hashes, N, removed)
                          : ccf_remove_batch(NULL, keys, lens, N, removed),
                     CCF_INVALID_ARGUMENT);
        for (unsigned i = 0; i < N; i++) CHECK(!removed[i]);
        memset(removed, 1, sizeof removed);
        CHECK_STATUS(kind ? ccf_remove_hash_batch(f, NULL, N, removed)
                          : ccf_remove_batch(f, NULL, lens, N, removed),
                     CCF_INVALID_ARGUMENT);
        for (unsigned i = 0; i < N; i++) CHECK(!removed[i]);
        if (!kind) {
            memset(removed, 1, sizeof removed);
            CHECK_STATUS(ccf_remove_batch(f, keys, NULL, N, removed), CCF_INVALID_ARGUMENT);
            for (unsigned i = 0; i < N; i++) CHECK(!removed[i]);
            /* A NULL key with a length, after keys that are present: the
             * whole batch is refused first, so none of them is removed. */
            const void *saved = keys[150];
            keys[150] = NULL, lens[150] = 2;
            memset(removed, 1, sizeof removed);
            CHECK_STATUS(ccf_remove_batch(f, keys, lens, N, removed), CCF_INVALID_ARGUMENT);
            for (unsigned i = 0; i < N; i++) CHECK(!removed[i]);
            CHECK_STATUS(ccf_remove_batch(f, keys, lens, N, NULL), CCF_INVALID_ARGUMENT);
            keys[150] = saved, lens[150] = strlen(saved);
            CHECK_STATUS(ccf_remove_batch(NULL, NULL, NULL, 0, NULL), CCF_INVALID_ARGUMENT);
            CHECK_STATUS(ccf_remove_batch(f, NULL, NULL, 0, NULL), CCF_OK);
        } else {
            CHECK_STATUS(ccf_remove_hash_batch(NULL, NULL, 0, NULL), CCF_INVALID_ARGUMENT);
            CHECK_STATUS(ccf_remove_hash_batch(f, NULL, 0, NULL), CCF_OK);
        }
        removed[0] = true;
        CHECK_STATUS(kind ? ccf_remove_hash_batch(f, hashes, 0, removed)
                          : ccf_remove_batch(f, keys, lens, 0, removed),
                     CCF_OK);
        CHECK(removed[0]); /* n == 0 writes nothing */
        check_unchanged(f, before, la);
        free(before);
        ccf_free(f);
    }
}

static void test_count(void) {
    ccf_filter *f = seeded(1000, 16);
    CHECK(!ccf_contains(f, "c", 1) && ccf_count(f, "c", 1) == 0);
    CHECK(!ccf_contains_hash(f, 99) && ccf_count_hash(f, 99) == 0);
    for (size_t k = 1; k <= 8; k++) {
        CHECK_STATUS(ccf_insert(f, "c", 1), CCF_OK);
        CHECK_STATUS(ccf_insert_hash(f, 99), CCF_OK);
        CHECK(ccf_count(f, "c", 1) == k);
        CHECK(ccf_count_hash(f, 99) == k);
    }
    CHECK_STATUS(ccf_insert(f, "c", 1), CCF_TOO_MANY_DUPLICATES);
    CHECK(ccf_count(f, "c", 1) == 8);
    for (size_t k = 8; k-- > 0;) {
        CHECK(ccf_remove(f, "c", 1) && ccf_remove_hash(f, 99));
        CHECK(ccf_count(f, "c", 1) == k && ccf_count_hash(f, 99) == k);
    }
    /* The empty key, NULL or not. */
    CHECK_STATUS(ccf_insert(f, NULL, 0), CCF_OK);
    CHECK_STATUS(ccf_insert(f, "", 0), CCF_OK);
    CHECK(ccf_count(f, NULL, 0) == 2 && ccf_count(f, "x", 0) == 2);
    /* NULL arguments: 0. */
    CHECK(ccf_count(NULL, "c", 1) == 0);
    CHECK(ccf_count(NULL, NULL, 0) == 0);
    CHECK(ccf_count(f, NULL, 1) == 0);
    CHECK(ccf_count_hash(NULL, 99) == 0);
    ccf_free(f);

    /* Many keys with 1 to 3 copies each: exact counts (32-bit
     * fingerprints, so no two of these keys are indistinguishable). */
    enum { N = 1000 };
    static char text[N][KEY_TEXT];
    const void *keys[N];
    size_t lens[N];
    make_keys(text, keys, lens, N, "count", 0);
    f = seeded(5000, 32);
    for (unsigned c = 0; c < 3; c++)
        for (unsigned i = 0; i < N; i++)
            if (i % 3 >= c) CHECK_STATUS(ccf_insert(f, keys[i], lens[i]), CCF_OK);
    for (unsigned i = 0; i < N; i++) CHECK(ccf_count(f, keys[i], lens[i]) == i % 3 + 1);
    ccf_free(f);
}

static void test_stats(void) {
    ccf_filter *f = seeded(1000, 16);
    ccf_filter_stats s;
    memset(&s, 0xAA, sizeof s);
    CHECK_STATUS(ccf_stats(f, &s, sizeof(ccf_filter_stats)), CCF_OK);
    CHECK(s.len == 0 && s.inserts == 0 && s.removes == 0 && s.relocations == 0);
    CHECK(s.failed_inserts == 0 && s.duplicate_refusals == 0 && s.load_factor == 0.0);
    for (int h = 0; h < 6; h++) CHECK(s.path_lengths[h] == 0);
    CHECK(s.capacity == ccf_capacity(f) && s.bucket_count * 4 == s.capacity);
    CHECK(s.fingerprint_bits == 16 && s.memory_usage == ccf_memory_usage(f));
    CHECK(s.stripes >= 1 && (s.stripes & (s.stripes - 1)) == 0);
    CHECK(s.max_path_len >= 1 && s.max_path_len <= 5);

    /* Singles and batches, a duplicate refusal, removes, then fill to ten
     * CCF_FULL refusals: the counters add up exactly. */
    uint64_t inserts = 0, removes = 0, full = 0;
    enum { N = 300 };
    static char text[N][KEY_TEXT];
    const void *keys[N];
    size_t lens[N];
    make_keys(text, keys, lens, N, "stats", 0);
    CHECK_STATUS(ccf_insert_batch(f, keys, lens, N, NULL), CCF_OK);
    inserts += N;
    for (int i = 0; i < 8; i++) CHECK_STATUS(ccf_insert(f, "dup", 3), CCF_OK);
    CHECK_STATUS(ccf_insert(f, "dup", 3), CCF_TOO_MANY_DUPLICATES);
    inserts += 8;
    bool removed[N];
    CHECK_STATUS(ccf_remove_batch(f, keys, lens, N / 2, removed), CCF_OK);
    for (unsigned i = 0; i < N / 2; i++) CHECK(removed[i]);
    removes += N / 2;
    CHECK(ccf_remove(f, "dup", 3));
    removes += 1;
    uint64_t h = 0;
    while (full < 10) {
        ccf_status st = ccf_insert_hash(f, fmix64(++h));
        CHECK(st == CCF_OK || st == CCF_FULL);
        if (st == CCF_OK) inserts++;
        else full++;
    }
    memset(&s, 0xAA, sizeof s);
    CHECK_STATUS(ccf_stats(f, &s, sizeof(ccf_filter_stats)), CCF_OK);
    CHECK(s.len == ccf_len(f));
    CHECK(s.inserts == inserts && s.removes == removes);
    CHECK(s.inserts - s.removes == s.len);
    CHECK(s.failed_inserts == 10 && s.duplicate_refusals == 1);
    CHECK(s.load_factor == (double)s.len / (double)s.capacity && s.load_factor > 0.85);
    CHECK(s.memory_usage == ccf_memory_usage(f));
    uint64_t paths = 0, moves = 0;
    for (unsigned i = 0; i < 6; i++) {
        paths += s.path_lengths[i];
        moves += i * s.path_lengths[i];
        if (i > s.max_path_len) CHECK(s.path_lengths[i] == 0);
    }
    CHECK(paths == s.inserts);
    CHECK(s.path_lengths[0] < s.inserts); /* near full, some inserts took paths */
    CHECK(s.relocations >= moves && moves > 0);

    /* ccf_clear empties the table and keeps the history. */
    ccf_filter_stats before = s;
    CHECK_STATUS(ccf_clear(f), CCF_OK);
    CHECK_STATUS(ccf_stats(f, &s, sizeof(ccf_filter_stats)), CCF_OK);
    CHECK(s.len == 0 && s.inserts == before.inserts && s.removes == before.removes);
    /* A loaded filter starts counting afresh. */
    CHECK_STATUS(ccf_insert(f, "k", 1), CCF_OK);
    char *p = path_in(tmp_dir, "stats.ccf");
    CHECK_STATUS(ccf_save(f, p), CCF_OK);
    ccf_filter *g = NULL;
    CHECK_STATUS(ccf_load(p, &g), CCF_OK);
    CHECK_STATUS(ccf_stats(g, &s, sizeof(ccf_filter_stats)), CCF_OK);
    CHECK(s.len == 1 && s.inserts == 0 && s.removes == 0);
    ccf_free(g);
    free(p);

    /* NULL arguments: CCF_INVALID_ARGUMENT, *out untouched. */
    memset(&s, 0x5A, sizeof s);
    before = s;
    CHECK_STATUS(ccf_stats(NULL, &s, sizeof(ccf_filter_stats)), CCF_INVALID_ARGUMENT);
    CHECK(memcmp(&s, &before, sizeof s) == 0);
    CHECK_STATUS(ccf_stats(f, NULL, sizeof(ccf_filter_stats)), CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_stats(NULL, NULL, sizeof(ccf_filter_stats)), CCF_INVALID_ARGUMENT);
    /* Too small a struct is refused untouched; a longer one (a program
     * built against a later header) gets this release's fields and keeps
     * its tail. */
    CHECK_STATUS(ccf_stats(f, &s, sizeof(ccf_filter_stats) - 1), CCF_INVALID_ARGUMENT);
    CHECK(memcmp(&s, &before, sizeof s) == 0);
    {
        unsigned char longer[sizeof(ccf_filter_stats) + 16];
        memset(longer, 0xA5, sizeof longer);
        CHECK_STATUS(ccf_stats(f, (ccf_filter_stats *)(void *)longer, sizeof longer), CCF_OK);
        ccf_filter_stats head;
        memcpy(&head, longer, sizeof head);
        CHECK_STATUS(ccf_stats(f, &s, sizeof s), CCF_OK);
        CHECK(memcmp(&head, &s, sizeof s) == 0);
        for (size_t i = sizeof(ccf_filter_stats); i < sizeof longer; i++) CHECK(longer[i] == 0xA5);
    }
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
/* Frozen filters: a saved file queried in place. */

/* A probe set: the keys a filter got and as many it did not, as byte keys
 * and as hashes, with the empty key and long keys among them. */
enum { PROBE_IN = 3000, PROBE_KEYS = 2 * PROBE_IN, PROBE_HASHES = 4000 };
static char probe_text[PROBE_KEYS][KEY_TEXT];
static const void *probe_keys[PROBE_KEYS];
static size_t probe_lens[PROBE_KEYS];
static uint64_t probe_hashes[PROBE_HASHES];

static void make_probes(void) {
    make_keys(probe_text, probe_keys, probe_lens, PROBE_IN, "frozen-in", 0);
    make_keys(probe_text + PROBE_IN, probe_keys + PROBE_IN, probe_lens + PROBE_IN, PROBE_IN,
              "frozen-absent-key-with-a-longer-name", 0);
    probe_keys[7] = NULL, probe_lens[7] = 0; /* the empty key, inserted */
    for (unsigned i = 0; i < PROBE_HASHES; i++) probe_hashes[i] = fmix64(i + 123456);
}

/* A live filter holding the first PROBE_IN keys (the first 100 twice) and
 * the first half of the hashes, minus a few removed. */
static ccf_filter *probe_filter(uint32_t bits) {
    ccf_filter *f = seeded(2 * PROBE_IN + PROBE_HASHES, bits);
    CHECK_STATUS(ccf_insert_batch(f, probe_keys, probe_lens, PROBE_IN, NULL), CCF_OK);
    CHECK_STATUS(ccf_insert_batch(f, probe_keys, probe_lens, 100, NULL), CCF_OK);
    CHECK_STATUS(ccf_insert_hash_batch(f, probe_hashes, PROBE_HASHES / 2, NULL), CCF_OK);
    CHECK_STATUS(ccf_remove_batch(f, probe_keys + 200, probe_lens + 200, 50, NULL), CCF_OK);
    CHECK_STATUS(ccf_remove_hash_batch(f, probe_hashes + 10, 10, NULL), CCF_OK);
    return f;
}

/* The frozen filter answers every probe exactly as the live one: single
 * and batch lookups, counts, keys and hashes. */
static void check_frozen_answers(const ccf_frozen *z, const ccf_filter *f) {
    CHECK(ccf_frozen_len(z) == ccf_len(f));
    CHECK(ccf_frozen_capacity(z) == ccf_capacity(f));
    for (unsigned i = 0; i < PROBE_KEYS; i++) {
        bool want = ccf_contains(f, probe_keys[i], probe_lens[i]);
        CHECK(ccf_frozen_contains(z, probe_keys[i], probe_lens[i]) == want);
        CHECK(ccf_frozen_count(z, probe_keys[i], probe_lens[i]) ==
              ccf_count(f, probe_keys[i], probe_lens[i]));
        if (i < PROBE_IN && (i < 200 || i >= 250)) CHECK(want);
    }
    for (unsigned i = 0; i < PROBE_HASHES; i++) {
        bool want = ccf_contains_hash(f, probe_hashes[i]);
        CHECK(ccf_frozen_contains_hash(z, probe_hashes[i]) == want);
        CHECK(ccf_frozen_count_hash(z, probe_hashes[i]) == ccf_count_hash(f, probe_hashes[i]));
        if (i < PROBE_HASHES / 2 && (i < 10 || i >= 20)) CHECK(want);
    }
    /* Batches of uneven sizes (chunks of 64 inside, and partial ones). */
    static bool out[PROBE_KEYS], want[PROBE_KEYS];
    for (unsigned at = 0, n = 1; at < PROBE_KEYS; at += n, n = n * 3 % 257 + 1) {
        if (n > PROBE_KEYS - at) n = PROBE_KEYS - at;
        memset(out, 0xAA, n);
        ccf_frozen_contains_batch(z, probe_keys + at, probe_lens + at, n, out);
        ccf_contains_batch(f, probe_keys + at, probe_lens + at, n, want);
        CHECK(memcmp(out, want, n) == 0);
    }
    for (unsigned at = 0, n = 1; at < PROBE_HASHES; at += n, n = n * 5 % 251 + 1) {
        if (n > PROBE_HASHES - at) n = PROBE_HASHES - at;
        memset(out, 0xAA, n);
        ccf_frozen_contains_hash_batch(z, probe_hashes + at, n, out);
        ccf_contains_hash_batch(f, probe_hashes + at, n, want);
        CHECK(memcmp(out, want, n) == 0);
    }
}

static void check_frozen_refused(const char *path, ccf_status want) {
    ccf_frozen *z = (ccf_frozen *)SENTINEL;
    CHECK_STATUS(ccf_frozen_open(path, &z), want);
    CHECK(z == (ccf_frozen *)SENTINEL);
}

static void test_frozen(void) {
    make_probes();
    const uint32_t widths[] = {8, 16, 32};
    char *path = path_in(tmp_dir, "frozen.ccf");
    for (int w = 0; w < 3; w++) {
        ccf_filter *f = probe_filter(widths[w]);
        CHECK_STATUS(ccf_save(f, path), CCF_OK);
        ccf_frozen *z = NULL;
        CHECK_STATUS(ccf_frozen_open(path, &z), CCF_OK);
        CHECK(z != NULL);
        check_frozen_answers(z, f);

        /* Thawed: a writable filter answering alike, saving to the same
         * bytes, independent of the frozen one, its counters at 0. */
        ccf_filter *t = NULL;
        CHECK_STATUS(ccf_frozen_thaw(z, &t), CCF_OK);
        CHECK(t != NULL && t != f);
        check_frozen_answers(z, t);
        ccf_filter_stats s;
        CHECK_STATUS(ccf_stats(t, &s, sizeof(ccf_filter_stats)), CCF_OK);
        CHECK(s.len == ccf_len(f) && s.inserts == 0 && s.fingerprint_bits == widths[w]);
        size_t la, lb;
        unsigned char *saved = read_file(path, &la);
        CHECK(saved != NULL);
        char *thawed_path = path_in(tmp_dir, "thawed.ccf");
        unsigned char *thawed = save_and_read(t, thawed_path, &lb);
        CHECK(la == lb && memcmp(saved, thawed, la) == 0);
        free(saved), free(thawed), free(thawed_path);
        size_t len = ccf_len(f);
        CHECK_STATUS(ccf_insert(t, "after-thaw", 10), CCF_OK);
        CHECK(ccf_len(t) == len + 1 && ccf_frozen_len(z) == len);
        CHECK(ccf_frozen_count(z, "after-thaw", 10) == ccf_count(f, "after-thaw", 10));

        /* The file replaced by ccf_save (a rename) while it is open: the
         * open one keeps answering for the old file, a new open sees the
         * new one. */
        CHECK_STATUS(ccf_save(t, path), CCF_OK);
        check_frozen_answers(z, f);
        ccf_frozen *z2 = NULL;
        CHECK_STATUS(ccf_frozen_open(path, &z2), CCF_OK);
        CHECK(ccf_frozen_len(z2) == len + 1 && ccf_frozen_contains(z2, "after-thaw", 10));
        ccf_frozen_free(z2);

        /* A thawed filter outlives its frozen one. */
        ccf_frozen_free(z);
        CHECK(ccf_contains(t, "after-thaw", 10));
        CHECK(ccf_remove(t, "after-thaw", 10));
        ccf_free(t);
        ccf_free(f);
    }

    /* A file saved by Rust opens frozen too. */
    ccf_frozen *z = NULL;
    CHECK_STATUS(ccf_frozen_open(rust_file, &z), CCF_OK);
    ccf_filter *from_rust = NULL;
    CHECK_STATUS(ccf_load(rust_file, &from_rust), CCF_OK);
    CHECK(ccf_frozen_len(z) == ccf_len(from_rust));
    char key[32];
    for (unsigned i = 0; i < INTEROP_TEXT; i++) {
        key_text(key, sizeof key, "interop", i);
        CHECK(ccf_frozen_contains(z, key, strlen(key)) == ccf_contains(from_rust, key, strlen(key)));
        if (i % 5) CHECK(ccf_frozen_contains(z, key, strlen(key)));
    }
    ccf_free(from_rust);

    /* Errors. I/O: a missing file, a directory. */
    char *missing = path_in(tmp_dir, "no-such-frozen.ccf");
    check_frozen_refused(missing, CCF_IO_ERROR);
    check_frozen_refused(tmp_dir, CCF_IO_ERROR);
    /* Arguments. */
    check_frozen_refused(NULL, CCF_INVALID_ARGUMENT);
    check_frozen_refused("", CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_frozen_open(path, NULL), CCF_INVALID_ARGUMENT);
    /* Damaged files, each refused as CCF_CORRUPT. */
    size_t len;
    unsigned char *bytes = read_file(path, &len);
    CHECK(bytes != NULL && len > 200);
    unsigned char *copy = malloc(len + 1);
    CHECK(copy != NULL);
    char *bad = path_in(tmp_dir, "bad-frozen.ccf");
    write_file(bad, (const unsigned char *)"", 0);
    check_frozen_refused(bad, CCF_CORRUPT); /* empty */
    write_file(bad, (const unsigned char *)"not a filter at all, just some text\n", 36);
    check_frozen_refused(bad, CCF_CORRUPT); /* bad magic */
    write_file(bad, bytes, 40);
    check_frozen_refused(bad, CCF_CORRUPT); /* truncated header */
    write_file(bad, bytes, len - 1);
    check_frozen_refused(bad, CCF_CORRUPT); /* truncated checksum */
    memcpy(copy, bytes, len);
    copy[len] = 0;
    write_file(bad, copy, len + 1);
    check_frozen_refused(bad, CCF_CORRUPT); /* a byte after the end */
    copy[len / 2] ^= 0x04;
    write_file(bad, copy, len);
    check_frozen_refused(bad, CCF_CORRUPT); /* a flipped bit in the body */
    memcpy(copy, bytes, len);
    copy[8] = 3;
    write_file(bad, copy, len);
    check_frozen_refused(bad, CCF_CORRUPT); /* format version 3 (unknown) */
    memcpy(copy, bytes, len);
    copy[32] = 7;
    write_file(bad, copy, len);
    check_frozen_refused(bad, CCF_CORRUPT); /* another hasher */
    write_file(bad, bytes, len);
    ccf_frozen *ok = NULL;
    CHECK_STATUS(ccf_frozen_open(bad, &ok), CCF_OK); /* the intact bytes open */
    ccf_frozen_free(ok);
    free(copy), free(bad), free(bytes), free(missing);

    /* NULL handles and keys: false, 0, CCF_INVALID_ARGUMENT; out arrays
     * set to false when there is one. */
    ccf_frozen_free(NULL);
    CHECK(!ccf_frozen_contains(NULL, "k", 1));
    CHECK(!ccf_frozen_contains(z, NULL, 1));
    CHECK(!ccf_frozen_contains_hash(NULL, 1));
    CHECK(ccf_frozen_count(NULL, "k", 1) == 0);
    CHECK(ccf_frozen_count(z, NULL, 1) == 0);
    CHECK(ccf_frozen_count_hash(NULL, 1) == 0);
    CHECK(ccf_frozen_len(NULL) == 0);
    CHECK(ccf_frozen_capacity(NULL) == 0);
    ccf_filter *t = SENTINEL;
    CHECK_STATUS(ccf_frozen_thaw(NULL, &t), CCF_INVALID_ARGUMENT);
    CHECK(t == SENTINEL);
    CHECK_STATUS(ccf_frozen_thaw(z, NULL), CCF_INVALID_ARGUMENT);
    bool out[8];
    const void *keys[8] = {"a", "b", NULL, "d", "", "f", "g", "h"};
    size_t lens[8] = {1, 1, 3, 1, 0, 1, 1, 1};
    uint64_t hashes[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    memset(out, 0xAA, sizeof out);
    ccf_frozen_contains_batch(z, keys, lens, 8, out);
    for (unsigned i = 0; i < 8; i++) CHECK(out[i] == ccf_frozen_contains(z, keys[i], lens[i]));
    CHECK(!out[2]); /* the NULL key with a length */
    memset(out, 1, sizeof out);
    ccf_frozen_contains_batch(NULL, keys, lens, 8, out);
    for (unsigned i = 0; i < 8; i++) CHECK(!out[i]);
    memset(out, 1, sizeof out);
    ccf_frozen_contains_batch(z, NULL, lens, 8, out);
    for (unsigned i = 0; i < 8; i++) CHECK(!out[i]);
    memset(out, 1, sizeof out);
    ccf_frozen_contains_batch(z, keys, NULL, 8, out);
    for (unsigned i = 0; i < 8; i++) CHECK(!out[i]);
    ccf_frozen_contains_batch(z, keys, lens, 8, NULL);
    memset(out, 1, sizeof out);
    ccf_frozen_contains_hash_batch(NULL, hashes, 8, out);
    for (unsigned i = 0; i < 8; i++) CHECK(!out[i]);
    memset(out, 1, sizeof out);
    ccf_frozen_contains_hash_batch(z, NULL, 8, out);
    for (unsigned i = 0; i < 8; i++) CHECK(!out[i]);
    ccf_frozen_contains_hash_batch(z, hashes, 8, NULL);
    memset(out, 1, sizeof out);
    ccf_frozen_contains_batch(z, keys, lens, 0, out);
    ccf_frozen_contains_hash_batch(z, hashes, 0, out);
    CHECK(out[0]); /* n == 0 writes nothing */
    ccf_frozen_free(z);
    free(path);
}

/* Threads (and a second process) querying one frozen filter: every answer
 * is the one the live filter gave before the file was saved. */
enum { FROZEN_THREADS = 4, FROZEN_PASSES = 3 };

struct frozen_shared {
    const ccf_frozen *z;
    pthread_barrier_t start;
    bool key_want[PROBE_KEYS];
    bool hash_want[PROBE_HASHES];
    size_t count_want[PROBE_KEYS];
    atomic_ulong wrong;
    atomic_ulong answers;
};

struct frozen_worker {
    struct frozen_shared *s;
    unsigned id;
};

/* Every probe, singly and in batches of 32, FROZEN_PASSES times (each
 * thread from its own starting point): the number of wrong answers. */
static unsigned long frozen_check_all(const struct frozen_shared *s, unsigned id,
                                      unsigned long *answers) {
    unsigned long wrong = 0, n = 0;
    bool out[32];
    for (unsigned pass = 0; pass < FROZEN_PASSES; pass++) {
        /* The chunks of 32 keys, in an order of this thread's own. */
        const unsigned chunks = (PROBE_KEYS + 31) / 32;
        for (unsigned c = 0; c < chunks; c++) {
            unsigned at = (c + id * 61) % chunks * 32;
            unsigned m = PROBE_KEYS - at < 32 ? PROBE_KEYS - at : 32;
            ccf_frozen_contains_batch(s->z, probe_keys + at, probe_lens + at, m, out);
            for (unsigned j = 0; j < m; j++) {
                unsigned i = at + j;
                wrong += out[j] != s->key_want[i];
                wrong += ccf_frozen_contains(s->z, probe_keys[i], probe_lens[i]) != s->key_want[i];
                wrong += ccf_frozen_count(s->z, probe_keys[i], probe_lens[i]) != s->count_want[i];
                n += 3;
            }
        }
        for (unsigned at = 0; at < PROBE_HASHES; at += 32) {
            unsigned m = PROBE_HASHES - at < 32 ? PROBE_HASHES - at : 32;
            ccf_frozen_contains_hash_batch(s->z, probe_hashes + at, m, out);
            for (unsigned j = 0; j < m; j++) {
                wrong += out[j] != s->hash_want[at + j];
                wrong += ccf_frozen_contains_hash(s->z, probe_hashes[at + j]) != s->hash_want[at + j];
                n += 2;
            }
        }
    }
    *answers = n;
    return wrong;
}

static void *frozen_reader(void *arg) {
    struct frozen_worker *w = arg;
    pthread_barrier_wait(&w->s->start);
    unsigned long answers;
    unsigned long wrong = frozen_check_all(w->s, w->id, &answers);
    atomic_fetch_add(&w->s->wrong, wrong);
    atomic_fetch_add(&w->s->answers, answers);
    return NULL;
}

static void test_frozen_threads(void) {
    static struct frozen_shared s;
    memset(&s, 0, sizeof s);
    make_probes();
    ccf_filter *f = probe_filter(16);
    for (unsigned i = 0; i < PROBE_KEYS; i++) {
        s.key_want[i] = ccf_contains(f, probe_keys[i], probe_lens[i]);
        s.count_want[i] = ccf_count(f, probe_keys[i], probe_lens[i]);
    }
    for (unsigned i = 0; i < PROBE_HASHES; i++) s.hash_want[i] = ccf_contains_hash(f, probe_hashes[i]);
    char *path = path_in(tmp_dir, "frozen-shared.ccf");
    CHECK_STATUS(ccf_save(f, path), CCF_OK);
    ccf_free(f);

    /* Another process opens the same file (forked before any thread
     * starts, so the child is single-threaded). */
    fflush(stdout), fflush(stderr);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        ccf_frozen *mine = NULL;
        if (ccf_frozen_open(path, &mine) != CCF_OK) _exit(3);
        struct frozen_shared *c = &s;
        c->z = mine;
        unsigned long answers;
        unsigned long wrong = frozen_check_all(c, 1, &answers);
        ccf_frozen_free(mine);
        _exit(wrong == 0 && answers > 0 ? 0 : 4);
    }

    ccf_frozen *z = NULL;
    CHECK_STATUS(ccf_frozen_open(path, &z), CCF_OK);
    s.z = z;
    atomic_init(&s.wrong, 0);
    atomic_init(&s.answers, 0);
    pthread_t threads[FROZEN_THREADS];
    struct frozen_worker workers[FROZEN_THREADS];
    CHECK(pthread_barrier_init(&s.start, NULL, FROZEN_THREADS) == 0);
    for (unsigned t = 0; t < FROZEN_THREADS; t++) {
        workers[t] = (struct frozen_worker){&s, t};
        CHECK(pthread_create(&threads[t], NULL, frozen_reader, &workers[t]) == 0);
    }
    for (unsigned t = 0; t < FROZEN_THREADS; t++) CHECK(pthread_join(threads[t], NULL) == 0);
    pthread_barrier_destroy(&s.start);
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(atomic_load(&s.wrong) == 0);
    CHECK(atomic_load(&s.answers) ==
          (unsigned long)FROZEN_THREADS * FROZEN_PASSES * (3 * PROBE_KEYS + 2 * PROBE_HASHES));
    printf("  frozen threads: %lu answers from %d threads and a second process, all exact\n",
           atomic_load(&s.answers), FROZEN_THREADS);
    ccf_frozen_free(z);
    free(path);
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

/* ---------------------------------------------------------------------- */
/* Growing filters (ccf_scalable). */

/* A pointer no call may write: *out must keep it on every error. */
#define SCALABLE_SENTINEL ((ccf_scalable *)(uintptr_t)0x5e47)

static ccf_scalable *scalable_seeded(size_t initial, double rate, size_t max_levels) {
    ccf_scalable *f = NULL;
    CHECK_STATUS(ccf_scalable_new_with_options(initial, rate, 0, max_levels, &BATCH_SEED, &f),
                 CCF_OK);
    CHECK(f != NULL);
    return f;
}

/* Saves `f` to `path` and returns the file's bytes. */
static unsigned char *scalable_save_and_read(const ccf_scalable *f, const char *path, size_t *len) {
    CHECK_STATUS(ccf_scalable_save(f, path), CCF_OK);
    unsigned char *bytes = read_file(path, len);
    CHECK(bytes != NULL && *len > 72);
    return bytes;
}

static void check_scalable_load_refused(const char *path, ccf_status want) {
    ccf_scalable *f = SCALABLE_SENTINEL;
    CHECK_STATUS(ccf_scalable_load(path, &f), want);
    CHECK(f == SCALABLE_SENTINEL);
}

/* Starts at 1000 items and takes 100,000: every item found, more than one
 * level, the bound within the configured rate. */
static void test_scalable_growth(void) {
    enum { N = 100000 };
    const double rates[] = {0.0 /* the default, 1e-3 */, 1e-4};
    for (int r = 0; r < 2; r++) {
        const double rate = rates[r] == 0.0 ? 1e-3 : rates[r];
        ccf_scalable *f = NULL;
        CHECK_STATUS(ccf_scalable_new(1000, rates[r], &f), CCF_OK);
        CHECK(ccf_scalable_levels(f) == 1 && ccf_scalable_is_empty(f));
        CHECK(ccf_scalable_capacity(f) >= 1000);
        CHECK(ccf_scalable_false_positive_bound(f) > 0.0 &&
              ccf_scalable_false_positive_bound(f) <= rate);
        size_t first_capacity = ccf_scalable_capacity(f);
        size_t first_memory = ccf_scalable_memory_usage(f);
        CHECK(first_memory > first_capacity);
        for (uint64_t i = 0; i < N; i++) CHECK_STATUS(ccf_scalable_insert_hash(f, fmix64(i)), CCF_OK);
        CHECK(ccf_scalable_len(f) == N && !ccf_scalable_is_empty(f));
        CHECK(ccf_scalable_levels(f) > 1);
        CHECK(ccf_scalable_capacity(f) >= N && ccf_scalable_capacity(f) > first_capacity);
        CHECK(ccf_scalable_memory_usage(f) > first_memory);
        double load = ccf_scalable_load_factor(f);
        CHECK(load == (double)N / (double)ccf_scalable_capacity(f) && load > 0.3 && load <= 1.0);
        double bound = ccf_scalable_false_positive_bound(f);
        CHECK(bound > 0.0 && bound <= rate);
        for (uint64_t i = 0; i < N; i++) CHECK(ccf_scalable_contains_hash(f, fmix64(i)));
        static uint64_t hashes[N];
        static bool out[N];
        for (unsigned i = 0; i < N; i++) hashes[i] = fmix64(i);
        memset(out, 0xAA, sizeof out);
        ccf_scalable_contains_hash_batch(f, hashes, N, out);
        for (unsigned i = 0; i < N; i++) CHECK(out[i]);
        /* Absent hashes: false positives within the bound (generously). */
        unsigned fp = 0;
        for (uint64_t i = N; i < 3 * N; i++) fp += ccf_scalable_contains_hash(f, fmix64(i));
        CHECK(fp <= 2 * bound * 2 * N + 10);
        printf("  scalable growth (rate %g): %zu levels, bound %.3g, %u false positives in %d\n",
               rate, ccf_scalable_levels(f), bound, fp, 2 * N);
        ccf_scalable_free(f);
    }

    /* Byte keys, from a first level of 100 items: every key found. 32-bit
     * levels (rate 1e-7), so that no remove below takes the copy of a
     * colliding key in a newer level (see ccf_scalable). */
    ccf_scalable *f = scalable_seeded(100, 1e-7, 0);
    char key[32];
    for (unsigned i = 0; i < 20000; i++) {
        key_text(key, sizeof key, "grow", i);
        CHECK_STATUS(ccf_scalable_insert(f, key, strlen(key)), CCF_OK);
    }
    CHECK(ccf_scalable_levels(f) > 1 && ccf_scalable_len(f) == 20000);
    for (unsigned i = 0; i < 20000; i++) {
        key_text(key, sizeof key, "grow", i);
        CHECK(ccf_scalable_contains(f, key, strlen(key)));
        CHECK(ccf_scalable_count(f, key, strlen(key)) >= 1);
    }
    /* Removes: the emptied level of old keys is retired, the filter keeps
     * working. */
    size_t levels = ccf_scalable_levels(f);
    for (unsigned i = 0; i < 20000; i++) {
        key_text(key, sizeof key, "grow", i);
        CHECK(ccf_scalable_remove(f, key, strlen(key)));
    }
    CHECK(ccf_scalable_is_empty(f));
    CHECK(ccf_scalable_levels(f) < levels);
    CHECK_STATUS(ccf_scalable_insert(f, "again", 5), CCF_OK);
    CHECK(ccf_scalable_contains(f, "again", 5));
    ccf_scalable_free(f);
}

/* Every status of the ccf_scalable functions, and every NULL argument. */
static void test_scalable_statuses(void) {
    /* Construction: the defaults, and refused options with *out untouched. */
    ccf_scalable *f = NULL;
    CHECK_STATUS(ccf_scalable_new(0, -0.0, &f), CCF_OK); /* capacity 0 is 1; -0.0 the default */
    CHECK(ccf_scalable_levels(f) == 1 && ccf_scalable_capacity(f) >= 1);
    CHECK(ccf_scalable_false_positive_bound(f) <= 1e-3);
    CHECK_STATUS(ccf_scalable_insert(f, "x", 1), CCF_OK);
    CHECK(ccf_scalable_contains(f, "x", 1));
    ccf_scalable_free(f);
    const double bad_rates[] = {1.0, 1.5, -0.5, 1e-8 /* below the 32 levels' reserve */,
                                NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad_rates / sizeof bad_rates[0]; i++) {
        f = SCALABLE_SENTINEL;
        CHECK_STATUS(ccf_scalable_new(100, bad_rates[i], &f), CCF_INVALID_ARGUMENT);
        CHECK(f == SCALABLE_SENTINEL);
    }
    f = SCALABLE_SENTINEL;
    CHECK_STATUS(ccf_scalable_new(SIZE_MAX, 0.0, &f), CCF_INVALID_ARGUMENT);
    CHECK(f == SCALABLE_SENTINEL);
    CHECK_STATUS(ccf_scalable_new(100, 0.0, NULL), CCF_INVALID_ARGUMENT);
    if (sizeof(size_t) > 4) /* a factor the file format cannot record */
        CHECK_STATUS(ccf_scalable_new_with_options(100, 0.0, (size_t)UINT32_MAX + 1, 0, NULL, &f),
                     CCF_INVALID_ARGUMENT);
    CHECK(f == SCALABLE_SENTINEL);
    /* A factor of 1: every level the size of the first. */
    ccf_scalable *flat = NULL;
    CHECK_STATUS(ccf_scalable_new_with_options(100, 0.0, 1, 0, NULL, &flat), CCF_OK);
    size_t first = ccf_scalable_capacity(flat);
    for (uint64_t i = 0; i < 500; i++) CHECK_STATUS(ccf_scalable_insert_hash(flat, fmix64(i)), CCF_OK);
    CHECK(ccf_scalable_levels(flat) > 3);
    CHECK(ccf_scalable_capacity(flat) == first * ccf_scalable_levels(flat));
    ccf_scalable_free(flat);
    CHECK_STATUS(ccf_scalable_new_with_options(100, 0.0, 0, 65, NULL, &f), CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_scalable_new_with_options(100, 0.0, 0, 0, NULL, NULL), CCF_INVALID_ARGUMENT);
    CHECK(f == SCALABLE_SENTINEL);
    /* 1e-8 is too low for the reserve of 32 levels (32 * 8 / 2^32), but
     * fits 4 levels'. */
    f = NULL;
    CHECK_STATUS(ccf_scalable_new_with_options(100, 1e-8, 4, 4, NULL, &f), CCF_OK);
    CHECK(ccf_scalable_false_positive_bound(f) <= 1e-8);
    ccf_scalable_free(f);
    ccf_status s;
#if SIZE_MAX > 0xFFFFFFFFu
    /* A first level of 62 GiB (as in test_allocation_failure). */
    f = SCALABLE_SENTINEL;
    s = ccf_scalable_new(15000000000ull, 1e-7, &f);
    if (big_allocation_must_fail(62ull << 30)) {
        CHECK_STATUS(s, CCF_ALLOCATION_FAILED);
        CHECK(f == SCALABLE_SENTINEL);
    } else {
        CHECK(s == CCF_OK || s == CCF_ALLOCATION_FAILED);
        if (s == CCF_OK) ccf_scalable_free(f);
    }
#endif

    /* A fixed seed: identical filters save identical files. */
    ccf_scalable *a = scalable_seeded(50, 0.0, 0), *b = scalable_seeded(50, 0.0, 0);
    for (uint64_t i = 0; i < 500; i++) {
        char key[32];
        key_text(key, sizeof key, "seeded", (unsigned)i);
        CHECK_STATUS(ccf_scalable_insert(a, key, strlen(key)), CCF_OK);
        CHECK_STATUS(ccf_scalable_insert(b, key, strlen(key)), CCF_OK);
    }
    char *pa = path_in(tmp_dir, "scalable-seed-a.ccf"), *pb = path_in(tmp_dir, "scalable-seed-b.ccf");
    size_t la, lb;
    unsigned char *ba = scalable_save_and_read(a, pa, &la), *bb = scalable_save_and_read(b, pb, &lb);
    CHECK(la == lb && memcmp(ba, bb, la) == 0);
    free(ba), free(bb), free(pa), free(pb);
    ccf_scalable_free(a), ccf_scalable_free(b);

    /* CCF_FULL: only when max_levels levels are full. */
    f = scalable_seeded(100, 0.0, 2);
    uint64_t n = 0;
    while ((s = ccf_scalable_insert_hash(f, fmix64(n + 5))) == CCF_OK) n++;
    CHECK_STATUS(s, CCF_FULL);
    CHECK(ccf_scalable_levels(f) == 2);
    CHECK(ccf_scalable_len(f) == n && n > 0.85 * ccf_scalable_capacity(f));
    for (uint64_t i = 0; i < n; i++) CHECK(ccf_scalable_contains_hash(f, fmix64(i + 5)));
    unsigned full = 0;
    for (unsigned i = 0; i < 50; i++) {
        char key[32];
        key_text(key, sizeof key, "unique-more", i);
        bool added = true;
        ccf_status u = ccf_scalable_insert_unique(f, key, strlen(key), &added);
        CHECK(u == CCF_FULL || u == CCF_OK);
        if (u == CCF_FULL) {
            CHECK(!added);
            full++;
        }
    }
    CHECK(full > 0);
    CHECK(ccf_scalable_levels(f) == 2);
    ccf_scalable_free(f);

    /* CCF_TOO_MANY_DUPLICATES: 8 copies in the newest level. */
    f = scalable_seeded(100, 0.0, 0);
    for (int i = 0; i < 8; i++) {
        CHECK_STATUS(ccf_scalable_insert(f, "dup", 3), CCF_OK);
        CHECK_STATUS(ccf_scalable_insert_hash(f, 99), CCF_OK);
    }
    CHECK_STATUS(ccf_scalable_insert(f, "dup", 3), CCF_TOO_MANY_DUPLICATES);
    CHECK_STATUS(ccf_scalable_insert_hash(f, 99), CCF_TOO_MANY_DUPLICATES);
    CHECK(ccf_scalable_len(f) == 16 && ccf_scalable_levels(f) == 1);
    CHECK(ccf_scalable_count(f, "dup", 3) == 8 && ccf_scalable_count_hash(f, 99) == 8);
    for (size_t k = 8; k-- > 0;) {
        CHECK(ccf_scalable_remove(f, "dup", 3) && ccf_scalable_remove_hash(f, 99));
        CHECK(ccf_scalable_count(f, "dup", 3) == k && ccf_scalable_count_hash(f, 99) == k);
    }
    CHECK(!ccf_scalable_remove(f, "dup", 3) && !ccf_scalable_remove_hash(f, 99));
    CHECK(!ccf_scalable_contains(f, "dup", 3) && !ccf_scalable_contains_hash(f, 99));

    /* The empty key, NULL or not; a NULL key with a length is refused. */
    CHECK_STATUS(ccf_scalable_insert(f, NULL, 0), CCF_OK);
    CHECK(ccf_scalable_contains(f, "", 0) && ccf_scalable_contains(f, "ignored", 0));
    CHECK(ccf_scalable_count(f, NULL, 0) == 1);
    CHECK_STATUS(ccf_scalable_insert(f, NULL, 1), CCF_INVALID_ARGUMENT);
    bool added = true;
    CHECK_STATUS(ccf_scalable_insert_unique(f, NULL, 1, &added), CCF_INVALID_ARGUMENT);
    CHECK(!added);
    CHECK(!ccf_scalable_contains(f, NULL, 5));
    CHECK(!ccf_scalable_remove(f, NULL, 5));
    CHECK(ccf_scalable_count(f, NULL, 5) == 0);
    CHECK(ccf_scalable_len(f) == 1);

    /* clear: empty, one level, usable. */
    for (uint64_t i = 0; i < 2000; i++) CHECK_STATUS(ccf_scalable_insert_hash(f, fmix64(i)), CCF_OK);
    CHECK(ccf_scalable_levels(f) > 1);
    CHECK_STATUS(ccf_scalable_clear(f), CCF_OK);
    CHECK(ccf_scalable_is_empty(f) && ccf_scalable_levels(f) == 1);
    CHECK(!ccf_scalable_contains(f, "", 0) && !ccf_scalable_contains_hash(f, fmix64(1)));
    for (uint64_t i = 0; i < 2000; i++) CHECK_STATUS(ccf_scalable_insert_hash(f, fmix64(i)), CCF_OK);
    for (uint64_t i = 0; i < 2000; i++) CHECK(ccf_scalable_contains_hash(f, fmix64(i)));
    ccf_scalable_free(f);

    /* A NULL filter: an error or the documented value from every function. */
    ccf_scalable_free(NULL);
    CHECK_STATUS(ccf_scalable_insert(NULL, "k", 1), CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_scalable_insert(NULL, NULL, 0), CCF_INVALID_ARGUMENT);
    added = true;
    CHECK_STATUS(ccf_scalable_insert_unique(NULL, "k", 1, &added), CCF_INVALID_ARGUMENT);
    CHECK(!added);
    CHECK_STATUS(ccf_scalable_insert_unique(NULL, "k", 1, NULL), CCF_INVALID_ARGUMENT);
    CHECK(!ccf_scalable_contains(NULL, "k", 1));
    CHECK(!ccf_scalable_remove(NULL, "k", 1));
    CHECK_STATUS(ccf_scalable_insert_hash(NULL, 1), CCF_INVALID_ARGUMENT);
    added = true;
    CHECK_STATUS(ccf_scalable_insert_unique_hash(NULL, 1, &added), CCF_INVALID_ARGUMENT);
    CHECK(!added);
    CHECK(!ccf_scalable_contains_hash(NULL, 1));
    CHECK(!ccf_scalable_remove_hash(NULL, 1));
    CHECK(ccf_scalable_count(NULL, "k", 1) == 0);
    CHECK(ccf_scalable_count_hash(NULL, 1) == 0);
    CHECK(ccf_scalable_len(NULL) == 0);
    CHECK(ccf_scalable_is_empty(NULL));
    CHECK(ccf_scalable_capacity(NULL) == 0);
    CHECK(ccf_scalable_load_factor(NULL) == 0.0);
    CHECK(ccf_scalable_levels(NULL) == 0);
    CHECK(ccf_scalable_memory_usage(NULL) == 0);
    CHECK(ccf_scalable_false_positive_bound(NULL) == 0.0);
    CHECK_STATUS(ccf_scalable_clear(NULL), CCF_INVALID_ARGUMENT);
    const void *key = "k";
    size_t len = 1, inserted = 7;
    uint64_t hash = 1;
    bool flag = true;
    CHECK_STATUS(ccf_scalable_insert_batch(NULL, &key, &len, 1, &inserted), CCF_INVALID_ARGUMENT);
    CHECK(inserted == 0);
    inserted = 7;
    CHECK_STATUS(ccf_scalable_insert_hash_batch(NULL, &hash, 1, &inserted), CCF_INVALID_ARGUMENT);
    CHECK(inserted == 0);
    CHECK_STATUS(ccf_scalable_remove_batch(NULL, &key, &len, 1, &flag), CCF_INVALID_ARGUMENT);
    CHECK(!flag);
    flag = true;
    CHECK_STATUS(ccf_scalable_remove_hash_batch(NULL, &hash, 1, &flag), CCF_INVALID_ARGUMENT);
    CHECK(!flag);
    flag = true;
    ccf_scalable_contains_batch(NULL, &key, &len, 1, &flag);
    CHECK(!flag);
    flag = true;
    ccf_scalable_contains_hash_batch(NULL, &hash, 1, &flag);
    CHECK(!flag);
    char *p = path_in(tmp_dir, "scalable-null.ccf");
    CHECK_STATUS(ccf_scalable_save(NULL, p), CCF_INVALID_ARGUMENT);
    CHECK(access(p, F_OK) != 0); /* nothing was created */
    free(p);
}

/* insert_unique: each key goes in once, singly or racing nothing, across
 * growth; a second call reports it present. */
static void test_scalable_insert_unique(void) {
    enum { N = 5000 };
    /* 32-bit levels (rate 1e-7): no key here is mistaken for another. */
    ccf_scalable *f = scalable_seeded(64, 1e-7, 0);
    char key[32];
    for (unsigned i = 0; i < N; i++) {
        key_text(key, sizeof key, "once", i);
        bool added = false;
        CHECK_STATUS(ccf_scalable_insert_unique(f, key, strlen(key), &added), CCF_OK);
        CHECK(added);
        added = true;
        CHECK_STATUS(ccf_scalable_insert_unique(f, key, strlen(key), &added), CCF_OK);
        CHECK(!added);
        CHECK_STATUS(ccf_scalable_insert_unique(f, key, strlen(key), NULL), CCF_OK);
    }
    CHECK(ccf_scalable_levels(f) > 1);
    CHECK(ccf_scalable_len(f) == N);
    /* Keys added in old levels are still seen as present from the newest. */
    for (unsigned i = 0; i < N; i++) {
        key_text(key, sizeof key, "once", i);
        bool added = true;
        CHECK_STATUS(ccf_scalable_insert_unique(f, key, strlen(key), &added), CCF_OK);
        CHECK(!added);
        CHECK(ccf_scalable_count(f, key, strlen(key)) == 1);
    }
    /* Hashes. */
    for (uint64_t i = 0; i < N; i++) {
        bool added = false;
        CHECK_STATUS(ccf_scalable_insert_unique_hash(f, fmix64(i + 777), &added), CCF_OK);
        CHECK(added);
        CHECK_STATUS(ccf_scalable_insert_unique_hash(f, fmix64(i + 777), &added), CCF_OK);
        CHECK(!added);
    }
    CHECK(ccf_scalable_len(f) == 2 * N);
    /* A key inserted 8 times with ccf_scalable_insert is present. */
    for (int i = 0; i < 8; i++) CHECK_STATUS(ccf_scalable_insert(f, "multi", 5), CCF_OK);
    bool added = true;
    CHECK_STATUS(ccf_scalable_insert_unique(f, "multi", 5, &added), CCF_OK);
    CHECK(!added && ccf_scalable_count(f, "multi", 5) == 8);
    ccf_scalable_free(f);
}

/* Batches: insert reports how many went in (stopping at the first
 * refusal, growing on the way), remove flags exactly which keys had a copy. */
static void test_scalable_batches(void) {
    enum { N = 200 };
    static char text[N][KEY_TEXT];
    const void *keys[2 * N];
    size_t lens[2 * N];
    uint64_t hashes[2 * N];
    make_keys(text, keys, lens, N, "scalable-batch", 0);
    keys[70] = NULL, lens[70] = 0; /* the empty key */
    for (unsigned i = 0; i < N; i++) hashes[i] = fmix64(i + 31000);

    /* Into a first level of 8 items: all go in, the filter grows, and
     * batch lookups answer as single ones (an invalid key: false). */
    ccf_scalable *f = scalable_seeded(8, 0.0, 0);
    size_t inserted = 12345;
    CHECK_STATUS(ccf_scalable_insert_batch(f, keys, lens, N, &inserted), CCF_OK);
    CHECK(inserted == N && ccf_scalable_len(f) == N && ccf_scalable_levels(f) > 1);
    inserted = 12345;
    CHECK_STATUS(ccf_scalable_insert_hash_batch(f, hashes, N, &inserted), CCF_OK);
    CHECK(inserted == N && ccf_scalable_len(f) == 2 * N);
    bool out[2 * N];
    memset(out, 0xAA, sizeof out);
    ccf_scalable_contains_batch(f, keys, lens, N, out);
    for (unsigned i = 0; i < N; i++) CHECK(out[i] && ccf_scalable_contains(f, keys[i], lens[i]));
    memset(out, 0xAA, sizeof out);
    ccf_scalable_contains_hash_batch(f, hashes, N, out);
    for (unsigned i = 0; i < N; i++) CHECK(out[i]);
    const void *saved = keys[129];
    keys[129] = NULL, lens[129] = 3;
    memset(out, 0xAA, sizeof out);
    ccf_scalable_contains_batch(f, keys, lens, N, out);
    CHECK(!out[129] && out[128] && out[130] && out[70]);
    /* The same invalid key refuses a whole insert batch, and a remove batch. */
    inserted = 12345;
    CHECK_STATUS(ccf_scalable_insert_batch(f, keys, lens, N, &inserted), CCF_INVALID_ARGUMENT);
    CHECK(inserted == 0 && ccf_scalable_len(f) == 2 * N);
    memset(out, 1, sizeof out);
    CHECK_STATUS(ccf_scalable_remove_batch(f, keys, lens, N, out), CCF_INVALID_ARGUMENT);
    for (unsigned i = 0; i < N; i++) CHECK(!out[i]);
    CHECK(ccf_scalable_len(f) == 2 * N);
    keys[129] = saved, lens[129] = strlen(saved);
    /* Other NULL arguments; n == 0 takes NULL arrays and writes nothing. */
    inserted = 12345;
    CHECK_STATUS(ccf_scalable_insert_batch(f, NULL, lens, N, &inserted), CCF_INVALID_ARGUMENT);
    CHECK(inserted == 0);
    CHECK_STATUS(ccf_scalable_insert_batch(f, keys, NULL, N, NULL), CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_scalable_insert_hash_batch(f, NULL, N, &inserted), CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_scalable_remove_batch(f, NULL, lens, N, NULL), CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_scalable_remove_hash_batch(f, NULL, N, NULL), CCF_INVALID_ARGUMENT);
    inserted = 12345;
    CHECK_STATUS(ccf_scalable_insert_batch(f, NULL, NULL, 0, &inserted), CCF_OK);
    CHECK(inserted == 0);
    CHECK_STATUS(ccf_scalable_insert_hash_batch(f, NULL, 0, NULL), CCF_OK);
    CHECK_STATUS(ccf_scalable_remove_batch(f, NULL, NULL, 0, NULL), CCF_OK);
    CHECK_STATUS(ccf_scalable_remove_hash_batch(f, NULL, 0, NULL), CCF_OK);
    memset(out, 1, sizeof out);
    ccf_scalable_contains_batch(f, NULL, lens, N, out);
    for (unsigned i = 0; i < N; i++) CHECK(!out[i]);
    memset(out, 1, sizeof out);
    ccf_scalable_contains_batch(f, keys, NULL, N, out);
    for (unsigned i = 0; i < N; i++) CHECK(!out[i]);
    memset(out, 1, sizeof out);
    ccf_scalable_contains_hash_batch(f, NULL, N, out);
    for (unsigned i = 0; i < N; i++) CHECK(!out[i]);
    ccf_scalable_contains_batch(f, keys, lens, N, NULL);
    ccf_scalable_contains_hash_batch(f, hashes, N, NULL);
    out[0] = true;
    ccf_scalable_contains_batch(f, keys, lens, 0, out);
    ccf_scalable_contains_hash_batch(f, hashes, 0, out);
    CHECK_STATUS(ccf_scalable_remove_batch(f, keys, lens, 0, out), CCF_OK);
    CHECK(out[0]); /* n == 0 writes nothing */
    CHECK(ccf_scalable_len(f) == 2 * N);
    ccf_scalable_free(f);

    /* A refusal in a later chunk: 60 distinct keys, then 12 copies of one
     * key; the ninth copy (index 68) stops the batch. */
    static char mixed_text[60][KEY_TEXT];
    const void *mixed[72];
    size_t mixed_lens[72];
    uint64_t dup_hashes[72];
    make_keys(mixed_text, mixed, mixed_lens, 60, "scalable-mixed", 0);
    for (unsigned i = 0; i < 72; i++) dup_hashes[i] = i < 60 ? fmix64(i + 1) : fmix64(77);
    for (unsigned i = 60; i < 72; i++) mixed[i] = "dup", mixed_lens[i] = 3;
    f = scalable_seeded(1000, 0.0, 0); /* one level: all 8 copies in it */
    inserted = 12345;
    CHECK_STATUS(ccf_scalable_insert_batch(f, mixed, mixed_lens, 72, &inserted),
                 CCF_TOO_MANY_DUPLICATES);
    CHECK(inserted == 68 && ccf_scalable_len(f) == 68 && ccf_scalable_levels(f) == 1);
    for (unsigned i = 0; i < 60; i++) CHECK(ccf_scalable_contains(f, mixed[i], mixed_lens[i]));
    inserted = 12345;
    CHECK_STATUS(ccf_scalable_insert_hash_batch(f, dup_hashes, 72, &inserted),
                 CCF_TOO_MANY_DUPLICATES);
    CHECK(inserted == 68 && ccf_scalable_len(f) == 136 && ccf_scalable_levels(f) == 1);
    ccf_scalable_free(f);

    /* CCF_FULL in a batch: max 2 levels; the batch stops exactly where the
     * same inserts one at a time into a twin stop, keeping the keys before. */
    for (int kind = 0; kind < 2; kind++) {
        ccf_scalable *a = scalable_seeded(20, 0.0, 2), *b = scalable_seeded(20, 0.0, 2);
        size_t first_refused = 0;
        ccf_status want = CCF_OK;
        for (unsigned i = 0; i < N && want == CCF_OK; i++) {
            want = kind ? ccf_scalable_insert_hash(b, hashes[i])
                        : ccf_scalable_insert(b, keys[i], lens[i]);
            if (want == CCF_OK) first_refused = i + 1;
        }
        CHECK_STATUS(want, CCF_FULL);
        inserted = 12345;
        ccf_status got = kind ? ccf_scalable_insert_hash_batch(a, hashes, N, &inserted)
                              : ccf_scalable_insert_batch(a, keys, lens, N, &inserted);
        CHECK_STATUS(got, CCF_FULL);
        CHECK(inserted == first_refused && inserted > 20 && inserted < N);
        CHECK(ccf_scalable_len(a) == inserted && ccf_scalable_levels(a) == 2);
        for (size_t i = 0; i < inserted; i++)
            CHECK(kind ? ccf_scalable_contains_hash(a, hashes[i])
                       : ccf_scalable_contains(a, keys[i], lens[i]));
        char *pa = path_in(tmp_dir, "scalable-full-a.ccf"), *pb = path_in(tmp_dir, "scalable-full-b.ccf");
        size_t la, lb;
        unsigned char *ba = scalable_save_and_read(a, pa, &la);
        unsigned char *bb = scalable_save_and_read(b, pb, &lb);
        CHECK(la == lb && memcmp(ba, bb, la) == 0);
        free(ba), free(bb), free(pa), free(pb);
        ccf_scalable_free(a), ccf_scalable_free(b);
    }

    /* Remove batches, in a filter grown from 16 items: key i has i % 4
     * copies; the batch lists every key twice, so the first listing needs
     * one copy and the second two. Filler hashes first grow the filter to 7
     * levels, so that every copy below goes into one fresh level with room
     * for all of them (the batch's expectations count copies per level
     * simply). 32-bit levels: no absent key here is a false positive
     * (checked). */
    memcpy(keys + N, keys, N * sizeof keys[0]);
    memcpy(lens + N, lens, N * sizeof lens[0]);
    memcpy(hashes + N, hashes, N * sizeof hashes[0]);
    for (int kind = 0; kind < 2; kind++) {
        f = scalable_seeded(16, 1e-7, 0);
        size_t filler = 0;
        while (ccf_scalable_levels(f) < 7)
            CHECK_STATUS(ccf_scalable_insert_hash(f, fmix64(1000000 + filler++)), CCF_OK);
        size_t total = 0, left = 0;
        for (unsigned c = 0; c < 3; c++)
            for (unsigned i = 0; i < N; i++)
                if (i % 4 > c)
                    CHECK_STATUS(kind ? ccf_scalable_insert_hash(f, hashes[i])
                                      : ccf_scalable_insert(f, keys[i], lens[i]),
                                 CCF_OK);
        for (unsigned i = 0; i < N; i++) {
            total += i % 4;
            left += i % 4 == 3;
            if (i % 4 == 0)
                CHECK(!(kind ? ccf_scalable_contains_hash(f, hashes[i])
                             : ccf_scalable_contains(f, keys[i], lens[i])));
        }
        CHECK(ccf_scalable_len(f) == filler + total && ccf_scalable_levels(f) == 7);
        bool removed[2 * N];
        memset(removed, 0xAA, sizeof removed); /* not valid bools: all overwritten */
        CHECK_STATUS(kind ? ccf_scalable_remove_hash_batch(f, hashes, 2 * N, removed)
                          : ccf_scalable_remove_batch(f, keys, lens, 2 * N, removed),
                     CCF_OK);
        size_t removed_count = 0;
        for (unsigned i = 0; i < N; i++) {
            CHECK(removed[i] == (i % 4 >= 1));
            CHECK(removed[N + i] == (i % 4 >= 2));
            removed_count += removed[i] + removed[N + i];
            size_t copies = kind ? ccf_scalable_count_hash(f, hashes[i])
                                 : ccf_scalable_count(f, keys[i], lens[i]);
            CHECK(copies == (i % 4 == 3));
        }
        CHECK(ccf_scalable_len(f) == filler + left && total - removed_count == left);
        /* `removed` NULL: only the removes. */
        CHECK_STATUS(kind ? ccf_scalable_insert_hash_batch(f, hashes, N, NULL)
                          : ccf_scalable_insert_batch(f, keys, lens, N, NULL),
                     CCF_OK);
        CHECK(ccf_scalable_len(f) == filler + left + N);
        CHECK_STATUS(kind ? ccf_scalable_remove_hash_batch(f, hashes, N, NULL)
                          : ccf_scalable_remove_batch(f, keys, lens, N, NULL),
                     CCF_OK);
        CHECK(ccf_scalable_len(f) == filler + left);
        ccf_scalable_free(f);
    }
}

/* Save and load: the loaded filter answers exactly as the saved one, and
 * grows on; files of the other kind are refused with CCF_CORRUPT. */
static void test_scalable_save_load(void) {
    /* 32-bit levels (rate 1e-7): the removes below take no other key's
     * copy, so every key not removed must be found (the golden file below
     * has 16-bit levels). */
    ccf_scalable *f = scalable_seeded(200, 1e-7, 0);
    char key[32];
    for (unsigned i = 0; i < 6000; i++) {
        key_text(key, sizeof key, "scalable-saved", i);
        CHECK_STATUS(ccf_scalable_insert(f, key, strlen(key)), CCF_OK);
    }
    for (uint64_t i = 0; i < 1000; i++) CHECK_STATUS(ccf_scalable_insert_hash(f, fmix64(i)), CCF_OK);
    for (unsigned i = 0; i < 6000; i += 7) {
        key_text(key, sizeof key, "scalable-saved", i);
        CHECK(ccf_scalable_remove(f, key, strlen(key)));
    }
    CHECK(ccf_scalable_levels(f) > 1);
    char *path = path_in(tmp_dir, "scalable-round-trip.ccf");
    size_t len;
    unsigned char *bytes = scalable_save_and_read(f, path, &len);

    ccf_scalable *g = NULL;
    CHECK_STATUS(ccf_scalable_load(path, &g), CCF_OK);
    CHECK(g != NULL && g != f);
    CHECK(ccf_scalable_len(g) == ccf_scalable_len(f));
    CHECK(ccf_scalable_levels(g) == ccf_scalable_levels(f));
    CHECK(ccf_scalable_capacity(g) == ccf_scalable_capacity(f));
    CHECK(ccf_scalable_false_positive_bound(g) == ccf_scalable_false_positive_bound(f));
    /* Identical answers, present and absent, single and batch, counts. */
    for (unsigned i = 0; i < 12000; i++) {
        key_text(key, sizeof key, "scalable-saved", i);
        bool want = ccf_scalable_contains(f, key, strlen(key));
        CHECK(ccf_scalable_contains(g, key, strlen(key)) == want);
        CHECK(ccf_scalable_count(g, key, strlen(key)) == ccf_scalable_count(f, key, strlen(key)));
        if (i < 6000 && i % 7) CHECK(want);
    }
    static uint64_t hashes[4000];
    static bool out_f[4000], out_g[4000];
    for (unsigned i = 0; i < 4000; i++) hashes[i] = fmix64(i);
    ccf_scalable_contains_hash_batch(f, hashes, 4000, out_f);
    ccf_scalable_contains_hash_batch(g, hashes, 4000, out_g);
    CHECK(memcmp(out_f, out_g, sizeof out_f) == 0);
    for (unsigned i = 0; i < 1000; i++) CHECK(out_g[i]);
    /* It saves to the same bytes, and takes writes, growing on. */
    char *again = path_in(tmp_dir, "scalable-round-trip-again.ccf");
    size_t len2;
    unsigned char *bytes2 = scalable_save_and_read(g, again, &len2);
    CHECK(len2 == len && memcmp(bytes, bytes2, len) == 0);
    free(bytes2);
    size_t levels = ccf_scalable_levels(g);
    for (uint64_t i = 0; i < 20000; i++)
        CHECK_STATUS(ccf_scalable_insert_hash(g, fmix64(i + 50000)), CCF_OK);
    CHECK(ccf_scalable_levels(g) > levels);
    CHECK(ccf_scalable_false_positive_bound(g) <= 1e-7);
    ccf_scalable_free(g);

    /* The golden file written by Rust (tests/golden_scalable.rs): its
     * first level retired, four 16-bit levels left. */
    char *golden = path_in(golden_dir, "v3-scalable.bin");
    g = NULL;
    CHECK_STATUS(ccf_scalable_load(golden, &g), CCF_OK);
    CHECK(ccf_scalable_len(g) == 1955 && ccf_scalable_levels(g) == 4);
    CHECK(ccf_scalable_false_positive_bound(g) == 4 * 8.0 / 65536.0);
    ccf_scalable_free(g);

    /* Each kind of file is refused by the other kind's loader (and by the
     * frozen opener): CCF_CORRUPT, *out untouched. */
    check_scalable_load_refused(rust_file, CCF_CORRUPT); /* a single filter, saved by Rust */
    char *golden_single = path_in(golden_dir, "v2-fp16.bin");
    check_scalable_load_refused(golden_single, CCF_CORRUPT);
    ccf_filter *single = NULL;
    CHECK_STATUS(ccf_new(100, 0.0, &single), CCF_OK);
    char *single_path = path_in(tmp_dir, "scalable-single.ccf");
    CHECK_STATUS(ccf_save(single, single_path), CCF_OK);
    check_scalable_load_refused(single_path, CCF_CORRUPT);
    ccf_free(single);
    check_load_refused(path, CCF_CORRUPT);
    check_load_refused(golden, CCF_CORRUPT);
    check_frozen_refused(path, CCF_CORRUPT);

    /* I/O and argument errors. */
    char *missing = path_in(tmp_dir, "no-such-scalable.ccf");
    check_scalable_load_refused(missing, CCF_IO_ERROR);
    check_scalable_load_refused(tmp_dir, CCF_IO_ERROR); /* a directory */
    char *no_dir = path_in(tmp_dir, "no-such-dir/s.ccf");
    CHECK_STATUS(ccf_scalable_save(f, no_dir), CCF_IO_ERROR);
    CHECK_STATUS(ccf_scalable_save(f, tmp_dir), CCF_IO_ERROR);
    CHECK_STATUS(ccf_scalable_save(f, NULL), CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_scalable_save(f, ""), CCF_INVALID_ARGUMENT);
    check_scalable_load_refused(NULL, CCF_INVALID_ARGUMENT);
    check_scalable_load_refused("", CCF_INVALID_ARGUMENT);
    CHECK_STATUS(ccf_scalable_load(path, NULL), CCF_INVALID_ARGUMENT);

    /* Damaged files. */
    char *bad = path_in(tmp_dir, "bad-scalable.ccf");
    unsigned char *copy = malloc(len + 1);
    CHECK(copy != NULL);
    write_file(bad, (const unsigned char *)"", 0);
    check_scalable_load_refused(bad, CCF_CORRUPT); /* empty */
    write_file(bad, (const unsigned char *)"not a filter at all, just some text\n", 36);
    check_scalable_load_refused(bad, CCF_CORRUPT); /* bad magic */
    write_file(bad, bytes, 40);
    check_scalable_load_refused(bad, CCF_CORRUPT); /* truncated header */
    write_file(bad, bytes, len - 1);
    check_scalable_load_refused(bad, CCF_CORRUPT); /* truncated last level */
    memcpy(copy, bytes, len);
    copy[len] = 0;
    write_file(bad, copy, len + 1);
    check_scalable_load_refused(bad, CCF_CORRUPT); /* a byte after the end */
    copy[len / 2] ^= 0x10;
    write_file(bad, copy, len);
    check_scalable_load_refused(bad, CCF_CORRUPT); /* a flipped bit in a level */
    memcpy(copy, bytes, len);
    copy[20] = 1;
    write_file(bad, copy, len);
    check_scalable_load_refused(bad, CCF_CORRUPT); /* growth factor changed (header checksum) */
    write_file(bad, bytes, len);
    g = NULL;
    CHECK_STATUS(ccf_scalable_load(bad, &g), CCF_OK); /* the intact bytes load */
    ccf_scalable_free(g);

    free(copy), free(bad), free(no_dir), free(missing), free(single_path), free(golden_single);
    free(golden), free(again), free(bytes), free(path);
    ccf_scalable_free(f);
}

/* Threads: writers grow a filter from a first level of 64 items while
 * readers check keys inserted before the threads started, one thread
 * saves it, and two race insert_unique on one key set. Exact
 * expectations: zero misses, the exact final length. */
enum {
    SC_BASE_KEYS = 5000,
    SC_WRITERS = 2,
    SC_WRITER_KEYS = 40000,
    SC_READERS = 2,
    SC_UNIQUE_THREADS = 2,
    SC_UNIQUE_KEYS = 5000
};

struct scalable_shared {
    ccf_scalable *f;
    pthread_barrier_t start;
    atomic_int writers_left;
    atomic_ulong misses;
    atomic_ulong reader_passes;
    atomic_ulong overlapping_passes;
    const char *snapshot;
    bool unique_added[SC_UNIQUE_THREADS][SC_UNIQUE_KEYS];
};

struct scalable_worker {
    struct scalable_shared *s;
    unsigned id;
};

static void *scalable_reader(void *arg) {
    struct scalable_worker *w = arg;
    struct scalable_shared *s = w->s;
    pthread_barrier_wait(&s->start);
    char text[32][32];
    const void *keys[32];
    size_t lens[32];
    bool out[32];
    unsigned long misses = 0;
    int last = 0;
    while (!last) {
        last = atomic_load(&s->writers_left) == 0;
        if (!last) atomic_fetch_add(&s->overlapping_passes, 1);
        for (unsigned i = 0; i < SC_BASE_KEYS; i += 32) {
            unsigned n = SC_BASE_KEYS - i < 32 ? SC_BASE_KEYS - i : 32;
            for (unsigned j = 0; j < n; j++) {
                base_key(text[j], sizeof text[j], i + j);
                keys[j] = text[j];
                lens[j] = strlen(text[j]);
            }
            if ((i / 32 + w->id) % 2) {
                ccf_scalable_contains_batch(s->f, keys, lens, n, out);
                for (unsigned j = 0; j < n; j++) misses += !out[j];
            } else {
                for (unsigned j = 0; j < n; j++)
                    misses += !ccf_scalable_contains(s->f, keys[j], lens[j]);
            }
        }
        atomic_fetch_add(&s->reader_passes, 1);
    }
    atomic_fetch_add(&s->misses, misses);
    return NULL;
}

static void *scalable_writer(void *arg) {
    struct scalable_worker *w = arg;
    struct scalable_shared *s = w->s;
    pthread_barrier_wait(&s->start);
    char key[32];
    unsigned long misses = 0;
    for (unsigned i = 0; i < SC_WRITER_KEYS; i++) {
        writer_key(key, sizeof key, w->id, i);
        CHECK_STATUS(ccf_scalable_insert(s->f, key, strlen(key)), CCF_OK);
        misses += !ccf_scalable_contains(s->f, key, strlen(key));
        /* Remove every other key some time after inserting it. */
        if (i >= 100 && i % 2 == 0) {
            writer_key(key, sizeof key, w->id, i - 100);
            CHECK(ccf_scalable_remove(s->f, key, strlen(key)));
        }
    }
    for (unsigned i = SC_WRITER_KEYS - 100; i < SC_WRITER_KEYS; i += 2) {
        writer_key(key, sizeof key, w->id, i);
        CHECK(ccf_scalable_remove(s->f, key, strlen(key)));
    }
    for (unsigned i = 1; i < SC_WRITER_KEYS; i += 2) {
        writer_key(key, sizeof key, w->id, i);
        misses += !ccf_scalable_contains(s->f, key, strlen(key));
    }
    atomic_fetch_add(&s->misses, misses);
    atomic_fetch_sub(&s->writers_left, 1);
    return NULL;
}

static void *scalable_saver(void *arg) {
    struct scalable_worker *w = arg;
    struct scalable_shared *s = w->s;
    pthread_barrier_wait(&s->start);
    CHECK_STATUS(ccf_scalable_save(s->f, s->snapshot), CCF_OK);
    return NULL;
}

static void *scalable_unique_inserter(void *arg) {
    struct scalable_worker *w = arg;
    struct scalable_shared *s = w->s;
    pthread_barrier_wait(&s->start);
    char key[32];
    for (unsigned i = 0; i < SC_UNIQUE_KEYS; i++) {
        key_text(key, sizeof key, "scalable-unique", i);
        bool added = false;
        CHECK_STATUS(ccf_scalable_insert_unique(s->f, key, strlen(key), &added), CCF_OK);
        s->unique_added[w->id][i] = added;
    }
    return NULL;
}

/* A growing filter whose first level was emptied (retired), saved and
 * loaded, holds no level 0: clearing it used to leave no level taking
 * inserts (capacity 0, CCF_FULL forever, a save that would not load). */
static void test_scalable_clear_after_reload(void) {
    ccf_scalable *f = scalable_seeded(100, 1e-7, 0); /* 32-bit levels */
    uint64_t first[1000];
    size_t n = 0;
    uint64_t i = 0;
    while (ccf_scalable_levels(f) == 1) {
        CHECK_STATUS(ccf_scalable_insert_hash(f, fmix64(i)), CCF_OK);
        if (ccf_scalable_levels(f) == 1) {
            CHECK(n < 1000);
            first[n++] = fmix64(i); /* went into level 0 */
        }
        i++;
    }
    for (size_t k = 0; k < n; k++) CHECK(ccf_scalable_remove_hash(f, first[k]));
    CHECK(ccf_scalable_levels(f) == 1);
    char *p = path_in(tmp_dir, "scalable-retired.ccf");
    CHECK_STATUS(ccf_scalable_save(f, p), CCF_OK);
    ccf_scalable_free(f);
    ccf_scalable *g = NULL;
    CHECK_STATUS(ccf_scalable_load(p, &g), CCF_OK);
    CHECK_STATUS(ccf_scalable_clear(g), CCF_OK);
    CHECK(ccf_scalable_is_empty(g) && ccf_scalable_levels(g) == 1);
    CHECK(ccf_scalable_capacity(g) > 0 && ccf_scalable_load_factor(g) == 0.0);
    for (uint64_t k = 0; k < 3000; k++) CHECK_STATUS(ccf_scalable_insert_hash(g, ~k), CCF_OK);
    for (uint64_t k = 0; k < 3000; k++) CHECK(ccf_scalable_contains_hash(g, ~k));
    CHECK_STATUS(ccf_scalable_save(g, p), CCF_OK);
    ccf_scalable_free(g);
    g = NULL;
    CHECK_STATUS(ccf_scalable_load(p, &g), CCF_OK);
    CHECK(ccf_scalable_len(g) == 3000 && ccf_scalable_contains_hash(g, ~(uint64_t)7));
    ccf_scalable_free(g);
    remove(p);
    free(p);
}

static void test_scalable_threads(void) {
    static struct scalable_shared s;
    memset(&s, 0, sizeof s);
    /* 32-bit levels (rate 1e-7): a remove taking a colliding key's copy in
     * a newer level, the growing filter's one source of misses, is
     * negligible, so the expectation of zero misses is exact. */
    s.f = scalable_seeded(64, 1e-7, 0);
    char key[32];
    for (unsigned i = 0; i < SC_BASE_KEYS; i++) {
        base_key(key, sizeof key, i);
        CHECK_STATUS(ccf_scalable_insert(s.f, key, strlen(key)), CCF_OK);
    }
    size_t levels_before = ccf_scalable_levels(s.f);
    atomic_init(&s.writers_left, SC_WRITERS);
    atomic_init(&s.misses, 0);
    atomic_init(&s.reader_passes, 0);
    atomic_init(&s.overlapping_passes, 0);
    char *snapshot = path_in(tmp_dir, "scalable-snapshot.ccf");
    s.snapshot = snapshot;

    enum { THREADS = SC_READERS + SC_WRITERS + 1 + SC_UNIQUE_THREADS };
    pthread_t threads[THREADS];
    struct scalable_worker workers[THREADS];
    CHECK(pthread_barrier_init(&s.start, NULL, THREADS) == 0);
    unsigned t = 0;
    for (unsigned i = 0; i < SC_READERS; i++, t++) {
        workers[t] = (struct scalable_worker){&s, i};
        CHECK(pthread_create(&threads[t], NULL, scalable_reader, &workers[t]) == 0);
    }
    for (unsigned i = 0; i < SC_WRITERS; i++, t++) {
        workers[t] = (struct scalable_worker){&s, i};
        CHECK(pthread_create(&threads[t], NULL, scalable_writer, &workers[t]) == 0);
    }
    workers[t] = (struct scalable_worker){&s, 0};
    CHECK(pthread_create(&threads[t], NULL, scalable_saver, &workers[t]) == 0);
    t++;
    for (unsigned i = 0; i < SC_UNIQUE_THREADS; i++, t++) {
        workers[t] = (struct scalable_worker){&s, i};
        CHECK(pthread_create(&threads[t], NULL, scalable_unique_inserter, &workers[t]) == 0);
    }
    for (t = 0; t < THREADS; t++) CHECK(pthread_join(threads[t], NULL) == 0);
    pthread_barrier_destroy(&s.start);

    CHECK(atomic_load(&s.misses) == 0);
    CHECK(atomic_load(&s.reader_passes) >= 2 * SC_READERS);
    CHECK(ccf_scalable_levels(s.f) > levels_before); /* it grew while the threads ran */
    printf("  scalable threads: %zu -> %zu levels; %lu reader passes over the %d base keys, "
           "%lu of them begun while writers ran\n",
           levels_before, ccf_scalable_levels(s.f), atomic_load(&s.reader_passes), SC_BASE_KEYS,
           atomic_load(&s.overlapping_passes));

    /* insert_unique: never both threads for one key. */
    size_t unique = 0;
    for (unsigned i = 0; i < SC_UNIQUE_KEYS; i++) {
        CHECK(!(s.unique_added[0][i] && s.unique_added[1][i]));
        unique += s.unique_added[0][i] || s.unique_added[1][i];
    }
    CHECK(unique >= SC_UNIQUE_KEYS - 2);

    /* Exact length: base keys, the writers' odd keys, the unique adds. */
    CHECK(ccf_scalable_len(s.f) == SC_BASE_KEYS + SC_WRITERS * (SC_WRITER_KEYS / 2) + unique);
    for (unsigned i = 0; i < SC_BASE_KEYS; i++) {
        base_key(key, sizeof key, i);
        CHECK(ccf_scalable_contains(s.f, key, strlen(key)));
    }
    for (unsigned w = 0; w < SC_WRITERS; w++)
        for (unsigned i = 1; i < SC_WRITER_KEYS; i += 2) {
            writer_key(key, sizeof key, w, i);
            CHECK(ccf_scalable_contains(s.f, key, strlen(key)));
        }

    /* The snapshot saved while writers ran holds every base key. */
    ccf_scalable *snap = NULL;
    CHECK_STATUS(ccf_scalable_load(snapshot, &snap), CCF_OK);
    CHECK(ccf_scalable_len(snap) >= SC_BASE_KEYS);
    for (unsigned i = 0; i < SC_BASE_KEYS; i++) {
        base_key(key, sizeof key, i);
        CHECK(ccf_scalable_contains(snap, key, strlen(key)));
    }
    ccf_scalable_free(snap);
    free(snapshot);
    ccf_scalable_free(s.f);
}

/* ccf_scalable_compact: an old level left with 10 items is emptied into
 * the others (growth 1: all of one size) and retired; every item stays
 * found; NULL outputs are allowed, a NULL filter is refused. */
static void test_scalable_compact(void) {
    ccf_scalable *f = NULL;
    CHECK_STATUS(ccf_scalable_new_with_options(1000, 0.0, 1, 0, &BATCH_SEED, &f), CCF_OK);
    uint64_t n = 0;
    while (ccf_scalable_levels(f) < 3) CHECK_STATUS(ccf_scalable_insert_hash(f, fmix64(n++)), CCF_OK);
    for (uint64_t i = 10; i < n - 100; i++) CHECK(ccf_scalable_remove_hash(f, fmix64(i)));
    const size_t len = ccf_scalable_len(f), levels = ccf_scalable_levels(f);
    size_t moved = 0, retired = 0;
    CHECK_STATUS(ccf_scalable_compact(f, &moved, &retired), CCF_OK);
    CHECK(moved >= 10 && retired >= 1); /* slot 0's 10, and slot 1's 99 into slot 2 */
    CHECK(ccf_scalable_levels(f) == levels - retired && ccf_scalable_len(f) == len);
    for (uint64_t i = 0; i < n; i++)
        if (i < 10 || i >= n - 100) CHECK(ccf_scalable_contains_hash(f, fmix64(i)));
    CHECK_STATUS(ccf_scalable_compact(f, NULL, NULL), CCF_OK);
    CHECK(ccf_scalable_len(f) == len);
    CHECK_STATUS(ccf_scalable_compact(NULL, &moved, &retired), CCF_INVALID_ARGUMENT);
    ccf_scalable_free(f);
}

/* Bursts of one key length answer in a hit mask exactly as the single
 * calls do; at most 64 keys, and no lens[] array. */
static void test_bursts(void) {
    ccf_filter *f = NULL;
    CHECK_STATUS(ccf_new(4096, 0.0, &f), CCF_OK);
    enum { KEY_LEN = 13, KEYS = 200 }; /* a 5-tuple's length */
    static unsigned char keys[KEYS][KEY_LEN];
    uint64_t hashes[KEYS];
    for (unsigned i = 0; i < KEYS; i++) {
        for (unsigned b = 0; b < KEY_LEN; b++) keys[i][b] = (unsigned char)(i * 31 + b * 7);
        hashes[i] = 0x9E3779B97F4A7C15ull * (i + 1);
        if (i % 3 == 0) { /* a third present */
            CHECK_STATUS(ccf_insert(f, keys[i], KEY_LEN), CCF_OK);
            CHECK_STATUS(ccf_insert_hash(f, hashes[i]), CCF_OK);
        }
    }
    const void *ptrs[64];
    for (unsigned start = 0; start + 64 <= KEYS; start += 17) {
        for (unsigned n = 0; n <= 64; n += (n < 4 ? 1 : 15)) {
            for (unsigned i = 0; i < n; i++) ptrs[i] = keys[start + i];
            uint64_t want = 0, want_hash = 0;
            for (unsigned i = 0; i < n; i++) {
                want |= (uint64_t)ccf_contains(f, keys[start + i], KEY_LEN) << i;
                want_hash |= (uint64_t)ccf_contains_hash(f, hashes[start + i]) << i;
            }
            CHECK(ccf_contains_burst(f, ptrs, KEY_LEN, n) == want);
            CHECK(ccf_contains_hash_burst(f, hashes + start, n) == want_hash);
        }
    }
    /* Every key of a full burst of present keys is found: bit 63 too. */
    unsigned present = 0;
    for (unsigned i = 0; i < KEYS && present < 64; i += 3) ptrs[present++] = keys[i];
    CHECK(present == 64 && ccf_contains_burst(f, ptrs, KEY_LEN, 64) == UINT64_MAX);
    /* A NULL key is a miss; more than 64 keys, or NULL arrays, answer 0. */
    ptrs[5] = NULL;
    CHECK(ccf_contains_burst(f, ptrs, KEY_LEN, 64) == (UINT64_MAX & ~(1ull << 5)));
    CHECK(ccf_contains_burst(f, ptrs, KEY_LEN, 65) == 0);
    CHECK(ccf_contains_hash_burst(f, hashes, 65) == 0);
    CHECK(ccf_contains_burst(f, NULL, KEY_LEN, 3) == 0);
    CHECK(ccf_contains_burst(NULL, ptrs, KEY_LEN, 3) == 0);
    CHECK(ccf_contains_hash_burst(f, NULL, 3) == 0);
    ccf_free(f);
}

/* Keys with their RSS signatures: a signed burst answers as single
 * lookups of `ccf_signed_hash`; inserted keys are found only with their own
 * signature; the hashes survive a save and load; bad arguments answer 0. */
static void test_signed_bursts(void) {
    ccf_filter *f = NULL;
    const uint64_t seed = 21;
    CHECK_STATUS(ccf_new_with_options(4096, 0.0, 16, &seed, &f), CCF_OK);
    enum { KEY_LEN = 13, KEYS = 300 };
    static unsigned char keys[KEYS][KEY_LEN];
    uint32_t rss[KEYS];
    for (unsigned i = 0; i < KEYS; i++) {
        for (unsigned b = 0; b < KEY_LEN; b++) keys[i][b] = (unsigned char)(i * 29 + b * 11);
        rss[i] = (uint32_t)(i * 2654435761u); /* what a NIC might give */
        if (i % 2 == 0) CHECK_STATUS(ccf_insert_hash(f, ccf_signed_hash(f, keys[i], KEY_LEN, rss[i])), CCF_OK);
    }
    const void *ptrs[64];
    for (unsigned start = 0; start + 64 <= KEYS; start += 23) {
        for (unsigned n = 0; n <= 64; n += (n < 4 ? 1 : 15)) {
            uint64_t want = 0;
            for (unsigned i = 0; i < n; i++) {
                ptrs[i] = keys[start + i];
                uint64_t h = ccf_signed_hash(f, keys[start + i], KEY_LEN, rss[start + i]);
                want |= (uint64_t)ccf_contains_hash(f, h) << i;
            }
            CHECK(ccf_contains_signed_burst(f, ptrs, KEY_LEN, rss + start, n) == want);
        }
    }
    /* Every inserted key is found with its signature, none with another. */
    unsigned present = 0;
    uint32_t sigs[64], other[64];
    for (unsigned i = 0; i < KEYS && present < 64; i += 2) {
        ptrs[present] = keys[i];
        sigs[present] = rss[i];
        other[present] = rss[i] ^ 0x80000000u;
        present++;
    }
    CHECK(present == 64 && ccf_contains_signed_burst(f, ptrs, KEY_LEN, sigs, 64) == UINT64_MAX);
    CHECK(__builtin_popcountll(ccf_contains_signed_burst(f, ptrs, KEY_LEN, other, 64)) <= 2);
    /* Not the key's own hash either: a signed key is another hash. */
    CHECK(ccf_signed_hash(f, keys[0], KEY_LEN, rss[0]) != ccf_signed_hash(f, keys[0], KEY_LEN, rss[0] + 1));
    /* The same hashes after a save and load (the seed and layout travel). */
    char path[4096];
    snprintf(path, sizeof path, "%s/signed.ccf", tmp_dir);
    CHECK_STATUS(ccf_save(f, path), CCF_OK);
    ccf_filter *g = NULL;
    CHECK_STATUS(ccf_load(path, &g), CCF_OK);
    CHECK(ccf_signed_hash(g, keys[7], KEY_LEN, rss[7]) == ccf_signed_hash(f, keys[7], KEY_LEN, rss[7]));
    CHECK(ccf_contains_signed_burst(g, ptrs, KEY_LEN, sigs, 64) == UINT64_MAX);
    for (unsigned i = 0; i < KEYS; i += 2) CHECK(ccf_remove_hash(g, ccf_signed_hash(g, keys[i], KEY_LEN, rss[i])));
    CHECK(ccf_is_empty(g));
    ccf_free(g);
    remove(path);
    /* A NULL key is a miss; NULL arrays, NULL filters and n > 64 answer 0. */
    ptrs[9] = NULL;
    CHECK(ccf_contains_signed_burst(f, ptrs, KEY_LEN, sigs, 64) == (UINT64_MAX & ~(1ull << 9)));
    CHECK(ccf_contains_signed_burst(f, ptrs, KEY_LEN, sigs, 65) == 0);
    CHECK(ccf_contains_signed_burst(f, ptrs, KEY_LEN, NULL, 3) == 0);
    CHECK(ccf_contains_signed_burst(f, NULL, KEY_LEN, sigs, 3) == 0);
    CHECK(ccf_contains_signed_burst(NULL, ptrs, KEY_LEN, sigs, 3) == 0);
    CHECK(ccf_signed_hash(NULL, keys[0], KEY_LEN, 1) == 0);
    CHECK(ccf_signed_hash(f, NULL, KEY_LEN, 1) == 0);
    ccf_free(f);
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
        {"bursts", test_bursts},
        {"signed_bursts", test_signed_bursts},
        {"insert_batches", test_insert_batches},
        {"remove_batches", test_remove_batches},
        {"count", test_count},
        {"stats", test_stats},
        {"null_filter", test_null_filter},
        {"save_load", test_save_load},
        {"rust_interop", test_rust_interop},
        {"golden_files", test_golden_files},
        {"frozen", test_frozen},
        {"threads", test_threads},
        {"frozen_threads", test_frozen_threads},
        {"scalable_growth", test_scalable_growth},
        {"scalable_statuses", test_scalable_statuses},
        {"scalable_insert_unique", test_scalable_insert_unique},
        {"scalable_batches", test_scalable_batches},
        {"scalable_save_load", test_scalable_save_load},
        {"scalable_clear_after_reload", test_scalable_clear_after_reload},
        {"scalable_threads", test_scalable_threads},
        {"scalable_compact", test_scalable_compact},
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
