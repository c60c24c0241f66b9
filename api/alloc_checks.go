package api

// AllocCheckStatus is the latest result of one native service check of
// an allocation; its JSON is Nomad's. Status is "success", "failure" or
// "pending"; Timestamp is in Unix seconds.
type AllocCheckStatus struct {
	ID         string
	Check      string
	Group      string
	Mode       string
	Output     string
	Service    string
	Task       string
	Status     string
	StatusCode int
	Timestamp  int64
}

// AllocCheckStatuses are an allocation's check results by check ID.
type AllocCheckStatuses map[string]AllocCheckStatus

// Checks returns the latest result of each native service check of the
// allocation, from the client running it.
func (a *Allocations) Checks(allocID string, q *QueryOptions) (AllocCheckStatuses, error) {
	var out AllocCheckStatuses
	if _, err := a.client.query("/v1/client/allocation/"+escape(allocID)+"/checks", &out, q); err != nil {
		return nil, err
	}
	return out, nil
}
