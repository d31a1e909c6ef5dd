"""The compiled kernel (``_kernel.pyx``, Cython over lxml's C API) and the backend that binds each
function to it or to its pure Python twin, chosen once (:data:`BACKEND`).

Entry point: :data:`noisecbr.native.backend.BACKEND`.

The modules are imported by name (the stages' modules import each other's, so this package
imports none of them).
"""
