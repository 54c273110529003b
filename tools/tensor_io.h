/*
 * tensor_io — reading and writing tensors for the flatrt tools and tests.
 *
 * Formats:
 * - NumPy .npy, format versions 1.0, 2.0 and 3.0. Element types '<f4' '<f8' '<f2' 'i1' 'u1' 'b1'
 *   ('?') '<i2' '<u2' '<i4' '<u4' '<i8' '<u8'; byte order '<', '|' or '=' (this host is
 *   little-endian), '>' is byte-swapped on read. fortran_order must be False. The header dict is
 *   parsed strictly: exactly the keys 'descr', 'fortran_order' and 'shape', every access bounds-
 *   checked; the payload must be exactly numel * element size bytes. Writing produces version 1.0
 *   (2.0 if the header would not fit), header padded to a multiple of 64 bytes as numpy does.
 * - ONNX TensorProto (.pb), as written by onnx.numpy_helper / the ONNX test suite: dims (1),
 *   data_type (2), float_data (4), int32_data (5), int64_data (7), name (8), raw_data (9),
 *   double_data (10), uint64_data (11). Repeated fields may be packed or not. Segments, string
 *   tensors and external data are rejected with a message.
 *
 * Tensors returned by the readers are frt_tensor with `data` from malloc (never NULL, even for
 * zero elements), `nbytes` the exact payload size and `_owner` NULL; free them with
 * tio_tensor_free(). Every function returns 0 on success and -1 on failure, after writing a
 * one-line message (naming the file where there is one) into err[0..errlen). No function aborts,
 * and malformed input never causes an out-of-bounds access.
 */
#ifndef FRT_TOOLS_TENSOR_IO_H
#define FRT_TOOLS_TENSOR_IO_H

#include <stddef.h>

#include "flatrt.h"

/* Files larger than this are refused (they cannot be sensible inputs and would be read whole). */
#define TIO_MAX_FILE_BYTES ((size_t)1 << 34)

typedef enum tio_format {
    TIO_FORMAT_UNKNOWN = 0,
    TIO_FORMAT_NPY = 1,
    TIO_FORMAT_PB = 2
} tio_format;

/* Frees data allocated by a reader and clears the tensor. Harmless on a zeroed tensor. */
void tio_tensor_free(frt_tensor *t);

/* Parses a complete .npy file image of `size` bytes. */
int tio_npy_parse(const void *buf, size_t size, frt_tensor *out, char *err, size_t errlen);
/* Parses a serialized TensorProto. *name_out (if name_out is non-NULL) receives a malloc'd copy of
 * the proto's name ("" when absent); the caller frees it. */
int tio_pb_parse(const void *buf, size_t size, frt_tensor *out, char **name_out, char *err,
                 size_t errlen);

/* Format of a file image: NPY by its magic bytes, else PB if `path` ends in ".pb", else PB when
 * the bytes parse as a TensorProto, else UNKNOWN. path may be NULL. */
tio_format tio_sniff(const char *path, const void *buf, size_t size);

/* Reads the whole file at path into a malloc'd buffer (*buf is never NULL on success). */
int tio_read_file(const char *path, void **buf, size_t *size, char *err, size_t errlen);

/* Reads a tensor from a .npy or .pb file: by extension (".npy", ".pb"), or by content when the
 * extension is neither. name_out as for tio_pb_parse (always "" for .npy). */
int tio_load(const char *path, frt_tensor *out, char **name_out, char *err, size_t errlen);

/* Reads a graph input or output value of the given kind from a .pb file: a TensorProto
 * (FRT_KIND_TENSOR, also .npy: n == 1), an ONNX SequenceProto of tensors (FRT_KIND_SEQUENCE) or an
 * OptionalProto holding a tensor or a sequence of tensors (FRT_KIND_OPTIONAL; elem_kind says
 * which the model expects; has_value 0 when it holds nothing). The tensors array and each tensor
 * are malloc'd: free with tio_value_free. name_out as for tio_pb_parse ("" for containers). */
int tio_load_value(const char *path, frt_kind kind, frt_kind elem_kind, frt_io_value *out,
                   char **name_out, char *err, size_t errlen);
/* Frees what tio_load_value allocated and clears v. Harmless on a zeroed value. */
void tio_value_free(frt_io_value *v);

/* Encodes t as a .npy image into a malloc'd buffer. Fails for dtypes numpy cannot hold
 * (string), a rank above FRT_MAX_RANK, a negative dim or nbytes not equal to numel * size. */
int tio_npy_encode(const frt_tensor *t, void **buf, size_t *size, char *err, size_t errlen);
/* Writes t to path as .npy (replacing the file). */
int tio_npy_save(const char *path, const frt_tensor *t, char *err, size_t errlen);

/* numpy descr ("<f4") for a dtype, or NULL when there is none. */
const char *tio_npy_descr(frt_dtype dtype);

/* Value of element i of a numeric tensor (float16 decoded) as a double; 0 for other types. */
double tio_element_as_double(const frt_tensor *t, size_t i);
/* IEEE half <-> single conversions (round to nearest even; NaN and infinities preserved). */
float tio_half_to_float(uint16_t h);
uint16_t tio_float_to_half(float f);

/* Replaces every character of name other than [A-Za-z0-9._-] with '_', writing at most outlen
 * bytes including the NUL into out (the file-name stem used for tensors named `name`). */
void tio_sanitize_name(const char *name, char *out, size_t outlen);

#endif
