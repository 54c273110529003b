/* AVX2/FMA blocked depthwise convolution on nChw8c (blkdw.h; the loop: blkdw_impl.h). */
#include "vec_avx2.h"

#define BLKDW_NAME frt_blkdw_avx2
#define BLKDW_T 4
#include "blkdw_impl.h"
