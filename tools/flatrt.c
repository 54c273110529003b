/*
 * flatrt — command-line tool for the flatrt runtime: run a model on tensor files, benchmark it,
 * describe it, draw its memory plan or run ONNX backend test cases. Uses the public API
 * (include/flatrt.h); `info` also reads the model with the library's ONNX decoder so that it can
 * describe models the runtime cannot compile.
 *
 * This file holds the command table and main(); each command lives in tools/cmd_*.c and parses
 * its own options (cli.h explains how to add a command or an option).
 *
 * Exit status: 0 on success, 1 on any error (message on stderr, for library errors the text of
 * frt_last_error()), 2 on a usage error.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cli.h"

static const cli_opt run_opts[] = {
    CLI_OPT_INPUT,
    CLI_OPT_INPUT_DIR,
    {"random", OPT_RANDOM, NULL, "random data for the inputs not given (as bench)"},
    CLI_OPT_SHAPE,
    CLI_OPT_SEED,
    {"output-dir", OPT_OUTPUT_DIR, "DIR", "write each output to DIR/<name>.npy"},
    {"check-finite", OPT_CHECK_FINITE, NULL, "NaN or infinite output values are an error"},
    CLI_OPT_THREADS,
    CLI_OPT_PLANNER,
    CLI_OPT_WEIGHTS,
    CLI_OPT_NO_FOLD,
    CLI_OPT_NO_FUSE,
    CLI_OPT_HELP,
    CLI_OPT_END};

static const cli_opt bench_opts[] = {
    CLI_OPT_INPUT,
    CLI_OPT_INPUT_DIR,
    CLI_OPT_SHAPE,
    CLI_OPT_SEED,
    {"iters", OPT_ITERS, "N", "timed runs (default 1000, or 50 when one run takes > 10 ms)"},
    {"warmup", OPT_WARMUP, "N", "untimed runs first (default 100, or 5 when one run takes > 10 ms)"},
    {"profile", OPT_PROFILE, NULL, "time per op type, per node (the top 30; all with FRT_PROFILE_ALL=1), and plan statistics"},
    {"runtimes", OPT_RUNTIMES, "R", "then R runtimes on R threads at once: aggregate throughput"},
    {"inter-op", OPT_INTER_OP, "N", "run independent steps on up to N threads at once (default 1)"},
    {"lat-file", OPT_LAT_FILE, "PATH", "write each timed run's latency (us), one per line"},
    {"trace", OPT_TRACE, "FILE.json", "Chrome trace of up to 10 further runs (Perfetto)"},
    {"json", OPT_JSON, NULL,
     "print the last line's figures as one JSON object on stdout (other lines to stderr)"},
    CLI_OPT_THREADS,
    CLI_OPT_PLANNER,
    CLI_OPT_WEIGHTS,
    CLI_OPT_NO_FOLD,
    CLI_OPT_NO_FUSE,
    CLI_OPT_HELP,
    CLI_OPT_END};

static const cli_opt info_opts[] = {
    {"nodes", OPT_NODES, NULL,
     "every node: op, inputs and outputs with shapes, attributes, kernel chosen"},
    {"json", OPT_JSON, NULL, "the description as one JSON object (with --nodes: nodes too)"},
    {"memory", OPT_MEMORY, NULL, "compare the memory plans of every planner"},
    {"ops", OPT_OPS, NULL, "the operators this build implements (no MODEL)"},
    CLI_OPT_THREADS,
    CLI_OPT_PLANNER,
    CLI_OPT_WEIGHTS,
    CLI_OPT_NO_FOLD,
    CLI_OPT_NO_FUSE,
    CLI_OPT_HELP,
    CLI_OPT_END};

static const cli_opt plan_opts[] = {
    {"svg", OPT_SVG, "FILE", "write the picture to FILE ('-': stdout, the summary then to stderr)"},
    CLI_OPT_INPUT,
    CLI_OPT_INPUT_DIR,
    CLI_OPT_SHAPE,
    CLI_OPT_THREADS,
    CLI_OPT_PLANNER,
    CLI_OPT_WEIGHTS,
    CLI_OPT_NO_FOLD,
    CLI_OPT_NO_FUSE,
    CLI_OPT_HELP,
    CLI_OPT_END};

static const cli_opt compile_opts[] = {
    {"output", OPT_OUTPUT, "FILE", "the program file to write (required)"},
    {"shape", OPT_SHAPE, "NAME=SHAPE",
     "shape of an input (NAME=d0,d1,...) or the size of a symbolic dimension (DIM=n); "
     "repeatable (symbolic dims are 1 otherwise)"},
    CLI_OPT_PLANNER,
    CLI_OPT_NO_FOLD,
    CLI_OPT_NO_FUSE,
    CLI_OPT_HELP,
    CLI_OPT_END};

static const cli_opt trace_opts[] = {
    {"output", OPT_OUTPUT, "FILE", "the selection file to write (required)"},
    {"input", OPT_INPUT, "NAME=FILE", "input of every model with that input name; repeatable"},
    {"shape", OPT_SHAPE, "NAME=SHAPE",
     "shape of a random input (NAME=d0,d1,...) or the size of a symbolic dimension (DIM=n); "
     "repeatable"},
    CLI_OPT_SEED,
    {"merge", OPT_MERGE, "FILE", "add the contents of an earlier selection file; repeatable"},
    {"runs", OPT_RUNS, "N", "runs per model (default 1)"},
    {"profile", OPT_PROFILE, NULL, "run with profiling on (records the profiler feature)"},
    CLI_OPT_THREADS,
    CLI_OPT_PLANNER,
    CLI_OPT_WEIGHTS,
    CLI_OPT_HELP,
    CLI_OPT_END};

static const cli_opt check_opts[] = {
    CLI_OPT_THREADS,
    {"weights", OPT_WEIGHTS, "P", "storage of constant Gemm/MatMul weights: fp32, fp16 or bf16"},
    CLI_OPT_HELP,
    CLI_OPT_END};

const cli_command cli_commands[] = {
    {"run", "MODEL", "run the model once and summarize (or save) each output",
     "Run the model once on tensors from .npy or ONNX TensorProto .pb files (--input,\n"
     "--input-dir) or random data (--random) and print each output (dtype, shape,\n"
     "min/max/mean, first values, argmax for [N] or [1,N] floats). With --output-dir, write\n"
     "each output to DIR/<name>.npy (characters other than letters, digits, '.', '_' and '-'\n"
     "in the name become '_'). NaN or infinite output values are reported on stderr; with\n"
     "--check-finite they are an error (exit status 1).\n",
     run_opts, cmd_run},
    {"bench", "MODEL", "time frt_run: latency percentiles, profile, throughput",
     "Time frt_run (outputs borrowed). Inputs not given are random (floats uniform in\n"
     "[-1,1), integers 0..9, fixed seed); symbolic dims are 1 unless --shape says otherwise.\n"
     "Prints its phases as it goes (load, warm-up, timed runs; a progress line when stdout is\n"
     "a terminal). --runtimes R then runs R runtimes (clones) on R threads at once, --iters\n"
     "runs each, and reports their aggregate throughput (throughput_per_s; without --runtimes\n"
     "it is 1 / mean latency). The last line is key=value pairs (flatrt_version load_ms\n"
     "threads planner weights warmup iters mean_us p10_us p50_us p90_us p99_us min_us max_us\n"
     "std_us peak_rss_kib rss_before_load_kib arena_bytes naive_bytes lower_bound_bytes\n"
     "runtimes throughput_per_s outputs); --json prints the same as one JSON object.\n",
     bench_opts, cmd_bench},
    {"info", "MODEL", "describe a model: inputs, outputs, ops, compile and memory statistics",
     "Inputs, outputs, producer, opset, op types, compile statistics, parameters and the\n"
     "memory plan with symbolic dims = 1. A model the runtime cannot compile (unsupported\n"
     "operators, ...) is still described from its ONNX graph, with the unsupported operators\n"
     "and the load error listed. 'flatrt info --ops' lists the operators this build\n"
     "implements: op, domain, opsets, family, and '*' for ops whose output shapes may depend\n"
     "on input data.\n",
     info_opts, cmd_info},
    {"plan", "MODEL", "draw the memory plan as SVG",
     "Draw the memory plan (steps across, slab offset down, one rectangle per planned tensor,\n"
     "labelled with its name, elided in the middle where it does not fit) for the given (or\n"
     "default: symbolic dims = 1) input shapes, and print the number of rectangles drawn.\n",
     plan_opts, cmd_plan},
    {"trace", "MODEL...", "record what models use, for a selective build (docs/selective.md)",
     "Load and run each MODEL (inputs not given are random, as in bench; symbolic dims 1\n"
     "unless --shape gives them) and write the operators, dtypes, kernels, ISA tiers,\n"
     "providers and features the loads and runs used to the selection file for\n"
     "'cmake -DFRT_SELECT=FILE'. --input and --shape apply to every model with an input (or\n"
     "symbolic dimension) of that name. Several models, and --merge of earlier selection\n"
     "files, give the union; with --merge, MODEL may be left out.\n",
     trace_opts, cmd_trace},
    {"compile", "MODEL", "write an ahead-of-time program (docs/selective.md)",
     "Load MODEL, shape and plan it for the input shapes given (symbolic dims 1 unless --shape\n"
     "gives them) and write what a run executes (values, memory plan, steps, kernel\n"
     "parameters, constants) as a program for a runtime-only build (cmake -DFRT_AOT_ONLY=ON).\n"
     "An op without an ahead-of-time writer is an error naming it; nothing is written then.\n",
     compile_opts, cmd_compile},
    {"check", "CASE_DIR...", "run ONNX backend test cases and compare outputs",
     "Run ONNX backend test cases (CASE_DIR/model.onnx, test_data_set_*/input_K.pb and\n"
     "output_K.pb, as in ONNX's node suite) and compare the outputs: floats within\n"
     "1e-7 + 1e-3 * |expected|, other types exactly. One line per case (pass, fail with the\n"
     "first mismatch, unsupported with what is missing, error) and a summary; exit status 0\n"
     "only when every case passed.\n",
     check_opts, cmd_check},
};
const size_t cli_num_commands = sizeof cli_commands / sizeof cli_commands[0];

