// FastFilter/fastfilter_cpp's single-thread filters in the per-key write
// benchmark (scripts/bench-writes.sh): CuckooFilter<uint64_t, 16>
// (src/cuckoo/cuckoofilter.h) and TC, its "twoChoicer" vector quotient
// filter with the first-block shortcut (src/tc-shortcut/tc-shortcut.hpp:
// 64-byte blocks of 48 8-bit remainders and 80 quotients; it has no
// 16-bit form). Both hash their keys with SimpleMixSplit, the cuckoo
// filter's default and the hash fastfilter_cpp's own benchmark gives TC.
// Neither is thread-safe: one thread only. TC needs AVX-512 (a build for
// valgrind, without it, leaves TC out and must not ask for it).
#include <stdexcept>
#include <vector>

#include "cuckoofilter.h"
#ifdef __AVX512BW__
#include "tc-shortcut/tc-shortcut.hpp"
#endif
#include "writes.h"

namespace {

struct cuckoo16_peer {
    static constexpr const char *name = "fastfilter_cpp cuckoo-16";
    typedef cuckoofilter::CuckooFilter<uint64_t, 16> filter;
    filter f;
    // The table has the power of two of buckets of four that keeps
    // `max_keys` at most 94% full: `max_keys` of 92% of `slots` gives
    // `slots / 4` buckets.
    explicit cuckoo16_peer(size_t max_keys) : f(max_keys) {}
    bool insert(uint64_t k) { return f.Add(k) == cuckoofilter::Ok; }
    bool contains(uint64_t k) const { return f.Contain(k) == cuckoofilter::Ok; }
    bool remove(uint64_t k) { return f.Delete(k) == cuckoofilter::Ok; }
    size_t items() const { return f.Size(); }
    size_t bytes() const { return f.SizeInBytes(); }
};

// cuckoo-16 with what a lock adds and nothing else (CCF_WRITES_LOCKED=1):
// each insert and remove takes and releases a spinlock, one locked
// exchange, never contended. With LOCKS = 1 the lock is one line that
// stays in L1: what the locked instruction itself costs (on x86 a full
// barrier: the next key's loads wait for it). With LOCKS = 4096 it is
// the line of one of 4096 padded locks picked by the key (this library
// has one stripe per 1,024 buckets, at most 4096: 4096 at 2^24 slots),
// so out of cache the lock's line may miss too, and the barrier waits.
template <size_t LOCKS>
struct cuckoo16_locked_peer : cuckoo16_peer {
    static constexpr const char *name =
        LOCKS == 1 ? "fastfilter_cpp cuckoo-16, one lock" : "fastfilter_cpp cuckoo-16, 4096 locks";
    struct alignas(64) padded_lock {
        uint64_t word;
    };
    std::vector<padded_lock> locks{LOCKS, padded_lock{0}};
    using cuckoo16_peer::cuckoo16_peer;
    uint64_t *lock(uint64_t k) {
        // The key's top bits: the filter's bucket index uses other bits.
        uint64_t *w = &locks[(k >> 52) % LOCKS].word;
        while (__atomic_exchange_n(w, 1, __ATOMIC_ACQUIRE)) {
        }
        return w;
    }
    static void unlock(uint64_t *w) { __atomic_store_n(w, 0, __ATOMIC_RELEASE); }
    bool insert(uint64_t k) {
        uint64_t *w = lock(k);
        bool ok = cuckoo16_peer::insert(k);
        unlock(w);
        return ok;
    }
    bool remove(uint64_t k) {
        uint64_t *w = lock(k);
        bool ok = cuckoo16_peer::remove(k);
        unlock(w);
        return ok;
    }
};

#ifdef __AVX512BW__
struct tc_peer {
    static constexpr const char *name = "fastfilter_cpp TC";
    TC_shortcut<hashing::SimpleMixSplit> f;
    // `slots` slots at a level-1 load of 1: ceil(slots / 48) blocks (even).
    explicit tc_peer(size_t slots) : f(slots, 1.0) {}
    bool insert(uint64_t k) { return f.insert(k); }
    bool contains(uint64_t k) const { return f.lookup(k); }
    // TC's remove returns nothing and expects a present key; the count of
    // what is left (items) is the check.
    bool remove(uint64_t k) {
        f.remove(k);
        return true;
    }
    size_t items() const { return f.get_capacity(); }
    size_t bytes() const { return f.SizeInBytes(); }
};
#endif

}  // namespace

extern "C" write_rates peer_cuckoo16_writes(size_t slots, const write_keys *k, int threads) {
    if (threads != 1) throw std::logic_error("cuckoo16: one thread only");
    size_t max_keys = k->n;
    auto make = [max_keys] { return std::make_unique<cuckoo16_peer>(max_keys); };
    write_rates r = run_writes_once(make, *k, 1, true);
    if (r.bytes != slots * 2) throw std::logic_error("cuckoo16: not the table size asked");
    return r;
}

extern "C" write_rates peer_cuckoo16_locked_writes(size_t slots, const write_keys *k,
                                                   bool striped) {
    size_t max_keys = k->n;
    write_rates r =
        striped ? run_writes_once(
                      [max_keys] { return std::make_unique<cuckoo16_locked_peer<4096>>(max_keys); },
                      *k, 1, true)
                : run_writes_once(
                      [max_keys] { return std::make_unique<cuckoo16_locked_peer<1>>(max_keys); },
                      *k, 1, true);
    if (r.bytes != slots * 2) throw std::logic_error("cuckoo16: not the table size asked");
    return r;
}

extern "C" write_rates peer_tc_writes(size_t slots, const write_keys *k, int threads) {
    if (threads != 1) throw std::logic_error("tc: one thread only");
#ifdef __AVX512BW__
    return run_writes_once([slots] { return std::make_unique<tc_peer>(slots); }, *k, 1, true);
#else
    throw std::logic_error("tc: built without AVX-512");
#endif
}
