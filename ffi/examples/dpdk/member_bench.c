/*
 * The filter beside DPDK's own structures: concurrent-cuckoo against
 * rte_hash and rte_member (HT in both modes, vBF), on the same keys.
 *
 * Every structure gets the same n keys, key(0..n), 8 bytes each; key(n + j)
 * are the absent keys (key() is a bijection, so they are truly absent).
 * Lookups run on one lcore pinned to one CPU, in bursts of 32, and each
 * measurement is the thread's CPU time for one pass over a set of queries
 * (positive: inserted keys drawn at random; negative: absent keys). The
 * structures take turns round by round, the order rotated each round, so
 * that drift in the machine hits all alike; the report gives the median
 * over the rounds. It also reports bytes per item, the false-positive rate
 * measured on absent keys, the inserted keys each structure fails to find,
 * and the inserts it refused.
 *
 * Structures and calls:
 *  - concurrent-cuckoo, 16-bit fingerprints, sized for n (ccf_new): keys
 *    used as precomputed hashes (ccf_contains_hash_batch, and
 *    ccf_contains_hash one at a time); and a second filter holding the keys
 *    as 8-byte strings (ccf_contains_batch, hashing with XXH3 inside, as
 *    the DPDK calls below hash with CRC32 inside); and a third made with
 *    CCF_UNIFORM_HASHES, which takes the keys (uniform: key() mixes them)
 *    as hashes without its finalizer, as rte_hash_lookup_with_hash_bulk
 *    takes signatures computed beforehand.
 *  - rte_hash, 8-byte keys, CRC32, lock-free concurrent readers
 *    (RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF, the mode a table updated
 *    while lcores read it needs): rte_hash_lookup_bulk, and
 *    rte_hash_lookup_with_hash_bulk with the CRC32 signatures computed
 *    beforehand. Sized as small as takes every key: entries = n first, and
 *    after a refused insert the next entries count that adds buckets
 *    (buckets are rte_align32pow2(entries) / 8; entries between two powers
 *    of two only add key slots, and the key store already has entries + 1).
 *  - rte_member HT, not cache mode (no false negatives; refuses inserts
 *    when full): sized the same way (its entries are
 *    rte_align32pow2(num_keys)). Its 16-bit signatures are fixed: its
 *    false-positive rate cannot be chosen.
 *  - rte_member HT, cache mode, num_keys = n: evicts, so it has false
 *    negatives and never refuses.
 *  - rte_member vBF, false_positive_rate = the filter's bound (8 / 2^16):
 *    num_set = 1 if it can be created, otherwise the smallest power of two
 *    that can (each Bloom filter's bit count is rounded up to a power of two
 *    in 32 bits, so one filter holds at most 2^31 bits), the keys spread
 *    over the sets round-robin; a lookup matching any set counts as found.
 *
 * Memory. Each DPDK structure lives in its own external malloc heap
 * (rte_malloc_heap_create + rte_malloc_heap_memory_add) over an anonymous
 * mapping made here, so that its pages can be chosen and measured: with
 * --pages 2m (the default) the mapping is madvise(MADV_HUGEPAGE), as the
 * library's own table is (transparent huge pages, no hugetlbfs needed);
 * with --pages 4k the process disables transparent huge pages
 * (prctl(PR_SET_THP_DISABLE)) before anything is allocated, so both sides
 * get 4 KiB pages (what EAL's --no-huge memory, a memfd, gets unless shmem
 * THP is enabled). The share of each structure's memory on 2 MiB pages is
 * read from /proc/self/smaps and reported.
 *
 * Usage: member_bench [EAL options --] [--smoke | --quick] [--pages 2m|4k]
 *            [--small N] [--large N] [--rounds R] [--queries Q]
 *            [--fp-queries F] [--cpu C]
 * Defaults (the full run): --small 65536 --large 134217728 (2^27) --rounds 5
 * --queries 2097152 --fp-queries 16777216, pinned to the last CPU the
 * process may use; --smoke and --quick set the sizes, rounds and query
 * counts first, and the other options then change them. Without EAL
 * options: --no-huge --no-pci --no-shconf -m 256 --no-telemetry
 * --log-level=lib.member:notice -l C.
 */
#define _GNU_SOURCE /* sched_getaffinity, MAP_NORESERVE (and strnlen in DPDK headers) */

#include "concurrent_cuckoo.h"

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_member.h>
#include <rte_version.h>

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>

enum { BURST = 32, MAX_METHODS = 3, MAX_ROUNDS = 64, FILL_CHUNK = 1024 };
#define HUGE_2M (2ull << 20)
#define FILTER_SEED 1ull

/* ---- keys and clocks ----------------------------------------------------- */

/* A bijection on 64-bit integers (murmur3's finalizer after an odd
 * multiply): key(i) for i < n are the inserted keys, the rest are absent,
 * and all are uniformly spread, so they also serve as precomputed hashes. */
static inline uint64_t key(uint64_t i) {
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

static double wall_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    rte_exit(EXIT_FAILURE, "member_bench failed\n");
}

/* ---- page accounting ------------------------------------------------------ */

struct pages {
    uint64_t rss_kb, huge_kb; /* resident, and of it on transparent 2 MiB pages */
};

/* Sums Rss and AnonHugePages over the mappings of /proc/self/smaps that
 * overlap [lo, hi); lo = hi = 0 means all of them. */
static struct pages smaps_pages(uintptr_t lo, uintptr_t hi) {
    struct pages p = {0, 0};
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        die("/proc/self/smaps: %s\n", strerror(errno));
    char line[512];
    bool in = false;
    while (fgets(line, sizeof line, f)) {
        uintptr_t start, end;
        unsigned long long kb;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &start, &end) == 2 && strchr(line, ' ')) {
            in = (lo == 0 && hi == 0) || (start < hi && end > lo);
        } else if (in && sscanf(line, "Rss: %llu kB", &kb) == 1) {
            p.rss_kb += kb;
        } else if (in && sscanf(line, "AnonHugePages: %llu kB", &kb) == 1) {
            p.huge_kb += kb;
        }
    }
    fclose(f);
    return p;
}

