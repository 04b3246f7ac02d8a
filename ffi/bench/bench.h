// Shared by the side-by-side lookup benchmark's translation units
// (scripts/bench-peers.sh builds them): the timing loops, written once and
// instantiated for each filter, so that every filter's lookup is inlined
// into the same loop (ours is a call through the C ABI, or the inline
// lookup of ccf_view.h).
#ifndef CCF_BENCH_H
#define CCF_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <chrono>
#include <vector>

// The i-th key of the table of 2^lg buckets: SplitMix64's output function
// of a Weyl sequence, a bijection of i, so absent keys (indices past the
// inserted ones) are truly absent. benches/peers.rs makes the same keys.
static inline uint64_t bench_key(int lg, uint64_t i) {
    uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull + uint64_t(lg);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Repetitions of each timed loop; the median is reported.
static const int BENCH_REPS = 5;

struct peer_result {
    double fill_mkeys;     // M keys/s inserting every key, one call each
    double absent_mkeys;   // M keys/s looking up absent keys, one at a time
    double present_mkeys;  // M keys/s looking up present keys
    size_t failed;         // inserts that failed (the table was too full)
    size_t bytes;          // the table's bytes
    size_t false_negatives;
};

static inline double bench_now() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// Median over BENCH_REPS runs of `body`, which returns how many keys it
// looked up and adds its answers to `sink`, in M keys/s.
template <class Body>
static double median_mkeys(Body body, size_t *sink) {
    std::vector<double> rates;
    for (int r = 0; r < BENCH_REPS; r++) {
        double t0 = bench_now();
        size_t keys = body(sink);
        double t1 = bench_now();
        rates.push_back(keys / (t1 - t0) / 1e6);
    }
    std::sort(rates.begin(), rates.end());
    return rates[rates.size() / 2];
}

// One key at a time: `contains(key)` for every key, the answers summed so
// that no lookup can be skipped. Keys are independent, so an out-of-order
// core overlaps as many as its miss buffers and window allow.
// Never inlined into its caller (the lookup is inlined into it), so
// callgrind counts each filter's loop alone: instructions per lookup are
// its inclusive count over the keys it was given.
template <class Contains>
__attribute__((noinline)) static size_t count_found(Contains contains, const uint64_t *keys, size_t n) {
    size_t found = 0;
    for (size_t i = 0; i < n; i++) found += contains(keys[i]) ? 1 : 0;
    return found;
}

extern "C" {
// Each peer's translation unit defines one of these: builds its
// CuckooFilter<uint64_t, 16> for `n` keys, adds them, and times lookups
// of `absent` and of the first `m` inserted keys.
peer_result peer_fastfilter_run(const uint64_t *keys, size_t n, const uint64_t *absent,
                                size_t m);
peer_result peer_reference_run(const uint64_t *keys, size_t n, const uint64_t *absent,
                               size_t m);
}

#endif
