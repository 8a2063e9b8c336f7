"""The test's own thread blocks in native code where no signal handler runs: pthread_mutex_lock through ctypes (the
GIL released), on a mutex that a thread of the test locked and then ended without unlocking. The watcher's signal
cannot fail the test; the pytest process (the xdist worker) is ended, and the controller reports it."""
import ctypes
import threading

libc = ctypes.CDLL(None, use_errno=True)


def test_blocked_in_native_code():
    mutex = ctypes.create_string_buffer(64)  # zeroes: PTHREAD_MUTEX_INITIALIZER
    leaver = threading.Thread(target=libc.pthread_mutex_lock, args=(mutex,), name="lock-and-leave")
    leaver.start()
    leaver.join()
    libc.pthread_mutex_lock(mutex)  # where: native-lock
