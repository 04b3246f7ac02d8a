// Side-by-side single-thread lookups: this library through its C ABI
// against the two fastest published cuckoo filters, FastFilter's
// (fastfilter_cpp, src/cuckoo/cuckoofilter.h) and the paper's own
// (efficient/cuckoofilter, src/cuckoofilter.h), both
// CuckooFilter<uint64_t, 16>. Built and run by scripts/bench-peers.sh,
// which fetches nothing: it takes the peers' source trees as arguments.
//
//   peers [LOG2_BUCKETS...]     (default: 16 20 24)
//
// For each size: the peers' tables have 2^LOG2_BUCKETS buckets of four
// 16-bit slots and are filled to 94% (n = 0.94 * 4 * 2^LOG2_BUCKETS
// random 64-bit keys); ours is made with ccf_new_with_options(n, 16-bit)
// and gets the same keys as hashes (ccf_insert_hash_batch; our finalizer
// mixes them, as the peers' hash functions mix theirs). Then every filter
// looks up the same absent and present keys (at most 2^22 of each), one
// call per key, median of 5 runs; ours also inline
// (concurrent_cuckoo_inline.h over a ccf_view) and in bursts of 32
// (ccf_contains_hash_batch). Then the same for ours made with
// CCF_UNIFORM_HASHES, which takes the random keys as uniform hashes as
// they are (no finalizer: the keys are random, so nothing is lost; the
// peers still run their hash functions, as any key would need, and ours
// would need one too for keys that are not uniform already). Prints
// markdown tables. Built with -DCCF_BENCH_NO_VIEW against a library older
// than ccf_view_v2 and ccf_new_with_flags, it leaves the inline column at
// 0 and skips the uniform-hash table.
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#include "concurrent_cuckoo.h"
#ifndef CCF_BENCH_NO_VIEW
#include "concurrent_cuckoo_inline.h"
#else
#define CCF_UNIFORM_HASHES 1u
#endif

struct ours_result {
    double fill_mkeys, absent_mkeys, present_mkeys, absent_burst, present_burst, absent_inline,
        present_inline;
    size_t bytes, false_negatives;
};

static const size_t BURST = 32;

#ifndef CCF_BENCH_NO_VIEW
// count_found for the inline lookup. The view is copied into a local whose
// address never leaves this function, so the compiler keeps its fields in
// registers: a view reached through a pointer (or written by the library's
// call) is memory another thread could change, which the compiler must
// read again after every acquire load, that is for every key.
__attribute__((noinline)) static size_t count_found_view(const ccf_view *shared,
                                                         const uint64_t *keys, size_t n) {
    const ccf_view view = *shared;
    size_t found = 0;
    for (size_t i = 0; i < n; i++) found += ccf_view_contains_hash(&view, keys[i]) ? 1 : 0;
    return found;
}
#endif

