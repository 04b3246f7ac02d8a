// Side-by-side per-key writes (issue 52): insert, present and absent
// lookups, and remove, one key per call, for this library through its C
// ABI (made with CCF_UNIFORM_HASHES, the random keys given as hashes:
// ccf_insert_hash, ccf_contains_hash, ccf_remove_hash) against
// splatlab/vqf's 16-bit VQF (plain, and its -DENABLE_THREADS build) and
// fastfilter_cpp's CuckooFilter<uint64_t, 16> and TC. Built and run by
// scripts/bench-writes.sh, which fetches nothing.
//
//   writes [LOG2_SLOTS...]     (default: 20 24)
//
// For each size every filter has 2^LOG2_SLOTS slots of its own layout and
// gets the same n = 92% of 2^LOG2_SLOTS random 64-bit keys; absent keys
// are m = min(n, 2^22) others. Each repetition builds every filter afresh
// and times each phase (writes.h): on one thread, then for the
// thread-safe filters (ours, VQF's thread-safe build) on two threads
// sharing one filter, each thread its own half of the keys. Rates are M
// keys per second of thread CPU time; the tables give the medians of
// CCF_WRITES_REPS repetitions (default 3). For instruction counts under
// callgrind (scripts/write-instructions.sh): CCF_WRITES_ONLY, a list of
// ours, vqf (both builds), cuckoo16, tc, runs those alone, and
// CCF_WRITES_THREADS=1 skips the two-thread runs. CCF_WRITES_LOCKED=1
// adds fastfilter_cpp's cuckoo-16 with an uncontended spinlock around each
// write, one lock line or one of 4096 (peer_ff_writes.cc): what a locked
// instruction per write costs a filter that otherwise takes none.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#include "bench.h"
#include "concurrent_cuckoo.h"
#include "writes.h"

