package endpoints

import (
	"fmt"

	"github.com/hashicorp/go-bexpr"

	"github.com/opennomad/nomad/structs"
)

// listFilter is a list request's filter expression (Nomad's ?filter),
// evaluated by the server over the whole stored object, as Nomad does,
// before the object is cut down to its list stub: `ParameterizedJob is
// not nil` must see the job's block, not the stub's flag. A nil
// listFilter matches everything.
type listFilter struct {
	eval *bexpr.Evaluator
}

// newListFilter compiles expr; an empty expr is no filter. A malformed
// expression is a validation error (400) that names it.
func newListFilter(expr string) (*listFilter, error) {
	if expr == "" {
		return nil, nil
	}
	eval, err := bexpr.CreateEvaluator(expr)
	if err != nil {
		return nil, &structs.ValidationError{Problems: []string{fmt.Sprintf("failed to read filter expression: %v", err)}}
	}
	return &listFilter{eval: eval}, nil
}

// match reports whether obj passes the filter. A selector the object
// does not have is a validation error, as Nomad answers.
func (f *listFilter) match(obj interface{}) (bool, error) {
	if f == nil {
		return true, nil
	}
	ok, err := f.eval.Evaluate(obj)
	if err != nil {
		return false, &structs.ValidationError{Problems: []string{fmt.Sprintf("failed to apply filter: %v", err)}}
	}
	return ok, nil
}
