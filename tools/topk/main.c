/*
 * main.c: the `topk` command-line tool. Dispatches to a subcommand and exits
 * with its code: 0, a topk_status value for a library error, EXIT_USAGE (64) for
 * a command-line mistake, EXIT_IO (74) for a file that cannot be read, parsed or
 * written. docs/CLI.md documents the commands and the codes.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "topk.h"

typedef struct command {
  const char* name;
  int (*run)(int argc, char** argv);
  const char* summary;
} command;

static const command commands_[] = {
    {"select", cmd_select, "the k largest (or smallest) values of each row, with their indices"},
    {"gen", cmd_gen, "generate test data (.npy or text) from a named distribution"},
    {"info", cmd_info, "version, build options, CUDA devices, measured bandwidth"},
    {"bench", cmd_bench, "time the algorithms against the input-read roofline"},
};
enum { COMMAND_COUNT = sizeof commands_ / sizeof commands_[0] };

static void print_help(FILE* out) {
  fprintf(out,
          "topk %s: top-k selection on NVIDIA GPUs and the CPU\n"
          "\n"
          "Usage: topk COMMAND [options] [arguments]\n"
          "\n"
          "Commands:\n",
          topk_version_string());
  for (int i = 0; i < COMMAND_COUNT; ++i) fprintf(out, "  %-8s %s\n", commands_[i].name, commands_[i].summary);
  fprintf(out,
          "  %-8s this help, or a command's: topk help COMMAND\n"
          "  %-8s print the version\n"
          "\n"
          "Try:   topk select           (top 10 of 10^7 random floats, on the GPU if there is one)\n"
          "       topk select -k 3 data.npy\n"
          "       topk COMMAND --help\n"
          "\n"
          "Exit codes:\n"
          "  0   success\n",
          "help", "version");
  /* The library's statuses, from the one list in topk.h. */
#define PRINT_STATUS_(name, value, text) \
  if (value != 0) fprintf(out, "  %-3d TOPK_%s: %s\n", value, #name, text);
  TOPK_STATUS_LIST(PRINT_STATUS_)
#undef PRINT_STATUS_
  fprintf(out,
          "  %-3d usage error: unknown command or option, bad or missing value\n"
          "  %-3d I/O error: a file is missing, unreadable, malformed or not writable\n",
          EXIT_USAGE, EXIT_IO);
}

static int print_version(void) {
  printf("topk %s\nbuild: %s\n", topk_version_string(), topk_build_info());
  return 0;
}

static const command* find_command(const char* name) {
  for (int i = 0; i < COMMAND_COUNT; ++i)
    if (strcmp(commands_[i].name, name) == 0) return &commands_[i];
  return NULL;
}

static int unknown_command(const char* name) {
  fprintf(stderr, "topk: unknown command '%s' (see 'topk --help')\n", name);
  return EXIT_USAGE;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "topk: no command given; try 'topk select', or 'topk --help' for the list\n");
    return EXIT_USAGE;
  }
  const char* name = argv[1];
  if (strcmp(name, "help") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
    if (argc > 2) {
      /* topk help COMMAND: the command's own --help */
      const command* c = find_command(argv[2]);
      if (!c) return unknown_command(argv[2]);
      char help[] = "--help";
      char* args[] = {help, NULL};
      return c->run(1, args);
    }
    print_help(stdout);
    return 0;
  }
  if (strcmp(name, "version") == 0 || strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0)
    return print_version();
  const command* c = find_command(name);
  if (!c) {
    if (name[0] == '-') {
      fprintf(stderr, "topk: unknown option '%s' before the command (see 'topk --help')\n", name);
      return EXIT_USAGE;
    }
    return unknown_command(name);
  }
  return c->run(argc - 2, argv + 2);
}
