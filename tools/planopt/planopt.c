/* planopt.c — the planner's options on the tools' command lines: their table, their values read
 * and refused, their help, and the link figures a plan assumed printed with their sources. */
#include "planopt.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One option: its name, its value's placeholder, its set, its help (one paragraph, wrapped by
   planopt_help). */
typedef struct option_def {
    const char *name, *value;
    unsigned set;
    const char *help;
} option_def;

enum {
    OPT_BUDGET,
    OPT_PLANNER,
    OPT_PROPOSALS,
    OPT_H2D,
    OPT_D2H,
    OPT_DUPLEX,
    OPT_LINK_BOTH,
    OPT_REMAP,
    OPT_STEP,
    OPT_COUNT
};

static const option_def defs[OPT_COUNT] = {
    [OPT_BUDGET] = {"budget", "SIZE", PLANOPT_PLAN,
                    "the device memory to plan for: bytes with a unit (512MiB; 40G or 40GiB, "
                    "2^30; 40GB, 10^9; 512B), or a share in (0%, 100%] of the native peak as "
                    "libshim holds it (75%). A number without a unit below 100000 is refused, as "
                    "libshim's budget refuses it: 75 bytes is never what a budget means (75%? "
                    "75GiB? write 75B for bytes)."},
    [OPT_PLANNER] = {"planner", "none|reactive|scheduled|exact", PLANOPT_PLAN,
                     "none: nothing moves (the native peak and step); reactive: evict by the "
                     "furthest next use when over the budget, restore on touch; scheduled (the "
                     "default, libshim's in-process planner): moves chosen ahead, prefetches as "
                     "late as the link allows; exact: the best of the canonical plans (small "
                     "models only)."},
    [OPT_PROPOSALS] = {"proposals", "N", PLANOPT_PLAN,
                       "also plan N budgets, from the native peak down to the least the job can "
                       "run in: the memory-time curve (N in [1, 100000])."},
    [OPT_H2D] = {"h2d", "GBPS", PLANOPT_LINK,
                 "the link's host-to-device bandwidth in GB/s, in [1e-6, 1e6]. It replaces the "
                 "model's figure (a model file's hw line, a trace's measured moves, or the "
                 "default an imported profile assumes); the output says where each link figure "
                 "came from."},
    [OPT_D2H] = {"d2h", "GBPS", PLANOPT_LINK, "the same from device to host."},
    [OPT_DUPLEX] = {"duplex", "0|1", PLANOPT_LINK,
                    "1: both directions copy at full speed at once; 0: they share one link."},
    [OPT_LINK_BOTH] = {"link-both", "H2D,D2H", PLANOPT_LINK,
                       "the rates in GB/s of each direction while the other copies too, each in "
                       "(0, that direction's full rate]: a link whose directions slow each other "
                       "down (a duplex link only; planner/MODEL-FORMAT.md, link_both)."},
    [OPT_REMAP] = {"remap", "US", PLANOPT_LINK,
                   "the host time libshim's mover spends remapping each move's range, in "
                   "microseconds in [0, 1e9] (not link time: the mover runs beside the copies)."},
    [OPT_STEP] = {"step", "N", PLANOPT_STEP, NULL},
};

/* Contract in planopt.h. */
void planopt_init(planopt *o)
{
    *o = (planopt){
        .kind = PLAN_KIND_SCHEDULED,
        .step = -1,
        .link = {.h2d = -1, .d2h = -1, .remap = -1, .duplex = -1, .both_h2d = -1, .both_d2h = -1}};
}

/* Contract in planopt.h. */
size_t planopt_longs(unsigned sets, struct option *longs, size_t n, size_t cap)
{
    for (int i = 0; i < OPT_COUNT; i++) {
        if (!(defs[i].set & sets))
            continue;
        if (n + 1 >= cap)
            return 0;
        longs[n++] = (struct option){defs[i].name, required_argument, NULL, PLANOPT_VAL + i};
    }
    if (n >= cap)
        return 0;
    longs[n] = (struct option){NULL, 0, NULL, 0};
    return n;
}

/* Contract in planopt.h. */
bool planopt_is(int c)
{
    return c >= PLANOPT_VAL && c < PLANOPT_VAL + OPT_COUNT;
}

