package api

import (
	"io"
	"net/http"
	"net/url"
)

// RaftRemovePeerByID removes the server with Raft ID id from the Raft
// configuration. Use it for a server that is gone for good and that
// gossip cannot remove (force-leave is the usual way).
func (o *Operator) RaftRemovePeerByID(id string, q *WriteOptions) error {
	_, err := o.client.write(http.MethodDelete, "/v1/operator/raft/peer?id="+url.QueryEscape(id), nil, nil, q)
	return err
}

// Snapshot streams an archive of the cluster's state (see `nomad operator
// snapshot save`). The caller reads it to the end and closes it.
func (o *Operator) Snapshot(q *QueryOptions) (io.ReadCloser, error) {
	r := o.client.newRequest(http.MethodGet, "/v1/operator/snapshot")
	q.apply(r)
	resp, _, err := o.client.do(r)
	if err != nil {
		return nil, err
	}
	body, err := newDigestReader(resp.Body, resp.Header.Get("Digest"))
	if err != nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, err
	}
	return body, nil
}

// SnapshotRestore replaces the cluster's whole state with the archive
// read from in.
func (o *Operator) SnapshotRestore(in io.Reader, q *WriteOptions) (*WriteMeta, error) {
	r := o.client.newRequest(http.MethodPut, "/v1/operator/snapshot")
	r.body = in
	r.header.Set("Content-Type", "application/octet-stream")
	q.apply(r)
	resp, rtt, err := o.client.do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	wm := &WriteMeta{RequestTime: rtt}
	if err := parseWriteMeta(resp.Header, wm); err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return wm, err
}