static void read_sysfs(const char *path, char *out, size_t size) {
    FILE *f = fopen(path, "r");
    if (!f || !fgets(out, (int)size, f))
        snprintf(out, size, "(unreadable)\n");
    if (f)
        fclose(f);
    out[strcspn(out, "\n")] = '\0';
}

/* ---- a DPDK malloc heap over our own mapping ------------------------------ */

static bool use_huge_pages = true; /* --pages 2m */

struct region {
    char heap[32]; /* RTE_HEAP_NAME_MAX_LEN, which DPDK does not export */
    void *addr;
    size_t len;
    int socket; /* the heap's socket id: give it to rte_hash / rte_member */
};

static void region_open(struct region *r, const char *name, size_t bytes) {
    static unsigned serial;
    snprintf(r->heap, sizeof r->heap, "%.20s-%u", name, serial++);
    r->len = RTE_ALIGN_CEIL(bytes, HUGE_2M);
    /* Reserve address space only (pages come on first touch); over-allocate
     * by 2 MiB to align the start for huge pages. */
    size_t map_len = r->len + HUGE_2M;
    uint8_t *p = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        die("mmap %zu bytes: %s\n", map_len, strerror(errno));
    uint8_t *aligned = (uint8_t *)RTE_ALIGN_CEIL((uintptr_t)p, HUGE_2M);
    if (aligned > p)
        munmap(p, (size_t)(aligned - p));
    if (aligned + r->len < p + map_len)
        munmap(aligned + r->len, (size_t)(p + map_len - (aligned + r->len)));
    r->addr = aligned;
    if (madvise(r->addr, r->len, use_huge_pages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0)
        die("madvise: %s\n", strerror(errno));
    if (rte_malloc_heap_create(r->heap) != 0)
        die("rte_malloc_heap_create(%s): %s\n", r->heap, rte_strerror(rte_errno));
    /* No IOVA addresses (nothing does DMA here); DPDK's page size is its
     * bookkeeping granule, not a promise about the kernel's pages. */
    if (rte_malloc_heap_memory_add(r->heap, r->addr, r->len, NULL, 0, HUGE_2M) != 0)
        die("rte_malloc_heap_memory_add(%s, %zu bytes): %s\n", r->heap, r->len,
            rte_strerror(rte_errno));
    r->socket = rte_malloc_heap_get_socket(r->heap);
    if (r->socket < 0)
        die("rte_malloc_heap_get_socket(%s): %s\n", r->heap, rte_strerror(rte_errno));
}

/* The structure in it must have been freed already. */
static void region_close(struct region *r) {
    if (!r->addr)
        return;
    if (rte_malloc_heap_memory_remove(r->heap, r->addr, r->len) != 0)
        die("rte_malloc_heap_memory_remove(%s): %s\n", r->heap, rte_strerror(rte_errno));
    if (rte_malloc_heap_destroy(r->heap) != 0)
        die("rte_malloc_heap_destroy(%s): %s\n", r->heap, rte_strerror(rte_errno));
    munmap(r->addr, r->len);
    r->addr = NULL;
}

static size_t region_allocated(const struct region *r) {
    struct rte_malloc_socket_stats s;
    if (rte_malloc_get_socket_stats(r->socket, &s) != 0)
        die("rte_malloc_get_socket_stats(%s): %s\n", r->heap, rte_strerror(rte_errno));
    return s.heap_allocsz_bytes;
}

/* ---- the structures -------------------------------------------------------- */

enum kind {
    FILTER_HASH,
    FILTER_UNIFORM,
    FILTER_KEYED,
    FILTER_SIGNED,
    RTE_HASH,
    MEMBER_HT,
    MEMBER_HT_CACHE,
    MEMBER_VBF,
    KINDS
};

struct query_set {
    size_t n;               /* a multiple of BURST */
    uint64_t *keys;         /* also the filter's precomputed hashes */
    const void **ptrs;      /* &keys[i]: the bulk calls take key pointers */
    size_t *lens;           /* 8s, for ccf_contains_batch */
    hash_sig_t *sigs;       /* rte_hash_hash of each key, for _with_hash_bulk */
};

struct structure;
typedef uint64_t (*lookup_fn)(const struct structure *s, const struct query_set *q);

struct method {
    const char *call;
    lookup_fn run; /* one pass over q in bursts of BURST; returns the hits */
};

struct structure {
    enum kind kind;
    const char *name;
    char config[160];  /* what it was built with */
    char sizing[512];  /* how its size was found */
    struct method methods[MAX_METHODS];
    int n_methods;
    ccf_filter *filter;
    struct rte_hash *hash;
    struct rte_member_setsum *member;
    uint32_t num_set;
    struct region region;
    size_t bytes;
    struct pages pages;
    uint64_t refused, evicted, missing, fp_hits, fp_queries;
    double build_seconds;
    double ns[MAX_METHODS][2][MAX_ROUNDS]; /* [method][positive=0, negative=1][round] */
};

/* The lookups, one pass each. */

static uint64_t run_filter_hash_batch(const struct structure *s, const struct query_set *q) {
    uint64_t hits = 0;
    bool out[BURST];
    for (size_t i = 0; i < q->n; i += BURST) {
        ccf_contains_hash_batch(s->filter, q->keys + i, BURST, out);
        for (int j = 0; j < BURST; j++)
            hits += out[j];
    }
    return hits;
}

/* The DPDK-shaped bursts: a hit mask, one key length, no lens[] or out[]. */
static uint64_t run_filter_hash_burst(const struct structure *s, const struct query_set *q) {
    uint64_t hits = 0;
    for (size_t i = 0; i < q->n; i += BURST)
        hits += (uint64_t)__builtin_popcountll(ccf_contains_hash_burst(s->filter, q->keys + i, BURST));
    return hits;
}

static uint64_t run_filter_keyed_burst(const struct structure *s, const struct query_set *q) {
    uint64_t hits = 0;
    for (size_t i = 0; i < q->n; i += BURST)
        hits += (uint64_t)__builtin_popcountll(ccf_contains_burst(s->filter, q->ptrs + i, 8, BURST));
    return hits;
}

/* Keys with their signatures (the CRC32 a NIC's RSS would give, here
 * rte_hash's own): the first buckets load from the signatures before the
 * keys are hashed, as rte_hash_lookup_with_hash_bulk skips its hashing. */
static uint64_t run_filter_signed_burst(const struct structure *s, const struct query_set *q) {
    uint64_t hits = 0;
    for (size_t i = 0; i < q->n; i += BURST)
        hits += (uint64_t)__builtin_popcountll(
            ccf_contains_signed_burst(s->filter, q->ptrs + i, 8, q->sigs + i, BURST));
    return hits;
}

/* The signature every signed-filter key comes with: rte_hash's CRC32 of
 * it (what make_queries gives the lookups). */
static uint32_t signature_of(const uint64_t *k) { return rte_hash_crc(k, sizeof *k, 0); }

static uint64_t run_filter_hash_single(const struct structure *s, const struct query_set *q) {
    uint64_t hits = 0;
    for (size_t i = 0; i < q->n; i++)
        hits += ccf_contains_hash(s->filter, q->keys[i]);
    return hits;
}

static uint64_t run_filter_keyed_batch(const struct structure *s, const struct query_set *q) {
    uint64_t hits = 0;
    bool out[BURST];
    for (size_t i = 0; i < q->n; i += BURST) {
        ccf_contains_batch(s->filter, q->ptrs + i, q->lens + i, BURST, out);
        for (int j = 0; j < BURST; j++)
            hits += out[j];
    }
    return hits;
}

static uint64_t run_hash_bulk(const struct structure *s, const struct query_set *q) {
    uint64_t hits = 0;
    int32_t pos[BURST];
    for (size_t i = 0; i < q->n; i += BURST) {
        if (rte_hash_lookup_bulk(s->hash, q->ptrs + i, BURST, pos) != 0)
            die("rte_hash_lookup_bulk failed\n");
        for (int j = 0; j < BURST; j++)
            hits += pos[j] >= 0;
    }
    return hits;
}

static uint64_t run_hash_with_hash_bulk(const struct structure *s, const struct query_set *q) {
    uint64_t hits = 0;
    int32_t pos[BURST];
    for (size_t i = 0; i < q->n; i += BURST) {
        if (rte_hash_lookup_with_hash_bulk(s->hash, q->ptrs + i, q->sigs + i, BURST, pos) != 0)
            die("rte_hash_lookup_with_hash_bulk failed\n");
        for (int j = 0; j < BURST; j++)
            hits += pos[j] >= 0;
    }
    return hits;
}

static uint64_t run_member_bulk(const struct structure *s, const struct query_set *q) {
    uint64_t hits = 0;
    member_set_t sets[BURST];
    for (size_t i = 0; i < q->n; i += BURST) {
        int found = rte_member_lookup_bulk(s->member, q->ptrs + i, BURST, sets);
        if (found < 0)
            die("rte_member_lookup_bulk: %s\n", rte_strerror(-found));
        hits += (uint64_t)found;
    }
    return hits;
}

/* Keys first .. first+count as a query set (pointers, lengths, signatures
 * for rte_hash); the caller frees it with free_queries. */
static struct query_set make_queries(size_t count, uint64_t (*index)(size_t, void *), void *ctx) {
    struct query_set q = {.n = count};
    q.keys = malloc(count * sizeof *q.keys);
    q.ptrs = malloc(count * sizeof *q.ptrs);
    q.lens = malloc(count * sizeof *q.lens);
    q.sigs = malloc(count * sizeof *q.sigs);
    if (!q.keys || !q.ptrs || !q.lens || !q.sigs)
        die("out of memory for %zu queries\n", count);
    for (size_t i = 0; i < count; i++) {
        q.keys[i] = key(index(i, ctx));
        q.ptrs[i] = &q.keys[i];
        q.lens[i] = sizeof(uint64_t);
        /* rte_hash's signature: its hash function (CRC32) with init 0. */
        q.sigs[i] = rte_hash_crc(&q.keys[i], sizeof(uint64_t), 0);
    }
    return q;
}

static void free_queries(struct query_set *q) {
    free(q->keys);
    free(q->ptrs);
    free(q->lens);
    free(q->sigs);
}

struct random_index {
    uint64_t n, state;
};

static uint64_t random_present(size_t i, void *ctx) {
    (void)i;
    struct random_index *r = ctx;
    /* xorshift64*, reduced without bias that matters at these sizes */
    r->state ^= r->state >> 12;
    r->state ^= r->state << 25;
    r->state ^= r->state >> 27;
    return (r->state * 0x2545F4914F6CDD1Dull) % r->n;
}

static uint64_t absent_index(size_t i, void *ctx) { return *(uint64_t *)ctx + i; }

/* A chunk of consecutive keys from `first`, for fills and censuses. */
struct chunk {
    uint64_t keys[FILL_CHUNK];
    const void *ptrs[FILL_CHUNK];
    size_t lens[FILL_CHUNK];
};

static unsigned load_chunk(struct chunk *c, uint64_t first, uint64_t end) {
    unsigned m = (unsigned)RTE_MIN((uint64_t)FILL_CHUNK, end - first);
    for (unsigned i = 0; i < m; i++) {
        c->keys[i] = key(first + i);
        c->ptrs[i] = &c->keys[i];
        c->lens[i] = sizeof(uint64_t);
    }
    return m;
}

/* How many of the m <= BURST keys the structure finds, by its batch call
 * (for rte_hash the one that hashes inside: no signatures here). */
static unsigned answer_burst(const struct structure *s, const uint64_t *keys, unsigned m) {
    const void *ptrs[BURST];
    size_t lens[BURST];
    bool out[BURST];
    int32_t pos[BURST];
    member_set_t sets[BURST];
    unsigned found = 0;
    for (unsigned i = 0; i < m; i++) {
        ptrs[i] = &keys[i];
        lens[i] = sizeof(uint64_t);
    }
    switch (s->kind) {
    case FILTER_HASH:
    case FILTER_UNIFORM:
    case FILTER_KEYED:
        if (s->kind != FILTER_KEYED)
            ccf_contains_hash_batch(s->filter, keys, m, out);
        else
            ccf_contains_batch(s->filter, ptrs, lens, m, out);
        for (unsigned i = 0; i < m; i++)
            found += out[i];
        return found;
    case FILTER_SIGNED: {
        uint32_t sigs[BURST];
        for (unsigned i = 0; i < m; i++)
            sigs[i] = signature_of(&keys[i]);
        return (unsigned)__builtin_popcountll(ccf_contains_signed_burst(s->filter, ptrs, 8, sigs, m));
    }
    case RTE_HASH:
        if (rte_hash_lookup_bulk(s->hash, ptrs, m, pos) != 0)
            die("rte_hash_lookup_bulk failed\n");
        for (unsigned i = 0; i < m; i++)
            found += pos[i] >= 0;
        return found;
    default: {
        int rc = rte_member_lookup_bulk(s->member, ptrs, m, sets);
        if (rc < 0)
            die("rte_member_lookup_bulk: %s\n", rte_strerror(-rc));
        return (unsigned)rc;
    }
    }
}

/* How many of the keys key(first .. end) the structure finds. */
static uint64_t count_found(const struct structure *s, uint64_t first, uint64_t end) {
    uint64_t keys[BURST], found = 0;
    for (uint64_t at = first; at < end; at += BURST) {
        unsigned m = (unsigned)RTE_MIN((uint64_t)BURST, end - at);
        for (unsigned i = 0; i < m; i++)
            keys[i] = key(at + i);
        found += answer_burst(s, keys, m);
    }
    return found;
}

/* ---- building each structure ------------------------------------------------ */

static void build_filter(struct structure *s, uint64_t n, enum kind kind) {
    const bool keyed = kind == FILTER_KEYED, signed_keys = kind == FILTER_SIGNED;
    s->kind = kind;
    s->name = keyed         ? "concurrent-cuckoo, byte keys"
              : signed_keys ? "concurrent-cuckoo, signed keys"
              : kind == FILTER_UNIFORM ? "concurrent-cuckoo, uniform"
                                       : "concurrent-cuckoo";
    struct pages before = smaps_pages(0, 0);
    const uint64_t seed = FILTER_SEED;
    ccf_status st = ccf_new_with_flags(n, 0.0, 16, &seed,
                                       kind == FILTER_UNIFORM ? CCF_UNIFORM_HASHES : 0, &s->filter);
    if (st != CCF_OK)
        die("ccf_new_with_flags(%" PRIu64 "): %s\n", n, ccf_status_message(st));
    static struct chunk c;
    for (uint64_t at = 0; at < n;) {
        unsigned m = load_chunk(&c, at, n);
        size_t done = 0;
        if (signed_keys) /* each key's signed hash in place of the key */
            for (unsigned i = 0; i < m; i++)
                c.keys[i] = ccf_signed_hash(s->filter, &c.keys[i], 8, signature_of(&c.keys[i]));
        st = keyed ? ccf_insert_batch(s->filter, c.ptrs, c.lens, m, &done)
                   : ccf_insert_hash_batch(s->filter, c.keys, m, &done);
        at += done;
        if (st == CCF_FULL || st == CCF_TOO_MANY_DUPLICATES) {
            s->refused++; /* skip the refused key, go on with the rest */
            at++;
        } else if (st != CCF_OK) {
            die("filling the filter: %s\n", ccf_status_message(st));
        }
    }
    struct pages after = smaps_pages(0, 0);
    s->pages = (struct pages){after.rss_kb - before.rss_kb, after.huge_kb - before.huge_kb};
    s->bytes = ccf_memory_usage(s->filter);
    snprintf(s->config, sizeof s->config, "ccf_new(%" PRIu64 ")%s, 16-bit fingerprints, load %.3f",
             n, kind == FILTER_UNIFORM ? " with CCF_UNIFORM_HASHES" : "", ccf_load_factor(s->filter));
    snprintf(s->sizing, sizeof s->sizing, "capacity n; %zu slots", ccf_capacity(s->filter));
    if (signed_keys) {
        s->methods[0] = (struct method){"ccf_contains_signed_burst (8-byte keys + CRC32 signatures)",
                                        run_filter_signed_burst};
        s->n_methods = 1;
    } else if (keyed) {
        s->methods[0] = (struct method){"ccf_contains_batch (8-byte keys, XXH3 inside)",
                                        run_filter_keyed_batch};
        s->methods[1] = (struct method){"ccf_contains_burst (8-byte keys, a hit mask)",
                                        run_filter_keyed_burst};
        s->n_methods = 2;
    } else {
        s->methods[0] = (struct method){"ccf_contains_hash_batch", run_filter_hash_batch};
        s->methods[1] = (struct method){"ccf_contains_hash, one at a time", run_filter_hash_single};
        s->methods[2] = (struct method){"ccf_contains_hash_burst (a hit mask)", run_filter_hash_burst};
        s->n_methods = 3;
    }
}

/* What rte_hash_create allocates for `entries` without extra flags but
 * RW_CONCURRENCY_LF: 64-byte buckets of 8, a 16-byte key slot per entry plus
 * a dummy, and a ring of 4-byte free-slot indices. */
static size_t hash_bytes(uint32_t entries) {
    uint64_t buckets = rte_align32pow2(entries) / 8;
    return (size_t)(buckets * 64 + ((uint64_t)entries + 1) * 16 +
                    (uint64_t)rte_align32pow2(entries + 1) * 4);
}

/* A region for a structure expected to take `bytes`: DPDK writes the whole
 * area it is given, so it is sized close (1/64 and 4 MiB over, for headers
 * and alignment). */
static size_t region_for(size_t bytes) { return bytes + bytes / 64 + (4u << 20); }

/* Fills an rte_hash of `entries`; returns false (and frees it) at the first
 * refused key. */
static bool try_rte_hash(struct structure *s, uint64_t n, uint32_t entries, uint64_t *refused_at) {
    /* If the region proves too small for DPDK's headers and alignment, one
     * more try with twice the room. */
    for (size_t bytes = region_for(hash_bytes(entries)); !s->hash; bytes *= 2) {
        region_open(&s->region, "hash", bytes);
        char name[RTE_HASH_NAMESIZE];
        snprintf(name, sizeof name, "bench_%s", s->region.heap);
        struct rte_hash_parameters p = {
            .name = name,
            .entries = entries,
            .key_len = sizeof(uint64_t),
            .hash_func = rte_hash_crc,
            .hash_func_init_val = 0,
            .socket_id = s->region.socket,
            .extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF,
        };
        s->hash = rte_hash_create(&p);
        if (!s->hash) {
            int err = rte_errno;
            region_close(&s->region);
            if (bytes > region_for(hash_bytes(entries)))
                die("rte_hash_create(entries %u): %s\n", entries, rte_strerror(err));
        }
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = key(i);
        int32_t rc = rte_hash_add_key(s->hash, &k);
        if (rc == -ENOSPC) {
            *refused_at = i;
            rte_hash_free(s->hash);
            s->hash = NULL;
            region_close(&s->region);
            return false;
        }
        if (rc < 0)
            die("rte_hash_add_key: %s\n", rte_strerror(-rc));
    }
    return true;
}

static void build_rte_hash(struct structure *s, uint64_t n) {
    s->kind = RTE_HASH;
    s->name = "rte_hash";
    uint32_t entries = (uint32_t)n;
    size_t len = 0;
    for (;;) {
        uint64_t refused_at = 0;
        if (try_rte_hash(s, n, entries, &refused_at))
            break;
        uint32_t buckets = rte_align32pow2(entries) / 8;
        len += (size_t)snprintf(s->sizing + len, sizeof s->sizing - len,
                                "entries %u (%u buckets): refused key %" PRIu64 " (%.1f%% of the "
                                "slots filled); ",
                                entries, buckets, refused_at,
                                100.0 * (double)refused_at / (8.0 * buckets));
        if (rte_align32pow2(entries) >= (1u << 30))
            die("rte_hash cannot hold %" PRIu64 " keys\n", n);
        entries = rte_align32pow2(entries) + 1;
    }
    snprintf(s->sizing + len, sizeof s->sizing - len, "entries %u (%u buckets): all keys in",
             entries, rte_align32pow2(entries) / 8);
    snprintf(s->config, sizeof s->config,
             "entries %u, 8-byte keys, CRC32, RW_CONCURRENCY_LF, bucket load %.3f", entries,
             (double)n / (double)rte_align32pow2(entries));
    s->bytes = region_allocated(&s->region);
    s->pages = smaps_pages((uintptr_t)s->region.addr, (uintptr_t)s->region.addr + s->region.len);
    s->methods[0] = (struct method){"rte_hash_lookup_bulk (CRC32 inside)", run_hash_bulk};
    s->methods[1] = (struct method){"rte_hash_lookup_with_hash_bulk", run_hash_with_hash_bulk};
    s->n_methods = 2;
}

/* Creates an rte_member set summary in a region of `bytes`; NULL with
 * rte_errno set if rte_member_create refuses. */
static struct rte_member_setsum *member_create(struct structure *s, size_t bytes,
                                               const struct rte_member_parameters *base) {
    /* Twice the room once if the first region proves too small. */
    for (int attempt = 0; attempt < 2; attempt++, bytes *= 2) {
        region_open(&s->region, "member", bytes);
        char name[RTE_MEMBER_NAMESIZE];
        snprintf(name, sizeof name, "bench_%s", s->region.heap);
        struct rte_member_parameters p = *base;
        p.name = name;
        p.key_len = sizeof(uint64_t);
        p.prim_hash_seed = 0x9E3779B9u;
        p.sec_hash_seed = 0x85EBCA6Bu;
        p.socket_id = s->region.socket;
        struct rte_member_setsum *ss = rte_member_create(&p);
        if (ss)
            return ss;
        int err = rte_errno;
        region_close(&s->region);
        rte_errno = err;
        if (err != ENOMEM)
            break;
    }
    return NULL;
}

static void member_free(struct structure *s) {
    rte_member_free(s->member);
    s->member = NULL;
    region_close(&s->region);
}

static void build_member_ht(struct structure *s, uint64_t n, bool cache) {
    s->kind = cache ? MEMBER_HT_CACHE : MEMBER_HT;
    s->name = cache ? "rte_member HT, cache mode" : "rte_member HT";
    uint32_t num_keys = (uint32_t)n;
    size_t len = 0;
    for (;;) {
        struct rte_member_parameters p = {.type = RTE_MEMBER_TYPE_HT, .is_cache = cache,
                                          .num_keys = num_keys};
        s->member = member_create(s, region_for((size_t)rte_align32pow2(num_keys) * 4), &p);
        if (!s->member)
            die("rte_member_create(HT, num_keys %u): %s\n", num_keys, rte_strerror(rte_errno));
        uint64_t refused_at = UINT64_MAX;
        s->evicted = 0;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t k = key(i);
            int rc = rte_member_add(s->member, &k, 1);
            if (rc == -ENOSPC) {
                refused_at = i;
                break;
            }
            if (rc < 0)
                die("rte_member_add: %s\n", rte_strerror(-rc));
            /* 1: cache mode overwrote an entry (non-cache: moved one). */
            s->evicted += cache && rc == 1;
        }
        if (refused_at == UINT64_MAX)
            break;
        len += (size_t)snprintf(s->sizing + len, sizeof s->sizing - len,
                                "num_keys %u (%u entries): refused key %" PRIu64 " (%.1f%% full); ",
                                num_keys, rte_align32pow2(num_keys), refused_at,
                                100.0 * (double)refused_at / rte_align32pow2(num_keys));
        member_free(s);
        if (rte_align32pow2(num_keys) >= RTE_MEMBER_ENTRIES_MAX)
            die("rte_member HT cannot hold %" PRIu64 " keys\n", n);
        num_keys = rte_align32pow2(num_keys) + 1;
    }
    snprintf(s->sizing + len, sizeof s->sizing - len, "num_keys %u (%u entries): %s", num_keys,
             rte_align32pow2(num_keys), cache ? "cache mode never refuses" : "all keys in");
    snprintf(s->config, sizeof s->config, "num_keys %u, %u entries of 16-bit signatures, %s",
             num_keys, rte_align32pow2(num_keys),
             cache ? "cache mode (evicts)" : "not cache mode");
    s->bytes = region_allocated(&s->region);
    s->pages = smaps_pages((uintptr_t)s->region.addr, (uintptr_t)s->region.addr + s->region.len);
    s->methods[0] = (struct method){"rte_member_lookup_bulk", run_member_bulk};
    s->n_methods = 1;
}

