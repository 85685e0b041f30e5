/*
 * test_config.c -- configuration defaults, validation and parsing.
 *
 * Pass rules: the defaults validate; every bad field is refused with
 * KV_ERR_CONFIG and a message naming that field; kv_config_set parses each
 * known name and refuses unknown names, junk numbers and unknown variants;
 * KV_ environment variables apply; every status code has its own text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "kv_internal.h"

static void test_defaults(void **st) {
    (void)st;
    kv_config c;
    kv_config_default(&c);
    char msg[200] = "";
    assert_int_equal(kv_config_check(&c, msg, sizeof msg), KV_OK);
    assert_int_equal(c.replicas, 2);
    assert_int_equal(c.variant, KV_VARIANT_RECREATE_COPY);
}

#define BAD(stmt, word)                                                   \
    do {                                                                  \
        kv_config c;                                                      \
        kv_config_default(&c);                                            \
        stmt;                                                             \
        char msg[200] = "";                                               \
        assert_int_equal(kv_config_check(&c, msg, sizeof msg), KV_ERR_CONFIG); \
        if (!strstr(msg, word)) fail_msg("message '%s' lacks '%s'", msg, word); \
    } while (0)

static void test_bad_fields(void **st) {
    (void)st;
    BAD(c.replicas = 0, "replicas");
    BAD(c.replicas = 17, "replicas");
    BAD(c.slots_per_rank = 0, "slots_per_rank");
    BAD(c.max_key = 0, "max_key");
    BAD(c.max_key = 5000, "max_key");
    BAD(c.max_value = (1u << 20) + 1, "max_value");
    BAD(c.backend = 7, "backend");
    BAD(c.variant = 42, "variant");
    BAD(c.spares = -1, "spares");
    BAD(c.spares = 2, "variant spare");
    BAD(c.poll_interval = 0, "poll_interval");
    BAD(c.poll_us = -1, "poll_us");
    BAD(c.poll_us = 10000001, "poll_us");
    BAD(c.max_probe = 0, "max_probe");
    BAD(c.read_retries = -1, "read_retries");
    BAD(c.lock_timeout_ms = 0, "lock_timeout_ms");
    BAD(c.failure_wait_ms = -1, "failure_wait_ms");
    BAD(c.failure_wait_ms = 3600001, "failure_wait_ms");
}

static void test_set(void **st) {
    (void)st;
    kv_config c;
    kv_config_default(&c);
    char msg[300];
    assert_int_equal(kv_config_set(&c, "replicas", "3", msg, sizeof msg), KV_OK);
    assert_int_equal(c.replicas, 3);
    assert_int_equal(kv_config_set(&c, "slots_per_rank", "64k", msg, sizeof msg), KV_OK);
    assert_int_equal(c.slots_per_rank, 65536);
    assert_int_equal(kv_config_set(&c, "variant", "spare", msg, sizeof msg), KV_OK);
    assert_int_equal(c.variant, KV_VARIANT_SPARE);
    assert_int_equal(kv_config_set(&c, "backend", "create", msg, sizeof msg), KV_OK);
    assert_int_equal(c.backend, KV_BACKEND_CREATE);
    assert_int_equal(kv_config_set(&c, "lock_timeout_ms", "2.5", msg, sizeof msg), KV_OK);
    assert_int_equal(kv_config_set(&c, "replicas", "three", msg, sizeof msg), KV_ERR_CONFIG);
    assert_non_null(strstr(msg, "replicas"));
    assert_int_equal(kv_config_set(&c, "replicas", "99", msg, sizeof msg), KV_ERR_CONFIG);
    assert_int_equal(kv_config_set(&c, "max_value", "12x", msg, sizeof msg), KV_ERR_CONFIG);
    assert_int_equal(kv_config_set(&c, "variant", "magic", msg, sizeof msg), KV_ERR_CONFIG);
    assert_non_null(strstr(msg, "unknown variant 'magic'"));
    assert_int_equal(kv_config_set(&c, "colour", "red", msg, sizeof msg), KV_ERR_CONFIG);
    assert_non_null(strstr(msg, "unknown store setting 'colour'"));
    /* found by tests/fuzz/fuzz_config: a suffix product that overflows */
    assert_int_equal(kv_config_set(&c, "max_key", "325555555555555555M", msg, sizeof msg),
                     KV_ERR_CONFIG);
    assert_int_equal(kv_config_set(&c, "slots_per_rank", "9223372036854775807G", msg, sizeof msg),
                     KV_ERR_CONFIG);
    assert_int_equal(kv_config_set(&c, "checkpoint_dir", "/var/tmp/ck", msg, sizeof msg), KV_OK);
    assert_string_equal(c.checkpoint_dir, "/var/tmp/ck");
    char longdir[400];
    memset(longdir, 'd', sizeof longdir - 1);
    longdir[sizeof longdir - 1] = 0;
    assert_int_equal(kv_config_set(&c, "checkpoint_dir", longdir, msg, sizeof msg), KV_ERR_CONFIG);
    assert_non_null(strstr(msg, "checkpoint_dir"));
    assert_int_equal(c.replicas, 3);  /* failed sets change nothing */
}

