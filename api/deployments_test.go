package api

import (
	"net/url"
	"testing"
)

const deploymentJSON = `{"ID":"d-1","Namespace":"default","JobID":"web","JobVersion":3,"Status":"running",
	"StatusDescription":"Deployment is running but requires manual promotion",
	"TaskGroups":{"web":{"Promoted":false,"DesiredCanaries":1,"DesiredTotal":3,"PlacedCanaries":["a-1"],
	"PlacedAllocs":1,"HealthyAllocs":1,"ProgressDeadline":600000000000,"RequireProgressBy":"2026-03-02T09:10:00Z"}},
	"CreateIndex":40,"ModifyIndex":44}`

func TestDeploymentsEndpoints(t *testing.T) {
	update := reply{Body: `{"EvalID":"e-9","EvalCreateIndex":50,"DeploymentModifyIndex":50,"RevertedJobVersion":2,"Index":50}`}
	checkUpdate := func(t *testing.T, out any) {
		r := out.(*DeploymentUpdateResponse)
		if r.EvalID != "e-9" || r.DeploymentModifyIndex != 50 || r.RevertedJobVersion == nil || *r.RevertedJobVersion != 2 {
			t.Fatalf("response = %+v", r)
		}
	}
	runEndpointCases(t, []endpointCase{
		{
			name:     "list",
			reply:    reply{Body: "[" + deploymentJSON + "]"},
			call:     func(c *Client) (any, error) { r, _, err := c.Deployments().List(nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/deployments",
			check: func(t *testing.T, out any) {
				ds := out.([]*Deployment)
				st := ds[0].TaskGroups["web"]
				if len(ds) != 1 || ds[0].JobVersion != 3 || st.DesiredCanaries != 1 || st.PlacedCanaries[0] != "a-1" ||
					st.ProgressDeadline.Minutes() != 10 || st.RequireProgressBy.IsZero() {
					t.Fatalf("deployments = %+v, group %+v", ds, st)
				}
			},
		},
		{
			name:     "prefix list",
			reply:    reply{Body: `[]`},
			call:     func(c *Client) (any, error) { r, _, err := c.Deployments().PrefixList("d-"); return r, err },
			wantMeth: "GET", wantPath: "/v1/deployments", wantQuery: url.Values{"prefix": {"d-"}},
		},
		{
			name:     "info",
			reply:    reply{Body: deploymentJSON},
			call:     func(c *Client) (any, error) { r, _, err := c.Deployments().Info("d-1", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/deployment/d-1",
		},
		{
			name:     "allocations",
			reply:    reply{Body: `[{"ID":"a-1"}]`},
			call:     func(c *Client) (any, error) { r, _, err := c.Deployments().Allocations("d-1", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/deployment/allocations/d-1",
		},
		{
			name: "promote all", reply: update, check: checkUpdate,
			call:     func(c *Client) (any, error) { r, _, err := c.Deployments().PromoteAll("d-1", nil); return r, err },
			wantMeth: "PUT", wantPath: "/v1/deployment/promote/d-1",
			wantBody: `{"DeploymentID":"d-1","All":true,"Groups":null}`,
		},
		{
			name: "promote groups", reply: update,
			call: func(c *Client) (any, error) {
				r, _, err := c.Deployments().PromoteGroups("d-1", []string{"web"}, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/deployment/promote/d-1",
			wantBody: `{"DeploymentID":"d-1","All":false,"Groups":["web"]}`,
		},
		{
			name: "pause", reply: update,
			call:     func(c *Client) (any, error) { r, _, err := c.Deployments().Pause("d-1", true, nil); return r, err },
			wantMeth: "PUT", wantPath: "/v1/deployment/pause/d-1",
			wantBody: `{"DeploymentID":"d-1","Pause":true}`,
		},
		{
			name: "fail", reply: update, check: checkUpdate,
			call:     func(c *Client) (any, error) { r, _, err := c.Deployments().Fail("d-1", nil); return r, err },
			wantMeth: "PUT", wantPath: "/v1/deployment/fail/d-1",
			wantBody: `{"DeploymentID":"d-1"}`,
		},
		{
			name: "alloc health", reply: update,
			call: func(c *Client) (any, error) {
				r, _, err := c.Deployments().SetAllocHealth("d-1", []string{"a-1"}, nil, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/deployment/allocation-health/d-1",
			wantBody: `{"DeploymentID":"d-1","HealthyAllocationIDs":["a-1"],"UnhealthyAllocationIDs":null}`,
		},
		{
			name:     "job deployments",
			reply:    reply{Body: "[" + deploymentJSON + "]"},
			call:     func(c *Client) (any, error) { r, _, err := c.Jobs().Deployments("web/x", true, nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/job/web%2Fx/deployments", wantQuery: url.Values{"all": {"true"}},
		},
		{
			name:     "latest deployment",
			reply:    reply{Body: deploymentJSON},
			call:     func(c *Client) (any, error) { r, _, err := c.Jobs().LatestDeployment("web", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/job/web/deployment",
			check: func(t *testing.T, out any) {
				if d := out.(*Deployment); d == nil || d.ID != "d-1" {
					t.Fatalf("deployment = %+v", d)
				}
			},
		},
		{
			name:     "no latest deployment",
			reply:    reply{Body: `null`},
			call:     func(c *Client) (any, error) { r, _, err := c.Jobs().LatestDeployment("web", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/job/web/deployment",
			check: func(t *testing.T, out any) {
				if d := out.(*Deployment); d != nil {
					t.Fatalf("deployment = %+v, want nil", d)
				}
			},
		},
		{
			name:     "periodic force",
			reply:    reply{Body: `{"EvalID":"e-3","EvalCreateIndex":60,"Index":60}`},
			call:     func(c *Client) (any, error) { r, _, err := c.Jobs().PeriodicForce("nightly", nil); return r, err },
			wantMeth: "PUT", wantPath: "/v1/job/nightly/periodic/force",
			check: func(t *testing.T, out any) {
				if out.(string) != "e-3" {
					t.Fatalf("eval = %v", out)
				}
			},
		},
	})
}
