package api

// ScalingPolicyListStub is the list form of a scaling policy.
type ScalingPolicyListStub struct {
	ID          string
	Enabled     bool
	Type        string
	Target      map[string]string
	CreateIndex uint64
	ModifyIndex uint64
}

// Scaling is the /v1/scaling endpoint group.
type Scaling struct {
	client *Client
}

// Scaling returns the scaling endpoint group.
func (c *Client) Scaling() *Scaling { return &Scaling{client: c} }

// ListPolicies lists the scaling policies (?job= and ?type= through
// q.Params).
func (s *Scaling) ListPolicies(q *QueryOptions) ([]*ScalingPolicyListStub, *QueryMeta, error) {
	var out []*ScalingPolicyListStub
	qm, err := s.client.query("/v1/scaling/policies", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// GetPolicy reads one scaling policy by ID.
func (s *Scaling) GetPolicy(id string, q *QueryOptions) (*ScalingPolicy, *QueryMeta, error) {
	var out ScalingPolicy
	qm, err := s.client.query("/v1/scaling/policy/"+escape(id), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}
