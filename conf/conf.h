/* conf.h — public interface of conf/: TOML 1.0 parser, option table, layered configuration. */
#ifndef CONF_H
#define CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Error contract, the same everywhere in conf/: functions returning int return 0 on
 * success and -1 on failure; a failure appends at least one diagnostic to the caller's
 * conf_diags when the function takes one. Nothing in conf/ prints, exits, aborts or
 * keeps global mutable state; every function is safe to call from a preloaded library.
 */

/* ---- Diagnostics ------------------------------------------------------------------ */

typedef enum { CONF_ERROR, CONF_WARNING } conf_severity;

typedef struct conf_diag {
    conf_severity severity;
    int line, col;    /* 1-based position; 0 when the source has none (environment, I/O) */
    char *text;       /* the whole line, "FILE:LINE:COL: error: MESSAGE", no newline */
    const char *bare; /* the same without the severity, "FILE:LINE:COL: MESSAGE", for a log line
                         that says it already ("libshim[PID]: error: ..."); within text's
                         allocation (conf_diags_free frees both) */
} conf_diag;

/* Zero-initialise (conf_diags d = {0}), pass to any number of calls, then conf_diags_free. */
typedef struct conf_diags {
    conf_diag *items;
    size_t count;
    size_t errors;  /* errors reported, including dropped ones */
    size_t dropped; /* diagnostics not stored (more than CONF_MAX_DIAGS, or out of memory) */
} conf_diags;

#define CONF_MAX_DIAGS 100

/* Releases the stored diagnostics and zeroes *d. Never fails. */
void conf_diags_free(conf_diags *d);

/* ---- TOML documents ----------------------------------------------------------------- */

typedef enum {
    CONF_TABLE,
    CONF_ARRAY,
    CONF_STRING,
    CONF_INTEGER,
    CONF_FLOAT,
    CONF_BOOL,
    CONF_DATETIME,       /* offset date-time: 1979-05-27T07:32:00Z */
    CONF_DATETIME_LOCAL, /* 1979-05-27T07:32:00 */
    CONF_DATE_LOCAL,     /* 1979-05-27 */
    CONF_TIME_LOCAL      /* 07:32:00 */
} conf_type;

typedef struct conf_datetime {
    int year, month, day;     /* date kinds only */
    int hour, minute, second; /* time kinds only */
    int nanosecond;           /* fraction of the second, truncated to nanoseconds */
    int frac_digits;          /* fraction digits written, at most 9 kept */
    int offset_minutes;       /* CONF_DATETIME only: offset east of UTC */
} conf_datetime;

/* A key as written in the document, decoded (may contain NUL bytes; also NUL-terminated). */
typedef struct conf_key {
    const char *name;
    size_t len;
    int line, col;
} conf_key;

typedef struct conf_value conf_value;
typedef struct conf_doc conf_doc;

/* Nesting limit (tables, arrays, inline tables) and default memory limit of one parse. */
#define CONF_MAX_DEPTH     64
#define CONF_MAX_DOC_BYTES ((size_t)64 << 20)

/* Parses len bytes of TOML 1.0 text; name is used in diagnostics ("FILE:LINE:COL").
   Returns the document, or NULL after appending exactly one error to diags: parsing stops at
   the first error. Memory is bounded by CONF_MAX_DOC_BYTES, recursion by CONF_MAX_DEPTH. */
conf_doc *conf_parse(const char *text, size_t len, const char *name, conf_diags *diags);

/* conf_parse with an explicit bound on the memory the document may use. Same contract. */
conf_doc *conf_parse_limited(const char *text, size_t len, const char *name, size_t max_bytes,
                             conf_diags *diags);

/* Releases a document and every value in it; NULL is a no-op. Never fails. */
void conf_doc_free(conf_doc *doc);

/* The root table of a document. Never fails for a document conf_parse returned. */
const conf_value *conf_doc_root(const conf_doc *doc);

/* Accessors. Each requires a value of the matching type (checked with conf_value_type); on
   another type it returns 0, false, NULL or an empty result instead of failing. */