int cmd_check(int argc, char **argv) {
    cli c;
    int rc = cli_parse(cli_find_command(argv[0]), argc, argv, &c);
    if (!rc && c.n_args == 0) rc = usage_error("'check' needs at least one CASE_DIR");
    if (!rc) rc = flatrt_check_main(c.n_args, c.args, (int)c.threads, (int)c.weights);
    cli_free(&c);
    return rc < 0 ? 0 : rc;
}

static void usage(FILE *f) {
    fprintf(f, "usage: flatrt COMMAND [options]\n\ncommands:\n");
    for (size_t i = 0; i < cli_num_commands; i++) {
        char left[64];
        snprintf(left, sizeof left, "%s %s", cli_commands[i].name, cli_commands[i].args);
        fprintf(f, "  %-24s%s\n", left, cli_commands[i].summary);
    }
    fprintf(f, "  %-24s%s\n", "help [COMMAND]", "this text, or a command's options");
    fprintf(f, "  %-24s%s\n", "version", "print the version (also --version)");
    fprintf(f, "\noptions of run, bench, info and plan (each command's own: flatrt help COMMAND):\n");
    static const cli_opt common[] = {CLI_OPT_THREADS, CLI_OPT_PLANNER, CLI_OPT_WEIGHTS,
                                     CLI_OPT_NO_FOLD, CLI_OPT_NO_FUSE, CLI_OPT_INPUT, CLI_OPT_END};
    for (const cli_opt *o = common; o->name; o++) cli_print_opt(f, o);
    fprintf(f, "Options take their value as '--opt VALUE' or '--opt=VALUE'.\n");
    fprintf(f, "\nexit status: 0 ok, 1 error, 2 usage error\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        if (argc > 3) return usage_error("help takes an optional command name");
        if (argc == 3) {
            const cli_command *c = cli_find_command(argv[2]);
            if (!c) return usage_error("help: unknown command '%s'", argv[2]);
            cli_command_usage(stdout, c);
            return 0;
        }
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version")) {
        if (argc > 2) return usage_error("%s takes no arguments", cmd);
        printf("flatrt %s\n", FRT_VERSION_STRING);
        return 0;
    }
    const cli_command *c = cli_find_command(cmd);
    if (!c) {
        if (cmd[0] == '-') return usage_error("unknown option '%s'", cmd);
        return usage_error("unknown command '%s'", cmd);
    }
    return c->main(argc - 1, argv + 1);
}
