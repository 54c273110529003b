/* AVX-512 stem convolution on nChw16c (../blkstem.h; the loop: blkstem_impl.h). Tiles of up to
 * 8 outputs: 2 x 8 accumulators of the 32 zmm registers. */
#include "vec_avx512.h"

#define BLKSTEM_NAME frt_blkstem_avx512
#define BLKSTEM_T 8
#include "blkstem_impl.h"
