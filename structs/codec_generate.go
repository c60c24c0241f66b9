package structs

// The msgpack codecs of the types on the servers' hot path (Raft entries,
// snapshot objects, the scheduler's RPCs) are generated: structs.generated.go
// gives them CodecEncodeSelf/CodecDecodeSelf methods, which the codec uses
// instead of reflection, writing the same bytes. Regenerate after changing
// any of those types (`make generate-codecs`); `make lint` fails while the
// file is out of date, and the tests in encoding_generated_test.go fail
// when a type's generated codec does not match its fields.
//go:generate go run ../tools/codecgen
