/* shimplan.c — shim-plan: plans a text iteration model for a memory budget and prints the
 * predicted peak, step time, stall and the lower bound; also writes generated models.
 *
 *   shim-plan MODEL --budget SIZE [--planner none|reactive|scheduled|exact] [--proposals N]
 *             [--h2d GBPS] [--d2h GBPS] [--duplex 0|1] [--link-both H2D,D2H] [--remap US]
 *             [--json] [--entries]
 *   shim-plan --generate SPEC [-o FILE]
 *   shim-plan --import kineto TRACE [--step N] [--touches guess|all] [-o FILE] [--budget ...]
 *   shim-plan --import et ET [--kineto TRACE] [--step N] [--join-map FILE] [-o FILE] [--budget ...]
 *
 * MODEL is a file in the format of planner/MODEL-FORMAT.md ("-" reads standard input). The
 * planner's options (--budget, --planner, --proposals, the link's, --step) are read as
 * shim-report plan reads them, by one parser (tools/planopt/planopt.h): the same help, the same
 * errors. The model is planned as libshim holds its
 * memory (planner/plan_build.h, plan_model_hold; --min-managed, --slab-max, --as-given). --import
 * builds the model of one step of a PyTorch trace (tools/import/import.h, tools/import/IMPORT.md):
 * written to FILE (-o), planned (--budget,
 * --proposals), or, with neither, written to standard output; --join-map writes which ET node
 * launched each operation (a debugging and test aid). The link options replace the model's
 * figures (read, imported or generated), and the output says where each came from. Exit status:
 * 0 planned (whether or not the
 * budget holds: see "feasible"), 1 bad input or planning error, 2 usage. */
#include "conf.h"
#include "import.h"
#include "plan.h"
#include "plan_build.h"
#include "planopt.h"
#include "shimplan_print.h"
#include "util_file.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct options {
    const char *model;
    const char *generate;
    const char *out;
    const char *import, *kineto, *join_map;
    import_opts iopts;
    planopt p;            /* the planner's options: budget, planner, proposals, link, step */
    plan_hold_rules hold; /* libshim's, or as --min-managed and --slab-max say */
    bool json, entries, as_given, hold_set;
    bool no_host; /* --no-host-placement */
} options;

/* The synopsis, for --help and after a usage error. */
static void synopsis(FILE *f)
{
    fputs("usage: shim-plan MODEL [--json] [--entries] [--no-host-placement]\n"
          "                 [--min-managed SIZE] [--slab-max SIZE] [--as-given]\n",
          f);
    planopt_synopsis(f, PLANOPT_PLAN | PLANOPT_LINK, 16);
    fputs("                 (--budget or --proposals is required)\n"
          "       shim-plan --generate SPEC [-o FILE] [--remap US ...]\n"
          "       shim-plan --import kineto TRACE.json[.gz] [--step N] [--touches guess|all]\n"
          "                 [-o FILE] [--budget SIZE ...]\n"
          "       shim-plan --import et ET.json[.gz] [--kineto TRACE.json[.gz]] [--step N]\n"
          "                 [--join-map FILE] [-o FILE] [--budget SIZE ...]\n",
          f);
}

static void usage(FILE *f)
{
    synopsis(f);
    fputs("MODEL: a model file (planner/MODEL-FORMAT.md), - for standard input.\n"
          "SPEC: transformer|unet|optim|random[:KEY=VALUE,...] (planner/MODEL-FORMAT.md).\n"
          "--import: the model of one step of a PyTorch profiler trace (tools/import/IMPORT.md);\n"
          "  --step N: ProfilerStep#N (default: the last complete step: IMPORT.md says how it\n"
          "    is chosen);\n"
          "  --touches all: every kernel in an allocation's life touches it (default: guess);\n"
          "  --join-map FILE: (et) one line per operation: its number and the ET node id\n"
          "    that launched it (-1: none);\n"
          "  without -o, --budget or --proposals the model goes to standard output.\n"
          "The model is planned as libshim holds its memory: an allocation smaller than\n"
          "  min_managed_bytes is left to the driver and never moved, a larger one of at most\n"
          "  the slab maximum shares a slab (moved only with it), the rest round up to 2 MiB\n"
          "  granules and are what a plan moves. --min-managed SIZE (default libshim's, 64KiB)\n"
          "  and --slab-max SIZE (default 1MiB, half a granule) assume other settings;\n"
          "  --as-given plans every allocation as the model gives it, all movable.\n"
          "When the model gives bytes read per touch (OP@SIZE), an allocation read sparsely may\n"
          "  also stay on the host, read in place through the link (planner/MODEL-FORMAT.md,\n"
          "  \"Placements\"); --no-host-placement plans without that third placement.\n"
          "The planner's options (shim-report plan takes the same):\n",
          f);
    planopt_help(f, PLANOPT_PLAN | PLANOPT_LINK);
}