conf_type conf_value_type(const conf_value *v);
int conf_value_line(const conf_value *v);
int conf_value_col(const conf_value *v);
size_t conf_table_size(const conf_value *t);
const conf_value *conf_table_entry(const conf_value *t, size_t i, conf_key *key);
const conf_value *conf_table_get(const conf_value *t, const char *name, size_t len);
size_t conf_array_size(const conf_value *a);
const conf_value *conf_array_at(const conf_value *a, size_t i);
const char *conf_string(const conf_value *v, size_t *len);
int64_t conf_integer(const conf_value *v);
double conf_float(const conf_value *v);
bool conf_bool(const conf_value *v);
const conf_datetime *conf_datetime_of(const conf_value *v);

/* A type's name for messages ("string", "integer", "offset date-time", ...). Never fails. */
const char *conf_type_name(conf_type t);

/* Writes a date-time kind in RFC 3339 form (T separator, Z for a zero offset) into buf,
   NUL-terminated and truncated to n bytes. Returns the untruncated length; 0 for other types. */
size_t conf_datetime_format(const conf_value *v, char *buf, size_t n);

/* ---- Units -------------------------------------------------------------------------- */

typedef enum { CONF_SIZE_AUTO, CONF_SIZE_BYTES, CONF_SIZE_PERCENT } conf_size_kind;

/* A size as configured. A percentage stays unresolved until the device size is known. */
typedef struct conf_size {
    conf_size_kind kind;
    uint64_t bytes; /* CONF_SIZE_BYTES */
    uint32_t ppm;   /* CONF_SIZE_PERCENT: millionths of the device, 60% = 600000 */
} conf_size;

#define CONF_KIB ((int64_t)1 << 10)
#define CONF_MIB ((int64_t)1 << 20)
#define CONF_GIB ((int64_t)1 << 30)
#define CONF_TIB ((int64_t)1 << 40)
#define CONF_PIB ((int64_t)1 << 50)
#define CONF_US  ((int64_t)1000)
#define CONF_MS  ((int64_t)1000000)
#define CONF_SEC ((int64_t)1000000000)

/* Parses "auto", "<n>[ ]%" (up to 4 decimals; an option's range check wants 0 < n <= 100) or a
   number of bytes in the one size grammar of conf_bytes.h (conf_bytes_parse: plain digits, or
   "<n>[ ]<unit>" with K, Ki, KiB ... P, Pi, PiB powers of 1024 and KB ... PB powers of 1000,
   case-insensitive; up to 9 decimals, rounded down to a byte). Returns 0, or -1 with a reason
   written into err (NUL-terminated, errlen bytes at most). */
int conf_size_parse(const char *text, size_t len, conf_size *out, char *err, size_t errlen);

/* A --budget on the tools' command lines (shim-plan, shim-report plan): conf_size_parse's
   bytes, or a share of the model's native peak in (0%, 100%]; not auto. Returns 0, or -1 with
   a reason in err, as conf_size_parse. */
int conf_budget_parse(const char *text, conf_size *out, char *err, size_t errlen);

/* Room for any message conf/ writes into a caller's buffer (err of the parsers above and
   below, conf_option_check_text): the longest, an excerpt of the text (64 bytes) with the list of
   units or choices, fits with room to spare, so no message is cut. */
#define CONF_ERR_LEN 1024

/* The hint for a size written as a bare number (digits only; text is what was written, or a
   TOML integer formatted) where a budget wants more than that many bytes: "a number without a
   unit is bytes: did you mean 75% or 75GiB?" (the percentage only where percent is true and the
   number is at most 100; "512MiB or 512GiB" above 100). Writes it into buf, NUL-terminated and
   truncated to n bytes, and returns its full length; writes "" and returns 0 when text is not
   a bare number below 100000 (a longer one is meant as bytes). Never fails. The one wording
   of that hint: every budget check uses it. */
size_t conf_size_unit_hint(const char *text, size_t len, bool percent, char *buf, size_t n);

/* Parses "<n>[ ]<unit>" with unit ns, us, ms, s or min (n may have decimals) into
   nanoseconds, at most INT64_MAX. Same contract as conf_size_parse. */
int conf_duration_parse(const char *text, size_t len, int64_t *ns, char *err, size_t errlen);

/* Canonical text of a size ("auto", "60%", "40GiB", or the byte count when no binary unit
   divides it) / of a duration (largest unit that divides it). NUL-terminated, truncated to n;
   returns the untruncated length. Never fails. */
