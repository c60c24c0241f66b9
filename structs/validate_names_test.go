package structs_test

import (
	"slices"
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestValidate_NULInNames(t *testing.T) {
	parameterized := func() *structs.Job {
		j := batchJob()
		j.ParameterizedJob = &structs.ParameterizedJobConfig{}
		return j
	}
	runValidationCases(t, []validationCase{
		{"namespace", nil, func(j *structs.Job) { j.Namespace = "de\x00fault" },
			[]string{`namespace "de\x00fault" must not contain null characters`}},
		{"region", nil, func(j *structs.Job) { j.Region = "glo\x00bal" },
			[]string{`region "glo\x00bal" must not contain null characters`}},
		{"datacenter", nil, func(j *structs.Job) { j.Datacenters = []string{"dc1", "dc\x002"} },
			[]string{`datacenter "dc\x002" must not contain null characters`}},
		{"node pool", nil, func(j *structs.Job) { j.NodePool = "de\x00fault" },
			[]string{`invalid node pool "de\x00fault"`}},
		{"job id", nil, func(j *structs.Job) { j.ID = "ex\x00ample" },
			[]string{`job ID "ex\x00ample" must not contain spaces or null characters`}},
		{"job name", nil, func(j *structs.Job) { j.Name = "ex\x00ample" },
			[]string{`job name must not contain null characters`}},
		{"job meta key", nil, func(j *structs.Job) { j.Meta = map[string]string{"ow\x00ner": "x"} },
			[]string{`meta key "ow\x00ner" must not contain null characters`}},
		{"job meta value", nil, func(j *structs.Job) { j.Meta = map[string]string{"owner": "x\x00"} },
			[]string{`meta "owner": value must not contain null characters`}},
		{"meta_required", parameterized, func(j *structs.Job) { j.ParameterizedJob.MetaRequired = []string{"a\x00"} },
			[]string{`parameterized: meta_required key "a\x00" must not contain null characters`}},
		{"meta_optional", parameterized, func(j *structs.Job) { j.ParameterizedJob.MetaOptional = []string{"b\x00"} },
			[]string{`parameterized: meta_optional key "b\x00" must not contain null characters`}},
		{"group name", nil, func(j *structs.Job) { tg0(j).Name = "w\x00eb" },
			[]string{`group "w\x00eb": group name "w\x00eb" must not contain null characters`}},
		{"group meta key", nil, func(j *structs.Job) { tg0(j).Meta = map[string]string{"k\x00": "v"} },
			[]string{grp + `: meta key "k\x00" must not contain null characters`}},
		{"task name", nil, func(j *structs.Job) { task0(j).Name = "w\x00eb" },
			[]string{`group "web": task "w\x00eb": task name "w\x00eb" must not contain slashes or null characters`}},
		{"task meta key", nil, func(j *structs.Job) { task0(j).Meta = map[string]string{"k\x00": "v"} },
			[]string{task + `: meta key "k\x00" must not contain null characters`}},
		{"task env", nil, func(j *structs.Job) { task0(j).Env = map[string]string{"A\x00": "1", "B": "2\x00"} },
			[]string{task + `: env key "A\x00" must not contain null characters`,
				task + `: env "B": value must not contain null characters`}},
		{"task driver", nil, func(j *structs.Job) { task0(j).Driver = "raw\x00exec" },
			[]string{task + `: driver "raw\x00exec" must not contain null characters`}},
		{"task user", nil, func(j *structs.Job) { task0(j).User = "no\x00body" },
			[]string{task + `: user "no\x00body" must not contain null characters`}},
		{"task kill signal", nil, func(j *structs.Job) { task0(j).KillSignal = "SIG\x00INT" },
			[]string{task + `: kill_signal "SIG\x00INT" must not contain null characters`}},
		{"several at once", nil, func(j *structs.Job) {
			j.Namespace = "a\x00"
			tg0(j).Meta = map[string]string{"b\x00": ""}
			task0(j).Meta = map[string]string{"c\x00": ""}
		}, []string{
			`namespace "a\x00"`,
			grp + `: meta key "b\x00"`,
			task + `: meta key "c\x00"`,
		}},
	})
}

func TestNode_NULProblems(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(n *structs.Node)
		want   []string
	}{
		{"clean", func(n *structs.Node) {}, nil},
		{"name", func(n *structs.Node) { n.Name = "n\x001" }, []string{`node name "n\x001" must not contain null characters`}},
		{"datacenter", func(n *structs.Node) { n.Datacenter = "dc\x00" }, []string{`datacenter "dc\x00" must not contain null characters`}},
		{"class", func(n *structs.Node) { n.NodeClass = "c\x00" }, []string{`node class "c\x00" must not contain null characters`}},
		{"pool", func(n *structs.Node) { n.NodePool = "p\x00" }, []string{`node pool "p\x00" must not contain null characters`}},
		{"meta", func(n *structs.Node) { n.Meta["r\x00ack"] = "1" }, []string{`meta key "r\x00ack" must not contain null characters`}},
		{"attribute value", func(n *structs.Node) { n.Attributes["kernel.name"] = "li\x00nux" },
			[]string{`attribute "kernel.name": value must not contain null characters`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := mock.Node()
			tc.mutate(n)
			if got := n.NULProblems(); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