/* The bits per Bloom filter rte_member_create_vbf computes (before its
 * rounding to a power of two), to say why a num_set cannot be created. */
static double vbf_bits(uint64_t n, uint32_t num_set, double fpr) {
    double per_bf = (double)(1 + (n - 1) / num_set);
    double fp_one = 1 - pow(1 - fpr, 1.0 / num_set);
    return ceil(per_bf * log(fp_one) / log(1.0 / pow(2.0, log(2.0))));
}

static void build_member_vbf(struct structure *s, uint64_t n, double fpr) {
    s->kind = MEMBER_VBF;
    s->name = "rte_member vBF";
    size_t len = 0;
    uint32_t num_set;
    for (num_set = 1; num_set <= 32; num_set *= 2) {
        double bits = vbf_bits(n, num_set, fpr);
        if (bits > (double)(1u << 31)) {
            len += (size_t)snprintf(s->sizing + len, sizeof s->sizing - len,
                                    "num_set %u: %.3g bits per Bloom filter, over 2^31 (the "
                                    "rounding to a power of two in 32 bits overflows); ",
                                    num_set, bits);
            continue;
        }
        struct rte_member_parameters p = {.type = RTE_MEMBER_TYPE_VBF, .num_keys = (uint32_t)n,
                                          .num_set = num_set, .false_positive_rate = (float)fpr};
        size_t bytes = (size_t)num_set * (rte_align32pow2((uint32_t)bits) / 8);
        s->member = member_create(s, region_for(bytes), &p);
        if (s->member)
            break;
        len += (size_t)snprintf(s->sizing + len, sizeof s->sizing - len,
                                "num_set %u: rte_member_create: %s; ", num_set,
                                rte_strerror(rte_errno));
    }
    if (!s->member)
        die("no rte_member vBF could be created for %" PRIu64 " keys\n", n);
    s->num_set = num_set;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = key(i);
        int rc = rte_member_add(s->member, &k, (member_set_t)(1 + i % num_set));
        if (rc < 0)
            die("rte_member_add(vBF): %s\n", rte_strerror(-rc));
    }
    snprintf(s->sizing + len, sizeof s->sizing - len, "num_set %u: created", num_set);
    /* rte_member_setsum is public: report what create computed. */
    snprintf(s->config, sizeof s->config,
             "num_keys %" PRIu64 ", num_set %u%s, false_positive_rate %.3g: %u bits per Bloom "
             "filter, %u hashes",
             n, num_set, num_set > 1 ? " (keys spread over the sets)" : "", fpr, s->member->bits,
             s->member->num_hashes);
    s->bytes = region_allocated(&s->region);
    s->pages = smaps_pages((uintptr_t)s->region.addr, (uintptr_t)s->region.addr + s->region.len);
    s->methods[0] = (struct method){"rte_member_lookup_bulk", run_member_bulk};
    s->n_methods = 1;
}

