"""A real GIL deadlock built with ctypes (issue 16): a library thread takes a mutex and calls back into Python,
which needs the GIL; the main thread, holding the GIL (ctypes.PyDLL does not release it), calls into the library
to take that mutex. hangdoc must report a lock-cycle through the GIL.
Arguments: the path of libgil_callback.so. The library writes: ready <pid> <main tid> <library thread tid>"""
import ctypes
import sys

library = ctypes.PyDLL(sys.argv[1])
CALLBACK = ctypes.CFUNCTYPE(None)


@CALLBACK
def on_item():
    pass  # never runs: the library thread waits for the GIL to run it


def register():
    library.register_item()  # where: register


def main():
    library.start_library_thread(on_item)
    register()  # where: main


main()
