package api

import (
	"net/url"
	"testing"
)

func TestJobOperationsEndpoints(t *testing.T) {
	prior, diffVersion := uint64(3), uint64(1)
	two := 2
	runEndpointCases(t, []endpointCase{
		{
			name:  "revert",
			reply: reply{Body: `{"EvalID":"e-1","EvalCreateIndex":7,"JobModifyIndex":7}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Jobs().Revert("a/b", 1, &prior, nil, "", "")
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/job/a%2Fb/revert",
			wantBody: `{"JobID":"a/b","JobVersion":1,"EnforcePriorVersion":3,"Region":"","Namespace":"","SecretID":""}`,
			check: func(t *testing.T, out any) {
				if out.(*JobRegisterResponse).EvalID != "e-1" {
					t.Fatalf("reply = %+v", out)
				}
			},
		},
		{
			name:  "stable",
			reply: reply{Body: `{"Index":8,"JobModifyIndex":8}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Jobs().Stable("web", 2, true, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/job/web/stable",
			wantBody: `{"JobID":"web","JobVersion":2,"Stable":true,"Region":"","Namespace":"","SecretID":""}`,
			check: func(t *testing.T, out any) {
				if out.(*JobStabilityResponse).JobModifyIndex != 8 {
					t.Fatalf("reply = %+v", out)
				}
			},
		},
		{
			name:  "scale",
			reply: reply{Body: `{"EvalID":"e-2"}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Jobs().Scale("web", "cache", &two, "m", false, map[string]any{"k": "v"}, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/job/web/scale",
			wantBody: `{"Count":2,"Target":{"Job":"web","Group":"cache"},"Message":"m","Error":false,"Meta":{"k":"v"},
				"Region":"","Namespace":"","SecretID":"","PolicyOverride":false,"JobModifyIndex":0}`,
		},
		{
			name: "scale status",
			reply: reply{Body: `{"JobID":"web","TaskGroups":{"cache":{"Desired":2,"Placed":1,
				"Events":[{"Count":2,"PreviousCount":1,"EvalID":"e-2","Time":5}]}}}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Jobs().ScaleStatus("web", nil)
				return r, err
			},
			wantMeth: "GET", wantPath: "/v1/job/web/scale",
			check: func(t *testing.T, out any) {
				tg := out.(*JobScaleStatusResponse).TaskGroups["cache"]
				if tg.Desired != 2 || *tg.Events[0].Count != 2 || *tg.Events[0].EvalID != "e-2" {
					t.Fatalf("reply = %+v", out)
				}
			},
		},
		{
			name:  "tag a version",
			reply: reply{Body: `{}`},
			call: func(c *Client) (any, error) {
				_, err := c.Jobs().TagVersion("web", 1, "golden", "known good", nil)
				return nil, err
			},
			wantMeth: "PUT", wantPath: "/v1/job/web/versions/golden/tag",
			wantBody: `{"Version":1,"Latest":false,"Description":"known good","Region":"","Namespace":"","SecretID":""}`,
		},
		{
			name:  "untag",
			reply: reply{Body: `{}`},
			call: func(c *Client) (any, error) {
				_, err := c.Jobs().UntagVersion("web", "golden", nil)
				return nil, err
			},
			wantMeth: "DELETE", wantPath: "/v1/job/web/versions/golden/tag",
		},
		{
			name:  "versions against a version",
			reply: reply{Body: `{"Versions":[{"ID":"web","Version":1,"VersionTag":{"Name":"golden"}}],"Diffs":[]}`},
			call: func(c *Client) (any, error) {
				v, _, _, err := c.Jobs().VersionsOpts("web", &VersionsOptions{Diffs: true, DiffTag: "golden", DiffVersion: &diffVersion}, nil)
				return v, err
			},
			wantMeth: "GET", wantPath: "/v1/job/web/versions",
			wantQuery: url.Values{"diffs": {"true"}, "diff_tag": {"golden"}, "diff_version": {"1"}},
			check: func(t *testing.T, out any) {
				if v := out.([]*Job); v[0].VersionTag.Name != "golden" {
					t.Fatalf("versions = %+v", v)
				}
			},
		},
	})
}