/* "shim-plan: WHAT", the synopsis and where the rest is, on stderr; 2. */
static int bad_usage(const char *what)
{
    fprintf(stderr, "shim-plan: %s\n", what);
    synopsis(stderr);
    fputs("(shim-plan --help says more)\n", stderr);
    return 2;
}

/* libshim's rules for holding memory with its defaults: min_managed_bytes from the option table
   (conf/conf.h), read as libshim reads it (shim_main.c). */
static void default_hold(plan_hold_rules *r)
{
    const char *def = conf_option_get(CONF_MIN_MANAGED_BYTES)->def;
    conf_size m = {.kind = CONF_SIZE_BYTES, .bytes = 64 << 10};
    char err[CONF_ERR_LEN];
    if (conf_size_parse(def, strlen(def), &m, err, sizeof err))
        fprintf(stderr, "shim-plan: min_managed_bytes's default '%s': %s\n", def, err);
    *r = (plan_hold_rules){.granule = PLAN_RULES_GRANULE,
                           .page = PLAN_RULES_PAGE,
                           .min_managed = conf_size_resolve(&m, 0, 2u << 20),
                           .slab_max = PLAN_RULES_SLAB_MAX};
}

/* --min-managed (bounded as libshim's min_managed_bytes) or --slab-max (at most a granule: a
   slab is one); 0, or 2 after the usage error. */
static int hold_option(const char *a, const char *v, options *o)
{
    bool mm = !strcmp(a, "--min-managed");
    char err[CONF_ERR_LEN] = "";
    conf_size sz = {0};
    if ((mm && conf_option_check_text(CONF_MIN_MANAGED_BYTES, v, err, sizeof err)) ||
        conf_size_parse(v, strlen(v), &sz, err, sizeof err))
        ; /* err says why */
    else if (sz.kind != CONF_SIZE_BYTES)
        snprintf(err, sizeof err, "a size in bytes, such as 64KiB, not '%s'", v);
    else if (!mm && sz.bytes > PLAN_RULES_GRANULE)
        snprintf(err, sizeof err, "at most 2MiB (a slab is one granule), not '%s'", v);
    if (*err) {
        char what[CONF_ERR_LEN + 32];
        snprintf(what, sizeof what, "bad %s: %s", a, err);
        return bad_usage(what);
    }
    *(mm ? &o->hold.min_managed : &o->hold.slab_max) = sz.bytes;
    o->hold_set = true;
    return 0;
}

/* An option of shim-plan's own that takes value v: stores it; 0, or 2 after the usage error. */
static int value_option(const char *a, const char *v, options *o)
{
    char what[CONF_ERR_LEN];
    if (!strcmp(a, "--generate"))
        o->generate = v;
    else if (!strcmp(a, "-o"))
        o->out = v;
    else if (!strcmp(a, "--kineto"))
        o->kineto = v;
    else if (!strcmp(a, "--join-map"))
        o->join_map = v;
    else if (!strcmp(a, "--import") && strcmp(v, "kineto") && strcmp(v, "et")) {
        snprintf(what, sizeof what, "--import takes kineto or et, not '%s'", v);
        return bad_usage(what);
    } else if (!strcmp(a, "--import"))
        o->import = v;
    else if (!strcmp(a, "--touches") && strcmp(v, "guess") && strcmp(v, "all")) {
        snprintf(what, sizeof what, "--touches takes guess or all, not '%s'", v);
        return bad_usage(what);
    } else if (!strcmp(a, "--touches"))
        o->iopts.all_touches = !strcmp(v, "all");
    else if (!strcmp(a, "--min-managed") || !strcmp(a, "--slab-max"))
        return hold_option(a, v, o);
    return 0;
}

