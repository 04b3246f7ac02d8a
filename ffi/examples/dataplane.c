/*
 * A router dataplane in miniature, in C: the idea of examples/dataplane.rs.
 *
 * Worker threads classify bursts of 32 packets with ccf_contains_hash_batch
 * against one shared filter of active flows, keyed by each packet's 64-bit
 * flow hash (what a NIC's RSS hash would give), while a control thread
 * admits new flows and expires old ones at a steady rate. Once a second it
 * prints lookup throughput, churn, load factor, the measured false-positive
 * rate and the false-negative count, which must stay 0 (a false negative
 * would be a dropped flow): the program exits 1 if it is not.
 *
 * Build and run (from the repository root):
 *   cargo build --release -p concurrent-cuckoo-ffi
 *   cc -O2 -Iffi/include ffi/examples/dataplane.c target/release/libconcurrent_cuckoo_ffi.a \
 *      -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc -o dataplane && ./dataplane
 *
 * Flags: --seconds N (5) --flows N (4000000) --workers N (2) --churn N
 * (flows admitted and expired per second, 200000).
 */
#define _POSIX_C_SOURCE 200809L

#include "concurrent_cuckoo.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { BURST = 32 };
/* Flow ids at or above this are never admitted: their lookups measure the
 * false-positive rate. */
#define NEGATIVE_BASE (1ull << 62)
/* Ids of the flows the control thread admits and expires. */
#define CHURN_BASE (1ull << 61)

/* A flow's hash: a bijection on 64-bit ids, so distinct flows never share
 * a hash, and uniformly spread, as an RSS hash is. */