size_t conf_size_format(const conf_size *s, char *buf, size_t n);
size_t conf_duration_format(int64_t ns, char *buf, size_t n);

/* Bytes a size stands for: auto_bytes for auto, the rounded-down share of device_bytes for a
   percentage, the byte count otherwise. Never fails. */
uint64_t conf_size_resolve(const conf_size *s, uint64_t device_bytes, uint64_t auto_bytes);

/* Most entries of a size list: one per device, from device 0. */
#define CONF_MAX_SIZES 16

/* A list of sizes as configured ("20GiB,,75%"): entry i is at[i] when bit i of given is set;
   an empty entry, or one past the list, is not given (the caller's fallback applies). */
typedef struct conf_sizes {
    uint32_t given;
    conf_size at[CONF_MAX_SIZES];
} conf_sizes;

/* Two speeds as configured ("11,25" in GB/s), in bytes per second; both 0 when not set. */
typedef struct conf_speeds {
    uint64_t bytes_per_s[2];
} conf_speeds;

/* ---- The option table ----------------------------------------------------------------- */

typedef enum {
    CONF_OPT_BOOL,
    CONF_OPT_INT,
    CONF_OPT_SIZE,
    CONF_OPT_DURATION, /* with a choice, that word too ("measured"), read as CONF_DURATION_WORD */
    CONF_OPT_STRING,
    CONF_OPT_ENUM,  /* one of the choices */
    CONF_OPT_FLAGS, /* any subset of the choices: a TOML array of strings, or "a,b" in the env */
    CONF_OPT_SIZES, /* up to CONF_MAX_SIZES comma-separated sizes, entries may be empty */
    CONF_OPT_SPEEDS /* two comma-separated speeds in GB/s (the unit names them), or empty */
} conf_opt_type;

/* Forms a size option (or each entry of a size list) accepts besides bytes. */
#define CONF_FORM_AUTO    1u
#define CONF_FORM_PERCENT 2u
/* Any type: a bad value is a warning, not an error, and the option takes its built-in default
   (for advice such as the planner's link model, where the job should run on as configured). */
#define CONF_LENIENT 4u

/* What conf_get_duration_ns gives for the word of a DURATION option that has one. */
#define CONF_DURATION_WORD ((int64_t)-1)

/* Longest string option value, in bytes. */
#define CONF_MAX_STRING 4095

/*
 * THE option table: every option, once. It generates the option ids below, the loader's
 * table (conf_options.c), the environment names, `shim-report config` and the README's
 * option reference. Columns:
 *   X(ID, "dotted.name", TYPE, "default as a user writes it", MIN, MAX, FORMS, "choices",
 *     "unit", "one-line help")
 * MIN and MAX bound INT (plain), SIZE and each entry of SIZES (bytes), DURATION (nanoseconds)
 * and each of SPEEDS (bytes per second) values; FORMS are CONF_FORM_* for sizes and size lists,
 * and CONF_LENIENT for any type; choices ("a|b|c") are the values of ENUM and FLAGS options, in
 * the order of their constants below, and the one word a DURATION option may take instead. A
 * dotted name lives in a TOML table: trace.path is `path` under [trace]; its environment
 * variable is SHIM_TRACE_PATH.
 */
