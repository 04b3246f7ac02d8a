/*
 * The installed C library as a program outside this tree uses it: built
 * only through `pkg-config concurrent_cuckoo` against what
 * scripts/ffi-install.sh put under a prefix, linked shared (run with no
 * LD_LIBRARY_PATH) and fully static (`-static`). Checks that the header's
 * version macros match the library it runs with, then a filter's round
 * trip. scripts/test-c.sh builds and runs it both ways.
 */
#include <concurrent_cuckoo.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "test_install: FAILED: %s\n", what);
        failures++;
    }
}

int main(void) {
    char built_for[64];
    snprintf(built_for, sizeof built_for, "%d.%d.%d", CCF_VERSION_MAJOR, CCF_VERSION_MINOR,
             CCF_VERSION_PATCH);
    check(strcmp(built_for, ccf_version()) == 0, "the header's version macros are the library's version");

    struct ccf_filter *f = NULL;
    check(ccf_new(100000, 0.001, &f) == CCF_OK && f != NULL, "ccf_new");
    if (f == NULL) {
        return 1;
    }
    char key[32];
    for (int i = 0; i < 50000; i++) {
        int n = snprintf(key, sizeof key, "flow-%d", i);
        if (ccf_insert(f, key, (size_t)n) != CCF_OK) {
            check(0, "ccf_insert");
            break;
        }
    }
    int missing = 0;
    for (int i = 0; i < 50000; i++) {
        int n = snprintf(key, sizeof key, "flow-%d", i);
        missing += !ccf_contains(f, key, (size_t)n);
    }
    check(missing == 0, "every inserted key is found");
    check(ccf_remove(f, "flow-7", 6), "ccf_remove of a present key");
    check(ccf_len(f) == 49999, "ccf_len after one remove");
    ccf_free(f);
    if (failures == 0) {
        printf("test_install: library %s (probe %s): ok\n", ccf_version(), ccf_probe_backend());
    }
    return failures != 0;
}
