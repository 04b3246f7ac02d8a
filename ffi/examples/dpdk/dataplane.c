/*
 * A DPDK dataplane whose flow table is a concurrent-cuckoo filter.
 *
 * Worker lcores receive bursts of 32 packets with rte_eth_rx_burst (one rx
 * queue each), take each packet's flow key from its 5-tuple, look the whole
 * burst up with one ccf_contains_hash_burst call (ccf_contains_burst with
 * --keyed; both answer in a hit mask), and forward the packets of admitted flows (rte_eth_tx_burst to a
 * net_null port) while dropping the rest. The main lcore is the control
 * plane: it admits and expires flows with ccf_insert_hash_batch and
 * ccf_remove_hash_batch while the workers run, and prints packets per
 * second per lcore every second. A generator lcore makes the traffic.
 *
 * No NIC, hugepages or privileges are needed: EAL runs with --no-huge
 * --no-pci --no-shconf, and the receive port is a ring-backed ethdev
 * (rte_eth_from_rings) whose tx queue q loops back into rx queue q, so the
 * generator sends with rte_eth_tx_burst and the workers receive with
 * rte_eth_rx_burst through the ordinary ethdev API.
 *
 * False negatives are checked exactly. Each flow slot has an atomic state
 * word (generation, phase); a flow is the pair (slot, generation) and each
 * generation is a new 5-tuple. The control plane moves a slot through
 * ABSENT -> ADMITTING -> (insert) -> ADMITTED -> EXPIRING -> (remove) ->
 * ABSENT of the next generation. Every packet carries its (slot,
 * generation) in its payload, for the checker only: the dataplane decides
 * from the 5-tuple alone. A worker reads the slot's state before its burst
 * lookup (acquire) and again after it (behind an acquire fence):
 *  - both reads ADMITTED of the packet's generation: the insert finished
 *    before the lookup began (the acquire load saw the release store made
 *    after the insert returned), and the remove had not begun when the
 *    lookup ended (the control plane stores EXPIRING and then issues a
 *    release fence before the remove writes the table, so a lookup that saw
 *    any of the remove's writes is followed by a read that sees EXPIRING or
 *    later). A drop is then a false negative, and the program exits 3.
 *  - the packet's generation was never inserted yet (ABSENT, both reads),
 *    or was expired before the first read: a hit is a false positive.
 *  - anything else (the flow is being admitted or expired during the
 *    lookup): counted as in transit, neither way.
 * The generator picks slots uniformly, whatever their state, so all three
 * cases occur all the time. --canary marks 1 flow in 1024 ADMITTED without
 * inserting it: the checker must then report false negatives (exit 3), which
 * proves it can fail.
 *
 * --window MS ages flows instead: the filter is a ccf_timed whose time to
 * live is MS milliseconds (in 4 generations, or --generations N of them,
 * at a false-positive rate of 0.001 or --rate R: past 28 generations or
 * below 9.8e-4 its slots are 32 bits, two a bucket), on a host clock: the main
 * lcore sets its time from the timer cycle counter (ccf_timed_set_time),
 * and every call expires what ran out by then. Workers look each burst up,
 * and every packet refreshes its flow (one ccf_timed_insert_hash_batch a
 * burst): a flow stays while it has traffic, and once idle for the time to
 * live it is forgotten, so its next packet finds it new again. The generator
 * sends to a moving set of active flows (a quarter of the slots, each
 * active for two windows, then idle), so flows keep going idle and coming
 * back. The main lcore publishes the time twice, as a bound on either
 * side of ccf_timed_set_time: `clock_hi` before it, `clock_lo` after. The
 * checker keeps, per slot, `clock_lo` read before the last refresh of its
 * flow (the filter's time at the refresh was no earlier), and reads
 * `clock_hi` after each lookup (the filter's time during it was no
 * later): a flow refreshed at `lo` and looked up by `hi < lo + MS` must be
 * found (exit 3 otherwise; --canary leaves 1 refresh in 1024 out of the
 * filter, which the checker must report).
 *
 * Build and run (repository root; see the Makefile beside this file):
 *   cargo build --release -p concurrent-cuckoo-ffi && make -C ffi/examples/dpdk
 *   target/dpdk/dataplane --seconds 5
 *
 * The filter's tables live in DPDK's memory: ccf_set_table_allocator
 * with rte_malloc_socket on the main lcore's NUMA socket (rte_free gives
 * them back when the filter is freed, before rte_eal_cleanup).
 *
 * Usage: dataplane [EAL options --] [--seconds N] [--workers N] [--flows N]
 *                  [--churn N] [--keyed] [--canary] [--window MS]
 *                  [--generations N] [--rate R]
 * Without EAL options the defaults are --no-huge --no-pci --no-shconf -m 128
 * and lcores 0..workers+1 (main/control, generator, workers): each on its
 * own CPU when the process may use that many, otherwise all floating over
 * the CPUs it may use (DPDK allows more lcores than CPUs; busy lcores that
 * find no work then yield the CPU). With EAL options, the workers are the
 * lcores beyond the main one and the generator.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_* (and strnlen in DPDK headers) */

#include "concurrent_cuckoo.h"

#include <rte_bus_vdev.h>
#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_random.h>
#include <rte_ring.h>
#include <rte_udp.h>
#include <rte_version.h>

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    BURST = 32,
    RING_SIZE = 1024,        /* per worker rx ring (a power of two) */
    MBUF_CACHE = 256,
    CONTROL_BATCH = 64,      /* flows per insert/remove batch */
    EXIT_FALSE_NEGATIVE = 3, /* distinct from setup errors (1) and usage (2) */
    CANARY_EVERY = 1024,
    KEY_LEN = 13, /* packed 5-tuple: src ip, dst ip, src port, dst port, proto */
};

/* ---- flows and their state ------------------------------------------- */

enum phase { ABSENT = 0, ADMITTING = 1, ADMITTED = 2, EXPIRING = 3 };

static inline uint64_t state_of(uint32_t gen, enum phase p) { return ((uint64_t)gen << 2) | p; }
static inline uint32_t state_gen(uint64_t s) { return (uint32_t)(s >> 2); }
static inline enum phase state_phase(uint64_t s) { return (enum phase)(s & 3); }

/* A flow's 5-tuple, fields in network byte order as they sit in the packet. */
struct flow_tuple {
    rte_be32_t src_ip, dst_ip;
    rte_be16_t src_port, dst_port;
    uint8_t proto;
};

/* Flow (slot, generation) -> 5-tuple, injective: the slot is the low 24 bits
 * of the source address in 10.0.0.0/8, the generation the UDP source port
 * (low 16 bits) and the low 16 bits of the destination in 198.18.0.0/15. */
