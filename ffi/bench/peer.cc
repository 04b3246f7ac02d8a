// One peer's CuckooFilter<uint64_t, 16> in the side-by-side lookup
// benchmark (scripts/bench-peers.sh). Compiled once per peer, with
// -DPEER_FASTFILTER (FastFilter/fastfilter_cpp, src/cuckoo/cuckoofilter.h)
// or -DPEER_REFERENCE (efficient/cuckoofilter, src/cuckoofilter.h) and the
// peer's include path: both peers call their namespace `cuckoofilter` and
// share header guards, so each lives in its own translation unit, its
// namespace renamed by the script (-Dcuckoofilter=...).
#include "bench.h"

#include "cuckoofilter.h"

#if defined(PEER_FASTFILTER)
#define PEER_RUN peer_fastfilter_run
#elif defined(PEER_REFERENCE)
#define PEER_RUN peer_reference_run
#else
#error "define PEER_FASTFILTER or PEER_REFERENCE"
#endif

extern "C" peer_result PEER_RUN(const uint64_t *keys, size_t n, const uint64_t *absent,
                                size_t m) {
    typedef cuckoofilter::CuckooFilter<uint64_t, 16> Filter;
    peer_result r = {};
    // The peers' filters keep no more than one victim: time one fill.
    Filter *filter = new Filter(n);
    double t0 = bench_now();
    for (size_t i = 0; i < n; i++)
        if (filter->Add(keys[i]) != cuckoofilter::Ok) r.failed++;
    r.fill_mkeys = n / (bench_now() - t0) / 1e6;
    r.bytes = filter->SizeInBytes();
    size_t sink = 0;
    auto contains = [filter](uint64_t k) { return filter->Contain(k) == cuckoofilter::Ok; };
    r.absent_mkeys = median_mkeys(
        [&](size_t *s) {
            *s += count_found(contains, absent, m);
            return m;
        },
        &sink);
    size_t present = std::min(n, m);
    r.present_mkeys = median_mkeys(
        [&](size_t *s) {
            *s += count_found(contains, keys, present);
            return present;
        },
        &sink);
    r.false_negatives = present - count_found(contains, keys, present);
    // Keeps the loops' answers observable.
    if (sink == SIZE_MAX) r.failed++;
    delete filter;
    return r;
}
