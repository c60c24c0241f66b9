package structs

// Search contexts: the kinds of object a search looks through, named as
// Nomad names them. SearchContextAll searches every one the caller may
// read.
const (
	SearchContextAll         = "all"
	SearchContextJobs        = "jobs"
	SearchContextEvals       = "evals"
	SearchContextAllocs      = "allocs"
	SearchContextNodes       = "nodes"
	SearchContextDeployments = "deployment"
	SearchContextNodePools   = "node_pools"
	SearchContextNamespaces  = "namespaces"
	SearchContextHostVolumes = "host_volumes"
	// Fuzzy search only: parts of jobs.
	SearchContextGroups   = "groups"
	SearchContextTasks    = "tasks"
	SearchContextCommands = "commands"
	SearchContextImages   = "images"
)

// SearchResultLimit is how many matches one context returns; more set
// its truncation flag.
const SearchResultLimit = 20

// FuzzySearchMinTermLength is the shortest text a fuzzy search accepts.
const FuzzySearchMinTermLength = 2

// FuzzySearchResultLimit is how many fuzzy matches one context returns.
const FuzzySearchResultLimit = 100

// SearchRequest is a prefix search of IDs (names for node pools and
// namespaces) in one context or all.
type SearchRequest struct {
	Prefix  string
	Context string
	QueryOptions
}

// SearchResponse lists the matching IDs by context; Truncations says
// which contexts had more than SearchResultLimit.
type SearchResponse struct {
	Matches     map[string][]string
	Truncations map[string]bool
	QueryMeta
}

// FuzzySearchRequest is a case-insensitive substring search of names.
type FuzzySearchRequest struct {
	Text    string
	Context string
	QueryOptions
}

// FuzzyMatch is one fuzzy match: the matching name and where it lives
// (e.g. [namespace, job, group, task] for a task's command).
type FuzzyMatch struct {
	ID    string
	Scope []string
}

// FuzzySearchResponse lists the fuzzy matches by context.
type FuzzySearchResponse struct {
	Matches     map[string][]FuzzyMatch
	Truncations map[string]bool
	QueryMeta
}
