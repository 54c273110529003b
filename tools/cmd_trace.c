/* `flatrt trace`: the command table's entry (tools/flatrt.c) for trace_cmd.c, which parses its own
 * options. */
#include <string.h>

#include "cli.h"
#include "trace_cmd.h"

const cli_opt trace_opts[] = {
    {"output", 'o', "FILE", "the selection file to write (required; also -o FILE)"},
    {"input", OPT_INPUT, "NAME=FILE", "input of every model with that input name; repeatable"},
    {"shape", OPT_SHAPE, "NAME=d0,d1,...", "shape of a random input; repeatable"},
    {"merge", 'm', "FILE", "add the contents of an earlier selection file; repeatable"},
    {"runs", 'r', "N", "runs per model (default 1)"},
    {"profile", OPT_PROFILE, NULL, "run with profiling on (records the profiler feature)"},
    CLI_OPT_THREADS,
    CLI_OPT_PLANNER,
    CLI_OPT_HELP,
    CLI_OPT_END};

int cmd_trace(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            cli_command_usage(stdout, cli_find_command("trace"));
            return 0;
        }
    return flatrt_trace_main(argc - 1, argv + 1);
}
