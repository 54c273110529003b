/* Shared parts of the flatrt command-line tool: the command table, option tables parsed with
 * getopt_long, messages, input binding and small helpers.
 *
 * Adding a command: write `int cmd_NAME(int argc, char **argv)` in its own tools/cmd_NAME.c
 * (argv[0] is the command name; parse with cli_parse and the command's option table), declare it
 * below and add one row to the command table in flatrt.c (name, arguments, one-line summary, help
 * paragraph, options). Adding an option: an OPT_* id, a field in `cli` if it carries a value, a
 * case in cli_apply (cli.c) and a row in the option table of each command that accepts it.
 *
 * Exit status of every command: 0 ok, 1 error (message on stderr), 2 usage error.
 */
#ifndef FRT_TOOLS_CLI_H
#define FRT_TOOLS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flatrt.h"

#define FRT_STR_(x) #x
#define FRT_STR(x) FRT_STR_(x)
#define EXIT_USAGE 2
#define MAX_KV 256

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Commands and options                                                                            */
/* ---------------------------------------------------------------------------------------------- */

/* Option ids: the value getopt_long returns for the option. */
enum cli_opt_id {
    OPT_HELP = 'h',
    OPT_MERGE = 'm',  /* ids below 256 are also short options (-m FILE) */
    OPT_OUTPUT = 'o',
    OPT_RUNS = 'r',
    OPT_INPUT = 256,
    OPT_INPUT_DIR,
    OPT_SHAPE,
    OPT_RANDOM,
    OPT_SEED,
    OPT_OUTPUT_DIR,
    OPT_CHECK_FINITE,
    OPT_ITERS,
    OPT_WARMUP,
    OPT_RUNTIMES,
    OPT_INTER_OP,
    OPT_LAT_FILE,
    OPT_PROFILE,
    OPT_TRACE,
    OPT_JSON,
    OPT_MEMORY,
    OPT_OPS,
    OPT_NODES,
    OPT_SVG,
    OPT_THREADS,
    OPT_PLANNER,
    OPT_WEIGHTS,
    OPT_NO_FOLD,
    OPT_NO_FUSE
};

/* One option of a command: --name [ARG], and its one-line description for the help. */
typedef struct cli_opt {
    const char *name; /* long name without "--"; NULL ends a table */
    int id;           /* OPT_* */
    const char *arg;  /* metavariable ("N", "NAME=FILE"), NULL for a flag */
    const char *help;
} cli_opt;

/* Rows shared by several commands' option tables. */
#define CLI_OPT_THREADS                                                                            \
    {"threads", OPT_THREADS, "N", "intra-op threads, 1 to " FRT_STR(FRT_MAX_THREADS) " (default 1)"}
#define CLI_OPT_PLANNER                                                                            \
    {"planner", OPT_PLANNER, "P", "memory planner: standard (default), greedy or none"}
#define CLI_OPT_WEIGHTS                                                                            \
    {"weights", OPT_WEIGHTS, "P",                                                                  \
     "storage of constant Gemm/MatMul weights: fp32 (default), fp16 or bf16"}
#define CLI_OPT_NO_FOLD {"no-fold", OPT_NO_FOLD, NULL, "do not fold constant subgraphs at load"}
#define CLI_OPT_NO_FUSE {"no-fuse", OPT_NO_FUSE, NULL, "do not fuse operators at load"}
#define CLI_OPT_INPUT                                                                              \
    {"input", OPT_INPUT, "NAME=FILE",                                                              \
     "input tensor from a .npy or TensorProto .pb file (NAME= may be left out for a one-input "   \
     "model or a .pb naming the input); repeatable"}
#define CLI_OPT_INPUT_DIR                                                                          \
    {"input-dir", OPT_INPUT_DIR, "DIR",                                                            \
     "inputs from DIR/<input name>.npy or .pb (name as given, or with characters other than "    \
     "[A-Za-z0-9._-] as '_')"}
#define CLI_OPT_SHAPE                                                                              \
    {"shape", OPT_SHAPE, "NAME=SHAPE",                                                             \
     "shape of a random input (NAME=d0,d1,...) or the size of a symbolic dimension for all "      \
     "random inputs (DIM=n, e.g. batch=8); repeatable"}
#define CLI_OPT_SEED {"seed", OPT_SEED, "N", "seed of the random inputs (default: fixed)"}
#define CLI_OPT_HELP {"help", OPT_HELP, NULL, "this help"}
#define CLI_OPT_END {NULL, 0, NULL, NULL}

