// Rust's std locks (futex words that record no owner) in a lock-order deadlock, and healthy look-alikes, built by
// Debian's rustc without debug symbols.
//   mutex    two threads take std::sync::Mutex A then B, and B then A
//   rwlock   the same with std::sync::RwLock, both to write
//   condvar  a thread waits on a Condvar holding the Mutex its only notifier must take first
//   channel  a consumer blocked on an mpsc channel that its producer feeds every second (not hung)
//   idle     a TCP server idle in accept() beside a heartbeat thread (not hung)
// ready <pid> <first tid> <second tid>
use std::fs::File;
use std::io::Write;
use std::os::unix::io::FromRawFd;
use std::sync::{mpsc, Arc, Barrier, Condvar, Mutex, RwLock};
use std::thread;
use std::time::{Duration, Instant};

static MUTEX_A: Mutex<u64> = Mutex::new(0);
static MUTEX_B: Mutex<u64> = Mutex::new(0);
static RWLOCK_A: RwLock<u64> = RwLock::new(0);
static RWLOCK_B: RwLock<u64> = RwLock::new(0);
static GATE: Mutex<u64> = Mutex::new(0);
static READY: Mutex<bool> = Mutex::new(false);
static SIGNAL: Condvar = Condvar::new();

fn own_tid() -> u32 {
    // /proc/thread-self is "<pid>/task/<tid>"
    let link = std::fs::read_link("/proc/thread-self").expect("/proc/thread-self");
    link.file_name().unwrap().to_str().unwrap().parse().unwrap()
}

// until thread `tid` has slept in `wchan` for 100 ms on end (it may pass through other waits first)
fn wait_for_wchan(tid: u32, wchan: &str) {
    let started = Instant::now();
    let mut settled = 0;
    while settled < 20 {
        let now = std::fs::read_to_string(format!("/proc/self/task/{}/wchan", tid)).unwrap_or_default();
        settled = if now.starts_with(wchan) { settled + 1 } else { 0 };
        if started.elapsed() > Duration::from_secs(10) {
            eprintln!("rust_locks: thread {} never slept in {} (last {})", tid, wchan, now);
            std::process::exit(1);
        }
        thread::sleep(Duration::from_millis(5));
    }
}

fn ready(tids: &[u32]) {
    let mut pipe = unsafe { File::from_raw_fd(3) };
    let mut line = format!("ready {}", std::process::id());
    for tid in tids {
        line += &format!(" {}", tid);
    }
    line += "\n";
    if pipe.write_all(line.as_bytes()).is_err() {
        std::process::exit(1);
    }
}

// the threads started, to be joined when all are in position
static STARTED: Mutex<Vec<thread::JoinHandle<()>>> = Mutex::new(Vec::new());

// starts `body` in a thread named `name`; its tid
fn spawn_named<F: FnOnce() + Send + 'static>(name: &str, body: F) -> u32 {
    let (tid_sender, tid_receiver) = mpsc::channel();
    let handle = thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            tid_sender.send(own_tid()).unwrap();
            body();
        })
        .unwrap();
    STARTED.lock().unwrap().push(handle);
    tid_receiver.recv().unwrap()
}

fn lock_order_mutexes(first: &'static Mutex<u64>, second: &'static Mutex<u64>, both: Arc<Barrier>) {
    let mut held = first.lock().unwrap();
    both.wait();
    let mut wanted = second.lock().unwrap();
    *held += 1;
    *wanted += 1;
}

fn lock_order_rwlocks(first: &'static RwLock<u64>, second: &'static RwLock<u64>, both: Arc<Barrier>) {
    let mut held = first.write().unwrap();
    both.wait();
    let mut wanted = second.write().unwrap();
    *held += 1;
    *wanted += 1;
}

// waits for READY holding GATE, which the only thread that would set READY takes first
fn waits_holding_the_gate(both: Arc<Barrier>) {
    let _gate = GATE.lock().unwrap();
    both.wait();
    let mut ready = READY.lock().unwrap();
    while !*ready {
        ready = SIGNAL.wait(ready).unwrap();
    }
}

fn notifies_after_the_gate(both: Arc<Barrier>) {
    both.wait();
    let _gate = GATE.lock().unwrap();
    *READY.lock().unwrap() = true;
    SIGNAL.notify_all();
}

// says it is in position, then joins the threads, as a program's main thread does
fn hold_forever(tids: &[u32]) -> ! {
    ready(tids);
    let handles: Vec<_> = STARTED.lock().unwrap().drain(..).collect();
    for handle in handles {
        let _ = handle.join();
    }
    std::process::exit(0);
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let both = Arc::new(Barrier::new(2));
    let (b1, b2) = (both.clone(), both.clone());
    match mode.as_str() {
        "mutex" => {
            let tids = [spawn_named("takes-a-then-b", move || lock_order_mutexes(&MUTEX_A, &MUTEX_B, b1)),
                        spawn_named("takes-b-then-a", move || lock_order_mutexes(&MUTEX_B, &MUTEX_A, b2))];
            tids.iter().for_each(|tid| wait_for_wchan(*tid, "futex"));
            hold_forever(&tids);
        }
        "rwlock" => {
            let tids = [spawn_named("writes-a-then-b", move || lock_order_rwlocks(&RWLOCK_A, &RWLOCK_B, b1)),
                        spawn_named("writes-b-then-a", move || lock_order_rwlocks(&RWLOCK_B, &RWLOCK_A, b2))];
            tids.iter().for_each(|tid| wait_for_wchan(*tid, "futex"));
            hold_forever(&tids);
        }
        "condvar" => {
            let tids = [spawn_named("waits-for-ready", move || waits_holding_the_gate(b1)),
                        spawn_named("would-notify", move || notifies_after_the_gate(b2))];
            tids.iter().for_each(|tid| wait_for_wchan(*tid, "futex"));
            hold_forever(&tids);
        }
        "channel" => {
            let (sender, receiver) = mpsc::channel::<u64>();
            let producer = spawn_named("producer", move || {
                for tick in 0.. {
                    thread::sleep(Duration::from_secs(1));
                    if sender.send(tick).is_err() {
                        return;
                    }
                }
            });
            let consumer = spawn_named("consumer", move || while receiver.recv().is_ok() {});
            wait_for_wchan(consumer, "futex");
            hold_forever(&[consumer, producer]);
        }
        "idle" => {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let server = spawn_named("server", move || for _ in listener.incoming() {});
            let heartbeat = spawn_named("heartbeat", || loop {
                thread::sleep(Duration::from_secs(1));
            });
            wait_for_wchan(server, "inet_csk_accept");
            hold_forever(&[server, heartbeat]);
        }
        _ => {
            eprintln!("usage: rust_locks mutex|rwlock|condvar|channel|idle");
            std::process::exit(2);
        }
    }
}
