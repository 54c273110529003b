/* `flatrt trace` (trace_cmd.c): writes a selection file for selective builds. */
#ifndef FRT_TOOLS_TRACE_CMD_H
#define FRT_TOOLS_TRACE_CMD_H

/* argv[0..argc): the arguments after "trace". Returns the exit status. */
int flatrt_trace_main(int argc, char **argv);
#ifdef FRT_TOOLS_CLI_H /* tools/cmd_trace.c, for the command table of tools/flatrt.c */
/* The command table's entry point (argv[0] is "trace"); --help prints the table's usage. */
int cmd_trace(int argc, char **argv);
/* Options shown by `flatrt help trace` (parsed by trace_cmd.c itself). */
extern const cli_opt trace_opts[];
#define TRACE_CMD_ROW                                                                             \
    {"trace", "MODEL...", "record what models use, for a selective build (docs/selective.md)",    \
     "Load and run each MODEL (inputs not given are random, as in bench; symbolic dims 1\n"      \
     "unless --shape gives them) and write the operators, dtypes, kernels, ISA tiers,\n"         \
     "providers and features they used to the selection file for\n"                               \
     "'cmake -DFRT_SELECT=FILE'. Several models, and --merge of earlier selection files,\n"       \
     "give the union; with --merge, MODEL may be left out.\n",                                   \
     trace_opts, cmd_trace}
#endif

#endif