static void free_structure(struct structure *s) {
    if (s->filter)
        ccf_free(s->filter);
    if (s->hash) {
        rte_hash_free(s->hash);
        region_close(&s->region);
    }
    if (s->member)
        member_free(s);
    memset(s, 0, sizeof *s);
}

/* ---- one size: build, census, rounds, report ------------------------------ */

struct options {
    uint64_t small, large, queries, fp_queries;
    unsigned rounds;
};

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, unsigned n) {
    double tmp[MAX_ROUNDS];
    memcpy(tmp, v, n * sizeof *v);
    qsort(tmp, n, sizeof *tmp, compare_double);
    return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

static double min_of(const double *v, unsigned n) {
    double m = v[0];
    for (unsigned i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

static double max_of(const double *v, unsigned n) {
    double m = v[0];
    for (unsigned i = 1; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

static void run_size(uint64_t n, const char *label, const struct options *o) {
    const double fpr_target = 8.0 / 65536.0; /* the filter's bound with 16-bit fingerprints */
    struct structure *st = calloc(KINDS, sizeof *st);
    if (!st)
        die("out of memory\n");
    printf("\n## n = %" PRIu64 " keys (%s)\n\n", n, label);
    fflush(stdout);

    for (int k = 0; k < KINDS; k++) {
        double t0 = wall_seconds();
        switch ((enum kind)k) {
        case FILTER_HASH:
        case FILTER_UNIFORM:
        case FILTER_KEYED:
        case FILTER_SIGNED: build_filter(&st[k], n, (enum kind)k); break;
        case RTE_HASH: build_rte_hash(&st[k], n); break;
        case MEMBER_HT: build_member_ht(&st[k], n, false); break;
        case MEMBER_HT_CACHE: build_member_ht(&st[k], n, true); break;
        case MEMBER_VBF: build_member_vbf(&st[k], n, fpr_target); break;
        case KINDS: break;
        }
        st[k].build_seconds = wall_seconds() - t0;
        printf("built %-28s in %6.1f s, %8.1f MiB: %s; sizing: %s\n", st[k].name,
               st[k].build_seconds, (double)st[k].bytes / (1 << 20), st[k].config, st[k].sizing);
        fflush(stdout);
    }
    size_t smallest = SIZE_MAX, largest = 0;
    for (int k = 0; k < KINDS; k++) {
        smallest = RTE_MIN(smallest, st[k].bytes);
        largest = RTE_MAX(largest, st[k].bytes);
    }
    printf("structures from %.1f to %.1f MiB\n", (double)smallest / (1 << 20),
           (double)largest / (1 << 20));

    /* Censuses: every inserted key, and fp_queries absent ones. */
    for (int k = 0; k < KINDS; k++) {
        double t0 = wall_seconds();
        st[k].missing = n - count_found(&st[k], 0, n);
        st[k].fp_queries = o->fp_queries;
        st[k].fp_hits = count_found(&st[k], n, n + o->fp_queries);
        printf("census %-26s in %5.1f s: %" PRIu64 " inserted keys not found, %" PRIu64
               " false positives in %" PRIu64 " absent keys\n",
               st[k].name, wall_seconds() - t0, st[k].missing, st[k].fp_hits, st[k].fp_queries);
        fflush(stdout);
    }

    struct random_index ri = {.n = n, .state = 0x2545F4914F6CDD1Dull ^ n};
    uint64_t absent_first = n + o->fp_queries; /* not the census's keys */
    struct query_set qs[2] = {make_queries(o->queries, random_present, &ri),
                              make_queries(o->queries, absent_index, &absent_first)};

    /* The signatures given to rte_hash_lookup_with_hash_bulk must be the
     * table's own. */
    if (qs[0].sigs[0] != rte_hash_hash(st[RTE_HASH].hash, &qs[0].keys[0]))
        die("rte_hash_hash disagrees with rte_hash_crc\n");

    /* Warm-up: one pass of every call on both sets (page tables, caches). */
    for (int k = 0; k < KINDS; k++)
        for (int m = 0; m < st[k].n_methods; m++)
            for (int kind = 0; kind < 2; kind++)
                (void)st[k].methods[m].run(&st[k], &qs[kind]);

    for (unsigned r = 0; r < o->rounds; r++) {
        printf("round %u:", r + 1);
        for (int i = 0; i < KINDS; i++) {
            int k = (int)((r + (unsigned)i) % KINDS);
            for (int m = 0; m < st[k].n_methods; m++)
                for (int j = 0; j < 2; j++) {
                    int kind = (int)((r + (unsigned)j) % 2); /* alternate which goes first */
                    double t0 = cpu_seconds();
                    uint64_t hits = st[k].methods[m].run(&st[k], &qs[kind]);
                    double t = cpu_seconds() - t0;
                    st[k].ns[m][kind][r] = t * 1e9 / (double)qs[kind].n;
                    (void)hits;
                }
            printf(" %s", st[k].name);
            for (int m = 0; m < st[k].n_methods; m++)
                printf(" [%.1f/%.1f]", st[k].ns[m][0][r], st[k].ns[m][1][r]);
            printf(";");
        }
        printf("\n");
        fflush(stdout);
    }

    printf("\n### n = %" PRIu64 " (%s): CPU ns per lookup, bursts of 32, median of %u rounds\n\n",
           n, label, o->rounds);
    printf("| structure | call | present | absent | bytes per item | false-positive rate "
           "(absent keys) | inserted keys not found | refused inserts | on 2 MiB pages |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < KINDS; k++) {
        const struct structure *s = &st[k];
        for (int m = 0; m < s->n_methods; m++) {
            double rate = (double)s->fp_hits / (double)s->fp_queries;
            printf("| %s | `%s` | %.1f | %.1f | %.2f | %.2e (%" PRIu64 ") | %" PRIu64 " | %" PRIu64
                   " | %.0f%% |\n",
                   s->name, s->methods[m].call, median(s->ns[m][0], o->rounds),
                   median(s->ns[m][1], o->rounds), (double)s->bytes / (double)n, rate, s->fp_hits,
                   s->missing, s->refused,
                   s->pages.rss_kb ? 100.0 * (double)s->pages.huge_kb / (double)s->pages.rss_kb
                                   : 0.0);
        }
    }
    printf("\nSpread over the rounds (min-max, present / absent):");
    for (int k = 0; k < KINDS; k++)
        for (int m = 0; m < st[k].n_methods; m++)
            printf(" %s `%s` %.1f-%.1f / %.1f-%.1f;", st[k].name, st[k].methods[m].call,
                   min_of(st[k].ns[m][0], o->rounds), max_of(st[k].ns[m][0], o->rounds),
                   min_of(st[k].ns[m][1], o->rounds), max_of(st[k].ns[m][1], o->rounds));
    printf("\n\nConfigurations and sizing:\n\n");
    for (int k = 0; k < KINDS; k++)
        printf("- %s: %s; %.1f MiB (%" PRIu64 " KiB resident, %" PRIu64
               " KiB of it on 2 MiB pages); built in %.1f s%s%s\n",
               st[k].name, st[k].config, (double)st[k].bytes / (1 << 20), st[k].pages.rss_kb,
               st[k].pages.huge_kb, st[k].build_seconds, st[k].sizing[0] ? "; sizing: " : "",
               st[k].sizing);
    for (int k = 0; k < KINDS; k++)
        if (st[k].kind == MEMBER_HT_CACHE)
            printf("- %s overwrote an entry on %" PRIu64 " of its %" PRIu64 " inserts\n",
                   st[k].name, st[k].evicted, n);
    fflush(stdout);

    free_queries(&qs[0]);
    free_queries(&qs[1]);
    for (int k = 0; k < KINDS; k++)
        free_structure(&st[k]);
    free(st);
}

/* ---- main ----------------------------------------------------------------- */

static uint64_t parse_u64(const char *flag, const char *v) {
    char *end = NULL;
    unsigned long long x = v ? strtoull(v, &end, 0) : 0;
    if (!v || *v == '\0' || *end != '\0' || x == 0) {
        fprintf(stderr, "%s needs a positive number\n", flag);
        exit(2);
    }
    return x;
}

int main(int argc, char **argv) {
    int sep = -1;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            sep = i;
            break;
        }
    int app_first = sep < 0 ? 1 : sep + 1, eal_count = sep < 0 ? 0 : sep - 1;

    struct options o = {.small = 1u << 16, .large = 1u << 27, .queries = 1u << 21,
                        .fp_queries = 1u << 24, .rounds = 5};
    long cpu = -1;
    /* The presets first, wherever they are, so that other options adjust
     * them. */
    for (int i = app_first; i < argc; i++) {
        if (!strcmp(argv[i], "--smoke"))
            o = (struct options){.small = 1u << 12, .large = 1u << 14, .queries = 1u << 12,
                                 .fp_queries = 1u << 16, .rounds = 1};
        else if (!strcmp(argv[i], "--quick"))
            o = (struct options){.small = 1u << 16, .large = 1u << 22, .queries = 1u << 20,
                                 .fp_queries = 1u << 22, .rounds = 3};
    }
    for (int i = app_first; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--smoke") || !strcmp(argv[i], "--quick")) {
            continue;
        } else if (!strcmp(argv[i], "--pages") && v) {
            if (strcmp(v, "2m") && strcmp(v, "4k")) {
                fprintf(stderr, "--pages takes 2m or 4k\n");
                return 2;
            }
            use_huge_pages = !strcmp(v, "2m");
            i++;
        } else if (!strcmp(argv[i], "--small")) {
            o.small = parse_u64(argv[i], v), i++;
        } else if (!strcmp(argv[i], "--large")) {
            o.large = parse_u64(argv[i], v), i++;
        } else if (!strcmp(argv[i], "--rounds")) {
            o.rounds = (unsigned)parse_u64(argv[i], v), i++;
        } else if (!strcmp(argv[i], "--queries")) {
            o.queries = parse_u64(argv[i], v), i++;
        } else if (!strcmp(argv[i], "--fp-queries")) {
            o.fp_queries = parse_u64(argv[i], v), i++;
        } else if (!strcmp(argv[i], "--cpu")) {
            char *end = NULL;
            cpu = v ? strtol(v, &end, 10) : -1;
            if (!v || *v == '\0' || *end != '\0' || cpu < 0 || cpu >= CPU_SETSIZE) {
                fprintf(stderr, "--cpu needs a CPU number\n");
                return 2;
            }
            i++;
        } else {
            fprintf(stderr,
                    "usage: member_bench [EAL options --] [--smoke | --quick] [--pages 2m|4k] "
                    "[--small N] [--large N] [--rounds R] [--queries Q] [--fp-queries F] "
                    "[--cpu C]\n");
            return 2;
        }
    }
    if (o.rounds > MAX_ROUNDS || o.queries % BURST || o.large > (1u << 30) || o.small > (1u << 30)) {
        fprintf(stderr, "rounds at most %d, queries a multiple of %d, sizes at most 2^30\n",
                MAX_ROUNDS, BURST);
        return 2;
    }

    /* Transparent huge pages off for the whole process, before EAL or the
     * library allocate anything: every page is then 4 KiB. */
    if (!use_huge_pages && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0) {
        perror("prctl(PR_SET_THP_DISABLE)");
        return 1;
    }

    char cpu_arg[32];
    char *eal_argv[64];
    int eal_argc = 0;
    eal_argv[eal_argc++] = argv[0];
    if (eal_count == 0) {
        if (cpu < 0) {
            cpu_set_t set;
            if (sched_getaffinity(0, sizeof set, &set) != 0) {
                perror("sched_getaffinity");
                return 1;
            }
            for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &set))
                    cpu = c; /* the last one: CPU 0 tends to get more interrupts */
        }
        snprintf(cpu_arg, sizeof cpu_arg, "%ld", cpu);
        char *defaults[] = {"--no-huge", "--no-pci", "--no-shconf", "-m", "256", "--no-telemetry",
                            "--log-level=lib.member:notice", "-l", cpu_arg};
        for (size_t i = 0; i < RTE_DIM(defaults); i++)
            eal_argv[eal_argc++] = defaults[i];
    } else {
        if (eal_count > (int)RTE_DIM(eal_argv) - 1) {
            fprintf(stderr, "too many EAL options\n");
            return 2;
        }
        for (int i = 1; i <= eal_count; i++)
            eal_argv[eal_argc++] = argv[i];
    }
    if (rte_eal_init(eal_argc, eal_argv) < 0)
        rte_exit(EXIT_FAILURE, "rte_eal_init: %s\n", rte_strerror(rte_errno));

    char thp[128], defrag[128], shmem[128];
    read_sysfs("/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof thp);
    read_sysfs("/sys/kernel/mm/transparent_hugepage/defrag", defrag, sizeof defrag);
    read_sysfs("/sys/kernel/mm/transparent_hugepage/shmem_enabled", shmem, sizeof shmem);
    printf("# member_bench: concurrent-cuckoo %s (probe %s) beside %s rte_hash and rte_member\n\n",
           ccf_version(), ccf_probe_backend(), rte_version());
    char l3[64];
    read_sysfs("/sys/devices/system/cpu/cpu0/cache/index3/size", l3, sizeof l3);
    printf("- lcore %u on CPU %d, one thread; CPU time per lookup (CLOCK_THREAD_CPUTIME_ID); "
           "L3 cache %s (sysfs)\n",
           rte_lcore_id(), sched_getcpu(), l3);
    printf("- pages: %s\n",
           use_huge_pages
               ? "2 MiB (transparent): the library's table and each DPDK structure's external "
                 "heap are madvise(MADV_HUGEPAGE)"
               : "4 KiB: transparent huge pages disabled for the process "
                 "(prctl(PR_SET_THP_DISABLE)), for the library and the DPDK heaps alike");
    printf("- THP enabled: %s; defrag: %s; shmem: %s\n", thp, defrag, shmem);
    printf("- sizes %" PRIu64 " and %" PRIu64 "; %" PRIu64 " queries per measurement; %" PRIu64
           " absent keys for the false-positive rate; %u rounds\n",
           o.small, o.large, o.queries, o.fp_queries, o.rounds);
    fflush(stdout);

    double t0 = wall_seconds();
    run_size(o.small, "small", &o);
    run_size(o.large, "large", &o);
    printf("\nmember_bench done in %.0f s\n", wall_seconds() - t0);

    int rc = rte_eal_cleanup();
    if (rc != 0) {
        fprintf(stderr, "rte_eal_cleanup: %s\n", rte_strerror(-rc));
        return 1;
    }
    return 0;
}
