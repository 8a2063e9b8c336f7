"""A hung test that uses a session fixture whose teardown takes longer than the watcher's grace: once the test's
failure is made, what is left is not the grace's, and pytest ends by itself with its JUnit XML."""
import threading


def test_waits_for_an_event_nobody_sets(slow_to_tear_down):
    threading.Event().wait()  # where: event-wait
