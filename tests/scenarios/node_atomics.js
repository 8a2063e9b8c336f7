// Node's worker_threads waiting on each other with Atomics.wait on a SharedArrayBuffer, and healthy look-alikes.
//   deadlock   the main thread waits for the worker's word, the worker for the main thread's: neither notifies
//   fed        a worker waits on a word the main thread bumps and notifies every second (not hung)
//   idle       an HTTP server idle on loopback with a heartbeat timer (not hung)
// ready <pid> <main tid> <worker tid>
'use strict';
const fs = require('fs');
const { Worker, isMainThread, workerData, threadId } = require('worker_threads');

function ownTid() {
    return Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
}

if (!isMainThread) {
    const words = new Int32Array(workerData.shared);
    Atomics.store(words, 2, ownTid());
    Atomics.notify(words, 2);
    if (workerData.mode === 'deadlock') {
        Atomics.wait(words, 1, 0);        // for the main thread, which waits for us
        Atomics.store(words, 0, 1);
        Atomics.notify(words, 0);
    } else {
        for (let seen = 0; ; seen++)
            Atomics.wait(words, 1, seen); // bumped every second
    }
    return;
}

const mode = process.argv[2];
function ready(tids) {
    fs.writeSync(3, `ready ${process.pid} ${tids.join(' ')}\n`);
    fs.closeSync(3);
}

// until thread `tid` sleeps on a futex and has stayed there for 100 ms
function sleepsOnAFutex(tid, then) {
    let settled = 0;
    const check = setInterval(() => {
        let wchan = '';
        try { wchan = fs.readFileSync(`/proc/self/task/${tid}/wchan`, 'utf8'); } catch (e) {}
        settled = wchan.startsWith('futex') ? settled + 1 : 0;
        if (settled >= 20) {
            clearInterval(check);
            then();
        }
    }, 5);
}

if (mode === 'idle') {
    const server = require('http').createServer((request, response) => response.end('ok'));
    server.listen(0, '127.0.0.1', () => {
        setInterval(() => {}, 1000);
        setTimeout(() => ready([ownTid()]), 200);
    });
} else {
    const shared = new SharedArrayBuffer(16);
    const words = new Int32Array(shared);
    const worker = new Worker(__filename, { workerData: { shared, mode } });
    const started = setInterval(() => {
        if (Atomics.load(words, 2) === 0)
            return;
        clearInterval(started);
        const workerTid = Atomics.load(words, 2);
        sleepsOnAFutex(workerTid, () => {
            if (mode === 'deadlock') {
                ready([ownTid(), workerTid]);
                Atomics.wait(words, 0, 0); // for the worker, which waits for us
            } else {
                ready([ownTid(), workerTid]);
                setInterval(() => { Atomics.add(words, 1, 1); Atomics.notify(words, 1); }, 1000);
            }
        });
    }, 5);
}