static ours_result ours_run(const uint64_t *keys, size_t n, const uint64_t *absent, size_t m,
                            uint32_t flags) {
    ours_result r = {};
    ccf_filter *f = NULL;
    uint64_t seed = 42;
#ifndef CCF_BENCH_NO_VIEW
    ccf_status s = ccf_new_with_flags(n, 0.0, 16, &seed, flags, &f);
#else
    ccf_status s = flags ? CCF_INVALID_ARGUMENT : ccf_new_with_options(n, 0.0, 16, &seed, &f);
#endif
    if (s != CCF_OK) {
        fprintf(stderr, "ccf_new_with_flags: %s\n", ccf_status_message(s));
        exit(1);
    }
    double t0 = bench_now();
    size_t inserted = 0;
    s = ccf_insert_hash_batch(f, keys, n, &inserted);
    r.fill_mkeys = n / (bench_now() - t0) / 1e6;
    if (s != CCF_OK) {
        fprintf(stderr, "ccf_insert_hash_batch: %s after %zu\n", ccf_status_message(s), inserted);
        exit(1);
    }
    r.bytes = ccf_memory_usage(f);
    size_t sink = 0;
    size_t present = std::min(n, m);
    auto one = [f](uint64_t k) { return ccf_contains_hash(f, k); };
    r.absent_mkeys = median_mkeys(
        [&](size_t *out) {
            *out += count_found(one, absent, m);
            return m;
        },
        &sink);
    r.present_mkeys = median_mkeys(
        [&](size_t *out) {
            *out += count_found(one, keys, present);
            return present;
        },
        &sink);
    r.false_negatives = present - count_found(one, keys, present);
#ifndef CCF_BENCH_NO_VIEW
    // The inline lookup of concurrent_cuckoo_inline.h, over a local view.
    const ccf_view view = ccf_view_v2(f);
    r.absent_inline = median_mkeys(
        [&](size_t *out) {
            *out += count_found_view(&view, absent, m);
            return m;
        },
        &sink);
    r.present_inline = median_mkeys(
        [&](size_t *out) {
            *out += count_found_view(&view, keys, present);
            return present;
        },
        &sink);
    r.false_negatives += present - count_found_view(&view, keys, present);
#endif
    auto bursts = [f](const uint64_t *ks, size_t count) {
        bool answers[BURST];
        size_t found = 0;
        for (size_t i = 0; i + BURST <= count; i += BURST) {
            ccf_contains_hash_batch(f, ks + i, BURST, answers);
            for (size_t j = 0; j < BURST; j++) found += answers[j];
        }
        return found;
    };
    r.absent_burst = median_mkeys(
        [&](size_t *out) {
            *out += bursts(absent, m);
            return m / BURST * BURST;
        },
        &sink);
    r.present_burst = median_mkeys(
        [&](size_t *out) {
            *out += bursts(keys, present);
            return present / BURST * BURST;
        },
        &sink);
    if (sink == SIZE_MAX) r.false_negatives++;
    ccf_free(f);
    return r;
}

