/*
 * options.c: table-driven option parsing and help for the `topk` subcommands
 * (see options.h). One table per subcommand is the single place an option is
 * declared: parsing, validation of numbers and --help all read it.
 */
#include "options.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

static void vusage(const opt_command* cmd, const char* fmt, va_list ap) {
  fprintf(stderr, "topk %s: ", cmd->name);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n(see 'topk %s --help')\n", cmd->name);
}

static int usage(const opt_command* cmd, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int usage(const opt_command* cmd, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vusage(cmd, fmt, ap);
  va_end(ap);
  return EXIT_USAGE;
}

int opt_usage_error(const opt_values* v, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vusage(v->cmd, fmt, ap);
  va_end(ap);
  return EXIT_USAGE;
}

int opt_parse_int(const char* s, int64_t* out) {
  if (!s || !*s) return -1;
  char* end = NULL;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (*end == '\0' && errno == 0) { *out = x; return 0; }
  /* 2^20: a power of two, as sizes are often written. */
  if (*end == '^' && end != s) {
    char* e2 = NULL;
    long long p = strtoll(end + 1, &e2, 10);
    if (*e2 != '\0' || e2 == end + 1 || x != 2 || p < 0 || p > 62) return -1;
    *out = (int64_t)1 << p;
    return 0;
  }
  /* 1e7, 2.5e6: accepted when the value is an exact integer in range. */
  double d = strtod(s, &end);
  if (*end != '\0' || end == s || !isfinite(d) || d != floor(d) || fabs(d) >= 9.2e18) return -1;
  *out = (int64_t)d;
  return 0;
}

static int parse_num(const char* s, double* out) {
  if (!s || !*s) return -1;
  char* end = NULL;
  double d = strtod(s, &end);
  if (*end != '\0' || !isfinite(d)) return -1;
  *out = d;
  return 0;
}

static int count_defs(const opt_def* defs) {
  int n = 0;
  while (defs[n].name) ++n;
  return n;
}

/* Checks a value against its def's kind; typed is "-x" or "--name", as the user wrote it.
 * @return 0 or EXIT_USAGE (printed). */
static int check_value(const opt_command* cmd, const opt_def* d, const char* typed, const char* value) {
  int64_t i;
  double x;
  if (d->kind == OPT_INT && opt_parse_int(value, &i) != 0)
    return usage(cmd, "%s expects an integer, got '%s'", typed, value);
  if (d->kind == OPT_NUM && parse_num(value, &x) != 0)
    return usage(cmd, "%s expects a number, got '%s'", typed, value);
  return 0;
}

int opt_parse(const opt_command* cmd, int argc, char** argv, opt_values* v) {
  memset(v, 0, sizeof *v);
  v->cmd = cmd;
  const opt_def* defs = cmd->defs;
  int ndefs = count_defs(defs);
  if (ndefs > OPT_MAX) return usage(cmd, "internal error: more than %d options", OPT_MAX);
  for (int i = 1; i < ndefs; ++i)
    if (strcmp(defs[i - 1].name, defs[i].name) >= 0)
      return usage(cmd, "internal error: option table not sorted at '%s'", defs[i].name);

  int only_positional = 0;
  for (int a = 0; a < argc; ++a) {
    char* s = argv[a];
    if (only_positional || s[0] != '-' || s[1] == '\0') {
      if (v->npos >= OPT_MAX_POSITIONAL) return usage(cmd, "too many arguments (at '%s')", s);
      v->pos[v->npos++] = s;
      continue;
    }
    if (strcmp(s, "--") == 0) { only_positional = 1; continue; }
    if (s[1] == '-') {
      /* --name or --name=value */
      const char* name = s + 2;
      const char* eq = strchr(name, '=');
      size_t len = eq ? (size_t)(eq - name) : strlen(name);
      if (len == 4 && strncmp(name, "help", 4) == 0 && !eq) { v->help = 1; continue; }
      int found = -1;
      for (int i = 0; i < ndefs; ++i)
        if (strlen(defs[i].name) == len && strncmp(defs[i].name, name, len) == 0) { found = i; break; }
      if (found < 0) return usage(cmd, "unknown option '%.*s'", (int)(len + 2), s);
      const opt_def* d = &defs[found];
      if (d->kind == OPT_FLAG) {
        if (eq) return usage(cmd, "--%s takes no value", d->name);
        v->arg[found] = "";
        continue;
      }
      const char* value = eq ? eq + 1 : NULL;
      if (!value) {
        if (a + 1 >= argc) return usage(cmd, "--%s needs a value (%s)", d->name, d->arg ? d->arg : "VALUE");
        value = argv[++a];
      }
      char typed[80];
      snprintf(typed, sizeof typed, "--%s", d->name);
      int rc = check_value(cmd, d, typed, value);
      if (rc) return rc;
      v->arg[found] = value;
      continue;
    }
    /* -x, -xVALUE, -x VALUE, or a cluster of flags -abc */
    for (const char* c = s + 1; *c; ++c) {
      if (*c == 'h') { v->help = 1; continue; }
      int found = -1;
      for (int i = 0; i < ndefs; ++i)
        if (defs[i].short_name == *c) { found = i; break; }
      if (found < 0) return usage(cmd, "unknown option '-%c'", *c);
      const opt_def* d = &defs[found];
      if (d->kind == OPT_FLAG) { v->arg[found] = ""; continue; }
      const char* value = c[1] ? c + 1 : NULL;
      if (!value) {
        if (a + 1 >= argc) return usage(cmd, "-%c needs a value (%s)", *c, d->arg ? d->arg : "VALUE");
        value = argv[++a];
      }
      char typed[3] = {'-', *c, '\0'};
      int rc = check_value(cmd, d, typed, value);
      if (rc) return rc;
      v->arg[found] = value;
      break;
    }
  }
  return 0;
}

int opt_help(const opt_command* cmd, FILE* out) {
  fprintf(out, "Usage: topk %s %s\n", cmd->name, cmd->usage);
  if (cmd->summary) fprintf(out, "%s\n", cmd->summary);
  fprintf(out, "\nOptions:\n");
  for (const opt_def* d = cmd->defs; d->name; ++d) {
    char left[64];
    int len = snprintf(left, sizeof left, "%c%c%c --%s%s%s", d->short_name ? '-' : ' ',
                       d->short_name ? d->short_name : ' ', d->short_name ? ',' : ' ', d->name, d->arg ? " " : "",
                       d->arg ? d->arg : "");
    fprintf(out, "  %s%*s  %s\n", left, len < 24 ? 24 - len : 0, "", d->help);
  }
  fprintf(out, "  -h, --help%*s  show this help\n", 24 - 10, "");
  if (cmd->epilog) fprintf(out, "\n%s", cmd->epilog);
  return 0;
}

static int find(const opt_values* v, const char* name) {
  for (int i = 0; v->cmd->defs[i].name; ++i)
    if (strcmp(v->cmd->defs[i].name, name) == 0) return i;
  /* A name missing from the table is a typo in the tool's code: fail loudly. */
  fprintf(stderr, "topk %s: internal error: no option '%s' in the table\n", v->cmd->name, name);
  abort();
}

int opt_given(const opt_values* v, const char* name) { return v->arg[find(v, name)] != NULL; }

const char* opt_str(const opt_values* v, const char* name, const char* def) {
  const char* s = v->arg[find(v, name)];
  return s ? s : def;
}

int64_t opt_i64(const opt_values* v, const char* name, int64_t def) {
  const char* s = v->arg[find(v, name)];
  int64_t x;
  return s && opt_parse_int(s, &x) == 0 ? x : def;
}

double opt_num(const opt_values* v, const char* name, double def) {
  const char* s = v->arg[find(v, name)];
  double x;
  return s && parse_num(s, &x) == 0 ? x : def;
}
