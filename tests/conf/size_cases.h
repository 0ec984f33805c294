/* size_cases.h — sizes and what the one size grammar (conf/conf_bytes.h) makes of them, for
 * every test of a parser that must follow it: conf_bytes_parse and conf_size_parse
 * (tests/conf/test_conf_units.c) and the planner's plan_parse_size
 * (tests/planner/test_plan_model.c). rc: CONF_BYTES_OK, CONF_BYTES_SYNTAX or CONF_BYTES_RANGE. */
#ifndef SIZE_CASES_H
#define SIZE_CASES_H

#include "conf_bytes.h"

#include <stdint.h>

static const struct size_case {
    const char *text;
    int rc;
    uint64_t bytes;
} size_cases[] = {
    {"0", CONF_BYTES_OK, 0},
    {"1048576", CONF_BYTES_OK, 1048576},
    {"18446744073709551615", CONF_BYTES_OK, UINT64_MAX},
    {"7B", CONF_BYTES_OK, 7},
    {"7b", CONF_BYTES_OK, 7},
    {"2K", CONF_BYTES_OK, 2048},
    {"2Ki", CONF_BYTES_OK, 2048},
    {"2KiB", CONF_BYTES_OK, 2048},
    {"2KB", CONF_BYTES_OK, 2000},
    {"512MiB", CONF_BYTES_OK, 512ull << 20},
    {"512M", CONF_BYTES_OK, 512ull << 20},
    {"5MB", CONF_BYTES_OK, 5000000},
    {"40G", CONF_BYTES_OK, 40ull << 30},
    {"40g", CONF_BYTES_OK, 40ull << 30},
    {"40Gi", CONF_BYTES_OK, 40ull << 30},
    {"40GiB", CONF_BYTES_OK, 40ull << 30},
    {"40gib", CONF_BYTES_OK, 40ull << 30},
    {"40 GiB", CONF_BYTES_OK, 40ull << 30},
    {"40GB", CONF_BYTES_OK, 40000000000ull},
    {"1.5GiB", CONF_BYTES_OK, 3ull << 29},
    {"1.5G", CONF_BYTES_OK, 3ull << 29},
    {"1.5GB", CONF_BYTES_OK, 1500000000},
    {"0.1KiB", CONF_BYTES_OK, 102},
    {"1.123456789GiB", CONF_BYTES_OK, 1206302541},
    {"1TiB", CONF_BYTES_OK, 1ull << 40},
    {"3T", CONF_BYTES_OK, 3ull << 40},
    {"15TB", CONF_BYTES_OK, 15000000000000ull},
    {"1P", CONF_BYTES_OK, 1ull << 50},
    {"16383PiB", CONF_BYTES_OK, 16383ull << 50},
    {"1PB", CONF_BYTES_OK, 1000000000000000ull},
    {"", CONF_BYTES_SYNTAX, 0},
    {"MiB", CONF_BYTES_SYNTAX, 0},
    {"-1", CONF_BYTES_SYNTAX, 0},
    {"+5", CONF_BYTES_SYNTAX, 0},
    {"-1GiB", CONF_BYTES_SYNTAX, 0},
    {"1.5", CONF_BYTES_SYNTAX, 0},
    {"1.5.2", CONF_BYTES_SYNTAX, 0},
    {"1.GiB", CONF_BYTES_SYNTAX, 0},
    {".5GiB", CONF_BYTES_SYNTAX, 0},
    {"1e3", CONF_BYTES_SYNTAX, 0},
    {"1e400", CONF_BYTES_SYNTAX, 0},
    {"inf", CONF_BYTES_SYNTAX, 0},
    {"0x10", CONF_BYTES_SYNTAX, 0},
    {"1,5G", CONF_BYTES_SYNTAX, 0},
    {"12XB", CONF_BYTES_SYNTAX, 0},
    {"40X", CONF_BYTES_SYNTAX, 0},
    {"1GiBs", CONF_BYTES_SYNTAX, 0},
    {"1Gb ", CONF_BYTES_SYNTAX, 0},
    {" 1GiB", CONF_BYTES_SYNTAX, 0},
    {"1 ", CONF_BYTES_SYNTAX, 0},
    {"16EiB", CONF_BYTES_SYNTAX, 0},
    {"1.1234567891GiB", CONF_BYTES_SYNTAX, 0},
    {"1\x01GiB", CONF_BYTES_SYNTAX, 0},
    {"18446744073709551616", CONF_BYTES_SYNTAX, 0},
    {"16384PiB", CONF_BYTES_RANGE, 0},
    {"17179869184G", CONF_BYTES_RANGE, 0},
};

#endif
