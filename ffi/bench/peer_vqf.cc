// splatlab/vqf's 16-bit vector quotient filter in the per-key write
// benchmark (scripts/bench-writes.sh). Compiled twice, beside two builds
// of the script's patched copy of vqf_filter.c: plain (VQF_ENTRY =
// peer_vqf16_writes) and thread-safe (-DENABLE_THREADS, VQF_ENTRY =
// peer_vqf16_ts_writes, VQF_HANG_PROBE defined, and the library's
// external names renamed by -D so the two builds link side by side).
// VQF takes a 64-bit hash as its key, as ours does with
// CCF_UNIFORM_HASHES: the random keys are given as they are.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vqf_filter.h"
#include "writes.h"

#ifndef VQF_ENTRY
#error "define VQF_ENTRY"
#endif
#ifdef ENABLE_THREADS
#define VQF_NAME "VQF-16 thread-safe"
#else
#define VQF_NAME "VQF-16"
#endif

namespace {

struct vqf_peer {
    static constexpr const char *name = VQF_NAME;
    vqf_filter *f;
    explicit vqf_peer(size_t slots) : f(vqf_init(slots)) {}
    ~vqf_peer() { free(f); }
    bool insert(uint64_t k) { return vqf_insert(f, k); }
    bool contains(uint64_t k) const { return vqf_is_present(f, k); }
    bool remove(uint64_t k) { return vqf_remove(f, k); }
    // VQF keeps no count (metadata.nelts is never updated).
    size_t items() const { return SIZE_MAX; }
    size_t bytes() const { return f->metadata.total_size_in_bytes; }
};

}  // namespace

extern "C" write_rates VQF_ENTRY(size_t slots, const write_keys *k, int threads,
                                 bool with_remove) {
    return run_writes_once([slots] { return std::make_unique<vqf_peer>(slots); }, *k, threads,
                      with_remove);
}

#ifdef VQF_HANG_PROBE
// In a child process: insert a key, remove it, insert it again (into the
// same block). The parent waits up to 3 s, then kills the child.
extern "C" int peer_vqf16_ts_remove_hangs(void) {
    pid_t child = fork();
    if (child < 0) return -1;
    if (child == 0) {
        vqf_peer p(1 << 10);
        const uint64_t key = 0x9E3779B97F4A7C15ull;
        bool ok = p.insert(key) && p.remove(key) && p.insert(key);
        _exit(ok ? 0 : 1);
    }
    for (int waited_ms = 0; waited_ms < 3000; waited_ms += 10) {
        int status = 0;
        if (waitpid(child, &status, WNOHANG) == child) return 0;
        usleep(10000);
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return 1;
}
#endif