#define CONF_OPTIONS(X)                                                                            \
    X(MODE, "mode", ENUM, "auto", 0, 0, 0, "off|record|auto", "",                                  \
      "off: pass everything through; record: observe and write the trace, move nothing; "          \
      "auto: record, plan and offload to fit the budget")                                          \
    X(BUDGET, "budget", SIZE, "auto", CONF_MIB, CONF_PIB, CONF_FORM_AUTO | CONF_FORM_PERCENT, "",  \
      "bytes",                                                                                     \
      "Device memory the program may hold, managed plus visible unmanaged allocations; auto: "     \
      "what the device has free at start minus a reserve (1/16 of the device, 128 MiB to 2 GiB)")  \
    X(BUDGETS, "budgets", SIZES, "", CONF_MIB, CONF_PIB,                                           \
      CONF_FORM_AUTO | CONF_FORM_PERCENT | CONF_LENIENT, "", "bytes",                              \
      "Budgets per device: comma-separated sizes or shares (as budget), one per device from "      \
      "device 0, such as \"20GiB,75%\"; an empty entry, or a device past the list, takes budget")  \
    X(HOST_BUDGET, "host_budget", SIZE, "auto", 0, CONF_PIB, CONF_FORM_AUTO, "", "bytes",          \
      "Pinned host memory that may hold evicted data; auto: half of the host's physical memory")   \
    X(MIN_MANAGED_BYTES, "min_managed_bytes", SIZE, "64KiB", 1, CONF_TIB, 0, "", "bytes",          \
      "Allocations smaller than this are left to the driver and never moved; managed ones up to "  \
      "half a chunk share chunks (slabs) and move together")                                       \
    X(HOST_RESIDENT, "host_resident", SIZES, "", 1, CONF_PIB, 0, "", "bytes",                      \
      "Allocations of exactly these sizes (comma-separated, up to 16; shim-plan prints them "      \
      "where it keeps a sparsely read table on the host) are made in host memory and stay "        \
      "there: kernels read them through the link, nothing moves them")                             \
    X(UNMAPPED_EVICTION, "unmapped_eviction", BOOL, "false", 0, 0, 0, "", "",                      \
      "Evict even where the device cannot map host memory (no host VMM): an evicted range is "     \
      "then unmapped, and an access libshim does not foresee faults")                              \
    X(PLANNER, "planner", ENUM, "scheduled", 0, 0, 0, "reactive|scheduled", "",                    \
      "How auto mode decides moves. reactive: evict when room is needed, restore on use; "         \
      "scheduled: plan the detected training step in the process (evict after last use, "          \
      "prefetch ahead) and apply the plan from the next step, the reactive policy as safety net")  \
    X(LINK_DUPLEX, "link_duplex", ENUM, "full", 0, 0, 0, "full|shared", "",                        \
      "What the planner assumes of the host link when copies run both ways at once. full: each "   \
      "direction at its own measured speed; shared: one direction at a time (half duplex)")        \
    X(LINK_BOTH_GBPS, "link_both_gbps", SPEEDS, "", 1, 1000000 * (int64_t)1000000000,              \
      CONF_LENIENT, "", "H2D,D2H",                                                                 \
      "With link_duplex = full, the speed in GB/s of each direction while the other is copying "   \
      "too (a PCIe Gen4 A100 measured 11,25: nvbandwidth issue #53); each is capped at that "      \
      "direction's measured speed; empty: both directions at their own speed at once")             \
    X(LINK_REMAP, "link_remap", DURATION, "measured", 0, 1000000000 * CONF_SEC, CONF_LENIENT,      \
      "measured", "time",                                                                          \
      "Host time the planner charges each move for remapping its range (unmap, map, set access): " \
      "measured: the median of libshim's own first 64 remaps (an H100 took about 1.5 ms per 64 "   \
      "MiB), 10us until one was timed; or a duration such as \"10us\"")                            \
    X(PYTORCH_ASYNC_BACKEND, "pytorch.async_backend", BOOL, "true", 0, 0, 0, "", "",               \
      "Set PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync when the job has not set it, "          \
      "for per-tensor lifetimes")                                                                  \
    X(TRACE_PATH, "trace.path", STRING, "shim-%p.trace", 0, 0, 0, "", "path",                      \
      "Trace file, created exclusively; %p: process id, %r: rank ($RANK, else 0); empty: no "      \
      "trace")                                                                                     \
    X(TRACE_RECORD, "trace.record", FLAGS, "all", 0, 0, 0,                                         \
      "allocs|launches|kernels|copies|syncs|moves", "",                                            \
      "Record kinds written to the trace (\"all\" or a list); iteration marks, plans and "         \
      "names are always written")                                                                  \
    X(TRACE_FLUSH_INTERVAL, "trace.flush_interval", DURATION, "100ms", CONF_MS, 60 * CONF_SEC, 0,  \
      "", "time", "How often the background writer moves per-thread buffers to the trace file")    \
    X(TRACE_MAX_BYTES, "trace.max_bytes", SIZE, "1GiB", 0, CONF_PIB, 0, "", "bytes",               \
      "Most bytes the trace file may take (0: no limit); near it, each later step is written as "  \
      "one summary record (its counts, peak, moves and stalls) instead of in detail")              \
    X(PROFILE_ITERATIONS, "profile.iterations", INT, "3", 1, 1000, 0, "", "iterations",            \
      "Iterations whose kernels are timed with events once the training step is detected")         \
    X(LOG_LEVEL, "log.level", ENUM, "info", 0, 0, 0, "off|error|warn|info|debug", "",              \
      "Least severe message written to the log; info, the default, adds a few lines a run: the "   \
      "step detected, each plan applied with its predicted slowdown, a summary at exit")           \
    X(LOG_FILE, "log.file", STRING, "", 0, 0, 0, "", "path",                                       \
      "Log file, appended to (never through a symbolic link, never another user's file); %p: "     \
      "process id, %r: rank ($RANK, else 0); empty or unusable: standard error")