/* What the options and arguments lack or hold too many of: 0, or 2 after the usage error. */
static int check_args(const options *o)
{
    char what[CONF_ERR_LEN];
    if (o->as_given && o->hold_set)
        return bad_usage("--as-given takes no --min-managed or --slab-max");
    if (o->generate)
        return 0;
    if (o->import && (!o->model || (o->kineto && strcmp(o->import, "et")))) {
        snprintf(what, sizeof what, "--import %s %s", o->import,
                 !o->model ? "needs a trace file: --import KIND TRACE" : "takes no --kineto");
        return bad_usage(what);
    }
    if (o->join_map && (!o->import || strcmp(o->import, "et")))
        return bad_usage("--join-map goes with --import et");
    if (o->import)
        return 0;
    if (o->kineto || o->p.step >= 0 || o->iopts.all_touches)
        return bad_usage("--kineto, --step and --touches go with --import");
    if (!o->model)
        return bad_usage("no model given: MODEL (a model file, - for standard input), "
                         "--generate SPEC or --import kineto|et TRACE");
    if (planopt_require_budget(&o->p, what, sizeof what))
        return bad_usage(what);
    return 0;
}

/* Returns 0, or the exit status for a usage error (2) or --help (-1). Parsed with getopt_long:
   "--opt V" or "--opt=V", options and the model in any order. */
static int parse_args(int argc, char **argv, options *o)
{
    struct option longs[32] = {
        {"generate", required_argument, NULL, 0},      {"import", required_argument, NULL, 0},
        {"kineto", required_argument, NULL, 0},        {"touches", required_argument, NULL, 0},
        {"join-map", required_argument, NULL, 0},      {"json", no_argument, NULL, 'j'},
        {"entries", no_argument, NULL, 'e'},           {"min-managed", required_argument, NULL, 0},
        {"slab-max", required_argument, NULL, 0},      {"as-given", no_argument, NULL, 'g'},
        {"no-host-placement", no_argument, NULL, 'n'}, {"help", no_argument, NULL, 'h'},
    };
    size_t own = 12;
    if (!planopt_longs(PLANOPT_PLAN | PLANOPT_LINK | PLANOPT_STEP, longs, own, 32))
        return bad_usage("internal error: the option table is too small");
    planopt_init(&o->p);
    default_hold(&o->hold);
    o->iopts.step = -1;
    o->iopts.notes = stderr;
    opterr = 0; /* the messages are shim-plan's own */
    int c, at = 0;
    char what[CONF_ERR_LEN];
    while ((c = getopt_long(argc, argv, ":ho:", longs, &at)) != -1) {
        char name[32] = "-o";
        if (c == 0)
            snprintf(name, sizeof name, "--%s", longs[at].name);
        if (c == ':' || c == '?') {
            planopt_getopt_error(c, argv[optind - 1], what, sizeof what);
            return bad_usage(what);
        }
        if (planopt_is(c) && planopt_take(&o->p, c, optarg, what, sizeof what))
            return bad_usage(what);
        int rc = c == 'h'             ? -1
                 : c == 'j'           ? (o->json = true, 0)
                 : c == 'e'           ? (o->entries = true, 0)
                 : c == 'g'           ? (o->as_given = true, 0)
                 : c == 'n'           ? (o->no_host = true, 0)
                 : c == 'o' || c == 0 ? value_option(name, optarg, o)
                                      : 0;
        if (rc)
            return rc;
    }
    o->iopts.step = o->p.step;
    if (optind < argc)
        o->model = argv[optind++];
    if (optind < argc) {
        snprintf(what, sizeof what, "unexpected argument '%s' (one model or trace only)",
                 argv[optind]);
        return bad_usage(what);
    }
    return check_args(o);
}

