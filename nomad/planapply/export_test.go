package planapply

// SetWaitHook makes the applier call f with the sequence number of the
// pending result a plan starts waiting for (a stop that may make it fit).
// For the tests of package planapply_test; set it before Run.
func (a *Applier) SetWaitHook(f func(seq uint64)) { a.waitHook = f }

// Running reports whether Run is in progress.
func (a *Applier) Running() bool { return a.running.Load() }