typedef enum {
#define CONF_X_ID(id, ...) CONF_##id,
    CONF_OPTIONS(CONF_X_ID)
#undef CONF_X_ID
        CONF_OPTION_COUNT
} conf_option_id;

/* Values of ENUM options and bits of FLAGS options, in the order of their choices. */
enum { CONF_MODE_OFF, CONF_MODE_RECORD, CONF_MODE_AUTO };
enum { CONF_LINK_FULL, CONF_LINK_SHARED };
enum { CONF_LEVEL_OFF, CONF_LEVEL_ERROR, CONF_LEVEL_WARN, CONF_LEVEL_INFO, CONF_LEVEL_DEBUG };
enum {
    CONF_RECORD_ALLOCS = 1u << 0,   /* allocations and frees */
    CONF_RECORD_LAUNCHES = 1u << 1, /* launches with the allocations they touch */
    CONF_RECORD_KERNELS = 1u << 2,  /* kernel durations in profiled iterations */
    CONF_RECORD_COPIES = 1u << 3,   /* copies and memsets */
    CONF_RECORD_SYNCS = 1u << 4,    /* synchronisations */
    CONF_RECORD_MOVES = 1u << 5     /* evictions and restores */
};

typedef struct conf_option {
    const char *name;
    conf_opt_type type;
    const char *def;
    int64_t min, max;
    unsigned forms;
    const char *choices;
    const char *unit;
    const char *help;
} conf_option;

/* The table row of an option id; NULL for an id out of range. */
const conf_option *conf_option_get(conf_option_id id);

/* Checks text as option id's value would be checked from its environment variable: parsed,
   then held to the option's bounds. Returns 0, or -1 with the reason (as a diagnostic would
   give it, without the option's name) in err, NUL-terminated and cut to errlen bytes
   (CONF_ERR_LEN holds any). Stores nothing. */
int conf_option_check_text(conf_option_id id, const char *text, char *err, size_t errlen);

/* The id of the option with this dotted name / environment variable name; -1 if none. */
int conf_option_find(const char *name, size_t len);
int conf_option_find_env(const char *var, size_t len);

/* Writes SHIM_ plus the dotted name upper-cased with dots as underscores; same return
   convention as conf_size_format. */
size_t conf_option_env_name(conf_option_id id, char *buf, size_t n);

/* Name of choice i of an ENUM or FLAGS option, copied into buf (same return convention);
   0 and an empty string when there is no such choice. */
size_t conf_option_choice(conf_option_id id, int i, char *buf, size_t n);

/* Writes the known name closest to an unknown one (edit distance at most 2): an option or a
   table name, or with env an environment variable name. Same return convention as
   conf_size_format; 0 and an empty string when nothing is close. */
size_t conf_option_suggest(const char *name, size_t len, bool env, char *buf, size_t n);

/* True when name is a table of options ("trace" for trace.path). */
bool conf_option_is_group(const char *name, size_t len);

/* ---- Layered configuration ----------------------------------------------------------- */

typedef enum { CONF_FROM_DEFAULT, CONF_FROM_FILE, CONF_FROM_ENV } conf_origin;

