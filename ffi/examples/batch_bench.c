/*
 * ccf_contains_hash_batch from C, against Rust's contains_hash_batch
 * (ffi/examples/batch_bench.rs does the same in Rust): the cost of the FFI
 * boundary on bursts of 32.
 *
 *   batch_bench --table PATH [--items N] [--lookups N] [--reps N]
 *
 * If PATH exists it is loaded (ccf_load); otherwise a filter for N items
 * (default 120000000: a 256 MiB table with 16-bit fingerprints) is filled
 * with the hashes key(0..N) and saved there, so every run of either
 * program probes the same table. Then `reps` times (default 5) it looks up
 * `lookups` (default 33554432) absent hashes key(N + j), cycling through
 * 2^20 of them, in bursts of 32, and prints the thread's CPU time per
 * lookup. key(i) = fmix64(i * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019), a
 * bijection, so the absent keys are truly absent and the hits counted are
 * false positives (the same count in both programs).
 *
 * Build (repository root):
 *   cargo build --release -p concurrent-cuckoo-ffi
 *   cc -O2 -Iffi/include ffi/examples/batch_bench.c target/release/libconcurrent_cuckoo_ffi.a \
 *      -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc -o target/batch_bench_c
 */
#define _POSIX_C_SOURCE 200809L

#include "concurrent_cuckoo.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { BURST = 32, QUERIES = 1 << 20 };

static uint64_t key(uint64_t i) {
    uint64_t z = i * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 33)) * 0xFF51AFD7ED558CCDull;
    z = (z ^ (z >> 33)) * 0xC4CEB9FE1A85EC53ull;
    return z ^ (z >> 33);
}

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what, ccf_status s) {
    fprintf(stderr, "%s: %s\n", what, ccf_status_message(s));
    exit(1);
}

int main(int argc, char **argv) {
    const char *table = NULL;
    uint64_t items = 120000000, lookups = 1u << 25, reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--table")) table = argv[i + 1];
        else if (!strcmp(argv[i], "--items")) items = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--lookups")) lookups = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--reps")) reps = strtoull(argv[i + 1], NULL, 10);
        else break;
    }
    if (!table || argc % 2 == 0 || lookups < BURST || reps == 0) {
        fprintf(stderr, "usage: batch_bench --table PATH [--items N] [--lookups N] [--reps N]\n");
        return 2;
    }

    ccf_filter *f = NULL;
    ccf_status s;
    if (access(table, F_OK) == 0) {
        if ((s = ccf_load(table, &f)) != CCF_OK) die("ccf_load", s);
    } else {
        const uint64_t seed = 1;
        if ((s = ccf_new_with_options(items, 0.0, 16, &seed, &f)) != CCF_OK) die("ccf_new", s);
        for (uint64_t i = 0; i < items; i++)
            if ((s = ccf_insert_hash(f, key(i))) != CCF_OK) die("ccf_insert_hash", s);
        if ((s = ccf_save(f, table)) != CCF_OK) die("ccf_save", s);
    }
    items = ccf_len(f);

    uint64_t *queries = malloc(QUERIES * sizeof *queries);
    if (!queries) return 1;
    for (uint64_t j = 0; j < QUERIES; j++) queries[j] = key(items + j);
    bool out[BURST];
    /* Warm-up: one pass over the queries (page tables, caches). */
    for (uint64_t j = 0; j < QUERIES; j += BURST) ccf_contains_hash_batch(f, queries + j, BURST, out);

    printf("C    ccf_contains_hash_batch: table %.0f MiB, %llu items, load %.3f, bursts of %d\n",
           (double)ccf_memory_usage(f) / (1 << 20), (unsigned long long)items,
           ccf_load_factor(f), BURST);
    for (uint64_t r = 0; r < reps; r++) {
        uint64_t hits = 0;
        double t0 = cpu_seconds();
        for (uint64_t done = 0; done + BURST <= lookups; done += BURST) {
            ccf_contains_hash_batch(f, queries + done % QUERIES, BURST, out);
            for (int k = 0; k < BURST; k++) hits += out[k];
        }
        double t = cpu_seconds() - t0;
        printf("C    rep %llu: %.2f ns per lookup (CPU time), %llu false positives\n",
               (unsigned long long)r, t * 1e9 / (double)(lookups / BURST * BURST),
               (unsigned long long)hits);
    }
    free(queries);
    ccf_free(f);
    return 0;
}
