/* `flatrt compile MODEL -o PROGRAM`: loads MODEL (folding, fusion, kernel selection as any
 * load), shapes and plans it for the input shapes given with --shape (symbolic dims 1 unless
 * given) and writes the ahead-of-time program a -DFRT_AOT_ONLY=ON build runs
 * (tools/aot_write.c, docs/selective.md "Ahead-of-time programs"). */
#include <stdlib.h>
#include <string.h>

#include "aot/aot.h"
#include "cli.h"

int cmd_compile(int argc, char **argv) {
    cli c;
    int rc = cli_parse(cli_find_command(argv[0]), argc, argv, &c);
    if (rc) return rc < 0 ? 0 : rc;
#if FRT_AOT_SAVE
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
    int64_t(*dims)[FRT_MAX_RANK] = calloc(in.n + 1, sizeof *dims);
    if (!dims) {
        rc = fail("out of memory");
        goto done;
    }
    for (size_t i = 0; i < in.n; i++)
        memcpy(dims[i], in.t[i].shape, sizeof dims[i]);
    if (frt_program_write(m, (const int64_t(*)[FRT_MAX_RANK])dims, c.output))
        rc = fail_frt(c.model);
    else
        fprintf(stderr, "flatrt compile: wrote %s\n", c.output);
    free(dims);
done:
    inputs_free(&in);
    frt_model_free(m);
#else
    rc = fail("compile: this is a selective build; write programs with a full build");
#endif
    cli_free(&c);
    return rc;
}