namespace {

struct ours_peer {
    static constexpr const char *name = "ours";
    ccf_filter *f = NULL;
    explicit ours_peer(size_t slots) {
        uint64_t seed = 42;
        // ccf_new gives `capacity` items `capacity / 0.9 + 3 sqrt(capacity)`
        // slots, rounded up to an even number of buckets of 4: the
        // capacity whose slots come to `slots - 2` gives `slots` (a
        // multiple of 8). Checked below.
        double x = (-3.0 + sqrt(9.0 + 4.0 * (slots - 2) / 0.9)) * 0.9 / 2.0;
        ccf_status s = ccf_new_with_flags(size_t(x * x), 0.0, 16, &seed, CCF_UNIFORM_HASHES, &f);
        if (s != CCF_OK || ccf_capacity(f) != slots) {
            fprintf(stderr, "ours: %s, capacity %zu for %zu slots\n", ccf_status_message(s),
                    s == CCF_OK ? ccf_capacity(f) : 0, slots);
            exit(1);
        }
    }
    ~ours_peer() { ccf_free(f); }
    bool insert(uint64_t k) { return ccf_insert_hash(f, k) == CCF_OK; }
    bool contains(uint64_t k) const { return ccf_contains_hash(f, k); }
    bool remove(uint64_t k) { return ccf_remove_hash(f, k); }
    size_t items() const { return ccf_len(f); }
    size_t bytes() const { return ccf_memory_usage(f); }
};

// The columns, in order.
enum column { OURS, VQF, VQF_TS, CUCKOO16, TC, COLUMNS };
const char *const names[COLUMNS] = {"ours", "VQF-16", "VQF-16 thread-safe",
                                    "fastfilter_cpp cuckoo-16", "fastfilter_cpp TC"};

struct cell {
    std::vector<write_rates> reps;  // empty: not run
};

double median_of(const cell &c, double write_rates::*field) {
    std::vector<double> v;
    for (auto &r : c.reps) v.push_back(r.*field);
    std::sort(v.begin(), v.end());
    return v.empty() ? -1 : v[v.size() / 2];
}

std::string rate_text(const cell &c, double write_rates::*field, bool hangs) {
    double m = median_of(c, field);
    if (c.reps.empty()) return "-";
    if (m < 0) return hangs ? "hangs" : "-";
    char buf[32];
    snprintf(buf, sizeof buf, "%.1f", m);
    return buf;
}

std::string ratio_text(const cell &a, const cell &b, double write_rates::*field) {
    double x = median_of(a, field), y = median_of(b, field);
    if (x <= 0 || y <= 0) return "-";
    char buf[32];
    snprintf(buf, sizeof buf, "%.2fx", x / y);
    return buf;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<int> sizes;
    for (int i = 1; i < argc; i++) sizes.push_back(atoi(argv[i]));
    if (sizes.empty()) sizes = {20, 24};
    const char *reps_env = getenv("CCF_WRITES_REPS");
    const int reps = reps_env ? std::max(1, atoi(reps_env)) : 3;
    const char *only = getenv("CCF_WRITES_ONLY");
    auto runs = [only](const char *name) { return !only || strstr(only, name); };
    const bool run_ours = runs("ours"), run_peers = runs("vqf"), run_cuckoo = runs("cuckoo16"),
               run_tc = runs("tc");
    const char *threads_env = getenv("CCF_WRITES_THREADS");
    const bool two_threads = !(threads_env && !strcmp(threads_env, "1"));
    const char *locked_env = getenv("CCF_WRITES_LOCKED");
    const bool run_locked = locked_env && !strcmp(locked_env, "1");
    // VQF's thread-safe build: bit 63 of a block's metadata is its lock bit
    // and also what a remove sets, so a remove leaves the block locked.
    const bool vqf_ts_hangs = run_peers && peer_vqf16_ts_remove_hangs() != 0;

    printf("Per key, M keys/s of thread CPU time (median of %d); 92%% load; "
           "ccf_probe_backend %s; VQF-16 thread-safe remove then insert: %s\n\n",
           reps, ccf_probe_backend(),
           !run_peers ? "not run" : vqf_ts_hangs ? "hangs" : "completes");
    printf("| slots | threads | per key | ours | VQF-16 | VQF-16 thread-safe | "
           "fastfilter_cpp cuckoo-16 | fastfilter_cpp TC | ours / VQF-16 | "
           "ours / VQF-16 thread-safe | ours / cuckoo-16 |\n");
    printf("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    std::vector<std::string> checks, goals, locked_rows;
    for (int lg : sizes) {
        const size_t slots = size_t(1) << lg;
        const size_t n = size_t(0.92 * slots);
        const size_t m = std::min<size_t>(n, size_t(1) << 22);
        std::vector<uint64_t> keys(n), absent(m);
        for (size_t i = 0; i < n; i++) keys[i] = bench_key(lg, i);
        for (size_t i = 0; i < m; i++) absent[i] = bench_key(lg, n + i);
        const write_keys k = {keys.data(), n, absent.data(), m};
        cell one[COLUMNS], two[COLUMNS], locked, striped;
        for (int rep = 0; rep < reps; rep++) {
            if (run_ours) {
                auto make = [slots] { return std::make_unique<ours_peer>(slots); };
                one[OURS].reps.push_back(run_writes_once(make, k, 1, true));
                if (two_threads) two[OURS].reps.push_back(run_writes_once(make, k, 2, true));
            }
            if (run_peers) {
                one[VQF].reps.push_back(peer_vqf16_writes(slots, &k, 1, true));
                one[VQF_TS].reps.push_back(peer_vqf16_ts_writes(slots, &k, 1, !vqf_ts_hangs));
                if (two_threads)
                    two[VQF_TS].reps.push_back(peer_vqf16_ts_writes(slots, &k, 2, !vqf_ts_hangs));
            }
            if (run_cuckoo) one[CUCKOO16].reps.push_back(peer_cuckoo16_writes(slots, &k, 1));
            if (run_tc) one[TC].reps.push_back(peer_tc_writes(slots, &k, 1));
            if (run_locked) {
                locked.reps.push_back(peer_cuckoo16_locked_writes(slots, &k, false));
                striped.reps.push_back(peer_cuckoo16_locked_writes(slots, &k, true));
            }
        }
        if (run_locked) {
            for (auto field : {&write_rates::insert, &write_rates::remove}) {
                char line[256];
                snprintf(line, sizeof line, "| 2^%d | %s | %s | %s | %s | %s | %s |", lg,
                         field == &write_rates::insert ? "insert" : "remove",
                         rate_text(one[CUCKOO16], field, false).c_str(),
                         rate_text(locked, field, false).c_str(),
                         ratio_text(locked, one[CUCKOO16], field).c_str(),
                         rate_text(striped, field, false).c_str(),
                         ratio_text(striped, one[CUCKOO16], field).c_str());
                locked_rows.push_back(line);
            }
        }
        struct op {
            const char *name;
            double write_rates::*field;
        } ops[] = {{"insert", &write_rates::insert},
                   {"remove", &write_rates::remove},
                   {"present lookup", &write_rates::present},
                   {"absent lookup", &write_rates::absent}};
        for (int threads = 1; threads <= (two_threads ? 2 : 1); threads++) {
            cell *row = threads == 1 ? one : two;
            for (auto &o : ops) {
                printf("| 2^%d | %d | %s |", lg, threads, o.name);
                for (int c = 0; c < COLUMNS; c++) {
                    bool hangs = c == VQF_TS && vqf_ts_hangs;
                    printf(" %s |", rate_text(row[c], o.field, hangs).c_str());
                }
                printf(" %s | %s | %s |\n", ratio_text(row[OURS], row[VQF], o.field).c_str(),
                       ratio_text(row[OURS], row[VQF_TS], o.field).c_str(),
                       ratio_text(row[OURS], row[CUCKOO16], o.field).c_str());
            }
            for (int c = 0; c < COLUMNS; c++) {
                if (row[c].reps.empty()) continue;
                const write_rates &r = row[c].reps.back();
                char line[320];
                std::string left = r.left_after_remove == SIZE_MAX
                                       ? "not counted"
                                       : std::to_string(r.left_after_remove);
                snprintf(line, sizeof line,
                         "| 2^%d | %d | %s | %.2f | %zu | %zu | %s | %s |", lg, threads,
                         names[c], double(r.bytes) / n, r.failed_inserts, r.false_negatives,
                         r.remove < 0 ? "-" : std::to_string(r.failed_removes).c_str(),
                         r.remove < 0 ? "-" : left.c_str());
                checks.push_back(line);
            }
        }
        fflush(stdout);
        auto goal = [&](const char *what, const cell &a, const cell &b,
                        double write_rates::*field, double target) {
            double x = median_of(a, field), y = median_of(b, field);
            char line[256];
            if (x <= 0 || y <= 0)
                snprintf(line, sizeof line, "- 2^%d: %s: not measured", lg, what);
            else
                snprintf(line, sizeof line, "- 2^%d: %s >= %.1fx: %.2fx, %s", lg, what, target,
                         x / y, x / y >= target ? "met" : "NOT met");
            goals.push_back(line);
        };
        goal("insert vs VQF-16 thread-safe", one[OURS], one[VQF_TS], &write_rates::insert, 1.0);
        goal("insert vs VQF-16 plain", one[OURS], one[VQF], &write_rates::insert, 0.7);
        goal("remove vs fastfilter_cpp cuckoo-16", one[OURS], one[CUCKOO16], &write_rates::remove,
             0.9);
        goal("2-thread insert vs VQF-16 thread-safe on 2 threads", two[OURS], two[VQF_TS],
             &write_rates::insert, 1.0);
    }
    printf("\nChecks (last repetition): bytes per key, inserts refused, present keys not "
           "found, removes of inserted keys that found nothing, items left after removing "
           "every key:\n\n");
    printf("| slots | threads | filter | bytes/key | refused inserts | false negatives | "
           "failed removes | left after removes |\n");
    printf("|---|---:|---|---:|---:|---:|---:|---:|\n");
    for (auto &l : checks) printf("%s\n", l.c_str());
    if (run_locked) {
        printf("\nfastfilter_cpp cuckoo-16 alone and with an uncontended spinlock around each "
               "write (one lock line, or one of 4096 picked by the key), same run, M keys/s:\n\n");
        printf("| slots | per key | cuckoo-16 | one lock | one lock / none | 4096 locks "
               "| 4096 locks / none |\n");
        printf("|---|---|---:|---:|---:|---:|---:|\n");
        for (auto &l : locked_rows) printf("%s\n", l.c_str());
    }
    printf("\nIssue 52's goals (same run):\n\n");
    for (auto &l : goals) printf("%s\n", l.c_str());
    return 0;
}