static struct flow_tuple flow_tuple_of(uint32_t slot, uint32_t gen) {
    return (struct flow_tuple){
        .src_ip = rte_cpu_to_be_32(0x0A000000u | slot),
        .dst_ip = rte_cpu_to_be_32(0xC6120000u | (gen >> 16)),
        .src_port = rte_cpu_to_be_16((uint16_t)gen),
        .dst_port = rte_cpu_to_be_16(443),
        .proto = IPPROTO_UDP,
    };
}

static inline uint64_t fmix64(uint64_t z) {
    z ^= z >> 33;
    z *= 0xFF51AFD7ED558CCDull;
    z ^= z >> 33;
    z *= 0xC4CEB9FE1A85EC53ull;
    return z ^ (z >> 33);
}

/* The 64-bit flow hash given to the *_hash calls. A NIC's RSS hash
 * (mbuf->hash.rss with RTE_MBUF_F_RX_RSS_HASH) would save this work, but it
 * is 32 bits, and the filter wants 64 well-mixed ones: a 32-bit hash makes
 * distinct flows collide once there are tens of thousands of them, and the
 * control plane would have to reproduce the NIC's Toeplitz key. So the
 * 5-tuple is hashed in software, seeded per run so that senders cannot
 * choose colliding flows. (--keyed instead hands the packed 5-tuple to the
 * library, which hashes it with its own seeded XXH3.) */
static uint64_t flow_seed;

static inline uint64_t flow_hash(const struct flow_tuple *t) {
    uint64_t a = ((uint64_t)t->src_ip << 32) | t->dst_ip;
    uint64_t b = ((uint64_t)t->src_port << 32) | ((uint64_t)t->dst_port << 16) | t->proto;
    return fmix64(a ^ fmix64(b ^ flow_seed));
}

static inline void flow_key_bytes(const struct flow_tuple *t, uint8_t key[KEY_LEN]) {
    memcpy(key, &t->src_ip, 4);
    memcpy(key + 4, &t->dst_ip, 4);
    memcpy(key + 8, &t->src_port, 2);
    memcpy(key + 10, &t->dst_port, 2);
    key[12] = t->proto;
}

/* What each packet carries after its UDP header, for the checker only. */
struct flow_tag {
    uint32_t slot, gen;
};

enum {
    HDR_LEN = sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr),
    FRAME_LEN = 60, /* the minimum Ethernet frame without FCS */
};

/* ---- shared state ----------------------------------------------------- */

struct config {
    unsigned seconds, workers;
    uint32_t flows;  /* flow slots */
    uint64_t churn;  /* flows admitted (and as many expired) per second */
    uint64_t window_ms; /* --window: flows' time to live, ms (0: off) */
    uint32_t generations; /* --generations: steps the time to live is split into */
    double rate;          /* --rate: the aging filter's false-positive bound (0: 0.001) */
    bool keyed, canary;
};
/* A slot whose flow was never refreshed. */
#define NEVER UINT64_MAX

/* One worker's counters: written only by that worker (relaxed stores of its
 * running totals, no read-modify-write), read by the main lcore. Cache-line
 * aligned so that no two lcores write to the same line. */
struct worker_stats {
    _Atomic uint64_t rx, forwarded, dropped, malformed;
    _Atomic uint64_t checked_positive, false_negatives, checked_negative, false_positives, in_transit;
    _Atomic uint64_t learned; /* --window: packets whose flow was new (or idle for a window) */
} __rte_cache_aligned;

struct worker {
    unsigned lcore, queue;
    struct worker_stats stats;
} __rte_cache_aligned;

struct generator_stats {
    _Atomic uint64_t tx, full; /* packets sent; sends that left packets for lack of room */
} __rte_cache_aligned;

static struct {
    struct config cfg;
    ccf_filter *filter;
    ccf_timed *timed;            /* --window: the aging flow table */
    _Atomic uint64_t clock_hi;   /* --window: the host time, ms, stored before and */
    _Atomic uint64_t clock_lo;   /* after each ccf_timed_set_time */
    _Atomic uint64_t *refreshed; /* --window: per slot, clock_lo read before the
                                    last refresh of its flow returned (or NEVER) */
    _Atomic uint64_t active_base; /* --window: first slot of the active set */
    _Atomic uint64_t *state; /* one word per flow slot: state_of(gen, phase) */
    struct rte_mempool *pool;
    uint16_t in_port, out_port;
    struct worker *workers;
    struct generator_stats gen_stats;
    unsigned generator_lcore;
    atomic_bool stop;
} g;

static volatile sig_atomic_t signalled;