typedef struct cli_command {
    const char *name;
    const char *args;    /* positional arguments for the synopsis ("MODEL") */
    const char *summary; /* one line for `flatrt --help` */
    const char *help;    /* paragraph(s) for `flatrt help NAME`, lines end with '\n' */
    const cli_opt *opts; /* ends with CLI_OPT_END */
    int (*main)(int argc, char **argv);
} cli_command;

extern const cli_command cli_commands[];
extern const size_t cli_num_commands;
const cli_command *cli_find_command(const char *name);
/* `flatrt help NAME` / `flatrt NAME --help`. */
void cli_command_usage(FILE *f, const cli_command *cmd);
/* One option row of a usage text (wrapped at 100 columns). */
void cli_print_opt(FILE *f, const cli_opt *o);

typedef struct kv {
    const char *name; /* NULL for "--input FILE" without a name */
    const char *value;
    char *owned;      /* storage of name */
} kv;

/* Everything a command's options can set. Defaults from cli_parse. */
typedef struct cli {
    const cli_command *cmd;
    char **args;              /* positional arguments (in argv, after getopt's permutation) */
    int n_args;
    const char *model;        /* args[0] when the command takes a MODEL */
    kv inputs[MAX_KV], shapes[MAX_KV];
    int n_inputs, n_shapes;
    const char *input_dir, *output_dir, *lat_file, *trace_file, *svg, *output;
    const char *merges[MAX_KV];
    int n_merges;
    long iters, warmup, threads, seed, runtimes, inter_op, runs;
    int iters_given, warmup_given, seed_given, profile, memory, check_finite, random, json, ops,
        nodes;
    frt_planner planner;
    frt_weights_precision weights;
    int fold, fuse;
} cli;

/* Parses argv[1..argc) (argv[0] is the command name) with getopt_long against cmd's option
 * table; options and positional arguments may be mixed, `--opt V` and `--opt=V` both work.
 * Returns 0, EXIT_USAGE after printing the error, or -1 when --help was printed (exit 0). */
int cli_parse(const cli_command *cmd, int argc, char **argv, cli *c);
/* The usual "one MODEL" check: sets c->model. Returns 0 or EXIT_USAGE. */
int cli_need_model(cli *c);
void cli_free(cli *c);

/* ---------------------------------------------------------------------------------------------- */
/* Messages and helpers                                                                            */
/* ---------------------------------------------------------------------------------------------- */

int fail(const char *fmt, ...) PRINTF_LIKE(1, 2);
/* Prints the message and "Try 'flatrt [CMD] --help'."; returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) PRINTF_LIKE(1, 2);
int fail_frt(const char *context);
void warn(const char *fmt, ...) PRINTF_LIKE(1, 2);
/* The command whose usage a usage error points to (set by cli_parse). */
extern const char *cli_current_command;

double now_us(void);
/* CPU time of the whole process (all threads), microseconds. */
double cpu_us(void);
long proc_status_kib(const char *key);
void shape_str(char *buf, size_t n, int32_t rank, const int64_t *shape,
               const char *const *dim_names);
void bytes_str(char *buf, size_t n, double b);
int parse_long(const char *s, const char *opt, long min, long max, long *out);
int parse_weights(const char *val, frt_weights_precision *out);
int mkdir_p(const char *path);
const char *planner_name(frt_planner p);
const char *weights_name(frt_weights_precision w);
frt_status load_model(const cli *c, frt_model **m, double *load_ms);

/* The memory plan statistics as indented lines. */
void print_plan_stats(FILE *f, const frt_plan_stats *ps);
/* JSON: a string literal with escapes (NULL prints null). */
void json_str(FILE *f, const char *s);

/* ---------------------------------------------------------------------------------------------- */
/* Inputs                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

/* The model's inputs and the tensors bound to them (data malloc'd by tensor_io or here). */
typedef struct inputs {
    size_t n;
    frt_tensor_info *info;
    const char **names;
    frt_tensor *t;
    const char **source; /* file name, or NULL for random data / not bound */
    char **owned;        /* storage of source for --input-dir files */
} inputs;

int inputs_init(const frt_model *m, inputs *in);
void inputs_free(inputs *in);
/* Binds --input files, then --input-dir files, then (random != 0) random data for the rest, of
 * the model's shape with symbolic dims from --shape DIM=n (else 1) or the --shape NAME=SHAPE
 * given. With random == 0 an unbound input is an error naming it. Inputs that are sequences or
 * optionals get no random data (in->t[i] stays empty: frt_run_values can pass them as an empty
 * sequence / absent optional). Returns 0 or an exit code. */
int bind_inputs(const cli *c, inputs *in, int random);

/* ---------------------------------------------------------------------------------------------- */
/* Commands                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_compile(int argc, char **argv);

#endif
