package chaos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Operator is the operator's binary run as a process of its own, so that it
// can be killed (SIGKILL: no deferred cleanup, no lease released) and
// started again with the same arguments. Every run appends to one log.
type Operator struct {
	// Bin is the binary; Dir its working directory (watches.yaml).
	Bin, Dir string
	// Args follow the binary ("run", flags); Env is its whole environment.
	Args, Env []string
	// Log receives stdout and stderr of every run.
	Log string

	cmd  *exec.Cmd
	done chan struct{}
	err  error
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
	o.cmd, o.done, o.err = cmd, make(chan struct{}), nil
	go func(done chan struct{}) {
		o.err = cmd.Wait()
		log.Close()
		close(done)
	}(o.done)
	return nil
}

// Running tells whether the process has been started and not exited.
func (o *Operator) Running() bool {
	if o.done == nil {
		return false
	}
	select {
	case <-o.done:
		return false
	default:
		return true
	}
}

// Exited returns the exit error of a process that ended by itself (nil and
// false while it runs).
func (o *Operator) Exited() (bool, error) {
	if o.done == nil {
		return false, nil
	}
	select {
	case <-o.done:
		return true, o.err
	default:
		return false, nil
	}
}

// Pid of the running process.
func (o *Operator) Pid() int { return o.cmd.Process.Pid }

// Kill sends SIGKILL and waits for the process to be gone.
func (o *Operator) Kill() {
	if !o.Running() {
		return
	}
	_ = o.cmd.Process.Kill()
	<-o.done
}

// Stop sends SIGTERM (the manager stops its controllers and steps down as
// leader) and waits up to 30 s, then kills.
func (o *Operator) Stop() {
	if !o.Running() {
		return
	}
	_ = o.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-o.done:
	case <-time.After(30 * time.Second):
		o.Kill()
	}
}
