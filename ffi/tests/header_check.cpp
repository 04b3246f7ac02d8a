// The header must compile as C++ (extern "C", no C-only constructs) and
// link: scripts/test-c.sh builds this with g++ -std=c++17 -Wall -Wextra
// -Werror against the shared library and runs it.
#include "concurrent_cuckoo.h"

#include <cstdio>
#include <cstring>
#include <string>

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
    ccf_free(f);
    std::printf("header_check (C++17): ok, library %s\n", ccf_version());
    return 0;
}
