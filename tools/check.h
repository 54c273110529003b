/* `flatrt check`: runs ONNX backend test cases (see check.c for the comparison rule). */
#ifndef FRT_TOOLS_CHECK_H
#define FRT_TOOLS_CHECK_H

/* Checks the case directories dirs[0..n) with the given threads and weights precision
 * (frt_weights_precision); prints one line per case and a summary. Returns the exit status: 0
 * when every case passed, 1 otherwise. */
int flatrt_check_main(int n, char **dirs, int threads, int weights);

#endif
