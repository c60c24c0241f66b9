package structs

import "slices"

// Action is a command a task offers to run on demand (the task's
// `action "name"` block): `nomad action` runs it in a running allocation
// of the task through the exec machinery, so an operator runs what the
// job's author wrote rather than an arbitrary command.
type Action struct {
	Name    string
	Command string
	Args    []string
}

// Copy returns a deep copy.
func (a *Action) Copy() *Action {
	if a == nil {
		return nil
	}
	c := *a
	c.Args = slices.Clone(a.Args)
	return &c
}

// CopyActions deep-copies a list of actions.
func CopyActions(as []*Action) []*Action {
	if as == nil {
		return nil
	}
	out := make([]*Action, len(as))
	for i, a := range as {
		out[i] = a.Copy()
	}
	return out
}

// Argv is the command line the action runs.
func (a *Action) Argv() []string {
	return append([]string{a.Command}, a.Args...)
}

// JobAction is an action as the job's action list shows it: with the
// task and group that offer it.
type JobAction struct {
	Name          string
	Command       string
	Args          []string
	TaskName      string
	TaskGroupName string
}

// Actions lists the actions of every task of the job, in the order of
// its groups, tasks and actions.
func (j *Job) Actions() []*JobAction {
	out := []*JobAction{}
	for _, tg := range j.TaskGroups {
		for _, t := range tg.Tasks {
			for _, a := range t.Actions {
				out = append(out, &JobAction{Name: a.Name, Command: a.Command, Args: slices.Clone(a.Args),
					TaskName: t.Name, TaskGroupName: tg.Name})
			}
		}
	}
	return out
}

// validateActions checks the task's actions: each named, unique, with a
// command.
func (t *Task) validateActions(p *problems, prefix string) {
	seen := map[string]bool{}
	for i, a := range t.Actions {
		at := joinPath(prefix, "action")
		if a == nil {
			p.add(at, "action %d is empty", i)
			continue
		}
		switch {
		case a.Name == "":
			p.add(at, "action %d: missing name", i)
		case seen[a.Name]:
			p.add(at, "action %q is defined more than once", a.Name)
		}
		seen[a.Name] = true
		if a.Command == "" {
			p.add(at, "action %q: missing command", a.Name)
		}
	}
}
