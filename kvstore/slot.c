/*
 * slot.c -- encoding and verification of one slot image.
 *
 * A slot image is what a reader fetched with MPI_Get from another rank's
 * table, so nothing in it is trusted: lengths are checked against the
 * configured limits and against the bytes actually fetched before any of
 * them is used, and the check word tells a complete copy from a torn one
 * (a write in progress or cut short by a failure).  The lock word is not
 * covered: it changes independently.
 *
 * The check word is 64 bits made of two CRC32C lanes over the same words:
 * the version, the lengths (klen with its tombstone bit, vlen) and the
 * key's and the value's bytes, 8 at a time from their start (a last
 * partial word zero above its bytes).  Lane a takes each word w as it is,
 * lane b takes mangle(w) = w ^ w >> 32; the check is a | b << 32.  For
 * given lengths the check is affine over GF(2) in the image, so an image
 * that differs by D from the one written passes only if both lanes map D
 * to 0.  Strength: (1) a difference confined to the version or to one
 * word of the key or the value is always detected: on one word the two
 * lanes together are a bijection of its 64 bits (test_slot checks the
 * rank on every word of a slot; a word's position multiplies both lanes
 * by the same invertible factor), which no permutation of the bits would
 * give as mangle (CRC32C's polynomial has the factor x + 1, so both lanes
 * would share the word's parity); lane a alone catches every burst of up
 * to 32 bits; (2) the map has rank 64, so a fraction below 2^-64 of all
 * differences passes, the odds of the 64-bit multiply hash this replaces,
 * which promised nothing for any particular difference.  A torn image
 * differs from the write it claims in the chunks one copy moved before or
 * after the other, often a single word (a counter of fetch-and-add, a
 * tear within one word).  Lengths that differ change which bytes are
 * read, so (1) and (2) do not apply to them: they are bounds-checked
 * first, and beyond that the check promises for them what any 64-bit hash
 * does.  Not a defence against crafted images, which the store does not
 * face.  With
 * SSE4.2 (asked of the processor at load time, or known at compile time)
 * a lane step is the crc32 instruction; without, tables give the same
 * bits (so ranks on different processors agree; test_slot compares them),
 * several times slower: bench_hotpath's check of a 64-byte value took
 * about 115 ns with -DKVS_CRC_TABLE_ONLY against 20 ns here, where the
 * multiply hash took about 40.  ARMv8's crc32c instructions compute the
 * same CRC and would be the path there; they are not used yet.
 */
#include "kv_internal.h"

/* -DKVS_CRC_TABLE_ONLY builds the table's path alone (as on other processors). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(KVS_CRC_TABLE_ONLY)
#define KVS_CRC_X86 1
#include <nmmintrin.h>
#endif

size_t kvs_slot_size(size_t max_key, size_t max_value) {
    size_t sz = KVS_HDR_SIZE + max_key + max_value;
    return (sz + 7) & ~(size_t)7;
}

static inline uint64_t rd64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* The n < 8 bytes at p as a little-endian word, zero above them; reads
 * only those bytes. */
static inline uint64_t rd_short(const unsigned char *p, size_t n) {
    if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + n - 4, 4);
        return lo | (((uint64_t)hi >> (8 * (8 - n))) << 32);
    }
    if (n == 0) return 0;
    return (uint64_t)p[0] | ((uint64_t)p[n >> 1] << (8 * (n >> 1))) | ((uint64_t)p[n - 1] << (8 * (n - 1)));
}

static inline uint64_t mangle(uint64_t w) { return w ^ w >> 32; }

/* CRC32C (reflected polynomial 0x82F63B78, no inversion) of one word on
 * a 32-bit state, as the crc32 instruction computes it; without it, from
 * tables made at load time, eight bytes at once (slicing by 8: table k
 * holds the CRC of a byte followed by k zero bytes). */
static uint32_t crc_table[8][256];
#ifdef KVS_CRC_X86
static bool crc_hw;  /* the processor has the instruction */
#endif

__attribute__((constructor)) static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
        crc_table[0][i] = c;
    }
    for (int k = 1; k < 8; k++)
        for (int i = 0; i < 256; i++)
            crc_table[k][i] = (crc_table[k - 1][i] >> 8) ^ crc_table[0][crc_table[k - 1][i] & 0xFF];
#if defined(KVS_CRC_X86) && defined(__SSE4_2__)
    crc_hw = true;
#elif defined(KVS_CRC_X86)
    __builtin_cpu_init();
    crc_hw = __builtin_cpu_supports("sse4.2");
#endif
}

static inline uint64_t crc_sw(uint64_t c, uint64_t w) {
    uint64_t x = (uint32_t)c ^ w;
    return crc_table[7][x & 0xFF] ^ crc_table[6][x >> 8 & 0xFF] ^ crc_table[5][x >> 16 & 0xFF] ^
           crc_table[4][x >> 24 & 0xFF] ^ crc_table[3][x >> 32 & 0xFF] ^ crc_table[2][x >> 40 & 0xFF] ^
           crc_table[1][x >> 48 & 0xFF] ^ crc_table[0][x >> 56];
}