static void on_signal(int sig) {
    (void)sig;
    signalled = 1;
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A busy-polling lcore that finds no work: pause, and after a while give the
 * CPU away (the default lcore layout puts more lcores than CPUs on small
 * machines, and a spinning worker would starve the generator). */
static inline void idle(unsigned *empty_polls) {
    if (++*empty_polls < 64) {
        rte_pause();
    } else {
        *empty_polls = 0;
        sched_yield();
    }
}

/* ---- generator lcore --------------------------------------------------- */

static inline uint64_t xorshift64(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static void build_packet(struct rte_mbuf *m, uint32_t slot, uint32_t gen) {
    struct flow_tuple t = flow_tuple_of(slot, gen);
    uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
    struct rte_ether_hdr *eth = (struct rte_ether_hdr *)p;
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
    struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
    memset(p, 0, FRAME_LEN);
    eth->dst_addr = (struct rte_ether_addr){{0x02, 0, 0, 0, 0, 0x01}};
    eth->src_addr = (struct rte_ether_addr){{0x02, 0, 0, 0, 0, 0x02}};
    eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
    ip->version_ihl = RTE_IPV4_VHL_DEF;
    ip->total_length = rte_cpu_to_be_16(FRAME_LEN - sizeof *eth);
    ip->time_to_live = 64;
    ip->next_proto_id = t.proto;
    ip->src_addr = t.src_ip;
    ip->dst_addr = t.dst_ip;
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    udp->src_port = t.src_port;
    udp->dst_port = t.dst_port;
    udp->dgram_len = rte_cpu_to_be_16(FRAME_LEN - sizeof *eth - sizeof *ip);
    struct flow_tag tag = {slot, gen};
    memcpy(udp + 1, &tag, sizeof tag);
    m->data_len = FRAME_LEN;
    m->pkt_len = FRAME_LEN;
}

static int generator_main(void *arg) {
    (void)arg;
    const unsigned nq = g.cfg.workers;
    struct rte_mbuf *pending[RTE_MAX_LCORE][BURST];
    unsigned count[RTE_MAX_LCORE] = {0}, first[RTE_MAX_LCORE] = {0};
    uint64_t rng = rte_rand() | 1, tx = 0, full = 0;
    unsigned empty_polls = 0;
    while (!atomic_load_explicit(&g.stop, memory_order_relaxed)) {
        unsigned sent_now = 0;
        for (unsigned q = 0; q < nq; q++) {
            if (count[q] == 0) {
                if (rte_pktmbuf_alloc_bulk(g.pool, pending[q], BURST) != 0)
                    continue; /* all mbufs in flight: the workers will free some */
                for (unsigned i = 0; i < BURST; i++) {
                    uint32_t slot = (uint32_t)(xorshift64(&rng) % g.cfg.flows);
                    if (g.cfg.window_ms) {
                        /* The active set: a quarter of the slots from a
                         * base the main lcore moves; one tuple a slot. */
                        uint64_t base = atomic_load_explicit(&g.active_base, memory_order_relaxed);
                        slot = (uint32_t)((base + xorshift64(&rng) % (g.cfg.flows / 4)) % g.cfg.flows);
                        build_packet(pending[q][i], slot, 0);
                        continue;
                    }
                    /* Any generation will do: the checker classifies the
                     * packet by the slot's state at lookup time. */
                    uint64_t s = atomic_load_explicit(&g.state[slot], memory_order_relaxed);
                    build_packet(pending[q][i], slot, state_gen(s));
                }
                count[q] = BURST;
                first[q] = 0;
            }
            uint16_t n = rte_eth_tx_burst(g.in_port, (uint16_t)q, &pending[q][first[q]],
                                          (uint16_t)count[q]);
            first[q] += n;
            count[q] -= n;
            sent_now += n;
            full += count[q] != 0;
        }
        tx += sent_now;
        atomic_store_explicit(&g.gen_stats.tx, tx, memory_order_relaxed);
        atomic_store_explicit(&g.gen_stats.full, full, memory_order_relaxed);
        if (sent_now == 0)
            idle(&empty_polls);
    }
    for (unsigned q = 0; q < nq; q++)
        if (count[q])
            rte_pktmbuf_free_bulk(&pending[q][first[q]], count[q]);
    return 0;
}

/* ---- worker lcores ------------------------------------------------------ */

/* Reads the 5-tuple and the checker's tag; false for anything but an IPv4
 * (no options) UDP frame long enough to carry a tag of an existing slot. */
static inline bool parse(const struct rte_mbuf *m, struct flow_tuple *t, struct flow_tag *tag) {
    if ((size_t)rte_pktmbuf_data_len(m) < (size_t)HDR_LEN + sizeof *tag)
        return false;
    const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
    if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
        return false;
    const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
    if (ip->version_ihl != RTE_IPV4_VHL_DEF || ip->next_proto_id != IPPROTO_UDP)
        return false;
    const struct rte_udp_hdr *udp = (const struct rte_udp_hdr *)(ip + 1);
    *t = (struct flow_tuple){ip->src_addr, ip->dst_addr, udp->src_port, udp->dst_port,
                             ip->next_proto_id};
    memcpy(tag, udp + 1, sizeof *tag);
    return tag->slot < g.cfg.flows;
}

/* --window: one burst. Looks the flows up, checks every answer against
 * the refresh times, forwards every packet (a miss is a new flow,
 * learned by the refresh below), and refreshes every packet's flow. */
static void window_burst(const uint64_t *hashes,
                         const struct flow_tag *tags, struct rte_mbuf **valid, unsigned nv,
                         struct rte_mbuf **fwd, unsigned *nf, uint64_t *positive, uint64_t *fns,
                         uint64_t *learned) {
    uint64_t refreshed[BURST];
    bool hit[BURST];
    /* Checker: the time of each flow's last refresh, read (acquire)
     * before the lookup, so that refresh happened before it. */
    for (unsigned i = 0; i < nv; i++)
        refreshed[i] = atomic_load_explicit(&g.refreshed[tags[i].slot], memory_order_acquire);
    uint64_t mask = ccf_timed_contains_hash_burst(g.timed, hashes, nv);
    for (unsigned i = 0; i < nv; i++)
        hit[i] = (mask >> i) & 1;
    /* No earlier than the time the lookup read: that time's set_time came
     * after this store, and the lookup's clock read is an acquire. */
    uint64_t after = atomic_load_explicit(&g.clock_hi, memory_order_acquire);
    for (unsigned i = 0; i < nv; i++) {
        /* Refreshed at a filter time >= refreshed[i]: found until then +
         * the time to live, and `after` bounds the time of the lookup. */
        if (refreshed[i] != NEVER && after < refreshed[i] + g.cfg.window_ms) {
            (*positive)++;
            *fns += !hit[i];
        }
        *learned += !hit[i];
        fwd[(*nf)++] = valid[i];
    }
    /* The traffic refreshes its flows. --canary leaves the flows of 1 slot
     * in 1024 out of the filter while recording their refreshes: the
     * checker must then report false negatives. */
    uint64_t keep[BURST];
    unsigned nk = 0;
    for (unsigned i = 0; i < nv; i++)
        if (!(g.cfg.canary && tags[i].slot % CANARY_EVERY == 0))
            keep[nk++] = hashes[i];
    /* No later than the time the refresh reads: stored after its
     * set_time returned. */
    uint64_t before = atomic_load_explicit(&g.clock_lo, memory_order_acquire);
    size_t done = 0;
    ccf_status s = ccf_timed_insert_hash_batch(g.timed, keep, nk, &done);
    if (s != CCF_OK)
        rte_exit(EXIT_FAILURE, "refreshing flows: %s after %zu of %u\n", ccf_status_message(s), done,
                 nk);
    /* After the refresh returned (release): a lookup that reads this
     * value follows the refresh. Concurrent workers may store an older
     * time over a newer one: the checker then expects less, never more. */
    for (unsigned i = 0; i < nv; i++)
        atomic_store_explicit(&g.refreshed[tags[i].slot], before, memory_order_release);
}

static int worker_main(void *arg) {
    struct worker *w = arg;
    struct worker_stats *st = &w->stats;
    struct rte_mbuf *pkts[BURST], *valid[BURST], *fwd[BURST], *drop[BURST];
    struct flow_tag tags[BURST];
    uint64_t hashes[BURST], before[BURST];
    uint8_t keys[BURST][KEY_LEN];
    const void *key_ptrs[BURST];
    bool hit[BURST];
    for (unsigned i = 0; i < BURST; i++)
        key_ptrs[i] = keys[i];
    uint64_t rx = 0, forwarded = 0, dropped = 0, malformed = 0;
    uint64_t positive = 0, fns = 0, negative = 0, fps = 0, transit = 0, learned = 0;
    unsigned empty_polls = 0;

    while (!atomic_load_explicit(&g.stop, memory_order_relaxed)) {
        uint16_t n = rte_eth_rx_burst(g.in_port, (uint16_t)w->queue, pkts, BURST);
        if (n == 0) {
            idle(&empty_polls);
            continue;
        }
        empty_polls = 0;
        unsigned nv = 0, nf = 0, nd = 0;
        for (unsigned i = 0; i < n; i++) {
            struct flow_tuple t;
            if (!parse(pkts[i], &t, &tags[nv])) {
                drop[nd++] = pkts[i];
                malformed++;
                continue;
            }
            if (g.cfg.keyed)
                flow_key_bytes(&t, keys[nv]);
            else
                hashes[nv] = flow_hash(&t);
            valid[nv++] = pkts[i];
        }

        if (g.cfg.window_ms) {
            window_burst(hashes, tags, valid, nv, fwd, &nf, &positive, &fns, &learned);
            goto send;
        }

        /* Checker, first read: each flow's state before the lookup. */
        for (unsigned i = 0; i < nv; i++)
            before[i] = atomic_load_explicit(&g.state[tags[i].slot], memory_order_acquire);

        /* The dataplane: one call classifies the whole burst, answering in
         * a hit mask as rte_hash_lookup_bulk does. */
        uint64_t mask = g.cfg.keyed ? ccf_contains_burst(g.filter, key_ptrs, KEY_LEN, nv)
                                    : ccf_contains_hash_burst(g.filter, hashes, nv);
        for (unsigned i = 0; i < nv; i++)
            hit[i] = (mask >> i) & 1;

        /* Checker, second read, ordered after every table read of the
         * lookup by this fence (see the comment at the top). */
        atomic_thread_fence(memory_order_acquire);
        for (unsigned i = 0; i < nv; i++) {
            uint64_t after = atomic_load_explicit(&g.state[tags[i].slot], memory_order_relaxed);
            uint32_t pkt_gen = tags[i].gen, gen = state_gen(before[i]);
            enum phase ph = state_phase(before[i]);
            bool expired = (int32_t)(gen - pkt_gen) > 0; /* removed, never to return */
            if (before[i] == after && gen == pkt_gen && ph == ADMITTED) {
                positive++;
                fns += !hit[i];
            } else if (expired || (before[i] == after && gen == pkt_gen && ph == ABSENT)) {
                negative++;
                fps += hit[i];
            } else {
                transit++;
            }
            if (hit[i])
                fwd[nf++] = valid[i];
            else
                drop[nd++] = valid[i];
        }

    send:;
        uint16_t sent = nf ? rte_eth_tx_burst(g.out_port, (uint16_t)w->queue, fwd, (uint16_t)nf) : 0;
        if (sent < nf) /* the sink refused some: they are dropped after all */
            rte_pktmbuf_free_bulk(&fwd[sent], nf - sent);
        if (nd)
            rte_pktmbuf_free_bulk(drop, nd);
        rx += n;
        forwarded += sent;
        dropped += n - sent;

        atomic_store_explicit(&st->rx, rx, memory_order_relaxed);
        atomic_store_explicit(&st->forwarded, forwarded, memory_order_relaxed);
        atomic_store_explicit(&st->dropped, dropped, memory_order_relaxed);
        atomic_store_explicit(&st->malformed, malformed, memory_order_relaxed);
        atomic_store_explicit(&st->checked_positive, positive, memory_order_relaxed);
        atomic_store_explicit(&st->false_negatives, fns, memory_order_relaxed);
        atomic_store_explicit(&st->checked_negative, negative, memory_order_relaxed);
        atomic_store_explicit(&st->false_positives, fps, memory_order_relaxed);
        atomic_store_explicit(&st->in_transit, transit, memory_order_relaxed);
        atomic_store_explicit(&st->learned, learned, memory_order_relaxed);
    }
    return 0;
}

/* ---- control plane (main lcore) --------------------------------------- */

struct control {
    uint32_t window;          /* flows admitted at a time */
    uint32_t next_expire;     /* slot that expires next (the oldest admitted) */
    uint32_t next_admit;      /* slot admitted next */
    uint64_t admitted, expired, lost, admissions;
    uint8_t *phantom;         /* --canary: slots marked admitted but never inserted */
};

/* Fails the program on a status other than CCF_OK. */
static void check_status(const char *what, ccf_status s) {
    if (s != CCF_OK)
        rte_exit(EXIT_FAILURE, "%s: %s\n", what, ccf_status_message(s));
}

/* Admits (or expires) the n flows of slots first, first+1, ... (mod flows)
 * with one batch call, moving each slot's state around it. */
static void control_batch(struct control *c, uint32_t first, unsigned n, bool admit) {
    uint32_t slots[CONTROL_BATCH], gens[CONTROL_BATCH];
    uint64_t hashes[CONTROL_BATCH];
    uint8_t keys[CONTROL_BATCH][KEY_LEN];
    const void *key_ptrs[CONTROL_BATCH];
    size_t key_lens[CONTROL_BATCH];
    bool removed[CONTROL_BATCH];
    unsigned m = 0; /* flows actually written to the filter */
    for (unsigned i = 0; i < n; i++) {
        uint32_t slot = (first + i) % g.cfg.flows;
        uint64_t s = atomic_load_explicit(&g.state[slot], memory_order_relaxed);
        uint32_t gen = state_gen(s);
        if (state_phase(s) != (admit ? ABSENT : ADMITTED))
            rte_exit(EXIT_FAILURE, "control: slot %u in phase %d\n", slot, state_phase(s));
        atomic_store_explicit(&g.state[slot], state_of(gen, admit ? ADMITTING : EXPIRING),
                              memory_order_relaxed);
        bool skip;
        if (admit) {
            /* The canary: leave this flow out of the filter but call it
             * admitted; its packets must then be reported as false
             * negatives. */
            skip = g.cfg.canary && ++c->admissions % CANARY_EVERY == 0;
            c->phantom[slot] = skip;
        } else {
            skip = c->phantom[slot];
        }
        slots[i] = slot;
        gens[i] = gen;
        if (skip)
            continue;
        struct flow_tuple t = flow_tuple_of(slot, gen);
        flow_key_bytes(&t, keys[m]);
        key_ptrs[m] = keys[m];
        key_lens[m] = KEY_LEN;
        hashes[m] = flow_hash(&t);
        m++;
    }
    /* Publishes ADMITTING/EXPIRING before any table write of the call
     * below: a lookup that sees one of those writes is ordered before a
     * state read that sees this phase or later. */
    atomic_thread_fence(memory_order_release);
    size_t done = 0;
    if (admit) {
        ccf_status s = g.cfg.keyed ? ccf_insert_batch(g.filter, key_ptrs, key_lens, m, &done)
                                   : ccf_insert_hash_batch(g.filter, hashes, m, &done);
        if (s != CCF_OK)
            rte_exit(EXIT_FAILURE, "admitting flows: %s after %zu of %u\n", ccf_status_message(s),
                     done, m);
        c->admitted += m;
    } else {
        ccf_status s = g.cfg.keyed ? ccf_remove_batch(g.filter, key_ptrs, key_lens, m, removed)
                                   : ccf_remove_hash_batch(g.filter, hashes, m, removed);
        check_status("expiring flows", s);
        for (unsigned i = 0; i < m; i++)
            c->lost += !removed[i]; /* an admitted flow the filter no longer had */
        c->expired += m;
    }
    /* After the call returned: ADMITTED (the insert happened before any
     * lookup that reads this), or ABSENT of the next generation. */
    for (unsigned i = 0; i < n; i++)
        atomic_store_explicit(&g.state[slots[i]],
                              admit ? state_of(gens[i], ADMITTED) : state_of(gens[i] + 1, ABSENT),
                              memory_order_release);
}

/* One step of churn: the oldest CONTROL_BATCH flows expire and as many new
 * ones (the next slots, each with a new generation) are admitted. */
static void control_step(struct control *c) {
    control_batch(c, c->next_expire, CONTROL_BATCH, false);
    c->next_expire = (c->next_expire + CONTROL_BATCH) % g.cfg.flows;
    control_batch(c, c->next_admit, CONTROL_BATCH, true);
    c->next_admit = (c->next_admit + CONTROL_BATCH) % g.cfg.flows;
}

/* ---- set-up and the main loop ------------------------------------------- */

static uint64_t parse_number(const char *flag, const char *value, uint64_t max) {
    char *end = NULL;
    unsigned long long v = value ? strtoull(value, &end, 10) : 0;
    if (!value || *value == '\0' || *end != '\0' || v == 0 || v > max) {
        fprintf(stderr, "%s needs a number from 1 to %llu\n", flag, (unsigned long long)max);
        exit(2);
    }
    return v;
}

static void usage_exit(const char *prog) {
    fprintf(stderr,
            "usage: %s [EAL options --] [--seconds N] [--workers N] [--flows N] [--churn N] "
            "[--keyed] [--canary] [--window MS] [--generations N] [--rate R]\n",
            prog);
    exit(2);
}

static void parse_app_args(int argc, char **argv, struct config *cfg, bool *workers_given) {
    for (int i = 0; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--seconds")) {
            cfg->seconds = (unsigned)parse_number(argv[i], value, 86400), i++;
        } else if (!strcmp(argv[i], "--workers")) {
            cfg->workers = (unsigned)parse_number(argv[i], value, RTE_MAX_LCORE - 2), i++;
            *workers_given = true;
        } else if (!strcmp(argv[i], "--flows")) {
            /* The slot lives in 24 bits of the source address. */
            cfg->flows = (uint32_t)parse_number(argv[i], value, 1u << 24), i++;
        } else if (!strcmp(argv[i], "--churn")) {
            cfg->churn = parse_number(argv[i], value, 100000000), i++;
        } else if (!strcmp(argv[i], "--window")) {
            cfg->window_ms = parse_number(argv[i], value, 86400000), i++;
        } else if (!strcmp(argv[i], "--generations")) {
            /* The library's longest window is 253 generations, one more
             * than the time to live's steps. */
            cfg->generations = (uint32_t)parse_number(argv[i], value, 252), i++;
        } else if (!strcmp(argv[i], "--rate")) {
            char *end = NULL;
            cfg->rate = value ? strtod(value, &end) : 0.0;
            if (!value || *end != '\0' || !(cfg->rate > 0.0 && cfg->rate < 1.0)) {
                fprintf(stderr, "--rate needs a number strictly between 0 and 1\n");
                exit(2);
            }
            i++;
        } else if (!strcmp(argv[i], "--keyed")) {
            cfg->keyed = true;
        } else if (!strcmp(argv[i], "--canary")) {
            cfg->canary = true;
        } else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            usage_exit("dataplane");
        }
    }
    if (cfg->flows < 4 * CONTROL_BATCH) {
        fprintf(stderr, "--flows must be at least %d\n", 4 * CONTROL_BATCH);
        exit(2);
    }
}

