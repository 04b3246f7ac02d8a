// The header must compile as C++ (extern "C", no C-only constructs) and
// link: scripts/test-c.sh builds this with g++ -std=c++17 -Wall -Wextra
// -Werror against the shared library and runs it.
#include "concurrent_cuckoo.h"
#include "concurrent_cuckoo_inline.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

#define REQUIRE(cond)                                                                 \
    do {                                                                              \
        if (!(cond)) {                                                                \
            std::fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond); \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

int main() {
    ccf_filter *f = nullptr;
    REQUIRE(ccf_new(1000, 0.0, &f) == CCF_OK);
    const std::string key = "from C++";
    REQUIRE(ccf_insert(f, key.data(), key.size()) == CCF_OK);
    REQUIRE(ccf_contains(f, key.data(), key.size()));
    bool added = true;
    REQUIRE(ccf_insert_unique(f, key.data(), key.size(), &added) == CCF_OK && !added);
    const uint64_t hashes[2] = {1, 2};
    bool out[2] = {true, true};
    REQUIRE(ccf_insert_hash(f, hashes[0]) == CCF_OK);
    ccf_contains_hash_batch(f, hashes, 2, out);
    REQUIRE(out[0]);
    REQUIRE(ccf_len(f) == 2);
    ccf_status s = ccf_insert(nullptr, nullptr, 0);
    REQUIRE(s == CCF_INVALID_ARGUMENT);
    REQUIRE(std::strcmp(ccf_status_message(s), "invalid argument") == 0);
    REQUIRE(ccf_remove(f, key.data(), key.size()));

    // Batch writes, counts, statistics.
    const void *keys[3] = {key.data(), key.data(), nullptr};
    const size_t lens[3] = {key.size(), key.size(), 0};
    size_t inserted = 0;
    REQUIRE(ccf_insert_batch(f, keys, lens, 3, &inserted) == CCF_OK && inserted == 3);
    REQUIRE(ccf_count(f, key.data(), key.size()) == 2);
    REQUIRE(ccf_insert_hash_batch(f, hashes, 2, nullptr) == CCF_OK);
    REQUIRE(ccf_count_hash(f, hashes[0]) == 2);
    bool removed[2] = {false, false};
    REQUIRE(ccf_remove_hash_batch(f, hashes, 2, removed) == CCF_OK && removed[0] && removed[1]);
    REQUIRE(ccf_remove_batch(f, keys, lens, 1, nullptr) == CCF_OK);
    // The inline lookup (concurrent_cuckoo_inline.h) compiles as C++.
    const ccf_view view = ccf_view_v1(f);
    REQUIRE(view.inline_lookup == 1);
    ccf_view_prefetch_hash(&view, hashes[0]);
    ccf_prefetch_hash(f, hashes[0]);
    REQUIRE(ccf_view_contains_hash(&view, hashes[0]) == ccf_contains_hash(f, hashes[0]));
    ccf_filter_stats stats;
    REQUIRE(ccf_stats(f, &stats, sizeof(ccf_filter_stats)) == CCF_OK);
    REQUIRE(stats.len == ccf_len(f) && stats.inserts - stats.removes == stats.len);

    // A frozen filter: saved, mapped, queried, thawed.
    const std::string path = "/tmp/concurrent-cuckoo-header-check-" + std::to_string(getpid()) + ".ccf";
    REQUIRE(ccf_save(f, path.c_str()) == CCF_OK);
    ccf_frozen *z = nullptr;
    REQUIRE(ccf_frozen_open(path.c_str(), &z) == CCF_OK);
    REQUIRE(std::remove(path.c_str()) == 0); // the mapping outlives the name
    REQUIRE(ccf_frozen_len(z) == ccf_len(f));
    REQUIRE(ccf_frozen_contains(z, key.data(), key.size()));
    REQUIRE(ccf_frozen_count(z, key.data(), key.size()) == 1);
    ccf_filter *thawed = nullptr;
    REQUIRE(ccf_frozen_thaw(z, &thawed) == CCF_OK);
    REQUIRE(ccf_len(thawed) == ccf_frozen_len(z));
    ccf_frozen_free(z);
    ccf_free(thawed);
    ccf_free(f);

    // A growing filter: grows past its first level, saved and loaded.
    ccf_scalable *g = nullptr;
    const uint64_t seed = 7;
    REQUIRE(ccf_scalable_new_with_options(16, 0.0, 2, 0, &seed, &g) == CCF_OK);
    REQUIRE(ccf_scalable_insert(g, key.data(), key.size()) == CCF_OK);
    REQUIRE(ccf_scalable_insert_unique(g, key.data(), key.size(), &added) == CCF_OK && !added);
    for (uint64_t h = 0; h < 1000; h++)
        REQUIRE(ccf_scalable_insert_hash(g, h * 0x9E3779B97F4A7C15ull) == CCF_OK);
    REQUIRE(ccf_scalable_levels(g) > 1 && ccf_scalable_len(g) == 1001);
    REQUIRE(ccf_scalable_false_positive_bound(g) <= 1e-3);
    REQUIRE(ccf_scalable_insert_batch(g, keys, lens, 3, &inserted) == CCF_OK && inserted == 3);
    // `key` now has a copy in the first level and two in the newest: the
    // levels nest, so each remove takes one (see ccf_scalable on removes),
    // and so does the empty key's.
    bool gone[3] = {false, false, false};
    REQUIRE(ccf_scalable_remove_batch(g, keys, lens, 3, gone) == CCF_OK);
    REQUIRE(gone[0] && gone[1] && gone[2]);
    ccf_scalable_contains_batch(g, keys, lens, 2, out);
    REQUIRE(out[0] && ccf_scalable_count(g, key.data(), key.size()) == 1);
    REQUIRE(!ccf_scalable_contains(g, "", 0) && ccf_scalable_len(g) == 1001);
    REQUIRE(ccf_scalable_save(g, path.c_str()) == CCF_OK);
    ccf_scalable *loaded = nullptr;
    REQUIRE(ccf_scalable_load(path.c_str(), &loaded) == CCF_OK);
    REQUIRE(std::remove(path.c_str()) == 0);
    REQUIRE(ccf_scalable_len(loaded) == ccf_scalable_len(g));
    REQUIRE(ccf_scalable_contains(loaded, key.data(), key.size()));
    ccf_scalable_free(loaded);
    ccf_scalable_free(g);
    std::printf("header_check (C++17): ok, library %s\n", ccf_version());
    return 0;
}
