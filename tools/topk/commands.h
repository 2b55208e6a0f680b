/*
 * commands.h: the subcommands of the `topk` tool. Each takes the arguments after
 * its name and returns the process exit code: a topk_status value, or EXIT_USAGE
 * for a command-line mistake. Every file of the tool uses only include/topk.h
 * (plus tools/common).
 */
#ifndef TOPK_TOOL_COMMANDS_H
#define TOPK_TOOL_COMMANDS_H

#define EXIT_USAGE 64  /* sysexits EX_USAGE: outside the topk_status range */
#define EXIT_IO    74  /* sysexits EX_IOERR: a file could not be read, parsed or written */

int cmd_select(int argc, char** argv);
int cmd_gen(int argc, char** argv);
int cmd_info(int argc, char** argv);
int cmd_bench(int argc, char** argv);

#endif