/* The default --lcores value for `lcores` lcores: one CPU each when the
 * process may use that many, otherwise all of them floating over its CPUs. */
static void default_lcores(unsigned lcores, char *out, size_t size) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        perror("sched_getaffinity");
        exit(1);
    }
    int cpus[CPU_SETSIZE], n = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            cpus[n++] = c;
    size_t len = (size_t)snprintf(out, size, "--lcores=");
    if ((unsigned)n >= lcores) {
        for (unsigned l = 0; l < lcores && len < size; l++)
            len += (size_t)snprintf(out + len, size - len, "%s%u@%d", l ? "," : "", l, cpus[l]);
    } else {
        len += (size_t)snprintf(out + len, size - len, "(0-%u)@(", lcores - 1);
        for (int i = 0; i < n && len < size; i++)
            len += (size_t)snprintf(out + len, size - len, "%s%d", i ? "," : "", cpus[i]);
        len += (size_t)snprintf(out + len, size - len, ")");
    }
    if (len >= size) {
        fprintf(stderr, "too many CPUs for the default --lcores\n");
        exit(1);
    }
}

static void setup_ports(unsigned workers) {
    struct rte_ring *rings[RTE_MAX_LCORE];
    for (unsigned q = 0; q < workers; q++) {
        char name[RTE_RING_NAMESIZE];
        snprintf(name, sizeof name, "rx%u", q);
        /* One producer (the generator), one consumer (worker q). */
        rings[q] = rte_ring_create(name, RING_SIZE, (int)rte_socket_id(),
                                   RING_F_SP_ENQ | RING_F_SC_DEQ);
        if (!rings[q])
            rte_exit(EXIT_FAILURE, "rte_ring_create %s: %s\n", name, rte_strerror(rte_errno));
    }
    /* The same rings as rx and tx queues: what is sent on queue q is
     * received on queue q. */
    int port = rte_eth_from_rings("net_ring_in", rings, workers, rings, workers, rte_socket_id());
    if (port < 0)
        rte_exit(EXIT_FAILURE, "rte_eth_from_rings: %s\n", rte_strerror(rte_errno));
    g.in_port = (uint16_t)port;
    if (rte_vdev_init("net_null_out", "") != 0)
        rte_exit(EXIT_FAILURE, "rte_vdev_init(net_null_out): %s (is the net_null PMD installed?)\n",
                 rte_strerror(rte_errno));
    if (rte_eth_dev_get_port_by_name("net_null_out", &g.out_port) != 0)
        rte_exit(EXIT_FAILURE, "net_null_out has no port\n");

    uint16_t ports[2] = {g.in_port, g.out_port};
    for (int p = 0; p < 2; p++) {
        struct rte_eth_conf conf;
        memset(&conf, 0, sizeof conf);
        int rc = rte_eth_dev_configure(ports[p], (uint16_t)workers, (uint16_t)workers, &conf);
        if (rc < 0)
            rte_exit(EXIT_FAILURE, "rte_eth_dev_configure(port %u): %s\n", ports[p], rte_strerror(-rc));
        for (unsigned q = 0; q < workers; q++) {
            rc = rte_eth_rx_queue_setup(ports[p], (uint16_t)q, RING_SIZE,
                                        (unsigned)rte_eth_dev_socket_id(ports[p]), NULL, g.pool);
            if (rc < 0)
                rte_exit(EXIT_FAILURE, "rte_eth_rx_queue_setup(port %u, %u): %s\n", ports[p], q,
                         rte_strerror(-rc));
            rc = rte_eth_tx_queue_setup(ports[p], (uint16_t)q, RING_SIZE,
                                        (unsigned)rte_eth_dev_socket_id(ports[p]), NULL);
            if (rc < 0)
                rte_exit(EXIT_FAILURE, "rte_eth_tx_queue_setup(port %u, %u): %s\n", ports[p], q,
                         rte_strerror(-rc));
        }
        rc = rte_eth_dev_start(ports[p]);
        if (rc < 0)
            rte_exit(EXIT_FAILURE, "rte_eth_dev_start(port %u): %s\n", ports[p], rte_strerror(-rc));
    }
    /* The rings stay the application's: shut_down_ports frees them. */
}

