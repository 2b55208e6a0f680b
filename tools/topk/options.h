/*
 * options.h: command-line parsing for the `topk` subcommands, driven by one
 * table per subcommand (curl's tool_getparam, at a small scale). The same table
 * produces the parser and the --help text, so they cannot disagree.
 *
 * A subcommand declares its options once, sorted by long name:
 *
 *   static const opt_def select_opts[] = {
 *     {"algo",     0,   OPT_STRING, "NAME", "algorithm: auto, sort, air_radix, ..."},
 *     {"k",        'k', OPT_INT,    "K",    "results per row (default 10)"},
 *     {"smallest", 's', OPT_FLAG,   NULL,   "the k smallest instead of the k largest"},
 *     {NULL}
 *   };
 *   static const opt_command select_cmd = {"select", "[options] [FILE]", "Selects ...", select_opts, NULL};
 *
 * and parses its arguments (those after its name, as commands.h passes them):
 *
 *   opt_values v;
 *   int rc = opt_parse(&select_cmd, argc, argv, &v);
 *   if (rc != 0) return rc;                        // EXIT_USAGE; the message is printed
 *   if (v.help) return opt_help(&select_cmd, stdout);
 *   int64_t k = opt_i64(&v, "k", 10);
 *   if (opt_given(&v, "smallest")) ...
 *
 * Syntax accepted: --name VALUE, --name=VALUE, -x VALUE, -xVALUE, clusters of
 * short flags (-sS), "--" to end options, "-" as a positional (standard input).
 * -h and --help set v.help. A repeated option keeps its last value. Numbers
 * (OPT_INT) are checked when parsed: decimal, or 1e7 / 2^20 forms that are
 * exact integers; OPT_NUM takes any finite decimal.
 */
#ifndef TOPK_TOOL_OPTIONS_H
#define TOPK_TOOL_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

typedef enum opt_kind {
  OPT_FLAG,   /* no argument */
  OPT_STRING, /* any argument */
  OPT_INT,    /* a signed 64-bit integer (1e7 and 2^20 allowed) */
  OPT_NUM     /* a finite floating-point number */
} opt_kind;

typedef struct opt_def {
  const char* name;  /* long name without "--"; NULL ends the table */
  char        short_name; /* 0: none */
  opt_kind    kind;
  const char* arg;   /* argument placeholder shown in help ("N"); NULL for flags */
  const char* help;  /* one line */
} opt_def;

typedef struct opt_command {
  const char*    name;    /* "select": used in messages ("topk select: ...") */
  const char*    usage;   /* after "topk NAME ": "[options] [FILE]" */
  const char*    summary; /* one or more lines printed under the usage line */
  const opt_def* defs;    /* sorted by long name, ended by {NULL} */
  const char*    epilog;  /* printed after the option list (formats, examples); may be NULL */
} opt_command;

enum { OPT_MAX = 64, OPT_MAX_POSITIONAL = 16 };

typedef struct opt_values {
  const opt_command* cmd;
  const char* arg[OPT_MAX];   /* per def: the value, "" for a given flag, NULL if absent */
  char*       pos[OPT_MAX_POSITIONAL]; /* positional arguments, in order */
  int         npos;
  int         help;           /* -h or --help was given */
} opt_values;

/*
 * Parses argv[0 .. argc) against cmd->defs into *v.
 * @return 0, or EXIT_USAGE (64) after printing "topk NAME: <problem>" and a hint
 * to standard error (unknown option, missing or malformed value, too many
 * positionals, or a table that is not sorted — a programming error).
 */
int opt_parse(const opt_command* cmd, int argc, char** argv, opt_values* v);

/* Prints cmd's usage, summary, option table and epilog to out. @return 0. */
int opt_help(const opt_command* cmd, FILE* out);

/* 1 if the option was given. name must be in the table (else the program aborts: a bug). */
int         opt_given(const opt_values* v, const char* name);
/* The option's value, or def when absent. */
const char* opt_str(const opt_values* v, const char* name, const char* def);
/* An OPT_INT option's value (already validated by opt_parse), or def when absent. */
int64_t     opt_i64(const opt_values* v, const char* name, int64_t def);
/* An OPT_NUM option's value (already validated by opt_parse), or def when absent. */
double      opt_num(const opt_values* v, const char* name, double def);

/*
 * Prints "topk NAME: <message>" and "(see 'topk NAME --help')" to standard error.
 * @return EXIT_USAGE, so a command writes: return opt_usage_error(&v, "k=%lld ...", k);
 */
int opt_usage_error(const opt_values* v, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Parses an integer the way OPT_INT does. @return 0, or -1 if s is not one. */
int opt_parse_int(const char* s, int64_t* out);

#endif
