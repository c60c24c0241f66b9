package api

import (
	"reflect"
	"testing"
	"time"
)

// fillPolicy sets every pointer field of the struct p points to, found
// by reflection so that a field added later is covered, to a value
// unlike any default.
func fillPolicy(t *testing.T, p any) {
	t.Helper()
	v := reflect.ValueOf(p).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		n := reflect.New(f.Type().Elem())
		switch e := n.Elem(); e.Kind() {
		case reflect.Int64:
			e.SetInt(int64(7*time.Minute) + int64(i))
		case reflect.Int:
			e.SetInt(int64(40 + i))
		case reflect.String:
			e.SetString("filled")
		case reflect.Bool:
			e.SetBool(true)
		default:
			t.Fatalf("field %s: no value for %s", v.Type().Field(i).Name, e.Kind())
		}
		f.Set(n)
	}
}

// ownValues fails when a pointer field of a shares its value with b's.
func ownValues(t *testing.T, what string, a, b any) {
	t.Helper()
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := range va.NumField() {
		pa, pb := va.Field(i), vb.Field(i)
		if !pa.IsNil() && !pb.IsNil() && pa.Pointer() == pb.Pointer() {
			t.Errorf("%s: %s shares its value", what, va.Type().Field(i).Name)
		}
	}
}

func eq(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

// TestPolicyDefaults_Values holds the defaults to their values, each a
// value of its own.
func TestPolicyDefaults_Values(t *testing.T) {
	eq(t, "update", DefaultUpdateStrategy(), &UpdateStrategy{Stagger: new(30 * time.Second), MaxParallel: new(1),
		HealthCheck: new("checks"), MinHealthyTime: new(10 * time.Second), HealthyDeadline: new(5 * time.Minute),
		ProgressDeadline: new(10 * time.Minute), AutoRevert: new(false), Canary: new(0), AutoPromote: new(false)})
	eq(t, "migrate", DefaultMigrateStrategy(), &MigrateStrategy{MaxParallel: new(1), HealthCheck: new("checks"),
		MinHealthyTime: new(10 * time.Second), HealthyDeadline: new(5 * time.Minute)})
	eq(t, "service restart", DefaultServiceJobRestartPolicy(), &RestartPolicy{Delay: new(15 * time.Second),
		Attempts: new(2), Interval: new(30 * time.Minute), Mode: new(RestartPolicyModeFail), RenderTemplates: new(false)})
	eq(t, "batch restart", DefaultBatchJobRestartPolicy(), &RestartPolicy{Delay: new(15 * time.Second),
		Attempts: new(3), Interval: new(24 * time.Hour), Mode: new(RestartPolicyModeFail), RenderTemplates: new(false)})
	eq(t, "service reschedule", NewDefaultReschedulePolicy(JobTypeService), &ReschedulePolicy{Attempts: new(0),
		Interval: new(time.Duration(0)), Delay: new(30 * time.Second), DelayFunction: new("exponential"),
		MaxDelay: new(time.Hour), Unlimited: new(true)})
	eq(t, "batch reschedule", NewDefaultReschedulePolicy(JobTypeBatch), &ReschedulePolicy{Attempts: new(1),
		Interval: new(24 * time.Hour), Delay: new(5 * time.Second), DelayFunction: new("constant"),
		MaxDelay: new(time.Duration(0)), Unlimited: new(false)})
	eq(t, "system reschedule", NewDefaultReschedulePolicy(JobTypeSystem), &ReschedulePolicy{Attempts: new(0),
		Interval: new(time.Duration(0)), Delay: new(time.Duration(0)), DelayFunction: new(""),
		MaxDelay: new(time.Duration(0)), Unlimited: new(false)})

	ownValues(t, "two update defaults", DefaultUpdateStrategy(), DefaultUpdateStrategy())
	ownValues(t, "two migrate defaults", DefaultMigrateStrategy(), DefaultMigrateStrategy())
	ownValues(t, "two restart defaults", DefaultServiceJobRestartPolicy(), DefaultServiceJobRestartPolicy())
	ownValues(t, "two reschedule defaults", NewDefaultReschedulePolicy(JobTypeService), NewDefaultReschedulePolicy(JobTypeService))
	a, b := DefaultUpdateStrategy(), DefaultUpdateStrategy()
	*a.MaxParallel = 5
	if *b.MaxParallel != 1 {
		t.Error("a default changed with another")
	}
}

// policy is one kind of policy block: how to make an empty one, copy,
// merge and canonicalize it.
type policy struct {
	name         string
	empty        func() any
	copyOf       func(any) any
	merge        func(dst, src any)
	defaults     func() any
	canonicalize func(any)
}

var policies = []policy{
	{"update",
		func() any { return &UpdateStrategy{} },
		func(p any) any { return p.(*UpdateStrategy).Copy() },
		func(d, s any) { d.(*UpdateStrategy).Merge(s.(*UpdateStrategy)) },
		func() any { return DefaultUpdateStrategy() },
		func(p any) { p.(*UpdateStrategy).Canonicalize() }},
	{"migrate",
		func() any { return &MigrateStrategy{} },
		func(p any) any { return p.(*MigrateStrategy).Copy() },
		func(d, s any) { d.(*MigrateStrategy).Merge(s.(*MigrateStrategy)) },
		func() any { return DefaultMigrateStrategy() },
		func(p any) { p.(*MigrateStrategy).Canonicalize() }},
	{"reschedule",
		func() any { return &ReschedulePolicy{} },
		nil, // Copy shares the values, as it always did
		func(d, s any) { d.(*ReschedulePolicy).Merge(s.(*ReschedulePolicy)) },
		func() any { return NewDefaultReschedulePolicy(JobTypeService) },
		func(p any) { p.(*ReschedulePolicy).Canonicalize(JobTypeService) }},
}

// TestPolicies_CopyCanonicalizeEveryField holds Copy and Canonicalize to
// Merge's meaning on every field: values carried over, unset fields
// from the defaults, nothing shared with the source.
func TestPolicies_CopyCanonicalizeEveryField(t *testing.T) {
	for _, p := range policies {
		t.Run(p.name, func(t *testing.T) {
			src := p.empty()
			fillPolicy(t, src)
			if p.copyOf != nil {
				cp := p.copyOf(src)
				eq(t, "copy", cp, src)
				ownValues(t, "copy", src, cp)
			}

			canon := p.empty()
			p.merge(canon, src)
			p.canonicalize(canon)
			eq(t, "canonical full policy", canon, src)
			ownValues(t, "canonical", src, canon)

			// One field set: that one kept, the others the defaults.
			partial := p.empty()
			first := reflect.ValueOf(partial).Elem().Field(0)
			first.Set(reflect.ValueOf(src).Elem().Field(0))
			kept := first.Pointer()
			want := p.defaults()
			p.merge(want, partial)
			p.canonicalize(partial)
			eq(t, "canonical partial policy", partial, want)
			if reflect.ValueOf(partial).Elem().Field(0).Pointer() == kept {
				t.Error("canonicalizing kept the caller's pointer")
			}
		})
	}
	if (*UpdateStrategy)(nil).Copy() != nil || (*MigrateStrategy)(nil).Copy() != nil {
		t.Error("copy of nil is not nil")
	}
}
