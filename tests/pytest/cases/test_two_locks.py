"""Two threads of the test take two threading.Locks in opposite orders and wait for each other; the test joins
them. Then a quick test, to show that the session goes on."""
import threading


def test_two_locks_in_opposite_orders():
    first, second = threading.Lock(), threading.Lock()
    both_hold_one = threading.Barrier(2)

    def take(one, other):
        with one:
            both_hold_one.wait()
            with other:  # where: takes-other
                pass

    threads = [threading.Thread(target=take, args=(first, second), name="takes-first"),
               threading.Thread(target=take, args=(second, first), name="takes-second")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_after_the_hang():
    assert True
