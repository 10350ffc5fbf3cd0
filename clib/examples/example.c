/* CLib from C: register, allocate, write and read back (sync and async), atomics, a lock,
 * a typed error, free. Usage: example IP:PORT (a running `clio board`). Exit 0 = all good. */
#include <stdio.h>
#include <string.h>
#include "clio.h"

#define CHECK(call)                                                                  \
    do {                                                                             \
        enum clio_status s_ = (call);                                                \
        if (s_ != CLIO_OK) {                                                         \
            fprintf(stderr, "%s:%d: %s -> %d (%s)\n", __FILE__, __LINE__, #call,    \
                    (int)s_, clio_last_error());                                     \
            return 1;                                                                \
        }                                                                            \
    } while (0)

#define EXPECT(cond)                                                                 \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);      \
            return 1;                                                                \
        }                                                                            \
    } while (0)

static int run(struct clio_client *c) {
    uint64_t va = 0, old = 0, h_w = 0, h_r = 0;
    char big[5000], back[5000];
    char small[16];

    CHECK(clio_ralloc(c, 1 << 22, &va));
    printf("pid %u, allocated 4 MiB at 0x%llx\n", (unsigned)clio_pid(c), (unsigned long long)va);

    /* Synchronous write and read back, several packets long. */
    for (size_t i = 0; i < sizeof big; i++) big[i] = (char)(i * 7 + 3);
    CHECK(clio_rwrite(c, va + 100, big, sizeof big));
    memset(back, 0, sizeof back);
    CHECK(clio_rread(c, va + 100, back, sizeof back));
    EXPECT(memcmp(big, back, sizeof big) == 0);

    /* Asynchronous write then read of the same page: the read sees the write. */
    CHECK(clio_rwrite_async(c, va + 8192, "hello from C", 12, &h_w));
    CHECK(clio_rread_async(c, va + 8192, 12, &h_r));
    CHECK(clio_rpoll(c, h_w, NULL, 0, NULL));
    memset(small, 0, sizeof small);
    CHECK(clio_rpoll(c, h_r, small, sizeof small, NULL));
    EXPECT(memcmp(small, "hello from C", 12) == 0);
    CHECK(clio_rrelease(c));

    /* Atomics and a lock. */
    CHECK(clio_fetch_add(c, va, 5, &old));
    EXPECT(old == 0);
    CHECK(clio_fetch_add(c, va, 1, &old));
    EXPECT(old == 5);
    CHECK(clio_compare_and_swap(c, va, 6, 42, &old));
    EXPECT(old == 6);
    CHECK(clio_rlock(c, va + 64));
    CHECK(clio_runlock(c, va + 64));
    CHECK(clio_rfence(c));

    /* Typed errors. */
    EXPECT(clio_fetch_add(c, va + 3, 1, &old) == CLIO_ERR_INVALID_ARGUMENT);
    CHECK(clio_rfree(c, va));
    EXPECT(clio_rread(c, va, small, 8) == CLIO_ERR_UNMAPPED);
    printf("after free, read fails as expected: %s\n", clio_last_error());
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s IP:PORT\n", argv[0]);
        return 2;
    }
    struct clio_client *c = clio_connect_udp(argv[1]);
    if (!c) {
        fprintf(stderr, "connect: %s\n", clio_last_error());
        return 1;
    }
    int rc = run(c);
    clio_close(c);
    if (rc == 0) printf("C example: all checks passed\n");
    return rc;
}
