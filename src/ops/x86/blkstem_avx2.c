/* AVX2/FMA stem convolution on nChw8c (../blkstem.h; the loop: blkstem_impl.h). Tiles of up to
 * 5 outputs: 2 x 5 accumulators of the 16 ymm registers. */
#include "vec_avx2.h"

#define BLKSTEM_NAME frt_blkstem_avx2
#define BLKSTEM_T 5
#include "blkstem_impl.h"
