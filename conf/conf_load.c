/* conf_load.c — the layers: defaults < the file named by SHIM_CONFIG < SHIM_* environment. */
#include "conf_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILE_BYTES ((size_t)1 << 20)
#define MAX_NAME       128

/* Option names are lower-case ASCII words; any other key cannot be one. */
static bool plain_key(const conf_key *k)
{
    if (k->len == 0 || k->len >= MAX_NAME / 2)
        return false;
    for (size_t i = 0; i < k->len; i++) {
        char c = k->name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return true;
}

static int unknown_key(const char *file, const conf_key *k, const char *name, const conf_value *v,
                       conf_diags *diags)
{
    char hint[MAX_NAME + 32] = "", near[MAX_NAME];
    if (conf_option_suggest(name, strlen(name), false, near, sizeof near) > 0)
        snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
    const char *what = conf_value_type(v) == CONF_TABLE ? "table" : "option";
    conf_diag_add(diags, CONF_ERROR, file, k->line, k->col, "unknown %s '%s'%s", what, name, hint);
    return -1;
}

/* The dotted name of key k under prefix; a key that cannot be an option name is shown quoted,
   with unprintable bytes as '?'. */
static void key_name(const char *prefix, const conf_key *k, char *name)
{
    char shown[MAX_NAME / 2];
    const char *quote = plain_key(k) ? "" : "\"";
    conf_excerpt(k->name, k->len, shown, sizeof shown);
    snprintf(name, MAX_NAME, "%s%s%s%s%s", prefix, *prefix ? "." : "", quote, shown, quote);
}

static int not_a_table(const char *file, const conf_key *k, const char *name, const conf_value *v,
                       conf_diags *diags)
{
    const char *type = conf_type_name(conf_value_type(v));
    conf_diag_add(diags, CONF_ERROR, file, k->line, k->col, "'%s' is a table of options, not %s %s",
                  name, strchr("aeiou", type[0]) ? "an" : "a", type);
    return -1;
}

/* Applies the entries of table t whose dotted names start with prefix. */
static int walk(conf_config *cfg, const conf_value *t, const char *prefix, const char *file,
                conf_diags *diags)
{
    int rc = 0;
    for (size_t i = 0; i < conf_table_size(t); i++) {
        conf_key k;
        const conf_value *v = conf_table_entry(t, i, &k);
        char name[MAX_NAME];
        key_name(prefix, &k, name);
        bool plain = plain_key(&k);
        int id = plain ? conf_option_find(name, strlen(name)) : -1;
        conf_source src = {CONF_FROM_FILE, file, conf_value_line(v), conf_value_col(v)};
        if (id >= 0)
            rc |= conf_setting_from_value(cfg, (conf_option_id)id, v, &src, diags);
        else if (plain && conf_option_is_group(name, strlen(name)))
            rc |= conf_value_type(v) == CONF_TABLE ? walk(cfg, v, name, file, diags)
                                                   : not_a_table(file, &k, name, v, diags);
        else
            rc = unknown_key(file, &k, name, v, diags);
    }
    return rc;
}

/* Contract in conf.h: 0, or -1 after appending at least one error; valid keys apply anyway. */
int conf_config_apply_doc(conf_config *cfg, const conf_doc *doc, const char *file,
                          conf_diags *diags)
{
    char *copy = strdup(file);
    if (copy == NULL) {
        conf_diag_add(diags, CONF_ERROR, file, 0, 0, "out of memory");
        return -1;
    }
    free(cfg->file);
    cfg->file = copy;
    return walk(cfg, conf_doc_root(doc), "", cfg->file, diags) < 0 ? -1 : 0;
}

/* Contract in conf.h: 0, or -1 after appending at least one error. */
int conf_config_apply_text(conf_config *cfg, const char *text, size_t len, const char *file,
                           conf_diags *diags)
{
    conf_doc *doc = conf_parse(text, len, file, diags);
    if (doc == NULL)
        return -1;
    int rc = conf_config_apply_doc(cfg, doc, file, diags);
    conf_doc_free(doc);
    return rc;
}

static int file_error(const char *path, const char *what, int err, conf_diags *diags)
{
    char buf[128];
    conf_diag_add(diags, CONF_ERROR, path, 0, 0, "%s: %s", what,
                  err ? strerror_r(err, buf, sizeof buf) : "larger than 1 MiB");
    return -1;
}

/* What a file that is not a regular one is, for messages. */
static const char *file_kind(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISSOCK(m) ? "a socket"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
                         : "not a regular file";
}

/* Opens path for reading without waiting on it: O_NONBLOCK, so that a FIFO with no writer
   returns at once, then fstat on the descriptor itself (no window between a check and the
   open). Anything but a regular file is refused. The descriptor, or -1 after an error. */
static int open_regular(const char *path, conf_diags *diags)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        file_error(path, "cannot open the configuration file", errno, diags);
    } else if (!S_ISREG(st.st_mode)) {
        conf_diag_add(diags, CONF_ERROR, path, 0, 0,
                      "cannot read the configuration file: %s, not a regular file",
                      file_kind(st.st_mode));
    } else {
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        return fd;
    }
    if (fd >= 0)
        close(fd);
    return -1;
}

