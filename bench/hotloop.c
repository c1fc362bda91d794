/* The C twin of fixtures/hotloop for bench/recorder.sh: mix(n, s) is called N times (first
 * argument, default 100000) with an integer and a C string, and a checksum is printed. Built
 * with -g for carve and with -pg for uftrace, which needs the compiler's mcount calls.
 *
 * With -DBY_INDEX, mix takes the word's index instead of the word (two integers in, one out:
 * the same loop and work), for carve's in-process path, which never follows a C pointer (it
 * could point anywhere; the ptrace path reads C strings), to be compared with uftrace on
 * exactly the same build. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const char *WORDS[4] = {"alpha", "beta", "gamma", "delta"};

#ifdef BY_INDEX
#define WORD_ARG(i) ((i) % 4)
typedef uint64_t word_t;
#define WORD(w) WORDS[w]
#else
#define WORD_ARG(i) WORDS[(i) % 4]
typedef const char *word_t;
#define WORD(w) (w)
#endif

/* Mixes n with the bytes of s (FNV-1a style); cheap and deterministic. */
__attribute__((noinline)) uint64_t mix(uint64_t n, word_t w) {
    const char *s = WORD(w);
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
        checksum += mix(i, WORD_ARG(i));
    }
    printf("calls = %llu\nchecksum = %#018llx\n", calls, (unsigned long long)checksum);
    return 0;
}
