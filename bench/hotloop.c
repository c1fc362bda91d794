/* The C twin of fixtures/hotloop for bench/recorder.sh: mix(n, s) is called N times (first
 * argument, default 100000) with an integer and a C string, and a checksum is printed. Built
 * with -g for carve and with -pg for uftrace, which needs the compiler's mcount calls. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const char *WORDS[4] = {"alpha", "beta", "gamma", "delta"};

/* Mixes n with the bytes of s (FNV-1a style); cheap and deterministic. */
__attribute__((noinline)) uint64_t mix(uint64_t n, const char *s) {
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x00000100000001b3ull;
    }
    return h;
}

int main(int argc, char **argv) {
    unsigned long long calls = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
    uint64_t checksum = 0;
    for (unsigned long long i = 0; i < calls; i++) {
        checksum += mix(i, WORDS[i % 4]);
    }
    printf("calls = %llu\nchecksum = %#018llx\n", calls, (unsigned long long)checksum);
    return 0;
}
