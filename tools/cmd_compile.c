/* `flatrt compile MODEL -o PROGRAM`: loads MODEL (folding, fusion, kernel selection as any
 * load), shapes and plans it for the input shapes given with --shape (symbolic dims 1 unless
 * given) and writes the ahead-of-time program a -DFRT_AOT_ONLY=ON build runs
 * (src/runtime/aot_write.c, docs/selective.md "Ahead-of-time programs"). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cmd_compile(int argc, char **argv) {
    cli c;
    int rc = cli_parse(cli_find_command(argv[0]), argc, argv, &c);
    if (rc) return rc < 0 ? 0 : rc;
    frt_model *m = NULL;
    inputs in = {0};
    if ((rc = cli_need_model(&c))) goto done;
    if (!c.output) {
        rc = usage_error("-o PROGRAM is required");
        goto done;
    }
    if (c.threads > 1) {
        rc = usage_error("programs run on one thread: no --threads");
        goto done;
    }
    if (load_model(&c, &m, NULL)) {
        rc = fail_frt(c.model);
        goto done;
    }
    if (inputs_init(m, &in)) {
        rc = fail("out of memory");
        goto done;
    }
    if ((rc = bind_inputs(&c, &in, 1))) goto done;
    if (frt_model_write_program(m, in.names, in.t, in.n, c.output))
        rc = fail_frt(c.model);
    else
        fprintf(stderr, "flatrt compile: wrote %s\n", c.output);
done:
    inputs_free(&in);
    frt_model_free(m);
    cli_free(&c);
    return rc;
}