/* One definition of the check word, instantiated per lane step.  The
 * lanes are independent chains, so the processor runs them side by side. */
#define KVS_CHECK_FN(name, attr, step)                                                        \
    attr static uint64_t name(uint64_t version, uint32_t klen, uint32_t vlen, const void *key,  \
                              const void *val) {                                              \
        uint64_t lens = (uint64_t)klen << 32 | vlen;                                          \
        uint64_t a = step(step(0xFFFFFFFFu, version), lens);                                  \
        uint64_t b = step(step(0xFFFFFFFFu, mangle(version)), mangle(lens));        \
        const unsigned char *seg[2] = {key, val};                                             \
        size_t len[2] = {klen & ~KVS_TOMB, vlen};                                             \
        for (int s = 0; s < 2; s++) {                                                         \
            const unsigned char *p = seg[s];                                                  \
            size_t n = len[s];                                                                \
            for (; n >= 8; p += 8, n -= 8) {                                                  \
                uint64_t w = rd64(p);                                                         \
                a = step(a, w);                                                               \
                b = step(b, mangle(w));                                                  \
            }                                                                                 \
            if (n) {  /* the last bytes: one load ending at the segment's end if it can */   \
                uint64_t w = len[s] >= 8 ? rd64(p + n - 8) >> (8 * (8 - n)) : rd_short(p, n);  \
                a = step(a, w);                                                               \
                b = step(b, mangle(w));                                                  \
            }                                                                                 \
        }                                                                                     \
        return a | b << 32;                                                                   \
    }

KVS_CHECK_FN(check_sw, , crc_sw)
#ifdef KVS_CRC_X86
#define KVS_CRC_HW(c, w) _mm_crc32_u64((c), (w))
KVS_CHECK_FN(check_hw, __attribute__((target("sse4.2"))), KVS_CRC_HW)
#endif

/* Encode and decode call this, not the exported kvs_checksum: in a -fPIC
 * library a call to an exported function is never inlined. */
static inline uint64_t check(uint64_t version, uint32_t klen, uint32_t vlen, const void *key,
                             const void *val) {
#ifdef KVS_CRC_X86
    if (crc_hw) return check_hw(version, klen, vlen, key, val);
#endif
    return check_sw(version, klen, vlen, key, val);
}

uint64_t kvs_checksum(uint64_t version, uint32_t klen, uint32_t vlen, const void *key,
                      const void *val) {
    return check(version, klen, vlen, key, val);
}

uint64_t kvs_checksum_portable(uint64_t version, uint32_t klen, uint32_t vlen, const void *key,
                               const void *val) {
    return check_sw(version, klen, vlen, key, val);
}

void kvs_encode(unsigned char *slot, uint64_t version, const void *key, uint32_t klen,
                const void *val, uint32_t vlen, bool tomb, size_t max_key) {
    kvs_hdr h = {0};
    h.version = version;
    h.klen = klen | (tomb ? KVS_TOMB : 0);
    h.vlen = tomb ? 0 : vlen;
    memcpy(slot + KVS_HDR_SIZE, key, klen);
    if (!tomb && vlen) memcpy(slot + KVS_HDR_SIZE + max_key, val, vlen);
    h.check = check(h.version, h.klen, h.vlen, slot + KVS_HDR_SIZE, slot + KVS_HDR_SIZE + max_key);
    memcpy(slot, &h, KVS_HDR_SIZE);
}

enum kvs_state kvs_decode(const unsigned char *slot, size_t have, size_t max_key,
                          size_t max_value) {
    if (have < KVS_HDR_SIZE) return KVS_TORN;
    kvs_hdr h;
    memcpy(&h, slot, KVS_HDR_SIZE);
    if (h.version == 0 && h.klen == 0 && h.vlen == 0 && h.check == 0) return KVS_EMPTY;
    if (!kvs_lengths_ok(h.klen, h.vlen, max_key, max_value)) return KVS_TORN;
    bool tomb = (h.klen & KVS_TOMB) != 0;
    if (KVS_HDR_SIZE + max_key + h.vlen > have) return KVS_SHORT;
    if (h.check != check(h.version, h.klen, h.vlen, slot + KVS_HDR_SIZE, slot + KVS_HDR_SIZE + max_key))
        return KVS_TORN;
    return tomb ? KVS_DELETED : KVS_LIVE;
}

/* Keys are short: compared a word at a time here rather than by a call,
 * the last word ending at the key's end (overlapping the one before). */
bool kvs_key_is(const unsigned char *slot, const void *key, size_t klen) {
    const kvs_hdr *h = kvs_hdr_of(slot);
    if (KVS_KLEN(h) != klen) return false;
    const unsigned char *a = slot + KVS_HDR_SIZE, *b = key;
    if (klen < 8) return rd_short(a, klen) == rd_short(b, klen);
    uint64_t diff = rd64(a + klen - 8) ^ rd64(b + klen - 8);
    for (size_t i = 0; i + 8 < klen; i += 8) diff |= rd64(a + i) ^ rd64(b + i);
    return diff == 0;
}
