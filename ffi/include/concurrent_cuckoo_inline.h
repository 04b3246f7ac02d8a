/*
 * concurrent_cuckoo_inline.h: lookups compiled into the caller's loop.
 *
 * ccf_contains_hash is a call through the C ABI (and one more inside the
 * library) for every key: a hot loop of single lookups pays both, and its
 * compiler can neither keep the table's fields in registers nor overlap
 * one key's work with the next's. This header looks keys up in
 * `static inline` code over a ccf_view (ccf_view_v2, concurrent_cuckoo.h),
 * running exactly the library's lookup protocol:
 *
 *   load the version of the key's bucket pair (acquire); load both buckets
 *   (relaxed); a match answers true; otherwise fence (acquire) and re-load
 *   the version (relaxed): unchanged answers false, changed means a
 *   concurrent move may have hidden the key, and the library's own
 *   ccf_contains_hash (which retries, then reads under the pair's locks)
 *   answers.
 *
 * So ccf_view_contains_hash(&v, h) == ccf_contains_hash(f, h) for every
 * hash, while any number of threads insert, remove and look up: no false
 * negative, and the same false positives. Writers are unchanged.
 *
 * Needs GCC or Clang (the __atomic builtins, unsigned __int128: every
 * 64-bit target they support); elsewhere, and for tables the view does
 * not describe (inline_lookup == 0: 8- or 32-bit fingerprints), every
 * call goes to the library. A filter made with CCF_UNIFORM_HASHES (or
 * loaded from a format version 1 file) has inline_lookup == 2: its hashes
 * are used as they are, without the finalizer.
 *
 *   static ccf_view shared;                    // once: shared = ccf_view_v2(f);
 *   ...
 *   const ccf_view view = shared;              // in the function that loops
 *   for (...) hits += ccf_view_contains_hash(&view, hashes[i]);
 *
 * The view is valid as long as the filter (a filter never moves its
 * table). Copy it into a local variable of the function that loops, as
 * above, and pass only that local's address to these inline functions:
 * then the compiler keeps its fields in registers. A view it reaches
 * through a pointer, or the very variable ccf_view_v1 returned into, is
 * memory another thread could write, which it must load again after the
 * lookup's acquire load, for every key (5 loads a key in ffi/bench).
 */
#ifndef CONCURRENT_CUCKOO_INLINE_H
#define CONCURRENT_CUCKOO_INLINE_H

#include "concurrent_cuckoo.h"

#if (defined(__GNUC__) || defined(__clang__)) && defined(__SIZEOF_INT128__)
#define CCF_INLINE_LOOKUP 1
__extension__ typedef unsigned __int128 ccf_inline_u128;
#define CCF_INLINE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#else
#define CCF_INLINE_LOOKUP 0
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if CCF_INLINE_LOOKUP

/* Where a hash lives: both buckets and the 16-bit fingerprint (the
 * library's index.rs: fastrange of the high 32 bits of the mixed hash for
 * the primary bucket, its low 16 bits (0 -> 1) as fingerprint, the
 * alternate (H(fp) - i) mod m with H(fp) odd). Internal. */
typedef struct ccf_inline_location {
    uint64_t i1, i2, fp;
} ccf_inline_location;

/* SplitMix64's finalizer: how a filter with finalized hashes
 * (inline_lookup == 1) mixes each hash first. Internal. */
static inline uint64_t ccf_inline_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* The location of `z`, a hash already mixed as the view's filter mixes
 * its hashes (or used as it is, inline_lookup == 2). Internal. */
static inline ccf_inline_location ccf_inline_locate_mixed(const ccf_view *v, uint64_t z) {
    ccf_inline_location loc;
    uint64_t m = v->bucket_count, h;
    loc.fp = z & 0xFFFF;
    loc.fp += loc.fp == 0;
    loc.i1 = ((z >> 32) * m) >> 32;
    h = (uint64_t)(((ccf_inline_u128)(loc.fp * UINT64_C(0x9E3779B97F4A7C15)) * m) >> 64) | 1;
    loc.i2 = h - loc.i1 + (h < loc.i1 ? m : 0);
    return loc;
}

