package structs

// Topic is a class of state changes clients may subscribe to on the event
// stream.
type Topic string

// Event stream topics.
const (
	TopicDeployment Topic = "Deployment"
	TopicEvaluation Topic = "Evaluation"
	TopicAllocation Topic = "Allocation"
	TopicJob        Topic = "Job"
	TopicNode       Topic = "Node"
	TopicNodePool   Topic = "NodePool"
	TopicService    Topic = "Service"
	TopicAll        Topic = "*"
)

// Event types, as Nomad names them.
const (
	TypeNodeRegistration              = "NodeRegistration"
	TypeNodeDeregistration            = "NodeDeregistration"
	TypeNodeEligibilityUpdate         = "NodeEligibility"
	TypeNodeDrain                     = "NodeDrain"
	TypeNodeEvent                     = "NodeStreamEvent"
	TypeDeploymentUpdate              = "DeploymentStatusUpdate"
	TypeDeploymentPromotion           = "DeploymentPromotion"
	TypeDeploymentAllocHealth         = "DeploymentAllocHealth"
	TypeAllocationCreated             = "AllocationCreated"
	TypeAllocationUpdated             = "AllocationUpdated"
	TypeAllocationUpdateDesiredStatus = "AllocationUpdateDesiredStatus"
	TypeEvalUpdated                   = "EvaluationUpdated"
	TypeJobRegistered                 = "JobRegistered"
	TypeJobDeregistered               = "JobDeregistered"
	TypeJobBatchDeregistered          = "JobBatchDeregistered"
	TypePlanResult                    = "PlanResult"
	TypeSchedulerConfigUpdated        = "SchedulerConfigUpdated"
	TypeNodePoolUpserted              = "NodePoolUpserted"
	TypeNodePoolDeleted               = "NodePoolDeleted"
	TypeServiceRegistration           = "ServiceRegistration"
	TypeServiceDeregistration         = "ServiceDeregistration"
)

// Event is one state change published on the event stream. Payload is one
// of JobEvent, EvaluationEvent, AllocationEvent, NodeStreamEvent,
// DeploymentEvent, NodePoolEvent or ServiceRegistrationStreamEvent, which
// serialise as {"Job": {...}}, {"Service": {...}} and so on.
type Event struct {
	Topic      Topic
	Type       string
	Key        string
	Namespace  string
	FilterKeys []string
	Index      uint64
	Payload    interface{}
}

// Events is the batch of events of one Raft index.
type Events struct {
	Index  uint64
	Events []Event
}

// JobEvent is the payload of Job topic events.
type JobEvent struct {
	Job *Job
}

// EvaluationEvent is the payload of Evaluation topic events.
type EvaluationEvent struct {
	Evaluation *Evaluation
}

// AllocationEvent is the payload of Allocation topic events.
type AllocationEvent struct {
	Allocation *Allocation
}

// NodeStreamEvent is the payload of Node topic events; the node's secret
// is never included.
type NodeStreamEvent struct {
	Node *Node
}

// DeploymentEvent is the payload of Deployment topic events.
type DeploymentEvent struct {
	Deployment *Deployment
}

// NodePoolEvent is the payload of NodePool topic events.
type NodePoolEvent struct {
	NodePool *NodePool
}

// ServiceRegistrationStreamEvent is the payload of Service topic events.
type ServiceRegistrationStreamEvent struct {
	Service *ServiceRegistration
}
