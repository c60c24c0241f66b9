package raftutil

import (
	"testing"

	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// An entry of alloc health verdicts of many deployments is named and its
// requests shown.
func TestDecodeEntry_DeploymentAllocHealthBatch(t *testing.T) {
	buf, err := structs.Encode(structs.DeploymentAllocHealthBatchRequestType, &structs.DeploymentAllocHealthBatchRequest{
		Requests: []*structs.ApplyDeploymentAllocHealthRequest{
			{DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: "d1", HealthyAllocationIDs: []string{"a1"}}},
			{DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: "d2", UnhealthyAllocationIDs: []string{"a2"}}},
		},
	})
	must.NoError(t, err)
	e := decodeEntry(&raft.Log{Index: 7, Type: raft.LogCommand, Data: buf})
	must.Eq(t, "DeploymentAllocHealthBatch", e.MessageType)
	body, ok := e.Body.(map[string]interface{})
	must.True(t, ok, must.Sprintf("body %#v", e.Body))
	reqs, ok := body["Requests"].([]interface{})
	must.True(t, ok, must.Sprintf("requests %#v", body["Requests"]))
	must.Len(t, 2, reqs)
	first, ok := reqs[0].(map[string]interface{})
	must.True(t, ok)
	must.Eq(t, "d1", first["DeploymentID"])
}
