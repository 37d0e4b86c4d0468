package chaos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Operator is the operator's binary run as a process of its own, so that it
// can be killed (SIGKILL: no deferred cleanup, no lease released) and
// started again with the same arguments. Every run appends to one log.
type Operator struct {
	// Bin is the binary; Dir its working directory.
	Bin, Dir string
	// Args follow the binary ("run", flags); Env is its whole environment.
	Args, Env []string
	// Log receives stdout and stderr of every run.
	Log string

	// mu guards the current run: a test may sample the process (RSS) while
	// another goroutine restarts it.
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// run is the current process and its end (nil before the first Start).
func (o *Operator) run() (*exec.Cmd, chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.cmd, o.done
}

// Start runs the process; it must not be running.
func (o *Operator) Start() error {
	if o.Running() {
		return errors.New("chaos: the operator is already running")
	}
	log, err := os.OpenFile(o.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "----- start %s\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(o.Bin, o.Args...)
	cmd.Dir, cmd.Env = o.Dir, o.Env
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return err
	}
	done := make(chan struct{})
	o.mu.Lock()
	o.cmd, o.done, o.err = cmd, done, nil
	o.mu.Unlock()
	go func() {
		err := cmd.Wait()
		log.Close()
		o.mu.Lock()
		o.err = err
		o.mu.Unlock()
		close(done)
	}()
	return nil
}

// Running tells whether the process has been started and not exited.
func (o *Operator) Running() bool {
	_, done := o.run()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// Exited returns the exit error of a process that ended by itself (nil and
// false while it runs).
func (o *Operator) Exited() (bool, error) {
	_, done := o.run()
	if done == nil {
		return false, nil
	}
	select {
	case <-done:
		o.mu.Lock()
		defer o.mu.Unlock()
		return true, o.err
	default:
		return false, nil
	}
}

// Pid of the running process.
func (o *Operator) Pid() int {
	cmd, _ := o.run()
	return cmd.Process.Pid
}

// RSS is the resident set of the running process, from /proc; false when
// none runs.
func (o *Operator) RSS() (Memory, bool) {
	if !o.Running() {
		return Memory{}, false
	}
	m, err := ReadMemory(o.Pid())
	return m, err == nil
}

// Memory is a process's resident set in bytes: all of it (VmRSS),
// anonymous (heap, stacks: RssAnon) and file-backed (the binary's pages:
// RssFile).
type Memory struct{ RSS, Anon, File int64 }

// RSS is the resident set size of a process, in bytes (VmRSS).
func RSS(pid int) (int64, error) {
	m, err := ReadMemory(pid)
	return m.RSS, err
}

// ReadMemory reads a process's resident set from /proc/PID/status.
func ReadMemory(pid int) (Memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, err
	}
	var m Memory
	fields := map[string]*int64{"VmRSS:": &m.RSS, "RssAnon:": &m.Anon, "RssFile:": &m.File}
	seen := 0
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || fields[f[0]] == nil {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("process %d: %s %w", pid, f[0], err)
		}
		*fields[f[0]] = kb * 1024
		seen++
	}
	if seen != len(fields) {
		return Memory{}, fmt.Errorf("no VmRSS, RssAnon and RssFile for process %d", pid)
	}
	return m, nil
}

// Kill sends SIGKILL and waits for the process to be gone.
func (o *Operator) Kill() {
	if !o.Running() {
		return
	}
	cmd, done := o.run()
	_ = cmd.Process.Kill()
	<-done
}

// Stop sends SIGTERM (the manager stops its controllers and steps down as
// leader) and waits up to 30 s, then kills.
func (o *Operator) Stop() {
	if !o.Running() {
		return
	}
	cmd, done := o.run()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		o.Kill()
	}
}