int main(int argc, char **argv) {
    std::vector<int> sizes;
    // CCF_BENCH_OURS_ONLY=1: skip the peers (a build of an older library
    // beside a newer one, in the same run).
    const char *only = getenv("CCF_BENCH_OURS_ONLY");
    const bool ours_only = only && *only == '1';
    for (int i = 1; i < argc; i++) sizes.push_back(atoi(argv[i]));
    if (sizes.empty()) sizes = {16, 20, 24};
    printf("Single thread, M keys/s (median of %d); 16-bit fingerprints; "
           "peers' tables 94%% full; ccf_probe_backend %s\n\n",
           BENCH_REPS, ccf_probe_backend());
    printf("| peers' buckets | keys | lookup | ours, one call per key | ours, inline (ccf_view) "
           "| ours, bursts of 32 | fastfilter_cpp | reference | call / faster peer "
           "| inline / faster peer | bursts / faster peer |\n");
    printf("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    std::vector<std::string> fills, uniform_rows;
    // CCF_BENCH_UNIFORM=only: ours with CCF_UNIFORM_HASHES alone (the
    // default filter's rows read 0), =no: without it; unset: both. For
    // instruction counts of one kind under callgrind.
    const char *uniform_env = getenv("CCF_BENCH_UNIFORM");
    const bool uniform_only = uniform_env && !strcmp(uniform_env, "only");
#ifndef CCF_BENCH_NO_VIEW
    const bool uniform_too = !(uniform_env && !strcmp(uniform_env, "no"));
#else
    const bool uniform_too = false;
#endif
    for (int lg : sizes) {
        size_t buckets = size_t(1) << lg;
        size_t n = size_t(0.94 * 4 * buckets);
        size_t m = std::min<size_t>(n, size_t(1) << 22);
        std::vector<uint64_t> keys(n), absent(m);
        for (size_t i = 0; i < n; i++) keys[i] = bench_key(lg, i);
        // Distinct from every key: bench_key is a bijection of its index.
        for (size_t i = 0; i < m; i++) absent[i] = bench_key(lg, n + i);
        ours_result o = {};
        if (!uniform_only) o = ours_run(keys.data(), n, absent.data(), m, 0);
        ours_result u = {};
        if (uniform_too) u = ours_run(keys.data(), n, absent.data(), m, CCF_UNIFORM_HASHES);
        peer_result ff = {}, ref = {};
        if (!ours_only) {
            ff = peer_fastfilter_run(keys.data(), n, absent.data(), m);
            ref = peer_reference_run(keys.data(), n, absent.data(), m);
        }
        double peer_absent = std::max(ff.absent_mkeys, ref.absent_mkeys);
        double peer_present = std::max(ff.present_mkeys, ref.present_mkeys);
        printf("| 2^%d | %zu | absent | %.1f | %.1f | %.1f | %.1f | %.1f | %.2fx | %.2fx | %.2fx |\n",
               lg, n, o.absent_mkeys, o.absent_inline, o.absent_burst, ff.absent_mkeys,
               ref.absent_mkeys, o.absent_mkeys / peer_absent, o.absent_inline / peer_absent,
               o.absent_burst / peer_absent);
        printf("| 2^%d | %zu | present | %.1f | %.1f | %.1f | %.1f | %.1f | %.2fx | %.2fx | %.2fx |\n",
               lg, n, o.present_mkeys, o.present_inline, o.present_burst, ff.present_mkeys,
               ref.present_mkeys, o.present_mkeys / peer_present, o.present_inline / peer_present,
               o.present_burst / peer_present);
        fflush(stdout);
        char line[512];
        snprintf(line, sizeof line,
                 "| 2^%d | absent | %.1f | %.1f | %.1f | %.2fx | %.2fx | %.2fx | %.1f |\n"
                 "| 2^%d | present | %.1f | %.1f | %.1f | %.2fx | %.2fx | %.2fx | %.1f |",
                 lg, u.absent_mkeys, u.absent_inline, u.absent_burst, u.absent_mkeys / peer_absent,
                 u.absent_inline / peer_absent, u.absent_burst / peer_absent, u.fill_mkeys, lg,
                 u.present_mkeys, u.present_inline, u.present_burst, u.present_mkeys / peer_present,
                 u.present_inline / peer_present, u.present_burst / peer_present, u.fill_mkeys);
        uniform_rows.push_back(line);
        if (u.false_negatives) {
            fprintf(stderr, "ours with CCF_UNIFORM_HASHES: %zu false negatives\n", u.false_negatives);
            exit(1);
        }
        snprintf(line, sizeof line,
                 "| 2^%d | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f | %zu / %zu / %zu | %zu / %zu |",
                 lg, o.fill_mkeys, ff.fill_mkeys, ref.fill_mkeys, double(o.bytes) / n,
                 double(ff.bytes) / n, double(ref.bytes) / n, o.false_negatives,
                 ff.false_negatives, ref.false_negatives, ff.failed, ref.failed);
        fills.push_back(line);
    }
    printf("\nFill (ours: ccf_insert_hash_batch; peers: an Add loop), M keys/s, and bytes per key:\n\n");
    printf("| peers' buckets | ours fill | fastfilter_cpp fill | reference fill | ours B/key "
           "| fastfilter_cpp B/key | reference B/key | false negatives (ours / ff / ref) "
           "| failed Adds (ff / ref) |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (auto &l : fills) printf("%s\n", l.c_str());
    if (uniform_too) {
        printf("\nOurs made with CCF_UNIFORM_HASHES (the keys used as hashes, no finalizer), "
               "M keys/s, against the faster peer of the first table:\n\n");
        printf("| peers' buckets | lookup | one call per key | inline (ccf_view) | bursts of 32 "
               "| call / faster peer | inline / faster peer | bursts / faster peer | fill |\n");
        printf("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (auto &l : uniform_rows) printf("%s\n", l.c_str());
    }
    return 0;
}