/* Whole file (or standard input for "-") into a new buffer; NULL with the reason in why. */
static char *read_all(const char *path, size_t *len, char *why, size_t whylen)
{
    FILE *f = strcmp(path, "-") ? util_file_open(path, "rb", why, whylen) : stdin;
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) {
            if (ferror(f)) {
                free(buf);
                buf = NULL;
            }
            break;
        }
        char *nb = realloc(buf, cap * 2);
        if (!nb)
            free(buf);
        buf = nb, cap *= 2;
    }
    if (!buf)
        snprintf(why, whylen, "%s", ferror(f) ? "read error" : "out of memory");
    if (f != stdin)
        fclose(f);
    *len = n;
    return buf;
}

/* The command line's link figures over m's, their sources in src; 0, or 1 after the error when
   the link they make breaks the model's rules (--link-both on a shared link). */
static int override_link(const options *o, plan_model *m, planopt_sources *src)
{
    char msg[CONF_ERR_LEN];
    planopt_link_apply(&o->p.link, &m->hw, src);
    if (plan_model_check(m, NULL, msg, sizeof msg) == PLAN_OK)
        return 0;
    fprintf(stderr, "shim-plan: %s: the link given: %s\n", o->model ? o->model : "--generate", msg);
    return 1;
}

/* Writes m to o->out (standard output without one); 0 or 1. */
static int write_model(const options *o, const plan_model *m)
{
    char *text;
    size_t len;
    plan_err e = plan_model_write(m, &text, &len);
    if (e) {
        fprintf(stderr, "shim-plan: %s\n", plan_strerror(e));
        return 1;
    }
    char why[128] = "";
    FILE *f = o->out ? util_file_open(o->out, "w", why, sizeof why) : stdout;
    bool ok = f && fwrite(text, 1, len, f) == len;
    if (f && f != stdout)
        ok &= fclose(f) == 0;
    free(text);
    if (!ok) {
        fprintf(stderr, "shim-plan: cannot write %s: %s\n", o->out ? o->out : "output",
                f ? strerror(errno) : why);
        return 1;
    }
    return 0;
}

static int generate(const options *o)
{
    plan_model m;
    char msg[CONF_ERR_LEN];
    plan_model_init(&m);
    if (plan_generate(&m, o->generate, msg, sizeof(msg))) {
        fprintf(stderr, "shim-plan: --generate: %s\n", msg);
        plan_model_free(&m);
        return 1;
    }
    planopt_sources src;
    planopt_sources_all(&src, "the generator's");
    int rc = override_link(o, &m, &src) ? 1 : write_model(o, &m);
    plan_model_free(&m);
    return rc;
}

/* Plans m, the model given as libshim holds it (or given itself), for o's budget (the held peak
   without one); a share is of m's peak, as shim-report plan's shares are of the peak of a model
   libshim recorded. */
static plan_err run_planner(const options *o, const plan_model *given, const plan_model *m,
                            shimplan_result *r)
{
    uint64_t floor_given;
    bool sparse = false;
    for (size_t x = 0; !o->no_host && x < m->nallocs; x++)
        sparse = sparse || plan_alloc_sparse(m, x);
    const plan_opts po = {.host = sparse};
    r->host = sparse;
    r->planned = m;
    plan_err e = plan_peaks(given, &r->native, &floor_given);
    if (!e)
        e = plan_peaks_opts(m, &po, &r->held, &r->floor);
    if (!e)
        e = planopt_plan(&o->p, m, &po, r->held, true, &r->run);
    return e;
}

