// Shared by the per-key write benchmark's translation units (issue 52;
// scripts/bench-writes.sh builds them): the timing of one filter's
// insert, present and absent lookups and remove, one key per call, on one
// thread or on two sharing one filter, written once and instantiated for
// each filter so that every peer's operations are inlined into the same
// loops (ours is a call through the C ABI, as its users make it).
//
// Time is each thread's own CPU time (CLOCK_THREAD_CPUTIME_ID), not wall
// time: the machine is shared, and a thread that is descheduled is not
// charged. On two threads the rate is the sum of each thread's keys over
// its own CPU time, so spinning on a lock and lines bouncing between the
// cores count, time spent waiting off the CPU does not.
#ifndef CCF_BENCH_WRITES_H
#define CCF_BENCH_WRITES_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

// One filter's rates in M keys per second of thread CPU time (one
// repetition). A negative rate means "not measured".
struct write_rates {
    double insert, present, absent, remove;
    size_t failed_inserts;   // inserts the filter refused
    size_t false_negatives;  // present keys (inserted, not refused) not found
    size_t failed_removes;   // removes of present keys that found nothing
    size_t left_after_remove;  // items the filter still counts after removing all
    size_t bytes;            // the table's bytes
};

// The keys of one size: `n` present (inserted) keys, `m` absent ones.
struct write_keys {
    const uint64_t *keys;
    size_t n;
    const uint64_t *absent;
    size_t m;
};

static inline double thread_cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Runs `body(begin, end)` over [0, count) on `threads` threads, each its
// own contiguous share, each timing itself; returns the summed rate in M
// keys per CPU-second and adds what the bodies return to `*hits`.
template <class Body>
static double timed_shares(int threads, size_t count, Body body, size_t *hits) {
    std::vector<double> seconds(threads);
    std::vector<size_t> found(threads);
    auto share = [&](int t) {
        size_t begin = count * t / threads, end = count * (t + 1) / threads;
        double t0 = thread_cpu_seconds();
        found[t] = body(begin, end);
        seconds[t] = thread_cpu_seconds() - t0;
    };
    if (threads == 1) {
        share(0);
    } else {
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; t++) pool.emplace_back(share, t);
        for (auto &th : pool) th.join();
    }
    double rate = 0;
    for (int t = 0; t < threads; t++) {
        size_t begin = count * t / threads, end = count * (t + 1) / threads;
        rate += (end - begin) / seconds[t] / 1e6;
        *hits += found[t];
    }
    return rate;
}

// Built with -DWRITES_CALLGRIND (scripts/write-instructions.sh), each
// timed phase ends with a callgrind dump named after the filter and the
// phase: run with --toggle-collect on count_true, a dump holds exactly
// the instructions of that phase's loop.
#ifdef WRITES_CALLGRIND
#include <valgrind/callgrind.h>
// The name lives in a variable: the macro keeps only its address.
#define WRITES_PHASE_DONE(filter, phase)                                   \
    do {                                                                   \
        const std::string dump_name = std::string(filter) + " / " + phase; \
        CALLGRIND_DUMP_STATS_AT(dump_name.c_str());                        \
    } while (0)
#else
#define WRITES_PHASE_DONE(filter, phase) ((void)0)
#endif

// Per-key loops, never inlined into their callers (the filter's operation
// is inlined into them), so callgrind counts each filter's loop alone.
template <class Op>
__attribute__((noinline)) static size_t count_true(Op op, const uint64_t *keys, size_t begin,
                                                   size_t end) {
    size_t yes = 0;
    for (size_t i = begin; i < end; i++) yes += op(keys[i]) ? 1 : 0;
    return yes;
}

// One repetition: `make()` a fresh filter (a std::unique_ptr to a type
// with insert, contains, remove, items, bytes and a static `name`), insert every key, look
// up the first `m` present keys and the `m` absent ones, remove every key
// (unless `with_remove` is false: its rate reads -1); each phase timed on
// `threads` threads. The driver repeats it, every filter in turn, and
// reports medians, so that a change in the machine's load touches all.
template <class Make>
static write_rates run_writes_once(Make make, const write_keys &k, int threads,
                                   bool with_remove) {
    write_rates r = {};
    auto f = make();
    auto *fp = f.get();
    size_t ok = 0, found = 0, absent_found = 0, removed = 0;
    r.insert = timed_shares(
        threads, k.n,
        [&](size_t b, size_t e) {
            return count_true([fp](uint64_t x) { return fp->insert(x); }, k.keys, b, e);
        },
        &ok);
    WRITES_PHASE_DONE(fp->name, "insert");
    size_t present = std::min(k.n, k.m);
    r.present = timed_shares(
        threads, present,
        [&](size_t b, size_t e) {
            return count_true([fp](uint64_t x) { return fp->contains(x); }, k.keys, b, e);
        },
        &found);
    WRITES_PHASE_DONE(fp->name, "present");
    r.absent = timed_shares(
        threads, k.m,
        [&](size_t b, size_t e) {
            return count_true([fp](uint64_t x) { return fp->contains(x); }, k.absent, b, e);
        },
        &absent_found);
    WRITES_PHASE_DONE(fp->name, "absent");
    r.remove = -1;
    if (with_remove) {
        r.remove = timed_shares(
            threads, k.n,
            [&](size_t b, size_t e) {
                return count_true([fp](uint64_t x) { return fp->remove(x); }, k.keys, b, e);
            },
            &removed);
        WRITES_PHASE_DONE(fp->name, "remove");
    }
    r.failed_inserts = k.n - ok;
    // Exact when no insert was refused; otherwise a refused key among the
    // first `present` may be found (a false positive) or not.
    r.false_negatives = present - std::min(present, found + r.failed_inserts);
    r.failed_removes = with_remove ? ok - std::min(ok, removed) : 0;
    r.left_after_remove = with_remove ? fp->items() : 0;
    r.bytes = fp->bytes();
    return r;
}

// Each peer's translation unit defines one of these: one repetition on a
// fresh filter of `slots` slots, run_writes_once over `k` on `threads`
// threads.
extern "C" {
write_rates peer_cuckoo16_writes(size_t slots, const write_keys *k, int threads);
// The same cuckoo-16 with an uncontended spinlock taken around each write:
// one lock line, or (`striped`) one of 4096 picked by the key.
write_rates peer_cuckoo16_locked_writes(size_t slots, const write_keys *k, bool striped);
write_rates peer_tc_writes(size_t slots, const write_keys *k, int threads);
write_rates peer_vqf16_writes(size_t slots, const write_keys *k, int threads, bool with_remove);
write_rates peer_vqf16_ts_writes(size_t slots, const write_keys *k, int threads,
                                 bool with_remove);
// 1 if the thread-safe VQF build hangs inserting into a block after a
// remove from it (run in a child process, killed after a few seconds).
int peer_vqf16_ts_remove_hangs(void);
}

#endif