/* Variant none keeps as many copies as asked (the baseline of what fault
 * tolerance costs beyond the copies), without a watchdog. */
static void test_none_with_copies(void **st) {
    (void)st;
    kv_config c;
    kv_config_default(&c);
    c.variant = KV_VARIANT_NONE;
    char msg[256];
    for (c.replicas = 1; c.replicas <= 3; c.replicas++)
        assert_int_equal(kv_config_check(&c, msg, sizeof msg), KV_OK);
    c.replicas = 0;
    assert_int_equal(kv_config_check(&c, msg, sizeof msg), KV_ERR_CONFIG);
    assert_non_null(strstr(msg, "replicas"));
}

static void test_checkpoint_config(void **st) {
    (void)st;
    kv_config c;
    kv_config_default(&c);
    char msg[300];
    c.variant = KV_VARIANT_CHECKPOINT;
    c.replicas = 1;
    assert_int_equal(kv_config_check(&c, msg, sizeof msg), KV_ERR_CONFIG);
    assert_non_null(strstr(msg, "checkpoint_dir"));
    strcpy(c.checkpoint_dir, "/tmp/x");
    assert_int_equal(kv_config_check(&c, msg, sizeof msg), KV_OK);
    c.replicas = 2;
    assert_int_equal(kv_config_check(&c, msg, sizeof msg), KV_ERR_CONFIG);
    assert_non_null(strstr(msg, "replicas must be 1"));
}

static void test_env(void **st) {
    (void)st;
    kv_config c;
    kv_config_default(&c);
    char msg[300];
    setenv("KV_REPLICAS", "4", 1);
    setenv("KV_VARIANT", "recreate-inplace", 1);
    assert_int_equal(kv_config_from_env(&c, msg, sizeof msg), KV_OK);
    assert_int_equal(c.replicas, 4);
    assert_int_equal(c.variant, KV_VARIANT_RECREATE_INPLACE);
    setenv("KV_MAX_KEY", "-3", 1);
    assert_int_equal(kv_config_from_env(&c, msg, sizeof msg), KV_ERR_CONFIG);
    assert_non_null(strstr(msg, "KV_MAX_KEY"));
    unsetenv("KV_REPLICAS");
    unsetenv("KV_VARIANT");
    unsetenv("KV_MAX_KEY");
}

static void test_strerror(void **st) {
    (void)st;
    for (int a = -19; a <= 1; a++)
        for (int b = a + 1; b <= 1; b++)
            assert_string_not_equal(kv_strerror(a), kv_strerror(b));
    assert_string_equal(kv_strerror(12345), "unknown status code");
    assert_string_equal(kv_variant_name(kv_variant_from_name("recreate-free")), "recreate-free");
    assert_int_equal(kv_variant_from_name("nope"), -1);
    assert_int_equal(kv_backend_from_name("rdma"), KV_BACKEND_CREATE);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults), cmocka_unit_test(test_bad_fields),
        cmocka_unit_test(test_set), cmocka_unit_test(test_none_with_copies),
        cmocka_unit_test(test_checkpoint_config), cmocka_unit_test(test_env),
        cmocka_unit_test(test_strerror)};
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
