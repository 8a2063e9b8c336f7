// Java threads in a lock-order deadlock, on monitors (synchronized) or on java.util.concurrent locks, and an idle
// server with a heartbeat: the JVM's own threads (GC, JIT, the VM's periodic task) keep running on timers.
//   monitors   two threads synchronize on A then B, and B then A
//   reentrant  the same with ReentrantLocks
//   queue      a consumer parked in BlockingQueue.take() that a producer feeds every second (not hung)
//   idle       a ServerSocket idle in accept() beside a scheduled heartbeat (not hung)
// ready <pid>
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.net.ServerSocket;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

public class JavaLocks {
    static final Object monitorA = new Object(), monitorB = new Object();
    static final ReentrantLock lockA = new ReentrantLock(), lockB = new ReentrantLock();
    static final CountDownLatch bothHoldOne = new CountDownLatch(2);

    static void monitors(Object first, Object second) {
        synchronized (first) {
            bothHoldOne.countDown();
            awaitQuietly();
            synchronized (second) {
                System.out.println("never");
            }
        }
    }

    static void reentrant(ReentrantLock first, ReentrantLock second) {
        first.lock();
        bothHoldOne.countDown();
        awaitQuietly();
        second.lock();
    }

    static void awaitQuietly() {
        try { bothHoldOne.await(); } catch (InterruptedException e) { }
    }

    static void ready() throws Exception {
        long pid = ProcessHandle.current().pid();
        try (FileOutputStream out = new FileOutputStream("/proc/self/fd/3")) {
            out.write(("ready " + pid + "\n").getBytes());
        }
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "monitors":
                new Thread(() -> monitors(monitorA, monitorB), "takes-a-then-b").start();
                new Thread(() -> monitors(monitorB, monitorA), "takes-b-then-a").start();
                break;
            case "reentrant":
                new Thread(() -> reentrant(lockA, lockB), "takes-a-then-b").start();
                new Thread(() -> reentrant(lockB, lockA), "takes-b-then-a").start();
                break;
            case "queue":
                LinkedBlockingQueue<Integer> feed = new LinkedBlockingQueue<>();
                new Thread(() -> {
                    try { for (;;) feed.take(); } catch (InterruptedException e) { }
                }, "consumer").start();
                new Thread(() -> {
                    try { for (int tick = 0; ; tick++) { Thread.sleep(1000); feed.put(tick); } }
                    catch (InterruptedException e) { }
                }, "producer").start();
                break;
            case "idle":
                ServerSocket server = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
                new Thread(() -> { try { server.accept(); } catch (Exception e) { } }, "server").start();
                Executors.newSingleThreadScheduledExecutor().scheduleAtFixedRate(() -> { }, 0, 1, TimeUnit.SECONDS);
                break;
        }
        Thread.sleep(500);
        ready();
        Thread.currentThread().join();
    }
}