/* Stops and closes the ports, freeing every mbuf still in the rings. */
static void shut_down_ports(void) {
    struct rte_mbuf *left[BURST];
    for (unsigned q = 0; q < g.cfg.workers; q++) {
        uint16_t n;
        while ((n = rte_eth_rx_burst(g.in_port, (uint16_t)q, left, BURST)) > 0)
            rte_pktmbuf_free_bulk(left, n);
    }
    uint16_t ports[2] = {g.in_port, g.out_port};
    for (int p = 0; p < 2; p++) {
        int rc = rte_eth_dev_stop(ports[p]);
        if (rc < 0)
            fprintf(stderr, "rte_eth_dev_stop(port %u): %s\n", ports[p], rte_strerror(-rc));
        rc = rte_eth_dev_close(ports[p]);
        if (rc < 0)
            fprintf(stderr, "rte_eth_dev_close(port %u): %s\n", ports[p], rte_strerror(-rc));
    }
    if (rte_vdev_uninit("net_null_out") != 0)
        fprintf(stderr, "rte_vdev_uninit(net_null_out) failed\n");
    for (unsigned q = 0; q < g.cfg.workers; q++) {
        char name[RTE_RING_NAMESIZE];
        snprintf(name, sizeof name, "rx%u", q);
        rte_ring_free(rte_ring_lookup(name));
    }
}

