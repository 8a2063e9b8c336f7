// Go goroutines in a sync.Mutex lock-order deadlock while another goroutine ticks (so the runtime's own "all
// goroutines are asleep" never fires), and healthy look-alikes.
//   mutex    two goroutines take mutex A then B, and B then A
//   channel  a consumer blocked on a channel that a producer feeds every second (not hung)
//   idle     an HTTP server idle on loopback beside a ticker (not hung)
// ready <pid>
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

var lockA, lockB sync.Mutex

func lockOrder(first, second *sync.Mutex, both *sync.WaitGroup) {
	first.Lock()
	both.Done()
	both.Wait()
	second.Lock()
}

func ready() {
	pipe := os.NewFile(3, "ready")
	fmt.Fprintf(pipe, "ready %d\n", os.Getpid())
	pipe.Close()
}

func main() {
	go func() {
		for range time.Tick(100 * time.Millisecond) {
		}
	}()
	switch os.Args[1] {
	case "mutex":
		var both sync.WaitGroup
		both.Add(2)
		go lockOrder(&lockA, &lockB, &both)
		go lockOrder(&lockB, &lockA, &both)
		both.Wait()
		time.Sleep(200 * time.Millisecond)
	case "channel":
		feed := make(chan int)
		go func() {
			for tick := 0; ; tick++ {
				time.Sleep(time.Second)
				feed <- tick
			}
		}()
		go func() {
			for range feed {
			}
		}()
		time.Sleep(200 * time.Millisecond)
	case "idle":
		listener, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			os.Exit(1)
		}
		go http.Serve(listener, nil)
		time.Sleep(200 * time.Millisecond)
	}
	ready()
	select {}
}
