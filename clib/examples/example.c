/* CLib from C: register, allocate, write and read back (sync and async), atomics, a lock,
 * a second member joining the remote address space with its pid and key (and a forged key
 * refused), typed errors, free. Usage: example IP:PORT (a running `clio board`).
 * Exit 0 = all good. */
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

/* A second member (on a real deployment: another process, on another compute node) joins
 * with the pid and key of the first and sees its memory and its lock. */
static int share(const char *node, struct clio_client *c, uint64_t base) {
    const uint64_t va = base + 16384; /* past the data run() wrote */
    uint64_t old = 0;
    char back[16];
    struct clio_client *peer = clio_join_udp(node, clio_pid(c), clio_key(c));
    if (!peer) {
        fprintf(stderr, "join: %s\n", clio_last_error());
        return 1;
    }
    CHECK(clio_rwrite(c, va + 4096, "shared by two", 13));
    memset(back, 0, sizeof back);
    CHECK(clio_rread(peer, va + 4096, back, 13));
    EXPECT(memcmp(back, "shared by two", 13) == 0);
    CHECK(clio_rlock(peer, va + 128));
    EXPECT(clio_compare_and_swap(c, va + 128, 0, 1, &old) == CLIO_OK && old == 1);
    CHECK(clio_runlock(peer, va + 128));
    CHECK(clio_fetch_add(peer, va + 192, 2, &old));
    CHECK(clio_fetch_add(c, va + 192, 3, &old));
    EXPECT(old == 2);
    clio_close(peer);
    printf("a second member joined RAS %u and shared its memory and lock\n", (unsigned)clio_pid(c));

    /* A forged key opens nothing. */
    struct clio_client *intruder = clio_join_udp(node, clio_pid(c), clio_key(c) ^ 1);
    EXPECT(intruder == NULL);
    printf("a join with a forged key is refused: %s\n", clio_last_error());
    return 0;
}

static int run(const char *node, struct clio_client *c) {
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

    /* The same with deferred sends: both requests leave together at the first poll. */
    CHECK(clio_set_deferred_sends(c, 1));
    CHECK(clio_rwrite_async(c, va + 8192, "batched in C", 12, &h_w));
    CHECK(clio_rread_async(c, va + 8192, 12, &h_r));
    CHECK(clio_rpoll(c, h_w, NULL, 0, NULL));
    memset(small, 0, sizeof small);
    CHECK(clio_rpoll(c, h_r, small, sizeof small, NULL));
    EXPECT(memcmp(small, "batched in C", 12) == 0);
    CHECK(clio_rflush(c));
    CHECK(clio_set_deferred_sends(c, 0));

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

    if (share(node, c, va) != 0) return 1;

    /* Pointer chasing at the node: a 3-node list (next at 0, key at 8, value at 16), one
       request finds the last node's value. */
    {
        uint64_t n0 = va + 65536, n1 = n0 + 256, n2 = n1 + 512, found = 0, next = 0, hops = 0;
        uint64_t words[2];
        char val[8];
        words[0] = n1; words[1] = 11;
        CHECK(clio_rwrite(c, n0, words, sizeof words));
        words[0] = n2; words[1] = 22;
        CHECK(clio_rwrite(c, n1, words, sizeof words));
        words[0] = 0; words[1] = 33;
        CHECK(clio_rwrite(c, n2, words, sizeof words));
        CHECK(clio_rwrite(c, n2 + 16, "third!!", 8));
        CHECK(clio_rchase(c, n0, 33, 8, 0, 16, 100, val, sizeof val, &found, &next, &hops));
        EXPECT(found == n2 && hops == 3 && memcmp(val, "third!!", 8) == 0);
        CHECK(clio_rchase(c, n0, 44, 8, 0, 16, 100, val, sizeof val, &found, &next, &hops));
        EXPECT(found == 0 && next == 0 && hops == 3);
        printf("pointer chase: key 33 found at the third node in one request\n");
    }

    /* Clio-KV: the node's key-value store, one request per operation, keys private to
       this RAS. */
    {
        char val[16];
        size_t len = 0;
        int flag = -1;
        CHECK(clio_kv_put(c, "user1", 5, "hello kv", 8, &flag));
        EXPECT(flag == 0); /* created */
        CHECK(clio_kv_get(c, "user1", 5, val, sizeof val, &len, &flag));
        EXPECT(flag == 1 && len == 8 && memcmp(val, "hello kv", 8) == 0);
        CHECK(clio_kv_delete(c, "user1", 5, &flag));
        EXPECT(flag == 1);
        CHECK(clio_kv_get(c, "user1", 5, val, sizeof val, &len, &flag));
        EXPECT(flag == 0 && len == 0);
        EXPECT(clio_kv_get(c, "", 0, val, sizeof val, &len, &flag) == CLIO_ERR_INVALID_ARGUMENT);
        printf("Clio-KV: put, get, delete, get-after-delete\n");
    }

    /* Typed errors. */
    EXPECT(clio_fetch_add(c, va + 3, 1, &old) == CLIO_ERR_INVALID_ARGUMENT);
    CHECK(clio_rfree(c, va));
    EXPECT(clio_rread(c, va, small, 8) == CLIO_ERR_UNMAPPED);
    printf("after free, read fails as expected: %s\n", clio_last_error());

    /* Epochs (a replicated pool's fence): the RAS at epoch 3 refuses an older one. */
    CHECK(clio_set_epoch(c, 3));
    EXPECT(clio_epoch(c) == 3);
    EXPECT(clio_set_epoch(c, 2) == CLIO_ERR_STALE);
    EXPECT(clio_epoch(c) == 3);
    EXPECT(clio_set_epoch(c, 0) == CLIO_ERR_INVALID_ARGUMENT);
    printf("epochs: at 3, an older epoch is refused\n");
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
    int rc = run(argv[1], c);
    clio_close(c);
    if (rc == 0) printf("C example: all checks passed\n");
    return rc;
}