/* Plans m for o's budget and prints the result; 0 or 1. */
static int plan_print(const options *o, const plan_model *m, const char *times,
                      const planopt_sources *src)
{
    if (!m->nallocs) {
        fprintf(stderr,
                "shim-plan: %s: error: no memory information: the model has no allocations, so "
                "no budget can be answered; record the profile with memory "
                "(torch.profiler.profile(profile_memory=True)) or an execution trace "
                "(ExecutionTraceObserver), and import that\n",
                o->model);
        return 1;
    }
    shimplan_result r = {.model = o->model,
                         .times = times,
                         .hw = &m->hw,
                         .src = src,
                         .kind = o->p.kind,
                         .rules = o->as_given ? NULL : &o->hold,
                         .nops = m->nops,
                         .nallocs = m->nallocs};
    plan_model held;
    plan_model_init(&held);
    plan_err e = o->as_given ? PLAN_OK : plan_model_hold(m, &o->hold, &held, &r.hold);
    if (!e)
        e = run_planner(o, m, o->as_given ? m : &held, &r);
    if (e == PLAN_ERR_LIMIT)
        fprintf(stderr, "shim-plan: %s: too large for the %s planner\n", o->model,
                plan_kind_name(o->p.kind));
    else if (e)
        fprintf(stderr, "shim-plan: %s: %s\n", o->model, plan_strerror(e));
    if (!e && o->json)
        shimplan_print_json(&r, o->entries);
    else if (!e)
        shimplan_print_text(&r, o->entries);
    planopt_run_free(&r.run);
    plan_model_free(&held);
    return e ? 1 : 0;
}

static int plan_file(const options *o)
{
    size_t len;
    char why[128], msg[PATH_MAX + CONF_ERR_LEN]; /* a path, its reason */
    char *buf = read_all(o->model, &len, why, sizeof why);
    if (!buf) {
        fprintf(stderr, "shim-plan: cannot read %s: %s\n", o->model, why);
        return 1;
    }
    plan_model m;
    plan_model_init(&m);
    plan_err e = plan_model_parse(buf, len, o->model, &m, msg, sizeof(msg));
    free(buf);
    planopt_sources src;
    planopt_sources_all(&src, "the model's hw line");
    src.both = "the model's link_both line";
    int rc = e || override_link(o, &m, &src) ? 1 : plan_print(o, &m, NULL, &src);
    if (e)
        fprintf(stderr, "%s\n", msg);
    plan_model_free(&m);
    return rc;
}

/* --import: the model of a trace, written, planned, or both. */
static int import_file(const options *o)
{
    plan_model m;
    char msg[PATH_MAX + CONF_ERR_LEN]; /* a path and its reason: never cut */
    import_opts io = o->iopts;
    char why[128];
    if (o->join_map && !(io.join_map = util_file_open(o->join_map, "w", why, sizeof why))) {
        fprintf(stderr, "shim-plan: %s: %s\n", o->join_map, why);
        return 1;
    }
    plan_model_init(&m);
    int rc = !strcmp(o->import, "et") ? import_et(o->model, o->kineto, &io, &m, msg, sizeof msg)
                                      : import_kineto(o->model, &io, &m, msg, sizeof msg);
    planopt_sources src;
    planopt_sources_all(&src, "assumed: a profile holds no link figures (the step model "
                              "builder's default; tools/import/IMPORT.md)");
    if (rc)
        fprintf(stderr, "%s\n", msg);
    else
        rc = override_link(o, &m, &src);
    if (io.join_map && (ferror(io.join_map) | fclose(io.join_map)) && !rc) {
        fprintf(stderr, "shim-plan: %s: write error\n", o->join_map);
        rc = 1;
    }
    if (!rc && (o->out || (!o->p.budget && !o->p.proposals)))
        rc = write_model(o, &m);
    const char *times =
        o->kineto || strcmp(o->import, "et")
            ? "measured: the Kineto trace's kernel durations"
            : "not in an execution trace: each operation is its operands' bytes "
              "at " IMPORT_STR(IMPORT_ET_HBM_GBPS) " GB/s (a lower bound), so slowdowns are "
                                                   "the worse case; "
                                                   "import with --kineto for measured times";
    if (!rc && (o->p.budget || o->p.proposals))
        rc = plan_print(o, &m, times, &src);
    plan_model_free(&m);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    signal(SIGXFSZ, SIG_IGN); /* past a file size limit: "cannot write", not a killed process */
    options o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc == -1) {
        usage(stdout);
        return 0;
    }
    if (rc)
        return rc;
    return o.generate ? generate(&o) : o.import ? import_file(&o) : plan_file(&o);
}