struct totals {
    uint64_t rx, forwarded, dropped, malformed, positive, fns, negative, fps, transit, learned;
};

static struct totals sum_workers(void) {
    struct totals t = {0};
    for (unsigned i = 0; i < g.cfg.workers; i++) {
        struct worker_stats *s = &g.workers[i].stats;
        t.rx += atomic_load_explicit(&s->rx, memory_order_relaxed);
        t.forwarded += atomic_load_explicit(&s->forwarded, memory_order_relaxed);
        t.dropped += atomic_load_explicit(&s->dropped, memory_order_relaxed);
        t.malformed += atomic_load_explicit(&s->malformed, memory_order_relaxed);
        t.positive += atomic_load_explicit(&s->checked_positive, memory_order_relaxed);
        t.fns += atomic_load_explicit(&s->false_negatives, memory_order_relaxed);
        t.negative += atomic_load_explicit(&s->checked_negative, memory_order_relaxed);
        t.fps += atomic_load_explicit(&s->false_positives, memory_order_relaxed);
        t.transit += atomic_load_explicit(&s->in_transit, memory_order_relaxed);
        t.learned += atomic_load_explicit(&s->learned, memory_order_relaxed);
    }
    return t;
}

/* The filter's tables in DPDK's memory (ccf_set_table_allocator), on the
 * NUMA socket of the lcore that makes the filter: the main lcore here,
 * beside the workers that read it. The library zeroes each block. */
static void *table_alloc(void *ctx, size_t size, size_t align) {
    (void)ctx;
    return rte_malloc_socket("ccf-table", size, (unsigned)align, (int)rte_socket_id());
}

static void table_free(void *ctx, void *block, size_t size) {
    (void)ctx;
    (void)size;
    rte_free(block);
}

static const ccf_allocator dpdk_tables = {table_alloc, table_free, NULL};