/* Reads a whole regular file of at most MAX_FILE_BYTES; NULL after an error. */
static char *read_file(const char *path, size_t *len, conf_diags *diags)
{
    int fd = open_regular(path, diags);
    char *buf = NULL;
    if (fd < 0)
        return NULL;
    if ((buf = malloc(MAX_FILE_BYTES + 1)) == NULL) {
        file_error(path, "cannot read the configuration file", ENOMEM, diags);
    } else {
        size_t n = 0;
        ssize_t r = 1;
        while (n <= MAX_FILE_BYTES && (r = read(fd, buf + n, MAX_FILE_BYTES + 1 - n)) > 0)
            n += (size_t)r;
        if (r < 0 || n > MAX_FILE_BYTES) {
            file_error(path, "cannot read the configuration file", r < 0 ? errno : 0, diags);
            free(buf);
            buf = NULL;
        }
        *len = n;
    }
    close(fd);
    return buf;
}

/* Contract in conf.h: 0, or -1 after appending at least one error. */
int conf_config_apply_file(conf_config *cfg, const char *path, conf_diags *diags)
{
    size_t len;
    char *text = read_file(path, &len, diags);
    if (text == NULL)
        return -1;
    int rc = conf_config_apply_text(cfg, text, len, path, diags);
    free(text);
    return rc;
}

/* One SHIM_NAME=value entry of the environment. */
static int apply_variable(conf_config *cfg, const char *entry, conf_diags *diags)
{
    const char *eq = strchr(entry, '=');
    size_t len = eq != NULL ? (size_t)(eq - entry) : 0;
    char var[MAX_NAME], near[MAX_NAME];
    if (eq == NULL || len >= sizeof var || (len == 11 && memcmp(entry, "SHIM_CONFIG", 11) == 0))
        return 0;
    memcpy(var, entry, len);
    var[len] = '\0';
    int id = conf_option_find_env(var, len);
    if (id < 0) {
        bool hint = conf_option_suggest(var, len, true, near, sizeof near) > 0;
        conf_diag_add(diags, CONF_WARNING, var, 0, 0, "unknown variable, ignored%s%s%s",
                      hint ? " (did you mean " : "", hint ? near : "", hint ? "?)" : "");
        return 0;
    }
    conf_source src = {.origin = CONF_FROM_ENV, .name = var};
    return conf_setting_from_text(cfg, (conf_option_id)id, eq + 1, &src, diags);
}

/* Contract in conf.h: 0, or -1 after appending at least one error (warnings do not count). */
int conf_config_apply_env(conf_config *cfg, char *const *envp, conf_diags *diags)
{
    int rc = 0;
    for (size_t i = 0; envp != NULL && envp[i] != NULL; i++)
        if (strncmp(envp[i], "SHIM_", 5) == 0 && apply_variable(cfg, envp[i], diags) < 0)
            rc = -1;
    return rc;
}

static const char *env_get(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; envp != NULL && envp[i] != NULL; i++)
        if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
            return envp[i] + n + 1;
    return NULL;
}

/* Contract in conf.h: 0, or -1 after appending at least one error; cfg always initialised. */
int conf_config_load(conf_config *cfg, char *const *envp, const char *file_override,
                     conf_diags *diags)
{
    if (conf_config_init(cfg, diags) < 0)
        return -1;
    const char *file = file_override != NULL ? file_override : env_get(envp, "SHIM_CONFIG");
    int rc = 0;
    if (file != NULL && *file != '\0')
        rc |= conf_config_apply_file(cfg, file, diags);
    rc |= conf_config_apply_env(cfg, envp, diags);
    return rc < 0 ? -1 : 0;
}
