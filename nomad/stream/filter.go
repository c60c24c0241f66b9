package stream

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/opennomad/nomad/structs"
)

// Wildcard matches every key of a topic, or every topic.
const Wildcard = "*"

// supportedTopics are the topics the state store publishes. Nomad has more
// (ACL, variables, ...); subscribing to one of those is refused
// instead of silently never delivering anything.
var supportedTopics = map[structs.Topic]bool{
	structs.TopicAllocation: true,
	structs.TopicDeployment: true,
	structs.TopicEvaluation: true,
	structs.TopicJob:        true,
	structs.TopicNode:       true,
	structs.TopicNodePool:   true,
	structs.TopicService:    true,
	structs.TopicAll:        true,
}

// SubscribeRequest says which events a subscriber wants.
type SubscribeRequest struct {
	// Topics maps a topic (or "*") to the keys wanted; a key matches an
	// event's Key or any of its FilterKeys (e.g. an allocation's job ID),
	// and "*" or an empty list means every key. An empty map means every
	// topic and key.
	Topics map[structs.Topic][]string
	// Namespace keeps events of that namespace and events that belong to
	// none (nodes); "*" keeps all. Empty means the default namespace.
	Namespace string
	// Index replays buffered batches with an index at or after it.
	Index uint64
}

// filter is a compiled SubscribeRequest.
type filter struct {
	all       bool
	topics    map[structs.Topic]keySet
	namespace string
}

// keySet is nil when every key matches.
type keySet map[string]bool

func newFilter(req *SubscribeRequest) (*filter, error) {
	f := &filter{namespace: req.Namespace, topics: map[structs.Topic]keySet{}}
	if f.namespace == "" {
		f.namespace = structs.DefaultNamespace
	}
	if len(req.Topics) == 0 {
		f.all = true
		return f, nil
	}
	for topic, keys := range req.Topics {
		if !supportedTopics[topic] {
			return nil, fmt.Errorf("unsupported event topic %q (supported: %s)", topic, supportedTopicList())
		}
		if len(keys) == 0 || slices.Contains(keys, Wildcard) {
			f.topics[topic] = nil
			continue
		}
		set := keySet{}
		for _, k := range keys {
			set[k] = true
		}
		f.topics[topic] = set
	}
	if set, ok := f.topics[structs.TopicAll]; ok && set == nil {
		f.all = true
	}
	return f, nil
}

func supportedTopicList() string {
	names := make([]string, 0, len(supportedTopics))
	for t := range maps.Keys(supportedTopics) {
		names = append(names, string(t))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// apply returns the events of the slot's batch the filter keeps, nil
// when none. The published events are returned as they are when every
// event matches, so a subscriber to everything copies nothing.
func (f *filter) apply(s slot) *Batch {
	whole := &Batch{Index: s.events.Index, Events: s.events.Events, src: s.events, shared: s.shared}
	return whole.Keep(f.match)
}

func (f *filter) match(e *structs.Event) bool {
	if f.namespace != Wildcard && e.Namespace != "" && e.Namespace != f.namespace {
		return false
	}
	if f.all {
		return true
	}
	return f.matchTopic(e.Topic, e) || f.matchTopic(structs.TopicAll, e)
}

func (f *filter) matchTopic(topic structs.Topic, e *structs.Event) bool {
	set, ok := f.topics[topic]
	if !ok {
		return false
	}
	if set == nil || set[e.Key] {
		return true
	}
	for _, k := range e.FilterKeys {
		if set[k] {
			return true
		}
	}
	return false
}