/* A number covering all of s, in [lo, hi]. */
static bool number(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* A whole number in decimal digits alone covering all of s, in [lo, hi]. */
static bool count(const char *s, unsigned long long lo, unsigned long long hi,
                  unsigned long long *out)
{
    char *end;
    errno = 0;
    if (s[0] < '0' || s[0] > '9')
        return false;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* "H,D": two bandwidths separated by one comma. */
static bool rate_pair(const char *s, double *h, double *d)
{
    const char *comma = strchr(s, ',');
    char first[64];
    if (!comma || (size_t)(comma - s) >= sizeof first)
        return false;
    memcpy(first, s, (size_t)(comma - s));
    first[comma - s] = 0;
    return number(first, 1e-6, 1e6, h) && number(comma + 1, 1e-6, 1e6, d);
}

/* The value of --budget into o. */
static int take_budget(planopt *o, const char *v, char *err, size_t errlen)
{
    char why[CONF_ERR_LEN];
    if (conf_budget_parse(v, &o->size, why, sizeof why) != 0) {
        snprintf(err, errlen, "bad --budget: %s", why);
        return -1;
    }
    if (conf_size_unit_hint(v, strlen(v), true, why, sizeof why) > 0) {
        snprintf(err, errlen, "bad --budget '%s': %s (write %sB for bytes)", v, why, v);
        return -1;
    }
    o->budget = v;
    return 0;
}

/* Contract in planopt.h. */
int planopt_take(planopt *o, int c, const char *v, char *err, size_t errlen)
{
    unsigned long long n;
    planopt_link *l = &o->link;
    const char *name = planopt_is(c) ? defs[c - PLANOPT_VAL].name : "?";
    switch (planopt_is(c) ? c - PLANOPT_VAL : -1) {
    case OPT_BUDGET:
        return take_budget(o, v, err, errlen);
    case OPT_PLANNER:
        if (plan_kind_parse(v, &o->kind) == PLAN_OK)
            return 0;
        snprintf(err, errlen, "unknown planner '%s' (none, reactive, scheduled or exact)", v);
        return -1;
    case OPT_PROPOSALS:
        if (count(v, 1, 100000, &n)) {
            o->proposals = (size_t)n;
            return 0;
        }
        snprintf(err, errlen, "--%s takes a count in [1, 100000], not '%s'", name, v);
        return -1;
    case OPT_STEP:
        if (count(v, 0, INT32_MAX, &n)) {
            o->step = (long long)n;
            return 0;
        }
        snprintf(err, errlen, "--%s takes a step number in [0, 2^31), not '%s'", name, v);
        return -1;
    case OPT_H2D:
    case OPT_D2H:
        if (number(v, 1e-6, 1e6, c - PLANOPT_VAL == OPT_H2D ? &l->h2d : &l->d2h))
            return 0;
        snprintf(err, errlen, "--%s takes a bandwidth in GB/s in [1e-6, 1e6], not '%s'", name, v);
        return -1;
    case OPT_DUPLEX:
        if ((v[0] == '0' || v[0] == '1') && !v[1]) {
            l->duplex = v[0] - '0';
            return 0;
        }
        snprintf(err, errlen, "--%s takes 0 or 1, not '%s'", name, v);
        return -1;
    case OPT_LINK_BOTH:
        if (rate_pair(v, &l->both_h2d, &l->both_d2h))
            return 0;
        l->both_h2d = l->both_d2h = -1;
        snprintf(err, errlen,
                 "--%s takes H2D,D2H: the rates in GB/s in [1e-6, 1e6] of each direction while "
                 "the other copies too, not '%s'",
                 name, v);
        return -1;
    case OPT_REMAP:
        if (number(v, 0, 1e9, &l->remap))
            return 0;
        snprintf(err, errlen, "--%s takes a time in microseconds in [0, 1e9], not '%s'", name, v);
        return -1;
    default:
        snprintf(err, errlen, "option %d is not a planner option", c);
        return -1;
    }
}

/* Contract in planopt.h. */
void planopt_getopt_error(int c, const char *arg, char *err, size_t errlen)
{
    if (c == ':')
        snprintf(err, errlen, "%s needs a value", arg);
    else
        snprintf(err, errlen, "unknown option '%s'", arg);
}

/* Contract in planopt.h. */
int planopt_require_budget(const planopt *o, char *err, size_t errlen)
{
    if (o->budget || o->proposals)
        return 0;
    snprintf(err, errlen,
             "--budget or --proposals is required: the budget to plan for (--budget 75%%), or "
             "how many budgets to plan from the native peak down (--proposals 8)");
    return -1;
}

/* Contract in planopt.h. */
uint64_t planopt_budget_bytes(const planopt *o, uint64_t peak)
{
    return o->budget ? conf_size_resolve(&o->size, peak, peak) : peak;
}

/* Contract in planopt.h. */
void planopt_synopsis(FILE *out, unsigned sets, int indent)
{
    int col = 0;
    for (int i = 0; i < OPT_COUNT; i++) {
        if (!(defs[i].set & sets))
            continue;
        int w = (int)(strlen(defs[i].name) + strlen(defs[i].value) + 6); /* " [--N V]" */
        if (col && col + w > 80) {
            fputc('\n', out);
            col = 0;
        }
        if (!col)
            col =
                fprintf(out, "%*s", indent, "") - 1; /* the first option's space is the indent's */
        col += fprintf(out, " [--%s %s]", defs[i].name, defs[i].value);
    }
    if (col)
        fputc('\n', out);
}

/* text as lines of at most 80 columns, each after two spaces. */
static void wrapped(FILE *out, const char *text)
{
    const char *p = text;
    while (*p) {
        size_t n = strlen(p);
        if (n > 78) {
            n = 78;
            while (n > 0 && p[n] != ' ')
                n--;
            if (n == 0)
                n = strcspn(p, " ");
        }
        fprintf(out, "  %.*s\n", (int)n, p);
        p += n;
        while (*p == ' ')
            p++;
    }
}

/* Contract in planopt.h. */
void planopt_help(FILE *out, unsigned sets)
{
    for (int i = 0; i < OPT_COUNT; i++) {
        if (!(defs[i].set & sets) || !defs[i].help)
            continue;
        fprintf(out, "--%s %s:\n", defs[i].name, defs[i].value);
        wrapped(out, defs[i].help);
    }
}

/* Contract in planopt.h. */
void planopt_sources_all(planopt_sources *src, const char *what)
{
    *src = (planopt_sources){what, what, what, what, what};
}

/* Contract in planopt.h. */
void planopt_link_apply(const planopt_link *l, plan_hw *hw, planopt_sources *src)
{
    if (l->h2d >= 0)
        hw->h2d_gbps = l->h2d, src->h2d = "--h2d";
    if (l->d2h >= 0)
        hw->d2h_gbps = l->d2h, src->d2h = "--d2h";
    if (l->duplex >= 0)
        hw->duplex = l->duplex, src->duplex = "--duplex";
    if (l->remap >= 0)
        hw->remap_us = l->remap, src->remap = "--remap";
    if (l->both_h2d >= 0) {
        hw->both_h2d_gbps = l->both_h2d;
        hw->both_d2h_gbps = l->both_d2h;
        src->both = "--link-both";
    }
}

/* Contract in planopt.h. Figures of one source in a row share one mention of it. */
void planopt_link_text(FILE *out, const char *prefix, const plan_hw *hw, const planopt_sources *src)
{
    char fig[4][48];
    snprintf(fig[0], sizeof fig[0], "h2d %.3f GB/s", hw->h2d_gbps);
    snprintf(fig[1], sizeof fig[1], "d2h %.3f GB/s", hw->d2h_gbps);
    snprintf(fig[2], sizeof fig[2], "duplex %d", hw->duplex);
    snprintf(fig[3], sizeof fig[3], "remap %.3f us", hw->remap_us);
    const char *from[4] = {src->h2d, src->d2h, src->duplex, src->remap};
    fprintf(out, "%slink: ", prefix);
    for (int i = 0; i < 4; i++) {
        bool last = i == 3 || strcmp(from[i], from[i + 1]);
        fprintf(out, "%s%s", fig[i], last ? " (" : ", ");
        if (last)
            fprintf(out, "%s)%s", from[i], i < 3 ? "; " : "\n");
    }
    if (hw->both_h2d_gbps > 0)
        fprintf(out, "%slink_both: h2d %.3f GB/s, d2h %.3f GB/s (%s)\n", prefix, hw->both_h2d_gbps,
                hw->both_d2h_gbps, src->both);
}

/* s as a JSON string. */
static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

/* Contract in planopt.h. */
void planopt_link_json(FILE *out, const plan_hw *hw, const planopt_sources *src)
{
    bool both = hw->both_h2d_gbps > 0;
    fprintf(out, ", \"h2d_gbps\": %.6g, \"d2h_gbps\": %.6g, \"duplex\": %d, \"remap_us\": %.6g",
            hw->h2d_gbps, hw->d2h_gbps, hw->duplex, hw->remap_us);
    if (both)
        fprintf(out, ", \"both_h2d_gbps\": %.6g, \"both_d2h_gbps\": %.6g", hw->both_h2d_gbps,
                hw->both_d2h_gbps);
    const char *names[] = {"h2d_gbps", "d2h_gbps", "duplex", "remap_us", "link_both"};
    const char *vals[] = {src->h2d, src->d2h, src->duplex, src->remap, src->both};
    fputs(", \"link_sources\": {", out);
    for (size_t i = 0; i < (both ? 5u : 4u); i++) {
        fprintf(out, "%s\"%s\": ", i ? ", " : "", names[i]);
        json_string(out, vals[i] ? vals[i] : "");
    }
    fputc('}', out);
}