/* The location of `hash` in a view with inline_lookup 1 or 2. Internal. */
static inline ccf_inline_location ccf_inline_locate(const ccf_view *v, uint64_t hash) {
    return ccf_inline_locate_mixed(v, v->inline_lookup == 1 ? ccf_inline_mix(hash) : hash);
}

/* Whether either bucket word holds fp in one of its four 16-bit slots,
 * exactly (no has-zero approximation, which would add false positives).
 * x86-64: one SSE2 compare of both words (as the library's probe); else
 * the zero-lane test (x - 0x0001..) & ~x & 0x8000.., non-zero iff some
 * 16-bit lane of x = word ^ broadcast(fp) is zero. Internal. */
#if defined(__SSE2__)
static inline bool ccf_inline_probe16(uint64_t a, uint64_t b, uint64_t fp) {
    __m128i both = _mm_set_epi64x((long long)b, (long long)a);
    __m128i needle = _mm_set1_epi16((short)fp);
    return _mm_movemask_epi8(_mm_cmpeq_epi16(both, needle)) != 0;
}
#else
static inline bool ccf_inline_probe16(uint64_t a, uint64_t b, uint64_t fp) {
    const uint64_t ones = UINT64_C(0x0001000100010001), highs = UINT64_C(0x8000800080008000);
    uint64_t needle = fp * ones, x = a ^ needle, y = b ^ needle;
    return (((x - ones) & ~x) | ((y - ones) & ~y)) & highs;
}
#endif

/* The inline lookup of `hash`, whose mixed form is `z`. Internal. */
static inline bool ccf_inline_contains(const ccf_view *v, uint64_t z, uint64_t hash) {
    ccf_inline_location loc = ccf_inline_locate_mixed(v, z);
    const uint64_t *version;
    uint64_t seen, a, b;
    /* The misses start before the version load (the library does the same). */
    __builtin_prefetch(v->buckets + loc.i1);
    __builtin_prefetch(v->buckets + loc.i2);
    version = v->versions + (((loc.i1 ^ loc.i2) >> 1) & v->version_mask);
    seen = __atomic_load_n(version, __ATOMIC_ACQUIRE);
    a = __atomic_load_n(v->buckets + loc.i1, __ATOMIC_RELAXED);
    b = __atomic_load_n(v->buckets + loc.i2, __ATOMIC_RELAXED);
    if (ccf_inline_probe16(a, b, loc.fp)) return true;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(version, __ATOMIC_RELAXED) == seen) return false;
    /* A move bumped the pair's version: the library's lookup decides. */
    return ccf_contains_hash(v->filter, hash);
}

/* ccf_contains_hash(v->filter, hash), inlined (see the top of this file).
 * One test of inline_lookup a key for finalized hashes, the commonest. */
static inline bool ccf_view_contains_hash(const ccf_view *v, uint64_t hash) {
    if (v->inline_lookup == 1) return ccf_inline_contains(v, ccf_inline_mix(hash), hash);
    if (v->inline_lookup == 2) return ccf_inline_contains(v, hash, hash);
    return ccf_contains_hash(v->filter, hash);
}

/* ccf_prefetch_hash(v->filter, hash), inlined. */
static inline void ccf_view_prefetch_hash(const ccf_view *v, uint64_t hash) {
    ccf_inline_location loc;
    if (CCF_INLINE_UNLIKELY(!v->inline_lookup)) {
        ccf_prefetch_hash(v->filter, hash);
        return;
    }
    loc = ccf_inline_locate(v, hash);
    __builtin_prefetch(v->buckets + loc.i1);
    __builtin_prefetch(v->buckets + loc.i2);
}

#else /* no inline lookup on this compiler: the library answers */

static inline bool ccf_view_contains_hash(const ccf_view *v, uint64_t hash) {
    return ccf_contains_hash(v->filter, hash);
}

static inline void ccf_view_prefetch_hash(const ccf_view *v, uint64_t hash) {
    ccf_prefetch_hash(v->filter, hash);
}

#endif

#ifdef __cplusplus
}
#endif

#endif /* CONCURRENT_CUCKOO_INLINE_H */
