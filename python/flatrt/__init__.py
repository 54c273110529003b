"""flatrt: run ONNX models on the CPU with flatrt, from Python with numpy.

    import numpy as np, flatrt
    m = flatrt.Model("model.onnx", threads=1)
    print(m.inputs)                       # [TensorInfo(name='input', dtype=dtype('float32'), shape=('batch', 3, 224, 224))]
    out = m.run({"input": np.zeros((1, 3, 224, 224), np.float32)})
    print(out["output"].shape)

Model runs through a pool of runtimes with the GIL released, so one Model may be shared by
many Python threads. Errors of the library raise flatrt.Error (str: the library's message;
.status: the frt_status number; .status_name: e.g. "FRT_ERR_SHAPE"). Wrong Python arguments
raise TypeError / ValueError as usual (e.g. a float array for an int64 input).
"""
from ._flatrt import Error, Model, TensorInfo, version, __version__  # noqa: F401
from ._flatrt import (  # noqa: F401  frt_status values
    FRT_OK, FRT_ERR_INVALID_ARGUMENT, FRT_ERR_IO, FRT_ERR_MALFORMED, FRT_ERR_UNSUPPORTED,
    FRT_ERR_SHAPE, FRT_ERR_NO_MEMORY, FRT_ERR_RUNTIME, FRT_ERR_INTERNAL, FRT_ERR_TIMEOUT)

__all__ = ["Error", "Model", "TensorInfo", "version", "__version__"]
