package structs

import "time"

func (r *RestartPolicy) validate(p *problems, prefix string) {
	switch r.Mode {
	case RestartPolicyModeDelay, RestartPolicyModeFail:
	default:
		p.add(prefix, "unsupported restart mode %q: must be %q or %q", r.Mode, RestartPolicyModeDelay, RestartPolicyModeFail)
	}
	if r.Attempts < 0 {
		p.add(prefix, "attempts must be >= 0, got %d", r.Attempts)
	}
	if r.Attempts == 0 && r.Mode == RestartPolicyModeDelay {
		// "delay" means: after the attempts, wait and start over. With no
		// attempts there is nothing to start over.
		p.add(prefix, "mode %q with 0 attempts is ambiguous: use mode %q to never restart", RestartPolicyModeDelay, RestartPolicyModeFail)
	}
	if r.Delay < 0 {
		p.add(prefix, "delay must be >= 0, got %s", r.Delay)
	}
	if r.Interval < MinRestartInterval {
		p.add(prefix, "interval must be >= %s, got %s", MinRestartInterval, r.Interval)
	}
	if r.Attempts > 0 && time.Duration(r.Attempts)*r.Delay > r.Interval {
		p.add(prefix, "%d attempts with a %s delay do not fit in the %s interval", r.Attempts, r.Delay, r.Interval)
	}
}

func (r *ReschedulePolicy) validate(p *problems, prefix string) {
	if r.Attempts < 0 {
		p.add(prefix, "attempts must be >= 0, got %d", r.Attempts)
	}
	if !r.Enabled() {
		// attempts = 0 and unlimited = false: rescheduling is off and the
		// other settings are never read.
		return
	}
	switch r.DelayFunction {
	case RescheduleDelayConstant, RescheduleDelayExponential, RescheduleDelayFibonacci:
	default:
		p.add(prefix, "invalid delay_function %q: must be constant, exponential or fibonacci", r.DelayFunction)
	}
	if r.Delay < MinRescheduleDelay {
		p.add(prefix, "delay must be >= %s, got %s", MinRescheduleDelay, r.Delay)
	}
	growing := r.DelayFunction == RescheduleDelayExponential || r.DelayFunction == RescheduleDelayFibonacci
	if growing && r.MaxDelay < r.Delay {
		p.add(prefix, "max_delay (%s) must be >= delay (%s)", r.MaxDelay, r.Delay)
	}
	if r.Unlimited {
		if r.Attempts > 0 {
			p.add(prefix, "attempts (%d) must not be set when unlimited is true", r.Attempts)
		}
		return
	}
	if r.Interval < MinRescheduleInterval {
		p.add(prefix, "interval must be >= %s, got %s", MinRescheduleInterval, r.Interval)
		return
	}
	r.validateAttemptsFit(p, prefix)
}

// validateAttemptsFit rejects policies whose attempts can never all
// happen within one interval. A replacement is only made while its delay
// is shorter than the interval (see Allocation.NextRescheduleTime); with
// a constant delay the attempts follow one another, so together they need
// attempts x delay.
func (r *ReschedulePolicy) validateAttemptsFit(p *problems, prefix string) {
	delays := r.Delays(r.Attempts)
	if r.DelayFunction == RescheduleDelayConstant {
		need := time.Duration(0)
		for _, d := range delays {
			need = saturatingAdd(need, d)
		}
		if need > r.Interval {
			p.add(prefix, "%d attempts with a constant %s delay need an interval of at least %s, got %s",
				r.Attempts, r.Delay, need, r.Interval)
		}
		return
	}
	for i, d := range delays {
		if d >= r.Interval {
			p.add(prefix, "attempt %d of %d would wait %s (%s delay from %s, max_delay %s), not less than the %s interval",
				i+1, r.Attempts, d, r.DelayFunction, r.Delay, r.MaxDelay, r.Interval)
			return
		}
	}
}

func (u *UpdateStrategy) validate(p *problems, prefix string) {
	switch u.HealthCheck {
	case UpdateHealthCheckChecks, UpdateHealthCheckTaskStates, UpdateHealthCheckManual:
	default:
		p.add(prefix, "invalid health_check %q: must be checks, task_states or manual", u.HealthCheck)
	}
	if u.MaxParallel < 0 {
		p.add(prefix, "max_parallel must be >= 0, got %d", u.MaxParallel)
	}
	if u.Canary < 0 {
		p.add(prefix, "canary must be >= 0, got %d", u.Canary)
	}
	if u.AutoPromote && u.Canary == 0 {
		p.add(prefix, "auto_promote requires canary > 0")
	}
	if u.MinHealthyTime < 0 {
		p.add(prefix, "min_healthy_time must be >= 0, got %s", u.MinHealthyTime)
	}
	if u.HealthyDeadline <= 0 {
		p.add(prefix, "healthy_deadline must be > 0, got %s", u.HealthyDeadline)
	}
	if u.ProgressDeadline < 0 {
		p.add(prefix, "progress_deadline must be >= 0, got %s", u.ProgressDeadline)
	}
	if u.MinHealthyTime >= u.HealthyDeadline {
		p.add(prefix, "min_healthy_time (%s) must be less than healthy_deadline (%s)", u.MinHealthyTime, u.HealthyDeadline)
	}
	if u.ProgressDeadline != 0 && u.HealthyDeadline >= u.ProgressDeadline {
		p.add(prefix, "healthy_deadline (%s) must be less than progress_deadline (%s)", u.HealthyDeadline, u.ProgressDeadline)
	}
	if u.Stagger <= 0 {
		p.add(prefix, "stagger must be > 0, got %s", u.Stagger)
	}
}

func (m *MigrateStrategy) validate(p *problems, prefix string) {
	if m.MaxParallel < 0 {
		p.add(prefix, "max_parallel must be >= 0, got %d", m.MaxParallel)
	}
	switch m.HealthCheck {
	case UpdateHealthCheckChecks, UpdateHealthCheckTaskStates:
	default:
		// A migration cannot wait for an operator: there is no manual mode.
		p.add(prefix, "invalid health_check %q: must be checks or task_states", m.HealthCheck)
	}
	if m.MinHealthyTime < 0 {
		p.add(prefix, "min_healthy_time must be >= 0, got %s", m.MinHealthyTime)
	}
	if m.HealthyDeadline <= 0 {
		p.add(prefix, "healthy_deadline must be > 0, got %s", m.HealthyDeadline)
	}
	if m.MinHealthyTime >= m.HealthyDeadline {
		p.add(prefix, "min_healthy_time (%s) must be less than healthy_deadline (%s)", m.MinHealthyTime, m.HealthyDeadline)
	}
}