static uint64_t flow_hash(uint64_t id) {
    uint64_t z = id + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

struct args {
    unsigned seconds, workers;
    uint64_t flows, churn_per_sec;
};

struct counters {
    atomic_ullong lookups, negative_lookups, false_positives, false_negatives, churn_ops;
};

struct ctx {
    ccf_filter *filter;
    const struct args *args;
    struct counters *counters;
    atomic_bool stop;
};

struct worker_arg {
    struct ctx *ctx;
    unsigned id;
};

/* Classifies bursts: half the packets belong to long-lived flows (must
 * hit), half to unknown flows (a hit is a false positive). */
static void *worker(void *p) {
    const struct worker_arg *w = p;
    struct ctx *ctx = w->ctx;
    uint64_t state = flow_hash(w->id + 1), negative_id = NEGATIVE_BASE + ((uint64_t)w->id << 40);
    uint64_t hashes[BURST];
    bool known[BURST], out[BURST];
    while (!atomic_load_explicit(&ctx->stop, memory_order_relaxed)) {
        unsigned long long lookups = 0, negatives = 0, fps = 0, fns = 0;
        for (int round = 0; round < 1024; round++) {
            for (int i = 0; i < BURST; i++) {
                state = flow_hash(state);
                known[i] = (state & 1) == 0;
                hashes[i] = known[i] ? flow_hash((state >> 1) % ctx->args->flows)
                                     : flow_hash(++negative_id);
            }
            ccf_contains_hash_batch(ctx->filter, hashes, BURST, out);
            for (int i = 0; i < BURST; i++) {
                fns += known[i] && !out[i];
                fps += !known[i] && out[i];
                negatives += !known[i];
            }
            lookups += BURST;
        }
        atomic_fetch_add_explicit(&ctx->counters->lookups, lookups, memory_order_relaxed);
        atomic_fetch_add_explicit(&ctx->counters->negative_lookups, negatives, memory_order_relaxed);
        atomic_fetch_add_explicit(&ctx->counters->false_positives, fps, memory_order_relaxed);
        atomic_fetch_add_explicit(&ctx->counters->false_negatives, fns, memory_order_relaxed);
    }
    return NULL;
}

/* Admits a new flow and expires the oldest one, churn_per_sec times a
 * second, keeping a window of churning flows alive; checks each is still
 * found just before it expires. */
static void *control(void *p) {
    struct ctx *ctx = p;
    const uint64_t rate = ctx->args->churn_per_sec;
    const size_t window = rate / 2 > 0 ? rate / 2 : 1;
    uint64_t *live = malloc(window * sizeof *live); /* a ring of live flow ids */
    if (!live) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    size_t head = 0, count = 0;
    uint64_t next_id = CHURN_BASE, done = 0;
    const double start = now_seconds();
    while (!atomic_load_explicit(&ctx->stop, memory_order_relaxed)) {
        uint64_t due = (uint64_t)((now_seconds() - start) * (double)rate);
        if (done >= due) {
            struct timespec pause = {0, 200000};
            nanosleep(&pause, NULL);
            continue;
        }
        uint64_t end = due < done + 1024 ? due : done + 1024;
        for (; done < end; done++) {
            uint64_t id = next_id++;
            ccf_status s = ccf_insert_hash(ctx->filter, flow_hash(id));
            if (s != CCF_OK) {
                fprintf(stderr, "admitting a flow failed: %s\n", ccf_status_message(s));
                exit(1);
            }
            if (count == window) {
                uint64_t old = live[head];
                if (!ccf_contains_hash(ctx->filter, flow_hash(old)))
                    atomic_fetch_add_explicit(&ctx->counters->false_negatives, 1,
                                              memory_order_relaxed);
                if (!ccf_remove_hash(ctx->filter, flow_hash(old))) {
                    fprintf(stderr, "an admitted flow vanished\n");
                    exit(1);
                }
                live[head] = id;
                head = (head + 1) % window;
            } else {
                live[(head + count++) % window] = id;
            }
        }
        atomic_store_explicit(&ctx->counters->churn_ops, done * 2, memory_order_relaxed);
    }
    free(live);
    return NULL;
}

static uint64_t parse_number(const char *flag, const char *value) {
    char *end = NULL;
    unsigned long long v = value ? strtoull(value, &end, 10) : 0;
    if (!value || *value == '\0' || *end != '\0' || v == 0) {
        fprintf(stderr, "%s needs a positive number\n", flag);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv) {
    struct args args = {.seconds = 5, .workers = 2, .flows = 4000000, .churn_per_sec = 200000};
    for (int i = 1; i < argc; i += 2) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--seconds")) {
            args.seconds = (unsigned)parse_number(argv[i], value);
        } else if (!strcmp(argv[i], "--flows")) {
            args.flows = parse_number(argv[i], value);
        } else if (!strcmp(argv[i], "--workers")) {
            args.workers = (unsigned)parse_number(argv[i], value);
        } else if (!strcmp(argv[i], "--churn")) {
            args.churn_per_sec = parse_number(argv[i], value);
        } else {
            fprintf(stderr, "unknown flag %s; flags: --seconds --flows --workers --churn\n",
                    argv[i]);
            return 2;
        }
    }

    struct counters counters = {0};
    struct ctx ctx = {.args = &args, .counters = &counters};
    atomic_init(&ctx.stop, false);
    /* Room for the long-lived flows plus the churning ones in flight. */
    ccf_status s = ccf_new(args.flows + args.churn_per_sec, 0.0, &ctx.filter);
    if (s != CCF_OK) {
        fprintf(stderr, "ccf_new: %s\n", ccf_status_message(s));
        return 1;
    }
    printf("dataplane (C): %llu long-lived flows, %u workers, churn %llu/s, %u s; filter %.1f MiB, "
           "%u-bit fingerprints, probe %s, library %s\n",
           (unsigned long long)args.flows, args.workers, (unsigned long long)args.churn_per_sec,
           args.seconds, (double)ccf_memory_usage(ctx.filter) / (1 << 20),
           ccf_fingerprint_bits(ctx.filter), ccf_probe_backend(), ccf_version());

    double start = now_seconds();
    for (uint64_t id = 0; id < args.flows; id++) {
        s = ccf_insert_hash(ctx.filter, flow_hash(id));
        if (s != CCF_OK) {
            fprintf(stderr, "loading flow %llu: %s\n", (unsigned long long)id,
                    ccf_status_message(s));
            return 1;
        }
    }
    printf("loaded %zu flows in %.2f s (load factor %.3f)\n", ccf_len(ctx.filter),
           now_seconds() - start, ccf_load_factor(ctx.filter));

    pthread_t *threads = calloc(args.workers + 1, sizeof *threads);
    struct worker_arg *wargs = calloc(args.workers, sizeof *wargs);
    if (!threads || !wargs) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (unsigned w = 0; w < args.workers; w++) {
        wargs[w] = (struct worker_arg){&ctx, w};
        if (pthread_create(&threads[w], NULL, worker, &wargs[w]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    if (pthread_create(&threads[args.workers], NULL, control, &ctx) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        return 1;
    }

    double last = now_seconds();
    unsigned long long last_lookups = 0, last_churn = 0;
    for (unsigned second = 1; second <= args.seconds; second++) {
        struct timespec one = {1, 0};
        nanosleep(&one, NULL);
        double t = now_seconds();
        unsigned long long lookups = atomic_load(&counters.lookups);
        unsigned long long churn = atomic_load(&counters.churn_ops);
        unsigned long long negatives = atomic_load(&counters.negative_lookups);
        double fpr = (double)atomic_load(&counters.false_positives) /
                     (double)(negatives ? negatives : 1);
        printf("[%3us] lookups %7.2f Mpps | churn %7.0f ops/s | load %.4f | fpr %.2e | false "
               "negatives %llu\n",
               second, (double)(lookups - last_lookups) / (t - last) / 1e6,
               (double)(churn - last_churn) / (t - last), ccf_load_factor(ctx.filter), fpr,
               atomic_load(&counters.false_negatives));
        fflush(stdout);
        last = t, last_lookups = lookups, last_churn = churn;
    }
    atomic_store(&ctx.stop, true);
    for (unsigned w = 0; w <= args.workers; w++) pthread_join(threads[w], NULL);

    unsigned long long fns = atomic_load(&counters.false_negatives);
    unsigned long long negatives = atomic_load(&counters.negative_lookups);
    printf("done in %.1f s: %llu lookups, measured fpr %.2e (bound %.2e), false negatives %llu\n",
           now_seconds() - start, atomic_load(&counters.lookups),
           (double)atomic_load(&counters.false_positives) / (double)(negatives ? negatives : 1),
           ccf_false_positive_bound(ctx.filter), fns);
    free(threads);
    free(wargs);
    ccf_free(ctx.filter);
    if (fns != 0) {
        fprintf(stderr, "FALSE NEGATIVES: an active flow was not found\n");
        return 1;
    }
    return 0;
}
