/*
 * Loaders refuse a file whose header claims more than the file holds
 * before reserving the memory the claim asks for. scripts/test-c.sh runs
 * this under `ulimit -v` (1 GiB of address space), where reserving a
 * claimed 4 GiB or 64 GiB table fails: a loader that trusted the header
 * would answer CCF_ALLOCATION_FAILED (or abort) instead of CCF_CORRUPT.
 *
 *   test_limits DIR    DIR holds the files `interop hostile DIR` wrote
 *
 * Built without sanitizers: AddressSanitizer reserves terabytes of shadow
 * address space, which no `ulimit -v` allows.
 */
#include <concurrent_cuckoo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void expect(const char *what, ccf_status got, ccf_status want) {
    if (got != want) {
        fprintf(stderr, "test_limits: %s: %s, expected %s\n", what, ccf_status_message(got),
                ccf_status_message(want));
        failures++;
    } else {
        printf("test_limits: %s: %s\n", what, ccf_status_message(got));
    }
}

static void path_in(char *out, size_t n, const char *dir, const char *name) {
    if ((size_t)snprintf(out, n, "%s/%s", dir, name) >= n) {
        fprintf(stderr, "test_limits: path too long\n");
        exit(2);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    char path[4096];

    /* 72 bytes claiming 2^32 buckets of 32-bit fingerprints (64 GiB). */
    path_in(path, sizeof path, argv[1], "huge-single.ccf");
    ccf_filter *f = NULL;
    expect("ccf_load of a 72-byte file claiming 64 GiB", ccf_load(path, &f), CCF_CORRUPT);
    if (f != NULL) {
        fprintf(stderr, "test_limits: *out was written on an error\n");
        failures++;
    }
    ccf_frozen *z = NULL;
    expect("ccf_frozen_open of the same file", ccf_frozen_open(path, &z), CCF_CORRUPT);
    ccf_scalable *s = NULL;
    expect("ccf_scalable_load of it (the other kind)", ccf_scalable_load(path, &s), CCF_CORRUPT);

    /* A growing filter whose first level claims 2^32 buckets. */
    path_in(path, sizeof path, argv[1], "huge-level.ccf");
    expect("ccf_scalable_load of a level larger than its configuration",
           ccf_scalable_load(path, &s), CCF_CORRUPT);

    /* Consistent headers for a 4 GiB first level, in a 512-byte file. */
    path_in(path, sizeof path, argv[1], "huge-scalable.ccf");
    expect("ccf_scalable_load of a 512-byte file claiming 4 GiB", ccf_scalable_load(path, &s),
           CCF_CORRUPT);
    if (s != NULL) {
        fprintf(stderr, "test_limits: *out was written on an error\n");
        failures++;
    }

    /* The process can still allocate what fits: the limit is real, and
     * nothing above leaked the address space it refused to reserve. */
    expect("ccf_new of a 1M-item filter under the same limit", ccf_new(1000000, 0.0, &f), CCF_OK);
    ccf_free(f);

    if (failures) {
        fprintf(stderr, "test_limits: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_limits: all loaders refused the claims before allocating\n");
    return 0;
}