typedef struct conf_setting {
    union {
        bool b;             /* BOOL */
        int64_t i;          /* INT */
        conf_size size;     /* SIZE */
        int64_t ns;         /* DURATION; CONF_DURATION_WORD for its word */
        char *s;            /* STRING, owned by the configuration, never NULL after init */
        int choice;         /* ENUM: index of the choice */
        uint32_t flags;     /* FLAGS: bit i set for choice i */
        conf_sizes sizes;   /* SIZES */
        conf_speeds speeds; /* SPEEDS */
    } v;
    conf_origin origin;
    int line, col; /* CONF_FROM_FILE: position of the value */
} conf_setting;

typedef struct conf_config {
    conf_setting set[CONF_OPTION_COUNT];
    char *file; /* path of the file layer applied, NULL if none */
} conf_config;

/* Fills cfg with the built-in defaults. Returns -1 (with an error in diags) only when out of
   memory; cfg must then still be released with conf_config_free. */
int conf_config_init(conf_config *cfg, conf_diags *diags);

/* Releases what cfg owns; safe on a zeroed or failed configuration. Never fails. */
void conf_config_free(conf_config *cfg);

/* Applies a parsed document (file layer): each known key overrides its option and remembers
   file:line. Unknown keys, wrong types and values out of range are errors with the value's or
   key's position; valid keys are applied anyway. A bad value of a CONF_LENIENT option is a
   warning instead, and the option takes its built-in default. Returns -1 if any error was
   reported. */
int conf_config_apply_doc(conf_config *cfg, const conf_doc *doc, const char *file,
                          conf_diags *diags);

/* Parses TOML text named file and applies it; same contract as conf_config_apply_doc. */
int conf_config_apply_text(conf_config *cfg, const char *text, size_t len, const char *file,
                           conf_diags *diags);

/* Reads the file at path (at most 1 MiB) and applies it; an unreadable file is an error. */
int conf_config_apply_file(conf_config *cfg, const char *path, conf_diags *diags);

/* Applies every SHIM_<OPTION>=value in envp (NULL-terminated; NULL means none). A malformed
   value is an error naming the variable (a warning for a CONF_LENIENT option, which then takes
   its built-in default); an unknown SHIM_ variable is a warning; SHIM_CONFIG is not an option
   and is skipped. Returns -1 if any error was reported. */
int conf_config_apply_env(conf_config *cfg, char *const *envp, conf_diags *diags);

/* All layers: defaults, then the file (file_override if not NULL, else SHIM_CONFIG from envp
   when set and not empty), then the environment. cfg is always initialised and must be
   released with conf_config_free. Returns -1 if any error was reported. */
int conf_config_load(conf_config *cfg, char *const *envp, const char *file_override,
                     conf_diags *diags);

/* Typed reads. id must name an option of that type; otherwise the result is 0/false/NULL (an
   empty list, no speeds). A DURATION option's word reads as CONF_DURATION_WORD. */
bool conf_get_bool(const conf_config *cfg, conf_option_id id);
int64_t conf_get_int(const conf_config *cfg, conf_option_id id);
conf_size conf_get_size(const conf_config *cfg, conf_option_id id);
int64_t conf_get_duration_ns(const conf_config *cfg, conf_option_id id);
const char *conf_get_string(const conf_config *cfg, conf_option_id id);
int conf_get_choice(const conf_config *cfg, conf_option_id id);
uint32_t conf_get_flags(const conf_config *cfg, conf_option_id id);
conf_sizes conf_get_sizes(const conf_config *cfg, conf_option_id id);
conf_speeds conf_get_speeds(const conf_config *cfg, conf_option_id id);

/* The value of an option as TOML text ("40GiB" sizes are quoted strings) / where it came
   from ("default", "FILE:LINE", or the variable name). Same return convention as
   conf_size_format. */
size_t conf_setting_format(const conf_config *cfg, conf_option_id id, char *buf, size_t n);
size_t conf_setting_source(const conf_config *cfg, conf_option_id id, char *buf, size_t n);

/* ---- Printing, through a line callback (conf/ never writes to a stream itself) ---------- */

typedef void (*conf_line_fn)(void *ctx, const char *line);

/* One line per option, "name = value  # source", valid TOML that loads back to the same
   values, after a comment line naming the file layer. Never fails. */
void conf_config_describe(const conf_config *cfg, conf_line_fn fn, void *ctx);

/* The README's option reference (Markdown) generated from the table. Never fails. */
void conf_reference_markdown(conf_line_fn fn, void *ctx);

#endif