int main(int argc, char **argv) {
    /* Split argv at "--": EAL options before it, the application's after.
     * Without "--" every argument is the application's. */
    int sep = -1;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            sep = i;
            break;
        }
    int app_first = sep < 0 ? 1 : sep + 1, eal_count = sep < 0 ? 0 : sep - 1;
    struct config cfg = {
        .seconds = 5, .workers = 2, .flows = 1u << 20, .churn = 100000, .generations = 4};
    bool workers_given = false;
    parse_app_args(argc - app_first, argv + app_first, &cfg, &workers_given);

    char lcores_arg[4096];
    char *eal_argv[64];
    int eal_argc = 0;
    eal_argv[eal_argc++] = argv[0];
    if (eal_count == 0) {
        default_lcores(cfg.workers + 2, lcores_arg, sizeof lcores_arg);
        char *defaults[] = {"--no-huge", "--no-pci", "--no-shconf", "-m", "128", "--no-telemetry",
                            lcores_arg};
        for (size_t i = 0; i < RTE_DIM(defaults); i++)
            eal_argv[eal_argc++] = defaults[i];
    } else {
        if (eal_count > (int)RTE_DIM(eal_argv) - 1)
            usage_exit(argv[0]);
        for (int i = 1; i <= eal_count; i++)
            eal_argv[eal_argc++] = argv[i];
    }
    if (rte_eal_init(eal_argc, eal_argv) < 0)
        rte_exit(EXIT_FAILURE, "rte_eal_init: %s\n", rte_strerror(rte_errno));

    if (rte_lcore_count() < 3)
        rte_exit(EXIT_FAILURE, "need at least 3 lcores (control, generator, a worker); got %u\n",
                 rte_lcore_count());
    if (workers_given && cfg.workers != rte_lcore_count() - 2)
        rte_exit(EXIT_FAILURE, "--workers %u does not match the %u lcores given to EAL\n",
                 cfg.workers, rte_lcore_count());
    cfg.workers = rte_lcore_count() - 2;
    g.cfg = cfg;
    atomic_init(&g.stop, false);
    flow_seed = rte_rand();
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    /* Enough mbufs for every ring full, a burst in each worker and the
     * generator, and the per-lcore mempool caches. */
    unsigned nb_mbufs = cfg.workers * (RING_SIZE + 3 * BURST) + rte_lcore_count() * MBUF_CACHE + 1024;
    g.pool = rte_pktmbuf_pool_create("mbufs", nb_mbufs, MBUF_CACHE, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                     (int)rte_socket_id());
    if (!g.pool)
        rte_exit(EXIT_FAILURE, "rte_pktmbuf_pool_create: %s\n", rte_strerror(rte_errno));
    setup_ports(cfg.workers);

    g.state = calloc(cfg.flows, sizeof *g.state);
    g.workers = rte_zmalloc("workers", cfg.workers * sizeof *g.workers, RTE_CACHE_LINE_SIZE);
    struct control ctl = {.window = cfg.flows / 4 * 3};
    ctl.window -= ctl.window % CONTROL_BATCH;
    ctl.phantom = calloc(cfg.flows, 1);
    if (!g.state || !g.workers || !ctl.phantom)
        rte_exit(EXIT_FAILURE, "out of memory\n");

    check_status("ccf_set_table_allocator", ccf_set_table_allocator(&dpdk_tables));
    printf("filter tables: rte_malloc_socket on socket %d\n", (int)rte_socket_id());
    if (cfg.window_ms) {
        if (cfg.keyed)
            rte_exit(EXIT_FAILURE, "--window looks flows up by their hashes: no --keyed\n");
        /* Every slot may be live at once; the host clock starts at 0. */
        ccf_status s = ccf_timed_new(cfg.flows, cfg.window_ms, cfg.generations, cfg.rate,
                                     CCF_TIMED_HOST_CLOCK, 0, NULL, &g.timed);
        check_status("ccf_timed_new", s);
        g.refreshed = malloc(cfg.flows * sizeof *g.refreshed);
        if (!g.refreshed)
            rte_exit(EXIT_FAILURE, "out of memory\n");
        for (uint32_t i = 0; i < cfg.flows; i++)
            atomic_init(&g.refreshed[i], NEVER);
        printf("dataplane (%s, concurrent-cuckoo %s, probe %s): %u flow slots, a quarter active at "
               "a time (each for two times to live), flows aged by ccf_timed on the timer cycle "
               "counter: time to live %llu ms (%llu kept), in %u generations, false-positive "
               "rate %g\n",
               rte_version(), ccf_version(), ccf_probe_backend(), cfg.flows,
               (unsigned long long)cfg.window_ms,
               (unsigned long long)ccf_timed_time_to_live_ms(g.timed), cfg.generations,
               cfg.rate ? cfg.rate : 0.001);
    } else {
        /* Room for the admitted window plus a batch in flight. */
        ccf_status s = ccf_new(ctl.window + CONTROL_BATCH, 0.0, &g.filter);
        check_status("ccf_new", s);

        /* Admit the first window before traffic starts. */
        for (uint32_t i = 0; i < ctl.window; i += CONTROL_BATCH)
            control_batch(&ctl, i, CONTROL_BATCH, true);
        ctl.next_expire = 0;
        ctl.next_admit = ctl.window % cfg.flows;

        printf("dataplane (%s, concurrent-cuckoo %s, probe %s): %u flow slots, %u admitted at a "
               "time, churn %llu flows/s, lookups by %s; filter %.1f MiB, load %.3f\n",
               rte_version(), ccf_version(), ccf_probe_backend(), cfg.flows, ctl.window,
               (unsigned long long)cfg.churn,
               cfg.keyed ? "ccf_contains_burst (5-tuple bytes)" : "ccf_contains_hash_burst (5-tuple hash)",
               (double)ccf_memory_usage(g.filter) / (1 << 20), ccf_load_factor(g.filter));
    }
    if (cfg.canary)
        printf("CANARY: 1 admitted flow in %d is left out of the filter; false negatives must be "
               "reported\n",
               CANARY_EVERY);

    unsigned lcore, w = 0;
    bool generator_set = false;
    RTE_LCORE_FOREACH_WORKER(lcore) {
        if (!generator_set) {
            g.generator_lcore = lcore;
            generator_set = true;
            continue;
        }
        g.workers[w].lcore = lcore;
        g.workers[w].queue = w;
        w++;
    }
    printf("lcores: control %u, generator %u, workers", rte_get_main_lcore(), g.generator_lcore);
    for (unsigned i = 0; i < cfg.workers; i++)
        printf(" %u", g.workers[i].lcore);
    printf("\n");
    fflush(stdout);
    for (unsigned i = 0; i < cfg.workers; i++) {
        int rc = rte_eal_remote_launch(worker_main, &g.workers[i], g.workers[i].lcore);
        if (rc != 0)
            rte_exit(EXIT_FAILURE, "rte_eal_remote_launch(worker %u): %s\n", g.workers[i].lcore,
                     rte_strerror(-rc));
    }
    int rc = rte_eal_remote_launch(generator_main, NULL, g.generator_lcore);
    if (rc != 0)
        rte_exit(EXIT_FAILURE, "rte_eal_remote_launch(generator): %s\n", rte_strerror(-rc));

    /* The control loop: churn at the configured rate, report every second. */
    const double start = now_seconds();
    double last = start;
    uint64_t steps = 0, last_rx[RTE_MAX_LCORE] = {0}, last_tx = 0, last_churn = 0;
    unsigned second = 0;
    uint64_t last_learned = 0;
    while (second < cfg.seconds && !signalled) {
        double t = now_seconds();
        if (cfg.window_ms) {
            /* The host clock, from the timer cycle counter; the active set
             * moves so that each slot is active for two times to live. */
            double elapsed_ms = (t - start) * 1e3;
            uint64_t host_ms = (uint64_t)elapsed_ms;
            atomic_store_explicit(&g.clock_hi, host_ms, memory_order_release);
            check_status("ccf_timed_set_time", ccf_timed_set_time(g.timed, host_ms));
            atomic_store_explicit(&g.clock_lo, host_ms, memory_order_release);
            double per_ms = (double)(cfg.flows / 4) / (2.0 * (double)cfg.window_ms);
            atomic_store_explicit(&g.active_base, (uint64_t)(elapsed_ms * per_ms) % cfg.flows,
                                  memory_order_relaxed);
            if (t - last >= 1.0) {
                second++;
                struct totals tot = sum_workers();
                printf("[%3us] host time %6llu ms | %5.2f Mpps looked up and refreshed | new or "
                       "returning flows %7.0f/s | live flows %zu | false negatives %llu\n",
                       second, (unsigned long long)host_ms,
                       (double)(tot.rx - last_churn) / (t - last) / 1e6,
                       (double)(tot.learned - last_learned) / (t - last),
                       ccf_timed_len(g.timed), (unsigned long long)tot.fns);
                fflush(stdout);
                last_churn = tot.rx;
                last_learned = tot.learned;
                last = t;
            }
            struct timespec pause = {0, 200000};
            nanosleep(&pause, NULL);
            continue;
        }
        if (t - last >= 1.0) {
            second++;
            double dt = t - last;
            printf("[%3us]", second);
            for (unsigned i = 0; i < cfg.workers; i++) {
                uint64_t rx = atomic_load_explicit(&g.workers[i].stats.rx, memory_order_relaxed);
                printf(" lcore %u %5.2f Mpps |", g.workers[i].lcore,
                       (double)(rx - last_rx[i]) / dt / 1e6);
                last_rx[i] = rx;
            }
            uint64_t tx = atomic_load_explicit(&g.gen_stats.tx, memory_order_relaxed);
            struct totals tot = sum_workers();
            printf(" generator lcore %u %5.2f Mpps | churn %6.0f flows/s | fwd %4.1f%% | fpr "
                   "%.1e | false negatives %llu\n",
                   g.generator_lcore, (double)(tx - last_tx) / dt / 1e6,
                   (double)(ctl.expired - last_churn) / dt,
                   100.0 * (double)tot.forwarded / (double)(tot.rx ? tot.rx : 1),
                   (double)tot.fps / (double)(tot.negative ? tot.negative : 1),
                   (unsigned long long)(tot.fns + ctl.lost));
            fflush(stdout);
            last_tx = tx;
            last_churn = ctl.expired;
            last = t;
            continue;
        }
        uint64_t due = (uint64_t)((t - start) * (double)cfg.churn) / CONTROL_BATCH;
        if (steps < due) {
            control_step(&ctl);
            steps++;
        } else {
            struct timespec pause = {0, 100000};
            nanosleep(&pause, NULL);
        }
    }
    atomic_store(&g.stop, true);
    rte_eal_mp_wait_lcore();
    double elapsed = now_seconds() - start;

    struct totals tot = sum_workers();
    uint64_t fns = tot.fns + ctl.lost;
    struct rte_eth_stats out_stats;
    if (rte_eth_stats_get(g.out_port, &out_stats) != 0)
        memset(&out_stats, 0, sizeof out_stats);
    printf("done in %.1f s: %llu packets received, %llu forwarded (%llu seen by the sink), %llu "
           "dropped, %llu malformed\n",
           elapsed, (unsigned long long)tot.rx, (unsigned long long)tot.forwarded,
           (unsigned long long)out_stats.opackets, (unsigned long long)tot.dropped,
           (unsigned long long)tot.malformed);
    printf("generator: %llu packets sent; %llu sends found a worker's ring full (the workers "
           "were behind)\n",
           (unsigned long long)atomic_load(&g.gen_stats.tx),
           (unsigned long long)atomic_load(&g.gen_stats.full));
    if (!cfg.window_ms) {
        printf("control: %llu flows admitted, %llu expired (%.0f/s each), %llu expired flows not "
               "found\n",
               (unsigned long long)ctl.admitted, (unsigned long long)ctl.expired,
               (double)ctl.expired / elapsed, (unsigned long long)ctl.lost);
        /* Packets of one absent flow repeat, and a colliding flow is a false
         * positive on every packet: the per-packet rate rests on far fewer
         * independent keys than packets, so it wanders around the bound. */
        printf("checker: %llu packets of admitted flows, %llu false negatives; %llu of absent flows, "
               "%llu false positives (per packet %.2e; bound %.2e); %llu in transit\n",
               (unsigned long long)tot.positive, (unsigned long long)fns,
               (unsigned long long)tot.negative, (unsigned long long)tot.fps,
               (double)tot.fps / (double)(tot.negative ? tot.negative : 1),
               ccf_false_positive_bound(g.filter), (unsigned long long)tot.transit);
    } else {
        printf("window: %llu packets of flows inside their time to live checked, %llu false "
               "negatives; %llu of new or returning flows (learned); %zu flows live at the end, "
               "host time %llu ms\n",
               (unsigned long long)tot.positive, (unsigned long long)fns,
               (unsigned long long)tot.learned, ccf_timed_len(g.timed),
               (unsigned long long)atomic_load(&g.clock_lo));
    }

    int status = EXIT_SUCCESS;
    if (fns != 0) {
        fprintf(stderr, "FALSE NEGATIVES: %llu packets of admitted flows were dropped\n",
                (unsigned long long)fns);
        status = EXIT_FALSE_NEGATIVE;
    } else if (!signalled && cfg.window_ms && (tot.positive == 0 || tot.learned == 0)) {
        fprintf(stderr, "the checker saw too little: %llu packets checked, %llu flows learned\n",
                (unsigned long long)tot.positive, (unsigned long long)tot.learned);
        status = EXIT_FAILURE;
    } else if (!signalled && !cfg.window_ms &&
               (tot.positive == 0 || tot.negative == 0 || ctl.expired == 0)) {
        /* A run that checked nothing proves nothing. */
        fprintf(stderr, "the checker saw too little: %llu positive and %llu negative packets, "
                "%llu flows expired\n",
                (unsigned long long)tot.positive, (unsigned long long)tot.negative,
                (unsigned long long)ctl.expired);
        status = EXIT_FAILURE;
    }

    shut_down_ports();
    rte_mempool_free(g.pool);
    ccf_free(g.filter);
    ccf_timed_free(g.timed);
    free(g.refreshed);
    rte_free(g.workers);
    free(g.state);
    free(ctl.phantom);
    rc = rte_eal_cleanup();
    if (rc != 0) {
        fprintf(stderr, "rte_eal_cleanup: %s\n", rte_strerror(-rc));
        if (status == EXIT_SUCCESS)
            status = EXIT_FAILURE;
    }
    return status;
}
